"""Generators never exit 0 with broken output: bad input is one line on stderr, exit status 2, nothing
written, and an error about a Python type names the file and line of the field (issue 17's probes)."""

from __future__ import annotations

import hashlib
import re
import textwrap
from pathlib import Path

import pytest

from pyscaffold_op.cli import main

pytestmark = pytest.mark.slow

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  names: {kind: Thing, plural: things}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              FIELD
"""

PROJECT = """\
domain: example.com
layout:
- python.pyop.io/v1
projectName: demo
repo: github.com/example/demo
resources:
- api: {crdVersion: v1, namespaced: true}
  domain: example.com
  group: demo
  kind: Thing
  version: v1
version: "3"
"""


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line `pyop argv` prints on stderr; fails unless it exits with status 2."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err.strip()


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.*")}


def crd_file(tmp_path: Path, field: str) -> Path:
    path = tmp_path / "crd.yaml"
    path.write_text(CRD.replace("FIELD", field))
    return path


def test_models_from_crd_with_ref_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "thing.py"
    crd = crd_file(tmp_path, 'a: {$ref: "#/definitions/Foo"}')
    line = run(["generate", "models", "--from-crd", str(crd), "-o", str(out)], capsys)
    assert line == (
        "error: CRD things.example.com would be rejected by the API server: spec.versions[0].schema."
        "openAPIV3Schema.properties[spec].properties[a].$ref: Forbidden: $ref is not supported (and 1 more)"
    )
    assert not out.exists()


def test_models_from_crd_with_unknown_type_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "thing.py"
    crd = crd_file(tmp_path, "b: {type: frobnicate}")
    line = run(["generate", "models", "--from-crd", str(crd), "-o", str(out)], capsys)
    assert line.endswith(
        'properties[b].type: Unsupported value: "frobnicate": supported values: '
        '"array", "boolean", "integer", "number", "object", "string"'
    )
    assert not out.exists()


def test_models_that_do_not_import_are_not_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # what datamodel-code-generator wrote for a `$ref` it could not resolve: a class it never defined
    from pyscaffold_op.gen import models

    real = models._generate

    def dangling(schema: dict, kind: str) -> str:
        return real(schema, kind).replace("b: str | None = None", "b: Missing | None = None")

    monkeypatch.setattr(models, "_generate", dangling)
    out = tmp_path / "thing.py"
    crd = crd_file(tmp_path, "b: {type: string}")
    line = run(["generate", "models", "--from-crd", str(crd), "-o", str(out)], capsys)
    assert line.startswith("error: the models generated for Thing do not import (")
    assert "Missing" in line and line.endswith("nothing written")
    assert not out.exists()


def project(tmp_path: Path, types: str) -> Path:
    root = tmp_path / "demo"
    api = root / "src" / "demo" / "api" / "v1"
    api.mkdir(parents=True)
    (root / "src" / "demo" / "__init__.py").write_text("")
    (root / "src" / "demo" / "api" / "__init__.py").write_text("")
    (root / "src" / "demo" / "controllers").mkdir()
    (api / "__init__.py").write_text('GROUP = "demo.example.com"\nVERSION = "v1"\n')
    (api / "thing_types.py").write_text(textwrap.dedent(types))
    (root / "PROJECT").write_text(PROJECT)
    return root


HEADER = """\
from __future__ import annotations

from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel


class Thing(CustomResource):
    gvk = GroupVersionKind("demo.example.com", "v1", "Thing")
    spec: Spec


class Spec(KubeModel):
"""


@pytest.mark.parametrize(
    ("field", "named_line", "message"),
    [
        ("    value: complex", "value:", "Spec.value: complex numbers have no Kubernetes type"),
        ("    pair: tuple[int, str]", "pair:", "Spec.pair: tuples are not supported"),
        ("    children: list[Spec] = []", "children:", "Spec.children[]: recursive model Spec"),
        (
            "    # +kubebuilder:validation:Type=frobnicate\n    value: str",
            "# +kubebuilder:validation:Type",
            "+kubebuilder:validation:Type=frobnicate: supported values: array, boolean",
        ),
    ],
    ids=["complex", "tuple", "recursive", "type-marker"],
)
def test_crd_generation_faults_name_file_and_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    field: str,
    named_line: str,
    message: str,
) -> None:
    root = project(tmp_path, HEADER + field + "\n")
    before = snapshot(root)
    monkeypatch.chdir(root)
    line = run(["generate", "manifests"], capsys)
    where = re.match(r"error: (\S*)src/demo/api/v1/thing_types\.py:(\d+): ", line)
    assert where, line
    source = (root / "src/demo/api/v1/thing_types.py").read_text().splitlines()
    assert source[int(where.group(2)) - 1].strip().startswith(named_line)
    assert message in line
    assert snapshot(root) == before
