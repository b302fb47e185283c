"""YAML formatting like controller-gen, write-if-changed, and the annotated field types in Python."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from ruamel.yaml import YAML

from pyscaffold_op.apimachinery import EmbeddedResource, FreeForm, IntOrString, KubeModel, Quantity
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
