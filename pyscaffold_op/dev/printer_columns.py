"""Capture kube-apiserver's Table column definitions for every built-in resource the emulator serves
into `pyscaffold_op/envtest/server/_printer_columns.json` (names, types, formats, priorities and the
descriptions, which come from the Go types' SwaggerDoc and are not worth retyping).

    PYOP_ENVTEST_ASSETS=bin python -m pyscaffold_op.dev.printer_columns

Run it again after moving the pinned Kubernetes version (hack/oracles/versions.env)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pyscaffold_op.envtest.controlplane import ControlPlane
from pyscaffold_op.envtest.registry.resources import builtin_resources

OUT = Path(__file__).resolve().parents[1] / "envtest" / "server" / "_printer_columns.json"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def capture(cp: ControlPlane) -> dict[str, list[dict[str, Any]]]:
    import urllib.request

    out: dict[str, list[dict[str, Any]]] = {}
    for info in builtin_resources():
        if info.review or (info.verbs and "list" not in info.verbs) or "/" in info.plural:
            continue
        base = "/api/v1" if info.group == "" else f"/apis/{info.group}/{info.version}"
        req = urllib.request.Request(f"{cp.url}{base}/{info.plural}?limit=1")
        req.add_header("Authorization", f"Bearer {cp.token}")
        req.add_header("Accept", TABLE)
        with urllib.request.urlopen(req, context=cp._ssl, timeout=30) as resp:
            cols = json.loads(resp.read())["columnDefinitions"]
        key = f"{info.group}/{info.plural}"
        if key in out and out[key] != cols:
            raise SystemExit(f"{key}: columns differ between versions")
        out[key] = cols
    return out


def write(cols: dict[str, list[dict[str, Any]]]) -> None:
    descs: list[str] = []
    index: dict[str, int] = {}
    packed: dict[str, list[list[Any]]] = {}
    for key, defs in cols.items():
        row = []
        for c in defs:
            if c["description"] not in index:
                index[c["description"]] = len(descs)
                descs.append(c["description"])
            row.append([c["name"], c["type"], c["format"], c["priority"], index[c["description"]]])
        packed[key] = row
    doc = {
        "_comment": "kube-apiserver's Table columnDefinitions per group/resource, captured by "
        "pyscaffold_op/dev/printer_columns.py: [name, type, format, priority, description index]",
        "descriptions": descs,
        "columns": packed,
    }
    OUT.write_text(json.dumps(doc, separators=(",", ":")).replace('],"', '],\n"') + "\n")


def main() -> None:
    with ControlPlane() as cp:
        write(capture(cp))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
