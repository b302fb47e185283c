"""crd.yaml is what pyop's generator makes of kopfexample.py (regenerate it with
`python examples/kopf/kopfexample.py > examples/kopf/crd.yaml`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from kopfexample import KopfExample

from pyscaffold_op.gen.crd import build_crds

HERE = Path(__file__).parent


def test_the_checked_in_crd_is_generated_from_the_types() -> None:
    def without_version(crd: dict[str, Any]) -> dict[str, Any]:
        crd["metadata"].get("annotations", {}).pop("pyop.io/version", None)
        return crd

    [generated] = build_crds([KopfExample])
    [checked_in] = yaml.safe_load_all((HERE / "crd.yaml").read_text())
    assert without_version(checked_in) == without_version(generated), "regenerate crd.yaml (see above)"
