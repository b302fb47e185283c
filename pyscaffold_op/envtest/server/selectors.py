"""The `labelSelector` and `fieldSelector` query parameters as predicates over stored objects.

The grammars are apimachinery's (`labels`, `fieldselector`, shared with the runtime); what is the
server's own is which fields a kind may be selected by.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pyscaffold_op.apimachinery import fieldselector, labels
from pyscaffold_op.envtest.registry.resources import EVENT_FIELD_SELECTORS, ServedResource
from pyscaffold_op.envtest.server.protocol import HttpRequest
from pyscaffold_op.envtest.status import bad_request

Predicate = Callable[[dict[str, Any]], bool]


def parse_label_selector(text: str | None) -> Predicate | None:
    """A predicate over an object's labels, or None for "everything". Raises 400 on bad syntax."""
    if not text or not text.strip():
        return None
    try:
        selector = labels.parse(text)
    except labels.SelectorError as err:
        raise bad_request(str(err)) from None
    return lambda obj: selector.matches(obj.get("metadata", {}).get("labels") or {})


_META = ("metadata.name", "metadata.namespace")
_NOT_SUPPORTED = "field label not supported: {label}"
_EVENT_LABELS = (*EVENT_FIELD_SELECTORS, *_META)
_SIGNER = ("metadata.name", "spec.signerName")
# The kinds whose API group registers a field label conversion (AddFieldLabelConversionFunc, v1.37.2):
# the labels it accepts and how it refuses the others. Every other kind has
# runtime.DefaultMetaV1FieldSelectorConversion: metadata.name and metadata.namespace only.
_CONVERSIONS: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {
    ("", "Pod"): (
        (
            *_META,
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
            "spec.host",
        ),
        _NOT_SUPPORTED,
    ),
    ("", "Node"): (("metadata.name", "spec.unschedulable"), _NOT_SUPPORTED),
    ("", "ReplicationController"): ((*_META, "status.replicas"), _NOT_SUPPORTED),
    ("", "Event"): (_EVENT_LABELS, _NOT_SUPPORTED),
    ("", "Namespace"): (("status.phase", "metadata.name"), _NOT_SUPPORTED),
    ("", "Secret"): (("type", *_META), _NOT_SUPPORTED),
    ("", "Service"): ((*_META, "spec.clusterIP", "spec.type"), _NOT_SUPPORTED),
    ("events.k8s.io", "Event"): (
        (
            "reason",
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "regarding.apiVersion",
            "regarding.resourceVersion",
            "regarding.fieldPath",
            "reportingController",
            "type",
            *_META,
        ),
        _NOT_SUPPORTED,
    ),
    ("batch", "Job"): ((*_META, "status.successful"), "field label {quoted} not supported for Job"),
    ("certificates.k8s.io", "CertificateSigningRequest"): (_SIGNER, _NOT_SUPPORTED),
    ("certificates.k8s.io", "ClusterTrustBundle"): (_SIGNER, _NOT_SUPPORTED),
    ("certificates.k8s.io", "PodCertificateRequest"): (
        ("metadata.name", "spec.signerName", "spec.podName", "spec.nodeName"),
        _NOT_SUPPORTED,
    ),
    ("resource.k8s.io", "ResourceSlice"): (
        ("metadata.name", "spec.nodeName", "spec.driver", "spec.pool.name"),
        "field label not supported for resource.k8s.io/{version}, Kind=ResourceSlice: {label}",
    ),
}
_RENAMED: dict[tuple[str, str], dict[str, str]] = {
    ("", "Pod"): {"spec.host": "spec.nodeName"}
}  # old v1 clients' spelling


def _go_quote(text: str) -> str:
    return json.dumps(text)  # Go's %q of a plain label is its JSON string


def _field_labels(info: ServedResource | None, allowed: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """The labels a kind's field selectors may name, and the error for any other."""
    if info is not None and not info.custom:
        conversion = _CONVERSIONS.get((info.group, info.kind))
        if conversion is not None:
            return conversion
        default = '{quoted} is not a known field selector: only "metadata.name", "metadata.namespace"'
        return _META, default
    return (*_META, *allowed), _NOT_SUPPORTED


def parse_field_selector(
    text: str | None, allowed: tuple[str, ...], info: ServedResource | None = None
) -> Predicate | None:
    """A predicate for `metadata.name=x,status.phase!=Running`; 400 for a field the kind's field label
    conversion refuses (`info`: the built-in's own table and words), else one not in `allowed`."""
    if not text or not text.strip():
        return None
    try:
        selector = fieldselector.parse(text)
    except fieldselector.FieldSelectorError as err:
        raise bad_request(str(err)) from None
    labels_, words = _field_labels(info, allowed)
    for req in selector.requirements:
        if req.field not in labels_:
            version = info.version if info is not None else ""
            raise bad_request(words.format(label=req.field, quoted=_go_quote(req.field), version=version))
    renamed = _RENAMED.get((info.group, info.kind), {}) if info is not None else {}
    if any(req.field in renamed for req in selector.requirements):
        selector = fieldselector.FieldSelector(
            tuple(
                fieldselector.FieldRequirement(renamed.get(r.field, r.field), r.equal, r.value)
                for r in selector.requirements
            )
        )
    return selector.matches


def query_selector(
    req: HttpRequest, allowed: tuple[str, ...], info: ServedResource | None = None
) -> Predicate | None:
    """The request's `labelSelector` and `fieldSelector` together, over served objects."""
    return combine(
        parse_label_selector(req.q("labelSelector")),
        parse_field_selector(req.q("fieldSelector"), allowed, info),
    )


def served_selector(req: HttpRequest, info: ServedResource) -> Predicate | None:
    """`query_selector` over stored objects: each is seen in its served form (regarding.name, ...)."""
    pred = query_selector(req, info.field_selectors, info)
    conv = info.from_storage
    if pred is not None and conv is not None:
        inner = pred
        return lambda o: inner(conv(o))
    return pred


def combine(*preds: Predicate | None) -> Predicate | None:
    active = [p for p in preds if p is not None]
    if not active:
        return None
    if len(active) == 1:
        return active[0]
    return lambda obj: all(p(obj) for p in active)


__all__ = [
    "combine",
    "parse_field_selector",
    "parse_label_selector",
    "query_selector",
    "served_selector",
]
