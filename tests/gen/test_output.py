"""YAML formatting like controller-gen, write-if-changed, and the annotated field types in Python."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError
from ruamel.yaml import YAML

from pyscaffold_op.apimachinery import (
    CustomResource,
    EmbeddedResource,
    FreeForm,
    GroupVersionKind,
    IntOrString,
    KubeModel,
    Quantity,
)
from pyscaffold_op.gen.yamlio import dump_documents, write_if_changed


def test_yaml_format() -> None:
    text = dump_documents(
        [
            {
                "kind": "X",
                "apiVersion": "v1",
                "rules": [{"apiGroups": [""], "verbs": ["get"]}],
                "description": "line one\nline two",
                "status": {},
                "enum": ["True", "yes", "1"],
                "long": ("word " * 40).strip(),
            },
            {"b": 1, "a": {"c": [1, 2]}},
        ]
    )
    assert text.startswith("---\napiVersion: v1\n")
    assert "\n---\na:\n  c:\n  - 1\n  - 2\nb: 1\n" in text
    assert '- apiGroups:\n  - ""\n  verbs:\n  - get\n' in text  # sequences not indented, "" double-quoted
    assert "description: |-\n  line one\n  line two\n" in text
    assert "status: {}\n" in text
    assert 'enum:\n- "True"\n- "yes"\n- "1"\n' in text
    assert "long: word word" in text and text.count("\n") == 23  # no line wrapping


def test_round_trips_through_ruamel_unchanged() -> None:
    text = dump_documents([{"a": {"description": "x\ny", "list": ["", "a b", "True"], "n": 1.5, "e": {}}}])
    yaml = YAML()
    yaml.indent(mapping=2, sequence=2, offset=0)
    yaml.explicit_start = True
    yaml.width = 4096
    yaml.preserve_quotes = True
    import io

    out = io.StringIO()
    yaml.dump(yaml.load(text), out)
    assert out.getvalue() == text


def test_write_if_changed(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "file.yaml"
    assert write_if_changed(path, "a: 1\n", check=True) is True
    assert not path.exists()
    assert write_if_changed(path, "a: 1\n") is True
    mtime = path.stat().st_mtime_ns
    assert write_if_changed(path, "a: 1\n") is False
    assert path.stat().st_mtime_ns == mtime
    assert write_if_changed(path, "a: 2\n") is True
    assert path.read_text() == "a: 2\n"
    assert not list(tmp_path.glob("deep/*.tmp"))


class Fields(KubeModel):
    port: IntOrString = 80
    memory: Quantity = "1Gi"
    config: FreeForm = {}
    template: EmbeddedResource = {}


def test_field_types_validate_in_python() -> None:
    assert Fields(port="http", memory="500m").port == "http"
    assert Fields(memory=2).memory == 2
    with pytest.raises(ValidationError, match="is not a Kubernetes quantity"):
        Fields(memory="lots")
    dumped = Fields(config={"a": {"b": [1]}}, template={"apiVersion": "v1", "kind": "Pod"}).model_dump()
    assert dumped["config"] == {"a": {"b": [1]}} and dumped["template"]["kind"] == "Pod"


def test_shared_subtrees_are_spliced_as_the_emitter_writes_them() -> None:
    """A shared subtree's text is emitted once and spliced in at each column; the result must be the
    emitter's own output for the same document without sharing."""
    from pyscaffold_op.gen.shared import share

    inner = share(
        {
            "b": {"type": "string", "enum": ["True", "", "a: b"]},
            "a": {"description": "two\n\nparagraphs", "items": {"type": "integer"}, "empty": {}},
            "required": ["a", "b"],
        }
    )
    long_key = "k" * 200  # past the emitter's simple-key limit: written as `? key`
    doc = {
        "top": inner,
        "list": [{"properties": inner, "x": 1}, [{"properties": inner}]],
        "deep": {"er": {"properties": inner, "other": {}}},
        long_key: inner,
        "empty": share({}),
    }
    unshared = yaml.safe_load(yaml.safe_dump(doc))  # the same data, no object shared
    assert dump_documents([doc, doc]) == dump_documents([unshared, unshared])
    assert dump_documents([{"only": inner}]) == dump_documents([{"only": dict(inner)}])


