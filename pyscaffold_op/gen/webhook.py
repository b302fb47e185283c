"""`+kubebuilder:webhook` markers -> `config/webhook/manifests.yaml` (controller-gen's webhook output):
one MutatingWebhookConfiguration `mutating-webhook-configuration` and one ValidatingWebhookConfiguration
`validating-webhook-configuration`, each webhook calling Service `webhook-service` in namespace
`system` (kustomize renames both) at the marker's `path`; and the CRD `spec.conversion` of kinds with
a conversion hub.

Values are checked as controller-gen and the API server check them, with the marker's file:line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pyscaffold_op.apimachinery.webhookpaths import CONVERT_PATH
from pyscaffold_op.errors import GenerateError
from pyscaffold_op.gen.markers import Marker, file_markers

MARKER = "kubebuilder:webhook"
MANIFEST = Path("config/webhook/manifests.yaml")
SERVICE = {"name": "webhook-service", "namespace": "system"}

_FAILURE = {"fail": "Fail", "ignore": "Ignore"}
_MATCH = {"exact": "Exact", "equivalent": "Equivalent"}
_SIDE_EFFECTS = {"none": "None", "noneondryrun": "NoneOnDryRun", "some": "Some", "unknown": "Unknown"}
_REINVOCATION = {"never": "Never", "ifneeded": "IfNeeded"}
_VERBS = {"create": "CREATE", "update": "UPDATE", "delete": "DELETE", "connect": "CONNECT", "*": "*"}


def collect_markers(folder: Path) -> list[Marker]:
    """Every webhook marker in the Python files under `folder` (none when it does not exist)."""
    if not folder.is_dir():
        return []
    return [m for path in sorted(folder.rglob("*.py")) for m in file_markers(path, (MARKER,))]


def _choice(m: Marker, arg: str, table: dict[str, str], default: str | None) -> str | None:
    raw = m.get(arg)
    if raw is None:
        return default
    value = table.get(str(raw).lower())
    if value is None:
        known = ", ".join(dict.fromkeys(table.values()))
        raise GenerateError(f"{m.where}: unknown value for {arg}: {raw} (known: {known})")
    return value


def _webhook(m: Marker) -> dict[str, Any]:
    name = m.get("name")
    if name.count(".") < 2:
        raise GenerateError(
            f"{m.where}: name {name!r}: should be a domain with at least three segments separated by dots"
        )
    if not m.get("path") and not m.get("url"):
        raise GenerateError(f"{m.where}: +kubebuilder:webhook needs path (or url)")
    if m.get("path") and not str(m.get("path")).startswith("/"):
        raise GenerateError(f"{m.where}: path {m.get('path')!r} must start with '/'")
    verbs = []
    for verb in m.get("verbs"):
        op = _VERBS.get(str(verb).lower())
        if op is None:
            raise GenerateError(
                f"{m.where}: unknown verb {verb!r} (known: create, update, delete, connect, *)"
            )
        verbs.append(op)
    side_effects = _choice(m, "sideEffects", _SIDE_EFFECTS, None)
    if side_effects is None:
        raise GenerateError(
            f"{m.where}: sideEffects is required for a v1 webhook configuration (None, NoneOnDryRun)"
        )
    if side_effects in ("Some", "Unknown"):
        raise GenerateError(
            f"{m.where}: sideEffects should not be set to `{side_effects}` for v1 (None, NoneOnDryRun)"
        )
    versions = [str(v) for v in m.get("admissionReviewVersions")]
    if not set(versions) & {"v1", "v1beta1"}:
        raise GenerateError(f"{m.where}: admissionReviewVersions must include v1 or v1beta1")
    client: dict[str, Any] = (
        {"url": m.get("url")} if m.get("url") else {"service": {**SERVICE, "path": m.get("path")}}
    )
    out: dict[str, Any] = {
        "admissionReviewVersions": versions,
        "clientConfig": client,
        "failurePolicy": _choice(m, "failurePolicy", _FAILURE, "Fail"),
        "name": name,
        "rules": [
            {
                "apiGroups": ["" if g == "core" else str(g) for g in m.get("groups")],
                "apiVersions": [str(v) for v in m.get("versions")],
                "operations": verbs,
                "resources": [str(r) for r in m.get("resources")],
            }
        ],
        "sideEffects": side_effects,
    }
    match = _choice(m, "matchPolicy", _MATCH, None)
    if match is not None:
        out["matchPolicy"] = match
    timeout = m.get("timeoutSeconds")
    if timeout is not None:
        if not 1 <= timeout <= 30:
            raise GenerateError(f"{m.where}: timeoutSeconds {timeout}: must be between 1 and 30 seconds")
        out["timeoutSeconds"] = timeout
    reinvocation = _choice(m, "reinvocationPolicy", _REINVOCATION, None)
    if reinvocation is not None:
        if not m.get("mutating"):
            raise GenerateError(f"{m.where}: reinvocationPolicy is only for mutating webhooks")
        out["reinvocationPolicy"] = reinvocation
    return out


def build_configurations(markers: list[Marker]) -> list[dict[str, Any]]:
    """The Mutating then Validating configuration, each only when it has webhooks (sorted by name)."""
    hooks: dict[bool, dict[str, dict[str, Any]]] = {True: {}, False: {}}
    for m in markers:
        hook = _webhook(m)
        mutating = bool(m.get("mutating"))
        if hook["name"] in hooks[mutating]:
            raise GenerateError(f"{m.where}: a webhook named {hook['name']!r} is already declared")
        hooks[mutating][hook["name"]] = hook
    docs = []
    for mutating, kind, name in (
        (True, "MutatingWebhookConfiguration", "mutating-webhook-configuration"),
        (False, "ValidatingWebhookConfiguration", "validating-webhook-configuration"),
    ):
        if hooks[mutating]:
            docs.append(
                {
                    "apiVersion": "admissionregistration.k8s.io/v1",
                    "kind": kind,
                    "metadata": {"name": name},
                    "webhooks": [hooks[mutating][n] for n in sorted(hooks[mutating])],
                }
            )
    return docs


def conversion_of(classes: list[type]) -> dict[str, Any] | None:
    """The CRD `spec.conversion` for the versions of one kind: a Webhook strategy when one version is a
    conversion hub (kubebuilder's `config/crd/patches/webhook_in_<plural>.yaml`), else None."""
    # A class can subclass Hub only when its module is loaded: importing it here would load the
    # runtime's webhook server (aiohttp, ~40 ms) into every `make manifests`.
    hub: Any = getattr(sys.modules.get("pyscaffold_op.runtime.webhook.conversion"), "Hub", None)
    hubs = [c for c in classes if hub is not None and issubclass(c, hub)]
    spokes = [c for c in classes if c not in hubs and hasattr(c, "convert_to")]
    if not hubs and not spokes:
        return None
    kind = classes[0].gvk.kind  # type: ignore[attr-defined]
    if len(hubs) != 1:
        found = ", ".join(c.gvk.version for c in hubs) or "none"  # type: ignore[attr-defined]
        raise GenerateError(f"{kind}: a conversion webhook needs exactly one Hub version (found: {found})")
    missing = [
        c.gvk.version  # type: ignore[attr-defined]
        for c in classes
        if c not in hubs and not (hasattr(c, "convert_to") and hasattr(c, "convert_from"))
    ]
    if missing:
        raise GenerateError(
            f"{kind} {', '.join(missing)}: a spoke of hub {hubs[0].gvk.version} needs convert_to() and "  # type: ignore[attr-defined]
            "convert_from()"
        )
    return {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {"service": {**SERVICE, "path": CONVERT_PATH}},
            "conversionReviewVersions": ["v1"],
        },
    }
