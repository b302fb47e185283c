"""A container's environment and command line as the kubelet makes them: `envFrom` and `env` (values,
`$(VAR)` references to earlier variables, `fieldRef`, `resourceFieldRef`, ConfigMap and Secret keys),
a few variables every container has, and `$(VAR)` expanded in `command` and `args`
(third_party/forked/golang/expansion: `$$` is a `$`, an unknown reference stays as written)."""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Callable
from typing import Any

from pyscaffold_op.apiextensions import celquantity

# (kind "configmaps" | "secrets", namespace, name) -> the object, or None
Lookup = Callable[[str, str, str], dict[str, Any] | None]

BASE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/root",
    "KUBERNETES_SERVICE_HOST": "10.96.0.1",
    "KUBERNETES_SERVICE_PORT": "443",
    "KUBERNETES_SERVICE_PORT_HTTPS": "443",
    "KUBERNETES_PORT": "tcp://10.96.0.1:443",
    "KUBERNETES_PORT_443_TCP": "tcp://10.96.0.1:443",
    "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
    "KUBERNETES_PORT_443_TCP_PORT": "443",
    "KUBERNETES_PORT_443_TCP_ADDR": "10.96.0.1",
}
_NODE_ALLOCATABLE = {"cpu": "8", "memory": "32Gi", "ephemeral-storage": "100Gi"}


def expand(text: str, env: dict[str, str]) -> str:
    """expansion.Expand with the container's variables."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "$" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                end = text.find(")", i + 2)
                if end < 0:
                    out.append("$(")
                    i += 2
                    continue
                name = text[i + 2 : end]
                out.append(env.get(name, f"$({name})"))
                i = end + 1
                continue
            out.append(c + nxt)
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def container_env(
    pod: dict[str, Any], container: dict[str, Any], lookup: Lookup | None = None
) -> dict[str, str]:
    """The environment the container's process starts with. Without `lookup`, ConfigMap and Secret
    references are left unset (as the optional ones are when missing)."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    ns = meta.get("namespace", "")
    env = dict(BASE_ENV)
    env["HOSTNAME"] = spec.get("hostname") or meta.get("name", "")
    for source in container.get("envFrom") or []:
        if not isinstance(source, dict):
            continue
        prefix = str(source.get("prefix") or "")
        for kind, key in (("configmaps", "configMapRef"), ("secrets", "secretRef")):
            ref = source.get(key)
            if isinstance(ref, dict) and lookup is not None:
                obj = lookup(kind, ns, str(ref.get("name", "")))
                for k, v in _data(kind, obj).items():
                    env[prefix + k] = v
    for var in container.get("env") or []:
        if not isinstance(var, dict) or not var.get("name"):
            continue
        name = str(var["name"])
        if "value" in var or not var.get("valueFrom"):
            env[name] = expand(str(var.get("value") or ""), env)
            continue
        value = _value_from(var["valueFrom"], pod, container, lookup)
        if value is not None:
            env[name] = value
    return env


def command_line(pod: dict[str, Any], container: dict[str, Any], env: dict[str, str]) -> list[str]:
    """command + args with `$(VAR)` references expanded (None of either: the image's own)."""
    return [expand(str(a), env) for a in (container.get("command") or []) + (container.get("args") or [])]


def _data(kind: str, obj: dict[str, Any] | None) -> dict[str, str]:
    if obj is None:
        return {}
    if kind == "secrets":
        out = {}
        for k, v in (obj.get("data") or {}).items():
            try:
                out[k] = base64.b64decode(v).decode("utf-8", "replace")
            except ValueError:
                continue
        return out
    return {k: str(v) for k, v in (obj.get("data") or {}).items()}


_FIELD = re.compile(r"metadata\.(labels|annotations)\['([^']*)'\]")


def _value_from(
    source: Any, pod: dict[str, Any], container: dict[str, Any], lookup: Lookup | None
) -> str | None:
    if not isinstance(source, dict):
        return None
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    if isinstance(ref := source.get("fieldRef"), dict):
        path = str(ref.get("fieldPath", ""))
        if m := _FIELD.fullmatch(path):
            return str((meta.get(m.group(1)) or {}).get(m.group(2), ""))
        simple = {
            "metadata.name": meta.get("name"),
            "metadata.namespace": meta.get("namespace"),
            "metadata.uid": meta.get("uid"),
            "spec.nodeName": spec.get("nodeName"),
            "spec.serviceAccountName": spec.get("serviceAccountName"),
            "status.hostIP": status.get("hostIP"),
            "status.hostIPs": ",".join(i.get("ip", "") for i in status.get("hostIPs") or []),
            "status.podIP": status.get("podIP"),
            "status.podIPs": ",".join(i.get("ip", "") for i in status.get("podIPs") or []),
        }
        return str(simple.get(path) or "")
    if isinstance(ref := source.get("resourceFieldRef"), dict):
        return _resource_value(ref, container)
    for kind, key in (("configmaps", "configMapKeyRef"), ("secrets", "secretKeyRef")):
        ref = source.get(key)
        if isinstance(ref, dict) and lookup is not None:
            obj = lookup(kind, str(meta.get("namespace", "")), str(ref.get("name", "")))
            return _data(kind, obj).get(str(ref.get("key", "")))
    return None


def _resource_value(ref: dict[str, Any], container: dict[str, Any]) -> str:
    """resourceFieldRef: the container's limit (the node's allocatable when unset) or request, in units
    of the divisor, rounded up."""
    kind, _, resource = str(ref.get("resource", "")).partition(".")
    resources = container.get("resources") or {}
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    if kind == "limits":
        value = limits.get(resource) or _NODE_ALLOCATABLE.get(resource, "0")
    else:
        value = requests.get(resource) or limits.get(resource) or "0"
    try:
        quantity = celquantity.parse(str(value)).as_float()
        divisor = celquantity.parse(str(ref.get("divisor") or "1")).as_float() or 1.0
    except celquantity.QuantityError:
        return "0"
    return str(math.ceil(quantity / divisor))
