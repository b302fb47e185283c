"""PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902, with `test`), strategic merge patch.

Strategic merge needs per-field merge keys, which the real server reads from Go struct tags. We keep
the table of list fields that matter to operators (containers by name, env by name, ...) keyed by the
field name, which is unambiguous for the core kinds.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch

from pyscaffold_op.envtest.status import StatusError, bad_request

# list field name -> merge key (None: a primitive list merged as a set)
MERGE_KEYS: dict[str, str | None] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "conditions": "type",
    "ownerReferences": "uid",
    "finalizers": None,
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
    "schedulingGates": "name",
    "containerStatuses": "name",
    "initContainerStatuses": "name",
    "addresses": "type",
    "taints": "key",
    "ports": "port",  # ServicePort; container ports use containerPort (see _merge_key)
}


def _merge_key(field: str, items: list[Any]) -> str | bool | None:
    """The merge key of a list field, None for a primitive set, False for "replace the list"."""
    if field not in MERGE_KEYS:
        return False
    key = MERGE_KEYS[field]
    if field == "ports" and any(isinstance(i, dict) and "containerPort" in i for i in items):
        return "containerPort"
    return key


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, everything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: dict[str, Any], ops: Any) -> dict[str, Any]:
    """RFC 6902. A failed `test` is 422 like the real server; malformed ops or bad paths are 422/400."""
    if not isinstance(ops, list):
        raise bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    try:
        return jsonpatch.JsonPatch(ops).apply(target, in_place=False)
    except jsonpatch.JsonPatchTestFailed as err:
        raise StatusError(
            422,
            "Invalid",
            f"the server rejected our request due to an error in our request: testing value failed: {err}",
        ) from None
    except (
        jsonpatch.JsonPatchException,
        jsonpatch.JsonPointerException,
        KeyError,
        IndexError,
        TypeError,
    ) as err:
        raise StatusError(
            422, "Invalid", f"the server rejected our request due to an error in our request: {err}"
        ) from None


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    """Kubernetes strategic merge patch for the built-in kinds (directives `$patch`,
    `$deleteFromPrimitiveList/`, `$setElementOrder/`, `$retainKeys`)."""
    if not isinstance(patch, dict):
        raise bad_request("strategic merge patch must be a JSON object")
    return _smp_map(target if isinstance(target, dict) else {}, patch)


def _smp_map(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return {}
    result = dict(target)
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys") or key.startswith("$setElementOrder/"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            if isinstance(result.get(field), list):
                result[field] = [x for x in result[field] if x not in value]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            if value.get("$patch") == "delete":
                result.pop(key, None)
            else:
                cur = result.get(key)
                result[key] = _smp_map(cur if isinstance(cur, dict) else {}, value)
        elif isinstance(value, list):
            result[key] = _smp_list(key, result.get(key), value)
        else:
            result[key] = value
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _smp_list(field: str, current: Any, patch: list[Any]) -> list[Any]:
    cur = current if isinstance(current, list) else []
    mkey = _merge_key(field, patch + cur)
    if mkey is False:
        return [copy.deepcopy(x) for x in patch if not (isinstance(x, dict) and "$patch" in x)]
    if any(isinstance(x, dict) and x.get("$patch") == "replace" for x in patch):
        return [copy.deepcopy(x) for x in patch if not (isinstance(x, dict) and "$patch" in x)]
    if mkey is None:  # primitive list: union, patch order for new entries
        out = list(cur)
        for x in patch:
            if x not in out:
                out.append(x)
        return out
    out = [copy.deepcopy(x) for x in cur]
    index = {x.get(mkey): i for i, x in enumerate(out) if isinstance(x, dict)}
    deleted: set[Any] = set()
    for item in patch:
        if not isinstance(item, dict):
            raise bad_request(f"strategic merge patch: list {field} must hold objects")
        k = item.get(mkey)
        if item.get("$patch") == "delete":
            deleted.add(k)
            continue
        if k in index:
            out[index[k]] = _smp_map(out[index[k]], item)
        else:
            index[k] = len(out)
            out.append({kk: vv for kk, vv in item.items() if kk != "$patch"})
    return [x for x in out if not (isinstance(x, dict) and x.get(mkey) in deleted)]


__all__ = ["MERGE_KEYS", "json_patch", "merge_patch", "strategic_merge_patch"]
