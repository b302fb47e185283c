"""Discovery documents: /version, /api, /api/v1, /apis, /apis/<group>[/<version>]."""

from __future__ import annotations

from typing import Any

from pyscaffold_op.envtest.kubeversion import KUBERNETES_VERSION, major_minor
from pyscaffold_op.envtest.registry.resources import Registry

_MAJOR, _MINOR = major_minor()
# /version as kube-apiserver's (component-base's effective version): the binary version, the emulation
# version (the same) and the minimum compatibility version (one minor back); the build fields are the
# emulator's, an official build's commit and date are not known here
VERSION = {
    "major": _MAJOR,
    "minor": _MINOR,
    "emulationMajor": _MAJOR,
    "emulationMinor": _MINOR,
    "minCompatibilityMajor": _MAJOR,
    "minCompatibilityMinor": str(int(_MINOR) - 1),
    "gitVersion": KUBERNETES_VERSION,
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "1970-01-01T00:00:00Z",
    "goVersion": "go1.26.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    vs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": vs, "preferredVersion": vs[0]}


def api_group_list(registry: Registry) -> dict[str, Any]:
    groups = [_group(g, vs) for g, vs in registry.group_versions().items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, group: str) -> dict[str, Any] | None:
    versions = registry.group_versions().get(group)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(group, versions)}


def resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    infos = registry.resources_in(group, version)
    if not infos:
        return None
    resources: list[dict[str, Any]] = []
    for info in sorted(infos, key=lambda i: i.plural):
        resources.extend(info.discovery())
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }
