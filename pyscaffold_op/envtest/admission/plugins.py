"""The mutating admission plugins a default kube-apiserver runs that change what gets stored
(their defaults are not the registry's: see strategies.py for those).

DefaultTolerationSeconds and StorageObjectInUseProtection always run. The ServiceAccount plugin runs
only where a controller-manager makes namespaces' `default` ServiceAccount (`Plugins.service_account`,
on with the simulated workload controllers): without one, kube-apiserver refuses every Pod, so
controller-runtime's envtest (and the conformance corpus's bare kube-apiserver) turn it off, and so
does the bare emulator."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.registry.objectmeta import generate_name

if TYPE_CHECKING:
    from pyscaffold_op.envtest.registry.resources import ServedResource
    from pyscaffold_op.envtest.storage.objectstore import Store

# DefaultTolerationSeconds: --default-not-ready-toleration-seconds and --default-unreachable-... (300)
_DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
DEFAULT_TOLERATION_SECONDS = 300


# StorageObjectInUseProtection: the finalizer it adds on create, per group-resource; the protection
# controllers (controllers/protection.py) remove it once the object is unused
PROTECTION_FINALIZERS = {
    ("", "persistentvolumeclaims"): "kubernetes.io/pvc-protection",
    ("", "persistentvolumes"): "kubernetes.io/pv-protection",
    ("storage.k8s.io", "volumeattributesclasses"): "kubernetes.io/vac-protection",
}


# the ServiceAccount plugin (plugin/pkg/admission/serviceaccount)
DEFAULT_SERVICE_ACCOUNT = "default"
TOKEN_VOLUME_PREFIX = "kube-api-access-"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_EXPIRATION_SECONDS = 3607  # serviceaccount.WarnOnlyBoundTokenExpirationSeconds
MIRROR_POD = "kubernetes.io/config.mirror"
ENFORCE_MOUNTABLE_SECRETS = "kubernetes.io/enforce-mountable-secrets"


class Plugins:
    """Which optional admission plugins this API server runs. `await_default_account(namespace)` is
    what the ServiceAccount plugin's wait for a missing `default` ServiceAccount (up to 10 lookups,
    100-200 ms apart) amounts to: the simulated controller makes it now, if the namespace lives."""

    def __init__(self, *, service_account: bool = False) -> None:
        self.service_account = service_account
        self.await_default_account: Callable[[str], None] | None = None


def admit_create(
    info: ServedResource,
    obj: dict[str, Any],
    store: Store | None = None,
    admission_name: str = "",
) -> None:
    if info.group_resource == ("", "pods"):
        if store is not None and store.admission.service_account:
            admit_service_account(store, obj, admission_name or obj.get("metadata", {}).get("name", ""))
        default_toleration_seconds(obj)
    finalizer = PROTECTION_FINALIZERS.get(info.group_resource)
    if finalizer is not None:
        meta = obj.setdefault("metadata", {})
        finalizers = meta.get("finalizers") if isinstance(meta.get("finalizers"), list) else []
        if finalizer not in finalizers:
            meta["finalizers"] = [*finalizers, finalizer]


def default_toleration_seconds(pod: dict[str, Any]) -> None:
    """Pods tolerate NoExecute not-ready/unreachable taints for 300 s unless they say otherwise."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    tolerations = spec.get("tolerations")
    if not isinstance(tolerations, list):
        tolerations = []
    for key in _DEFAULT_TOLERATIONS:
        if any(_tolerates(t, key) for t in tolerations if isinstance(t, dict)):
            continue
        tolerations.append(
            {
                "key": key,
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
            }
        )
    spec["tolerations"] = tolerations


def _tolerates(t: dict[str, Any], key: str) -> bool:
    """Whether a toleration already covers the NoExecute taint `key` (then the plugin adds none)."""
    if t.get("effect") not in (None, "", "NoExecute"):
        return False
    return t.get("key") in (None, "", key)


def admit_service_account(store: Store, pod: dict[str, Any], name: str) -> None:
    """The ServiceAccount plugin's Admit and Validate on a Pod's create: `serviceAccountName` defaults
    to `default`, the ServiceAccount must exist (403 otherwise, as the real plugin words it), its
    `imagePullSecrets` fill a Pod that has none, and unless `automountServiceAccountToken` is false
    (the Pod's, else the ServiceAccount's) every container and init container gets the
    `kube-api-access-xxxxx` projected token volume, mounted at TOKEN_MOUNT_PATH."""
    meta = pod.setdefault("metadata", {})
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    ns = str(meta.get("namespace", ""))
    if MIRROR_POD in (meta.get("annotations") or {}):
        _validate_mirror_pod(spec, name)
        return
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = DEFAULT_SERVICE_ACCOUNT
        spec["serviceAccount"] = DEFAULT_SERVICE_ACCOUNT
    account_name = str(spec["serviceAccountName"])
    account = store.find(("", "serviceaccounts"), ns, account_name)
    wait = store.admission.await_default_account
    if account is None and account_name == DEFAULT_SERVICE_ACCOUNT and wait is not None:
        wait(ns)
        account = store.find(("", "serviceaccounts"), ns, account_name)
    if account is None:
        raise E.forbidden(
            "",
            "pods",
            name,
            f"error looking up service account {ns}/{account_name}: "
            f'serviceaccount "{account_name}" not found',
        )
    if _automount(account, spec):
        _mount_token(spec)
    if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
        spec["imagePullSecrets"] = [
            {"name": s.get("name", "")} for s in account["imagePullSecrets"] if isinstance(s, dict)
        ]
    if (account["metadata"].get("annotations") or {}).get(ENFORCE_MOUNTABLE_SECRETS, "").lower() in (
        "true",
        "1",
        "t",
    ):
        _limit_secret_references(account, spec, name)


def _automount(account: dict[str, Any], spec: dict[str, Any]) -> bool:
    if isinstance(spec.get("automountServiceAccountToken"), bool):
        return bool(spec["automountServiceAccountToken"])
    if isinstance(account.get("automountServiceAccountToken"), bool):
        return bool(account["automountServiceAccountToken"])
    return True


def token_volume_source() -> dict[str, Any]:
    """TokenVolumeSource: the token, the cluster's CA and the namespace, mode 0644."""
    return {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {
                "downwardAPI": {
                    "items": [
                        {
                            "path": "namespace",
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        }
                    ]
                }
            },
        ],
    }


def _mount_token(spec: dict[str, Any]) -> None:
    """mountServiceAccountToken: reuse a `kube-api-access-*` volume the Pod has, else name one; mount it
    read-only in every container that has nothing at the token path; add the volume if one mounts it."""
    volumes = listed if isinstance(listed := spec.get("volumes"), list) else []
    existing = next(
        (
            v.get("name")
            for v in volumes
            if isinstance(v, dict) and str(v.get("name", "")).startswith(TOKEN_VOLUME_PREFIX)
        ),
        None,
    )
    volume_name = existing or generate_name(TOKEN_VOLUME_PREFIX)
    needed = False
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            if not isinstance(container, dict):
                continue
            mounts = given if isinstance(given := container.get("volumeMounts"), list) else []
            if any(isinstance(m, dict) and m.get("mountPath") == TOKEN_MOUNT_PATH for m in mounts):
                continue
            container["volumeMounts"] = [
                *mounts,
                {"name": volume_name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH},
            ]
            needed = True
    if existing is None and needed:
        spec["volumes"] = [*volumes, {"name": volume_name, "projected": token_volume_source()}]


def _validate_mirror_pod(spec: dict[str, Any], name: str) -> None:
    def refuse(why: str) -> E.StatusError:
        return E.forbidden("", "pods", name, why)

    if spec.get("serviceAccountName"):
        raise refuse("a mirror pod may not reference service accounts")
    for volume in spec.get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        if "secret" in volume:
            raise refuse("a mirror pod may not reference secrets")
        for source in (volume.get("projected") or {}).get("sources") or []:
            if isinstance(source, dict) and "serviceAccountToken" in source:
                raise refuse("a mirror pod may not use ServiceAccountToken volume projections")


def _limit_secret_references(account: dict[str, Any], spec: dict[str, Any], name: str) -> None:
    """The kubernetes.io/enforce-mountable-secrets annotation: only the ServiceAccount's secrets."""
    sa = account["metadata"]["name"]
    mountable = {s.get("name") for s in account.get("secrets") or [] if isinstance(s, dict)}

    def refuse(why: str) -> E.StatusError:
        return E.forbidden("", "pods", name, why)

    for volume in spec.get("volumes") or []:
        secret = (volume or {}).get("secret") if isinstance(volume, dict) else None
        if isinstance(secret, dict) and secret.get("secretName") not in mountable:
            raise refuse(
                f'volume with secret.secretName="{secret.get("secretName")}" is not allowed because service '
                f"account {sa} does not reference that secret"
            )
    for key, label in (("initContainers", "init container"), ("containers", "container")):
        for c in spec.get(key) or []:
            if not isinstance(c, dict):
                continue
            for env in c.get("env") or []:
                ref = ((env or {}).get("valueFrom") or {}).get("secretKeyRef")
                if isinstance(ref, dict) and ref.get("name") not in mountable:
                    raise refuse(
                        f"{label} {c.get('name')} with envVar {env.get('name')} referencing "
                        f'secret.secretName="{ref.get("name")}" is not allowed because service account {sa} '
                        "does not reference that secret"
                    )
            for src in c.get("envFrom") or []:
                ref = (src or {}).get("secretRef")
                if isinstance(ref, dict) and ref.get("name") not in mountable:
                    raise refuse(
                        f"{label} {c.get('name')} with envFrom referencing "
                        f'secret.secretName="{ref.get("name")}" is not allowed because service account {sa} '
                        "does not reference that secret"
                    )
    pulls = {s.get("name") for s in account.get("imagePullSecrets") or [] if isinstance(s, dict)}
    for i, ref in enumerate(spec.get("imagePullSecrets") or []):
        if isinstance(ref, dict) and ref.get("name") not in pulls:
            raise refuse(
                f'imagePullSecrets[{i}].name="{ref.get("name")}" is not allowed because service account {sa} '
                "does not reference that imagePullSecret"
            )
