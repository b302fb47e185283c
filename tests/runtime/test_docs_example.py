"""The complete example in docs/runtime.md runs, and its test passes (so the docs cannot rot)."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from pyscaffold_op.apimachinery import CustomResource

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"


@pytest.fixture
def example_module() -> types.ModuleType:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    operator = next(b for b in blocks if "widget_operator.py" in b)
    test = next(b for b in blocks if "async def test_widget_gets_a_configmap" in b)
    module = types.ModuleType("widget_operator_doc")
    sys.modules[module.__name__] = module
    # The example's Widget (example.com/v1) must not replace other tests' kinds in the global registry.
    saved = dict(CustomResource.registry)
    try:
        exec(compile(operator, "docs/runtime.md:widget_operator", "exec"), module.__dict__)
        exec(compile(test, "docs/runtime.md:test", "exec"), module.__dict__)
        yield module
    finally:
        sys.modules.pop(module.__name__, None)
        CustomResource.registry.clear()
        CustomResource.registry.update(saved)


async def test_docs_example(
    example_module: types.ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crd = (Path(__file__).parent / "crds" / "widgets.yaml").read_text().split("---")[0]
    bases = tmp_path / "config" / "crd" / "bases"
    bases.mkdir(parents=True)
    (bases / "widgets.yaml").write_text(crd.replace("test.pyop.io", "example.com"))
    monkeypatch.chdir(tmp_path)
    await example_module.test_widget_gets_a_configmap()
