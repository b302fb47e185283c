"""The custom resources the corpus installs on both servers (one group, `conf.example.com`)."""

from __future__ import annotations

from typing import Any

GROUP = "conf.example.com"

_PORT = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
}

WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.replicas <= 10", "message": "at most ten replicas", "fieldPath": ".replicas"},
                {"rule": "self.size == oldSelf.size || oldSelf.size != 'L'", "message": "L is final"},
            ],
            "properties": {
                "replicas": {"type": "integer", "minimum": 0, "default": 1},
                "size": {"type": "string", "enum": ["S", "M", "L"], "default": "M"},
                "name": {"type": "string", "maxLength": 10, "pattern": "^[a-z]+$"},
                "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                "ports": {
                    "type": "array",
                    "items": _PORT,
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "atomic": {
                    "type": "object",
                    "x-kubernetes-map-type": "atomic",
                    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                },
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "port": {"x-kubernetes-int-or-string": True},
                "nested": {
                    "type": "object",
                    "default": {},
                    "properties": {"deep": {"type": "string", "default": "yes"}},
                },
                "immutable": {
                    "type": "string",
                    "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "is immutable"}],
                },
                "count": {"type": "integer", "format": "int32", "maximum": 100},
                "ratio": {"type": "number"},
                "enabled": {"type": "boolean"},
                "when": {"type": "string", "format": "date-time"},
                "items": {"type": "array", "maxItems": 3, "items": {"type": "integer"}},
                "nullable": {"type": "string", "nullable": True},
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "ready": {"type": "integer"},
                "phase": {"type": "string"},
                "selector": {"type": "string"},
            },
        },
    },
}


def _crd(plural: str, kind: str, scope: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    version: dict[str, Any] = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema},
        **extra,
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": scope,
            "names": {
                "plural": plural,
                "singular": kind.lower(),
                "kind": kind,
                "listKind": f"{kind}List",
                "shortNames": [plural[:3]],
            },
            "versions": [version],
        },
    }


CRDS = [
    _crd(
        "widgets",
        "Widget",
        "Namespaced",
        WIDGET_SCHEMA,
        subresources={
            "status": {},
            "scale": {
                "specReplicasPath": ".spec.replicas",
                "statusReplicasPath": ".status.ready",
                "labelSelectorPath": ".status.selector",
            },
        },
        additionalPrinterColumns=[
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Size", "type": "string", "jsonPath": ".spec.size", "priority": 1},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ],
    ),
    _crd(
        "gadgets",
        "Gadget",
        "Cluster",
        {
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {"color": {"type": "string"}}},
                "status": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
            },
        },
    ),
    _crd(
        "blobs",
        "Blob",
        "Namespaced",
        {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    ),
]
