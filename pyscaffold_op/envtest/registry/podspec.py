"""A pod spec as core validation checks it (`ValidatePodSpec` of kube-apiserver v1.37.2, in its order),
for Pods and for the pod template of every workload: Deployment, ReplicaSet, ReplicationController,
StatefulSet, DaemonSet, Job, CronJob's job template, PodTemplate.

What is checked: volumes and mounts (`podvolumes`), containers (required; names, images, ports,
duplicates), init containers, `restartPolicy` and `dnsPolicy`, `nodeSelector` labels,
`activeDeadlineSeconds`, `hostname`/`subdomain`; and the workload's own rules for its template
(`selector` matching the template's labels, the restart policies it allows, no
`activeDeadlineSeconds` in long-running workloads). Probes, env, resources, security contexts,
affinity and the rest of `ValidatePodSpec` are not checked (docs/envtest.md says so).
"""

from __future__ import annotations

import re
from typing import Any

from pyscaffold_op.apimachinery import labels as label_selectors
from pyscaffold_op.apimachinery.fielderrors import Cause, cause
from pyscaffold_op.apimachinery.validation import is_dns1123_label, max_len_error
from pyscaffold_op.envtest.registry import podvolumes
from pyscaffold_op.envtest.registry.objectmeta import label_causes
from pyscaffold_op.envtest.types import as_obj

_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PROTOCOLS = ("SCTP", "TCP", "UDP")  # sets.List(supportedPortProtocols): sorted
_PORT_NAME_CHARSET = re.compile(r"^[-a-z0-9]+$")
_INT32_MAX = 2**31 - 1


def _supported(field: str, value: Any, allowed: tuple[str, ...]) -> Cause:
    shown = ", ".join(f'"{v}"' for v in allowed)
    return cause("FieldValueNotSupported", field, f'Unsupported value: "{value}": supported values: {shown}')


def _port_name_problems(name: str) -> list[str]:
    """validation.IsValidPortName (an IANA_SVC_NAME)."""
    out = []
    if len(name) > 15:
        out.append(max_len_error(15))
    if not _PORT_NAME_CHARSET.match(name):
        out.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", name):
        out.append("must contain at least one letter (a-z)")
    if "--" in name:
        out.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        out.append("must not begin or end with a hyphen")
    return out


def _port_causes(ports: Any, path: str) -> list[Cause]:
    """validateContainerPorts."""
    out: list[Cause] = []
    names: set[str] = set()
    for i, port in enumerate(ports if isinstance(ports, list) else []):
        if not isinstance(port, dict):
            continue
        at = f"{path}[{i}]"
        name = port.get("name") or ""
        if name:
            problems = _port_name_problems(name)
            out += [
                cause("FieldValueInvalid", f"{at}.name", f'Invalid value: "{name}": {p}') for p in problems
            ]
            if not problems and name in names:
                out.append(cause("FieldValueDuplicate", f"{at}.name", f'Duplicate value: "{name}"'))
            names.add(name)
        for field, required in (("containerPort", True), ("hostPort", False)):
            value = port.get(field) or 0
            if not value and required:
                out.append(cause("FieldValueRequired", f"{at}.{field}", "Required value"))
            elif value and not 1 <= value <= 65535:
                out.append(
                    cause(
                        "FieldValueInvalid",
                        f"{at}.{field}",
                        f"Invalid value: {value}: must be between 1 and 65535, inclusive",
                    )
                )
        protocol = port.get("protocol") or ""
        if not protocol:
            out.append(cause("FieldValueRequired", f"{at}.protocol", "Required value"))
        elif protocol not in _PROTOCOLS:
            out.append(_supported(f"{at}.protocol", protocol, _PROTOCOLS))
    return out


