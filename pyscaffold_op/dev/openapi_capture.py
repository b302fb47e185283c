"""Capture kube-apiserver's OpenAPI documents into `pyscaffold_op/envtest/server/_openapi.json.xz`,
which the emulator serves (envtest/server/openapi.py): every built-in group-version's /openapi/v3
document, /openapi/v2 (JSON), and the documents the server publishes for two throwaway CRDs (one
namespaced with status and scale subresources, one cluster-scoped), kept as templates: their
names are placeholders the emulator fills in with a CRD's group, version, kind and plural.

    PYOP_ENVTEST_ASSETS=bin python -m pyscaffold_op.dev.openapi_capture

Run it again after moving the pinned Kubernetes version (hack/oracles/versions.env)."""

from __future__ import annotations

import json
import lzma
import time
from pathlib import Path
from typing import Any

from pyscaffold_op.envtest.controlplane import ControlPlane

OUT = Path(__file__).resolve().parents[1] / "envtest" / "server" / "_openapi.json.xz"

# The template CRDs' names: unique strings the emulator replaces (openapi.py's _TEMPLATE).
GROUP, VERSION = "tmplgroup.pyop.invalid", "v9tmplversion"
NAMESPACED = ("Tmplnskind", "tmplnskinds")
CLUSTER = ("Tmplclkind", "tmplclkinds")


def _crd(kind: str, plural: str, namespaced: bool) -> dict[str, Any]:
    version: dict[str, Any] = {
        "name": VERSION,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    if namespaced:
        version["subresources"] = {
            "status": {},
            "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": kind + "List"},
            "scope": "Namespaced" if namespaced else "Cluster",
            "versions": [version],
        },
    }


def capture(cp: ControlPlane) -> dict[str, Any]:
    _, root = cp.request("GET", "/openapi/v3")
    v3 = {}
    for path in root["paths"]:
        if path.startswith(("api/", "apis/")) or path in ("api", "apis"):
            status, doc = cp.request("GET", f"/openapi/v3/{path}")
            assert status == 200, (path, status)
            v3[path] = doc
    _, v2 = cp.request("GET", "/openapi/v2")
    _, version = cp.request("GET", "/version")
    cp.install_crds([_crd(*NAMESPACED, True), _crd(*CLUSTER, False)])
    crd_path = f"apis/{GROUP}/{VERSION}"
    for _ in range(60):  # the OpenAPI controller publishes a CRD's schema shortly after it is Established
        status, crd_doc = cp.request("GET", f"/openapi/v3/{crd_path}")
        names = crd_doc.get("components", {}).get("schemas", {}) if status == 200 else {}
        if sum(NAMESPACED[0] in n or CLUSTER[0] in n for n in names) == 4:
            break
        time.sleep(0.5)
    else:
        raise SystemExit("the template CRDs' OpenAPI document never appeared")
    for _ in range(60):
        _, crd_v2 = cp.request("GET", "/openapi/v2")
        if any(NAMESPACED[0] in n for n in crd_v2["definitions"]):
            break
        time.sleep(0.5)
    else:
        raise SystemExit("the template CRDs never appeared in /openapi/v2")
    crd_v2_paths = {p: v for p, v in crd_v2["paths"].items() if GROUP in p}
    crd_v2_defs = {n: v for n, v in crd_v2["definitions"].items() if NAMESPACED[0] in n or CLUSTER[0] in n}
    return {
        "_comment": "kube-apiserver's OpenAPI documents, captured by pyscaffold_op/dev/openapi_capture.py",
        "kubernetes": version["gitVersion"],
        "v3": v3,
        "v2": v2,
        "crd_v3": crd_doc,
        "crd_v2": {"paths": crd_v2_paths, "definitions": crd_v2_defs},
    }


def write(doc: dict[str, Any]) -> int:
    data = json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()
    OUT.write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
    return OUT.stat().st_size


def main() -> None:
    with ControlPlane() as cp:
        size = write(capture(cp))
    print(f"wrote {OUT} ({size} bytes)")


if __name__ == "__main__":
    main()
