"""Event validation as kube-apiserver v1.37 does it (`pkg/apis/core/validation/events.go`), for core/v1
and events.k8s.io/v1 writes alike: both are stored as core/v1 Events (`crossgroup.py`), and what the
server checks depends on the group the request came through.

* Either group, an Event with an `eventTime` (what the events.k8s.io recorders write): a reporting
  controller (a qualified name), a reporting instance (at most 128 characters), an action and a reason
  (each at most 128), a message (note) of at most 1024, and an involved object in the Event's
  namespace unless it is cluster-scoped (then the Event is in `default` or `kube-system`).
* Without `eventTime` (the classic recorders), only the namespaces are compared.
* Through events.k8s.io/v1 only: `eventTime` required, `type` Normal or Warning, the deprecated
  fields unset, a series of at least 2 with its `lastObservedTime`; on update the fields an Event is
  made of are immutable.

Field names are the internal type's (`message`, `involvedObject`, `reportingController`; through
core/v1 the controller is `reportingComponent`), as the server's messages name them.
"""

from __future__ import annotations

from typing import Any

from pyscaffold_op.apimachinery.validation import is_qualified_name
from pyscaffold_op.envtest.registry.immutable import go_value
from pyscaffold_op.envtest.status import Cause, cause

EVENTS_GROUP = "events.k8s.io"
INSTANCE_LIMIT = ACTION_LIMIT = REASON_LIMIT = 128
NOTE_LIMIT = 1024

# (core/v1 field, path in messages) compared by ValidateEventUpdate through events.k8s.io, in its order
_IMMUTABLE = (
    ("involvedObject", "involvedObject"),
    ("reason", "reason"),
    ("message", "message"),
    ("source", "source"),
    ("firstTimestamp", "firstTimestamp"),
    ("lastTimestamp", "lastTimestamp"),
    ("count", "count"),  # (the server compares reason twice; its error list drops the repeat)
    ("type", "type"),
)
_IMMUTABLE_AFTER_TIME = (
    ("action", "action"),
    ("related", "related"),
    ("reportingComponent", "reportingController"),
    ("reportingInstance", "reportingInstance"),
)


def _invalid(path: str, value: Any, detail: str) -> Cause:
    return cause("FieldValueInvalid", path, f"Invalid value: {go_value(value)}: {detail}")


def _required(path: str) -> Cause:
    return cause("FieldValueRequired", path, "Required value")


def _str(obj: dict[str, Any], name: str) -> str:
    value = obj.get(name)
    return value if isinstance(value, str) else ""


def _dict(obj: dict[str, Any], name: str) -> dict[str, Any]:
    value = obj.get(name)
    return value if isinstance(value, dict) else {}


def _legacy(obj: dict[str, Any], group: str) -> list[Cause]:
    out: list[Cause] = []
    namespace = _str(_dict(obj, "metadata"), "namespace")
    involved_ns = _str(_dict(obj, "involvedObject"), "namespace")
    mismatch = _invalid("involvedObject.namespace", involved_ns, "does not match event.namespace")
    if not obj.get("eventTime"):
        if not involved_ns:
            if namespace not in ("", "default"):
                out.append(mismatch)
        elif namespace != involved_ns:
            out.append(mismatch)
        return out
    if not involved_ns and namespace not in ("default", "kube-system"):
        out.append(mismatch)
    controller_path = "reportingComponent" if group == "" else "reportingController"
    controller = _str(obj, "reportingComponent")
    if not controller:
        out.append(_required(controller_path))
    out += [_invalid(controller_path, controller, msg) for msg in is_qualified_name(controller)]
    for path, limit in (
        ("reportingInstance", INSTANCE_LIMIT),
        ("action", ACTION_LIMIT),
        ("reason", REASON_LIMIT),
    ):
        value = _str(obj, path)
        if not value:
            out.append(_required(path))
        if len(value.encode()) > limit:
            out.append(_invalid(path, "", f"can have at most {limit} characters"))
    if len(_str(obj, "message").encode()) > NOTE_LIMIT:
        out.append(_invalid("message", "", f"can have at most {NOTE_LIMIT} characters"))
    return out


def _series(obj: dict[str, Any]) -> list[Cause]:
    series = obj.get("series")
    if not isinstance(series, dict):
        return []
    out: list[Cause] = []
    count = series.get("count")
    if not isinstance(count, int) or count < 2:
        out.append(_invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        out.append(_required("series.lastObservedTime"))
    return out


def create_causes(group: str, obj: dict[str, Any]) -> list[Cause]:
    """ValidateEventCreate for a request through `group` ("" or events.k8s.io); `obj` in core/v1 form."""
    out = _legacy(obj, group)
    if group != EVENTS_GROUP:
        return out
    out += _series(obj)
    if not obj.get("eventTime"):
        out.append(_required("eventTime"))
    type_ = _str(obj, "type")
    if type_ not in ("Normal", "Warning"):
        out.append(_invalid("type", "", f"has invalid value: {type_}"))
    for name in ("firstTimestamp", "lastTimestamp"):
        if obj.get(name):
            out.append(_invalid(name, "", "needs to be unset"))
    if obj.get("count"):
        out.append(_invalid("count", "", "needs to be unset"))
    source = _dict(obj, "source")
    if source.get("component") or source.get("host"):
        out.append(_invalid("source", "", "needs to be unset"))
    return out


def update_causes(group: str, obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """ValidateEventUpdate (metadata rules are the emulator's general ones)."""
    out = _legacy(obj, group)
    if group != EVENTS_GROUP:
        return out
    if obj.get("series") != old.get("series"):
        out += _series(obj)
    for name, path in _IMMUTABLE:
        if obj.get(name) != old.get(name):
            out.append(_invalid(path, obj.get(name), "field is immutable"))
    if obj.get("eventTime") != old.get("eventTime"):
        out.append(_invalid("eventTime", obj.get("eventTime"), "field is immutable"))
    for name, path in _IMMUTABLE_AFTER_TIME:
        if obj.get(name) != old.get(name):
            out.append(_invalid(path, obj.get(name), "field is immutable"))
    return out