def _container_causes(c: dict[str, Any], volumes: set[str], at: str, created: bool) -> list[Cause]:
    """validateContainerCommon's checks that operators meet: name, image, ports, volume mounts."""
    out: list[Cause] = []
    name = c.get("name") or ""
    if not name:
        out.append(cause("FieldValueRequired", f"{at}.name", "Required value"))
    else:
        out += [
            cause("FieldValueInvalid", f"{at}.name", f'Invalid value: "{name}": {p}')
            for p in is_dns1123_label(name)
        ]
    if not c.get("image") and created:
        out.append(cause("FieldValueRequired", f"{at}.image", "Required value"))
    out += _port_causes(c.get("ports"), f"{at}.ports")
    out += podvolumes.mount_causes(c, volumes, at)
    return out


def pod_spec_causes(spec: dict[str, Any], path: str, *, created: bool = True) -> list[Cause]:
    """ValidatePodSpec's causes for `spec` at `path` (`spec`, `spec.template.spec`, ...). `created`:
    a Pod being updated keeps its image check to the update rules (images may change)."""
    volumes, out = podvolumes.volume_causes(spec, path)
    containers = spec.get("containers")
    names: set[str] = set()
    if not containers:
        out.append(cause("FieldValueRequired", f"{path}.containers", "Required value"))
    for i, c in enumerate(containers or []):
        at = f"{path}.containers[{i}]"
        if not isinstance(c, dict):
            continue
        out += _container_causes(c, volumes, at, created)
        name = c.get("name") or ""
        if name in names:
            out.append(cause("FieldValueDuplicate", f"{at}.name", f'Duplicate value: "{name}"'))
        names.add(name)
    for i, c in enumerate(spec.get("initContainers") or []):
        at = f"{path}.initContainers[{i}]"
        if not isinstance(c, dict):
            continue
        out += _container_causes(c, volumes, at, created)
        name = c.get("name") or ""
        if name in names:  # init container names are unique among all containers
            out.append(cause("FieldValueDuplicate", f"{at}.name", f'Duplicate value: "{name}"'))
        names.add(name)
    restart = spec.get("restartPolicy")
    if restart is not None and restart not in _RESTART_POLICIES:
        out.append(_supported(f"{path}.restartPolicy", restart, _RESTART_POLICIES))
    dns = spec.get("dnsPolicy")
    if dns is not None and dns not in _DNS_POLICIES:
        out.append(_supported(f"{path}.dnsPolicy", dns, _DNS_POLICIES))
    out += label_causes(spec.get("nodeSelector"), f"{path}.nodeSelector")
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not 1 <= deadline <= _INT32_MAX:
        out.append(
            cause(
                "FieldValueInvalid",
                f"{path}.activeDeadlineSeconds",
                f"Invalid value: {deadline}: must be between 1 and {_INT32_MAX}, inclusive",
            )
        )
    for field in ("hostname", "subdomain"):
        value = spec.get(field)
        if isinstance(value, str) and value:
            out += [
                cause("FieldValueInvalid", f"{path}.{field}", f'Invalid value: "{value}": {p}')
                for p in is_dns1123_label(value)
            ]
    return out


# kind -> (where the pod template is, the restart policies its controller runs, what it calls itself
# when forbidding activeDeadlineSeconds; None: allowed)
_ALWAYS = ("Always",)
TEMPLATES: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...] | None, str | None]] = {
    ("apps", "deployments"): (("spec", "template"), _ALWAYS, "ReplicaSet"),
    ("apps", "replicasets"): (("spec", "template"), _ALWAYS, "ReplicaSet"),
    ("apps", "statefulsets"): (("spec", "template"), _ALWAYS, "StatefulSet"),
    ("apps", "daemonsets"): (("spec", "template"), _ALWAYS, "DaemonSet"),
    ("", "replicationcontrollers"): (("spec", "template"), _ALWAYS, "ReplicationController"),
    ("batch", "jobs"): (("spec", "template"), ("OnFailure", "Never"), None),
    ("batch", "cronjobs"): (("spec", "jobTemplate", "spec", "template"), ("OnFailure", "Never"), None),
    ("", "podtemplates"): (("template",), None, None),
}


