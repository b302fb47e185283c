"""Defaults the Go types declare with `+default=` markers, which kubernetes-validate's JSON schemas leave out.

Source: the `+default=` markers in k8s.io/api/core/v1/types.go (Kubernetes v1.37, the same release as the
schemas), which openapi-gen writes as `"default"` in the server's OpenAPI v3 documents
(`api/openapi-spec/v3/api__v1_openapi.json` in kubernetes/kubernetes) and controller-gen writes into a
CRD that embeds these types. `python -m pyscaffold_op.dev.models` applies this table to the compact
spec it writes (`pyscaffold_op/models/_spec.json`), which the emulator's defaulting reads.

Keyed by definition name, then property name (the wire name).
"""

from __future__ import annotations

from typing import Any

_CORE = "io.k8s.api.core.v1."

DEFAULTS: dict[str, dict[str, Any]] = {
    _CORE + "ContainerPort": {"protocol": "TCP"},
    _CORE + "ServicePort": {"protocol": "TCP"},
    _CORE + "LocalObjectReference": {"name": ""},
    _CORE + "ConfigMapKeySelector": {"name": ""},
    _CORE + "SecretKeySelector": {"name": ""},
    _CORE + "ConfigMapEnvSource": {"name": ""},
    _CORE + "SecretEnvSource": {"name": ""},
    _CORE + "ConfigMapVolumeSource": {"name": ""},
    _CORE + "ConfigMapProjection": {"name": ""},
    _CORE + "SecretProjection": {"name": ""},
    _CORE + "GRPCAction": {"service": ""},
    _CORE + "ISCSIVolumeSource": {"iscsiInterface": "default"},
    _CORE + "ISCSIPersistentVolumeSource": {"iscsiInterface": "default"},
    _CORE + "RBDVolumeSource": {"pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"},
    _CORE + "RBDPersistentVolumeSource": {"pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"},
    _CORE + "AzureDiskVolumeSource": {
        "cachingMode": "ReadWrite",
        "fsType": "ext4",
        "readOnly": False,
        "kind": "Shared",
    },
    _CORE + "ScaleIOVolumeSource": {"storageMode": "ThinProvisioned", "fsType": "xfs"},
    _CORE + "ScaleIOPersistentVolumeSource": {"storageMode": "ThinProvisioned", "fsType": "xfs"},
}
"""The structs embedding LocalObjectReference inline (ConfigMapKeySelector, SecretEnvSource, ...)
inherit its `name: ""` default, as openapi-gen and controller-gen write it for each of them."""
