"""A pod spec's volumes and volume mounts as core validation checks them (ValidateVolumes,
validateVolumeSource's one-source rule, ValidateVolumeMounts): used for Pods and for the pod
templates of workloads."""

from __future__ import annotations

from typing import Any

from pyscaffold_op.apimachinery.fielderrors import Cause, cause
from pyscaffold_op.apimachinery.validation import is_dns1123_label

# validateVolumeSource's order: the first source set counts, each later one is "more than 1"
VOLUME_SOURCES = (
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
)
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def volume_causes(spec: dict[str, Any], path: str) -> tuple[set[str], list[Cause]]:
    """The names of the valid volumes of the pod spec at `path`, and the causes of the others."""
    valid: set[str] = set()
    out: list[Cause] = []
    volumes = spec.get("volumes")
    for i, vol in enumerate(volumes if isinstance(volumes, list) else []):
        if not isinstance(vol, dict):
            continue
        at = f"{path}.volumes[{i}]"
        errors = [
            cause(
                "FieldValueForbidden", f"{at}.{source}", "Forbidden: may not specify more than 1 volume type"
            )
            for source in [s for s in VOLUME_SOURCES if vol.get(s) is not None][1:]
        ]
        name = vol.get("name") or ""
        if not name:
            errors.append(cause("FieldValueRequired", f"{at}.name", "Required value"))
        else:
            errors += [
                cause("FieldValueInvalid", f"{at}.name", f'Invalid value: "{name}": {why}')
                for why in is_dns1123_label(name)
            ]
        if name in valid:
            errors.append(cause("FieldValueDuplicate", f"{at}.name", f'Duplicate value: "{name}"'))
        if errors:
            out += errors
        else:
            valid.add(name)
    return valid, out


def mount_causes(container: dict[str, Any], volumes: set[str], path: str) -> list[Cause]:
    """ValidateVolumeMounts of one container (at `path`): a named, existing volume, a unique path."""
    out: list[Cause] = []
    seen: set[str] = set()
    mounts = container.get("volumeMounts")
    for i, mount in enumerate(mounts if isinstance(mounts, list) else []):
        if not isinstance(mount, dict):
            continue
        at = f"{path}.volumeMounts[{i}]"
        name, mount_path = mount.get("name") or "", mount.get("mountPath") or ""
        if not name:
            out.append(cause("FieldValueRequired", f"{at}.name", "Required value"))
        if name not in volumes:
            out.append(cause("FieldValueNotFound", f"{at}.name", f'Not found: "{name}"'))
        if not mount_path:
            out.append(cause("FieldValueRequired", f"{at}.mountPath", "Required value"))
        if mount_path in seen:
            out.append(
                cause(
                    "FieldValueInvalid", f"{at}.mountPath", f'Invalid value: "{mount_path}": must be unique'
                )
            )
        seen.add(mount_path)
    return out