def test_generation_leaves_the_shared_builtin_schemas_unchanged(tmp_path: Path) -> None:
    """Shared subtrees are never copied, so a generator step that changed one in place would change
    every later CRD: after generating a CronJob-like CRD they still equal a fresh conversion."""
    from pyscaffold_op.gen import builtin
    from pyscaffold_op.gen.crd import build_crd
    from pyscaffold_op.models.batch_v1 import JobTemplateSpec

    class Spec(KubeModel):
        # +kubebuilder:validation:XValidation:rule="has(self.spec)",message="needs a spec"
        job_template: JobTemplateSpec
        """Docstring on the embedded type's field."""

    class Job(CustomResource):
        gvk = GroupVersionKind("batch.example.com", "v1", "Job")
        spec: Spec

    first = dump_documents([build_crd([Job], max_desc_len=3)])
    assert dump_documents([build_crd([Job], max_desc_len=3)]) == first
    name = "batch_v1.JobTemplateSpec"
    assert builtin._schema(name) == builtin._convert({"$ref": name}, ())


def _same_as_libyaml(doc: dict[str, Any]) -> bool:
    """True when `_emit` wrote `doc` (and wrote what libyaml writes); False when it left it to libyaml."""
    from pyscaffold_op.yamlio import _emit, _libyaml_dump, _Unsure

    try:
        text = _emit(doc)
    except _Unsure:
        return False
    assert text == _libyaml_dump(doc)
    return True


def test_python_emitter_writes_every_golden_file_as_libyaml_does() -> None:
    import yaml

    root = Path(__file__).resolve().parents[2]
    docs = [
        doc
        for path in sorted((root / "testdata").rglob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and doc
    ]
    assert len(docs) > 40
    assert all(_same_as_libyaml(doc) for doc in docs)  # none left to libyaml


def test_python_emitter_matches_libyaml_or_declines_on_random_documents() -> None:
    """Random documents of tricky strings, numbers and nestings: `_emit` writes libyaml's bytes or
    declines (control characters, `...`, block scalars with leading spaces, long keys, floats in
    exponent form)."""
    import random

    rng = random.Random(18)
    atoms = [
        "",
        " ",
        "a",
        "a b",
        "a: b",
        "a #b",
        "#a",
        "-a",
        "- a",
        "?",
        ":",
        "a:",
        "...",
        "---",
        "x...",
        "true",
        "True",
        "no",
        "null",
        "~",
        "12",
        "0x1F",
        "1e3",
        "1.5",
        "1_000",
        ".inf",
        "é",
        "日本",
        "a\tb",
        "a\x07",
        "\u2028",
        "\ufeff",
        'q"uote',
        "back\\slash",
        "it's",
        "{a}",
        "[a]",
        "a,b",
        "l1\nl2",
        "l1\n",
        "l1\n\n",
        "\nl",
        " l1\nl2",
        "l1 \nl2",
        "l1\n\nl2",
        "@a",
        "`a",
        "%a",
        "!a",
        "&a",
        "*a",
        "|a",
        ">a",
        "a" * 130,
        "k" * 200,
    ]
    scalars: list[Any] = [*atoms, 0, -1, 7, 10**20, 0.5, -2.25, 1e300, float("nan"), True, False, None]

    def value(depth: int) -> Any:
        roll = rng.random()
        if depth > 3 or roll < 0.5:
            return rng.choice(scalars)
        if roll < 0.75:
            return {rng.choice(atoms): value(depth + 1) for _ in range(rng.randint(0, 4))}
        return [value(depth + 1) for _ in range(rng.randint(0, 4))]

    written = 0
    for _ in range(3000):
        doc = {rng.choice(atoms): value(1) for _ in range(rng.randint(1, 4))}
        written += _same_as_libyaml(doc)
    print(f"{written} of 3000 written by the Python emitter")
    assert written > 300  # enough documents written by the Python emitter to mean something
