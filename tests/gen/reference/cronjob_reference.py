"""Build the REFERENCE signature of the CRD controller-gen writes for kubebuilder's CronJob tutorial.

Test-only, and independent of pyop's generator and of `pyscaffold_op/models/_spec.json`: it walks the
Kubernetes v1.37 OpenAPI definitions as published (`_definitions.json` of the PyPI package
kubernetes-validate==1.37.0, with descriptions, `["string", "null"]` types and `oneOf` int-or-strings)
and applies controller-gen's documented rules for Go types it knows:

- every `$ref` is inlined; `metav1.ObjectMeta` below the root is `type: object` (no properties);
- `metav1.Time` is `{type: string, format: date-time}`; `intstr.IntOrString` is
  `anyOf: [integer, string]` + `x-kubernetes-int-or-string: true`; `resource.Quantity` the same plus
  the quantity `pattern` (controller-gen's known_types.go);
- `required`, `format`, `x-kubernetes-list-type`, `-list-map-keys`, `-map-type` as published;
  descriptions, enums (controller-gen ignores `+enum`) and `x-kubernetes-patch-*` dropped;
- `default`: the `+default=` markers of k8s.io/api core/v1 types.go (v1.37), which openapi-gen writes
  into the server's OpenAPI v3 but kubernetes-validate leaves out; transcribed below, each with its Go
  type. (Cross-check: the issue that asked for this counted controller-gen's real output for the
  tutorial, on an older Kubernetes: 1,319 nodes, 47 defaults, 47 int-or-strings, 186 required lists;
  this reference has 1,384 nodes, 46 defaults, 47 int-or-strings, 192 required lists.)

The tutorial's own fields (CronJobSpec/CronJobStatus, kubebuilder v4's
docs/book/src/cronjob-tutorial/testdata/project/api/v1/cronjob_types.go) and metav1.Condition (with the
kubebuilder markers of k8s.io/apimachinery/pkg/apis/meta/v1/types.go) are written out by hand.

Run: `python tests/gen/reference/cronjob_reference.py PATH/_definitions.json` (rewrites
`cronjob_controller_gen.json` beside this file). The test only reads that file. The checked-in file
now comes from the real tool: `python tests/gen/reference/cronjob_reference.py --controller-gen CRD.yaml`
with the CRD controller-gen writes for tests/gen/controllergen/cronjob/go; this walk stays as the
record of the rules and of what the published OpenAPI leaves out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("cronjob_controller_gen.json")
_REF = "#/$defs/"
_CORE = "io.k8s.api.core.v1."
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)"
    r"|(\.[0-9]+))))?$"
)
INT_OR_STRING = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}

# `+default=` markers of k8s.io/api/core/v1/types.go (Go type -> json field -> value). Structs that
# embed LocalObjectReference inline carry its `name` default.
GO_DEFAULTS: dict[str, dict[str, Any]] = {
    "ContainerPort": {"protocol": "TCP"},
    "ServicePort": {"protocol": "TCP"},
    "LocalObjectReference": {"name": ""},
    "ConfigMapKeySelector": {"name": ""},
    "SecretKeySelector": {"name": ""},
    "ConfigMapEnvSource": {"name": ""},
    "SecretEnvSource": {"name": ""},
    "ConfigMapVolumeSource": {"name": ""},
    "ConfigMapProjection": {"name": ""},
    "SecretProjection": {"name": ""},
    "GRPCAction": {"service": ""},
    "ISCSIVolumeSource": {"iscsiInterface": "default"},
    "RBDVolumeSource": {"pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"},
    "AzureDiskVolumeSource": {
        "cachingMode": "ReadWrite",
        "fsType": "ext4",
        "readOnly": False,
        "kind": "Shared",
    },
    "ScaleIOVolumeSource": {"storageMode": "ThinProvisioned", "fsType": "xfs"},
}

CONDITION = {
    "type": "object",
    "required": ["lastTransitionTime", "message", "reason", "status", "type"],
    "properties": {
        "lastTransitionTime": {"type": "string", "format": "date-time"},
        "message": {"type": "string", "maxLength": 32768},
        "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
        "reason": {
            "type": "string",
            "maxLength": 1024,
            "minLength": 1,
            "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        },
        "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
        "type": {
            "type": "string",
            "maxLength": 316,
            "pattern": r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
            r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
        },
    },
}


KEPT = ("format", "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type")
CHILDREN = ("properties", "items", "additionalProperties", "description")


class Walker:
    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs

    def ref(self, name: str, stack: tuple[str, ...] = ()) -> dict[str, Any]:
        if name == _META + "ObjectMeta":
            return {"type": "object"}
        if name == _META + "Time":
            return {"type": "string", "format": "date-time"}
        if name == "io.k8s.apimachinery.pkg.util.intstr.IntOrString":
            return dict(INT_OR_STRING)
        if name == "io.k8s.apimachinery.pkg.api.resource.Quantity":
            return {**INT_OR_STRING, "pattern": QUANTITY_PATTERN}
        assert name not in stack, f"recursive {name}"
        out = self.node(self.defs[name], (*stack, name))
        go_type = name.rsplit(".", 1)[-1]
        if name.startswith(_CORE) and go_type in GO_DEFAULTS:
            for prop, value in GO_DEFAULTS[go_type].items():
                out["properties"][prop]["default"] = value
        return out

    def node(self, node: dict[str, Any], stack: tuple[str, ...]) -> dict[str, Any]:
        if "$ref" in node:
            return self.ref(node["$ref"].removeprefix(_REF), stack)
        out: dict[str, Any] = {}
        types = node.get("type")
        if isinstance(types, list):
            types = [t for t in types if t != "null"]
            assert len(types) == 1, node
            types = types[0]
        if types:
            out["type"] = types
        for key in (
            "format",
            "x-kubernetes-list-type",
            "x-kubernetes-list-map-keys",
            "x-kubernetes-map-type",
        ):
            if key in node:
                out[key] = node[key]
        if node.get("required"):
            out["required"] = sorted(node["required"])
        if "items" in node:
            out["items"] = self.node(node["items"], stack)
        if isinstance(node.get("additionalProperties"), dict):
            out["additionalProperties"] = self.node(node["additionalProperties"], stack)
        if "properties" in node:
            out["properties"] = {k: self.node(v, stack) for k, v in node["properties"].items()}
        return out


def cronjob_schema(defs: dict[str, Any]) -> dict[str, Any]:
    walk = Walker(defs)
    spec = {
        "type": "object",
        "required": ["jobTemplate", "schedule"],
        "properties": {
            "concurrencyPolicy": {"type": "string", "enum": ["Allow", "Forbid", "Replace"]},
            "failedJobsHistoryLimit": {"type": "integer", "format": "int32", "minimum": 0},
            "jobTemplate": walk.ref("io.k8s.api.batch.v1.JobTemplateSpec"),
            "schedule": {"type": "string", "minLength": 0},
            "startingDeadlineSeconds": {"type": "integer", "format": "int64", "minimum": 0},
            "successfulJobsHistoryLimit": {"type": "integer", "format": "int32", "minimum": 0},
            "suspend": {"type": "boolean"},
        },
    }
    status = {
        "type": "object",
        "properties": {
            "active": {"type": "array", "items": walk.ref(_CORE + "ObjectReference")},
            "conditions": {
                "type": "array",
                "items": CONDITION,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["type"],
            },
            "lastScheduleTime": {"type": "string", "format": "date-time"},
        },
    }
    return {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": status,
        },
    }


def signature(schema: dict[str, Any], path: str = "") -> dict[str, dict[str, Any]]:
    """path -> the node's keywords, without descriptions and without its children."""
    out = {
        path or ".": {
            k: v
            for k, v in schema.items()
            if k not in ("properties", "items", "additionalProperties", "description")
        }
    }
    for name, sub in schema.get("properties", {}).items():
        out.update(signature(sub, f"{path}.{name}"))
    if "items" in schema:
        out.update(signature(schema["items"], f"{path}[]"))
    if isinstance(schema.get("additionalProperties"), dict):
        out.update(signature(schema["additionalProperties"], f"{path}{{}}"))
    return out


