"""CRD -> pydantic models (datamodel-code-generator) and the round trip pydantic -> CRD -> pydantic -> CRD."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml

from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind
from pyscaffold_op.cli import main
from pyscaffold_op.errors import GenerateError
from pyscaffold_op.gen.crd import build_crd
from pyscaffold_op.gen.models import models_from_crd
from pyscaffold_op.gen.yamlio import dump_documents

from .test_realworld import CronJob, Gateway
from .test_schema import Shapes


def _round_trip(kind: type[CustomResource], tmp_path: Path) -> tuple[dict, dict, str]:
    first = build_crd([kind])
    code = models_from_crd(first)
    path = tmp_path / f"{kind.__name__.lower()}_generated.py"
    path.write_text(code)
    name = f"_pyop_rt_{kind.__name__.lower()}"
    saved = dict(CustomResource.registry)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the marker reader finds the source through sys.modules
    try:
        spec.loader.exec_module(module)
        second = build_crd([getattr(module, kind.gvk.kind)])
    finally:
        sys.modules.pop(name, None)
        CustomResource.registry.clear()
        CustomResource.registry.update(saved)
    return first, second, code


class Rich(CustomResource):
    """A kind with every field shape in its spec."""

    gvk = GroupVersionKind("demo.example.com", "v1", "Rich")
    spec: Shapes


@pytest.mark.parametrize("kind", [Rich, CronJob, Gateway], ids=["every-shape", "cronjob", "gateway"])
def test_round_trip(kind: type[CustomResource], tmp_path: Path) -> None:
    first, second, code = _round_trip(kind, tmp_path)
    assert f"class {kind.gvk.kind}(CustomResource):" in code
    assert "gvk = GroupVersionKind(" in code
    assert dump_documents([second]) == dump_documents([first])


def test_cli_models_from_crd(tmp_path: Path, capsys) -> None:
    crd_file = tmp_path / "crd.yaml"
    crd_file.write_text(dump_documents([build_crd([Gateway])]))
    out = tmp_path / "gateway.py"
    with pytest.raises(SystemExit) as done:
        main(
            ["generate", "models", "--from-crd", str(crd_file), "--version", "v1beta1", "--output", str(out)]
        )
    assert done.value.code == 0
    text = out.read_text()
    assert "class Gateway(CustomResource):" in text and "'x-kubernetes-int-or-string': True" in text
    compile(text, str(out), "exec")
    with pytest.raises(SystemExit) as done:
        main(["generate", "models", "--from-crd", str(crd_file), "--version", "v9"])
    assert done.value.code == 2
    assert "has no version v9 (has: v1beta1)" in capsys.readouterr().err


def test_not_a_crd() -> None:
    with pytest.raises(GenerateError, match="not a CustomResourceDefinition"):
        models_from_crd(yaml.safe_load("kind: ConfigMap\n"))