def _at(obj: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        obj = obj.get(step) if isinstance(obj, dict) else None
    return obj


def template_causes(gr: tuple[str, str], obj: dict[str, Any]) -> list[Cause]:
    """The pod template of a workload: its labels against the selector, its spec as a pod spec, and
    the restart policies the workload allows."""
    where = TEMPLATES.get(gr)
    if where is None:
        return []
    path_parts, restart_policies, forbids_deadline = where
    template = _at(obj, path_parts)
    path = ".".join(path_parts)
    if not isinstance(template, dict):
        return []
    out: list[Cause] = []
    meta = as_obj(template.get("metadata"))
    selector = _at(obj, (*path_parts[:-1], "selector"))
    if gr != ("", "podtemplates") and gr[0] != "batch":
        out += _selector_mismatch(gr, selector, meta.get("labels") or {}, path)
    out += label_causes(meta.get("labels"), f"{path}.metadata.labels")
    spec = as_obj(template.get("spec"))
    out += pod_spec_causes(_as_validated(gr, obj, spec), f"{path}.spec")
    restart = spec.get("restartPolicy")
    if restart_policies == _ALWAYS and restart in _RESTART_POLICIES and restart != "Always":
        out.append(_supported(f"{path}.spec.restartPolicy", restart, _ALWAYS))
    elif restart_policies is not None and restart_policies != _ALWAYS and restart in (None, "", "Always"):
        out.append(
            cause(
                "FieldValueRequired",
                f"{path}.spec.restartPolicy",
                'Required value: valid values: "OnFailure", "Never"',
            )
        )
    if forbids_deadline is not None and spec.get("activeDeadlineSeconds") is not None:
        out.append(
            cause(
                "FieldValueForbidden",
                f"{path}.spec.activeDeadlineSeconds",
                f"Forbidden: activeDeadlineSeconds in {forbids_deadline} is not Supported",
            )
        )
    return out


def _as_validated(gr: tuple[str, str], obj: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """A StatefulSet's template is validated with its claim templates as volumes and without the
    hostname and subdomain its controller overwrites (ValidateStatefulSetSpec's templateToValidate)."""
    if gr != ("apps", "statefulsets"):
        return spec
    claims = [
        str(as_obj(c.get("metadata")).get("name") or "")
        for c in as_obj(obj.get("spec")).get("volumeClaimTemplates") or []
        if isinstance(c, dict)
    ]
    spec = {k: v for k, v in spec.items() if k not in ("hostname", "subdomain")}
    if claims:
        own = [v for v in spec.get("volumes") or [] if not (isinstance(v, dict) and v.get("name") in claims)]
        spec["volumes"] = [{"name": n, "persistentVolumeClaim": {"claimName": n}} for n in claims] + own
    return spec


def _selector_mismatch(gr: tuple[str, str], selector: Any, labels: dict[str, Any], path: str) -> list[Cause]:
    """`selector` does not match template `labels` (a ReplicationController's selector is a plain map)."""
    if gr == ("", "replicationcontrollers"):
        if not isinstance(selector, dict) or not selector:
            return []
        matches = all(labels.get(k) == v for k, v in selector.items())
    else:
        if not isinstance(selector, dict) or not (
            selector.get("matchLabels") or selector.get("matchExpressions")
        ):
            return []
        try:
            matches = label_selectors.from_label_selector(selector).matches(labels)
        except (label_selectors.SelectorError, AttributeError, TypeError, ValueError):
            return []
    if matches:
        return []
    shown = _go_map(labels)
    return [
        cause(
            "FieldValueInvalid",
            f"{path}.metadata.labels",
            f"Invalid value: {shown}: `selector` does not match template `labels`",
        )
    ]


def _go_map(labels: dict[str, Any]) -> str:
    import json

    return json.dumps(dict(sorted(labels.items())), separators=(",", ":"))