def from_controller_gen(crd_yaml: Path) -> None:
    """Rewrite the reference from a CRD the real controller-gen wrote (the corpus entry
    tests/gen/controllergen/cronjob): the source of truth since pyop embeds built-in types with
    controller-gen's own reading of k8s.io/api (pyscaffold_op/gen/_builtin_overlay.json)."""
    import yaml

    crd = yaml.safe_load(crd_yaml.read_text())
    sig = signature(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    source = "controller-gen v0.23.0 over tests/gen/controllergen/cronjob/go (k8s.io/api v0.37.2)"
    OUT.write_text(json.dumps({"source": source, "nodes": sig}, indent=1, sort_keys=True) + "\n")


def main(argv: list[str]) -> None:
    if argv[1:2] == ["--controller-gen"]:
        from_controller_gen(Path(argv[2]))
        return
    defs = json.loads(Path(argv[1]).read_text())["$defs"]
    sig = signature(cronjob_schema(defs))
    OUT.write_text(
        json.dumps(
            {
                "source": "kubernetes-validate==1.37.0 _definitions.json walked by "
                "tests/gen/reference/cronjob_reference.py (controller-gen's rules)",
                "nodes": sig,
            },
            indent=0,
            sort_keys=True,
        )
        + "\n"
    )
    print(f"{OUT}: {len(sig)} nodes")


if __name__ == "__main__":
    main(sys.argv)
