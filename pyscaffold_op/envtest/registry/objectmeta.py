"""ObjectMeta as the server checks and fills it on writes: name rules per kind, labels, annotations,
finalizers (apimachinery's ValidateObjectMeta and core's kube finalizer names), generateName."""

from __future__ import annotations

import json
import random
from typing import Any

from pyscaffold_op.apimachinery.fielderrors import Cause, cause
from pyscaffold_op.apimachinery.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)
from pyscaffold_op.envtest.registry.kindrules import NameRule

# Same alphabet as apimachinery's rand.String: no vowels (no words), no confusable characters.
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
TOTAL_ANNOTATION_SIZE = 256 * 1024  # TotalAnnotationSizeLimitB
# helper.IsStandardFinalizerName: the finalizer names that need no domain
_STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")


def generate_name(prefix: str) -> str:
    return prefix[:58] + "".join(random.choice(_ALPHABET) for _ in range(5))


def is_path_segment_name(name: str) -> list[str]:
    """content.IsPathSegmentName: every create passes it (rest.BeforeCreate)."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


def _name_problems(name: str, rule: NameRule) -> list[str]:
    if rule == "label":
        return is_dns1123_label(name)
    if rule == "subdomain":
        return is_dns1123_subdomain(name)
    return is_path_segment_name(name)


def name_causes(name: str, rule: NameRule, field: str = "metadata.name") -> list[Cause]:
    """Causes for an invalid object name under the kind's rule (`kindrules.NAME_RULES`)."""
    return [
        cause("FieldValueInvalid", field, f'Invalid value: "{name}": {why}')
        for why in _name_problems(name, rule)
    ]


def label_causes(labels: object, field: str = "metadata.labels") -> list[Cause]:
    """Label keys must be qualified names, values label values (ValidateLabels)."""
    out: list[Cause] = []
    if not isinstance(labels, dict):
        return out
    for key, value in labels.items():
        for why in is_qualified_name(key):
            out.append(cause("FieldValueInvalid", field, f'Invalid value: "{key}": {why}'))
        problems = is_valid_label_value(value) if isinstance(value, str) else ["must be a string"]
        for why in problems:
            out.append(cause("FieldValueInvalid", field, f'Invalid value: "{value}": {why}'))
    return out


def annotation_causes(annotations: object, field: str = "metadata.annotations") -> list[Cause]:
    """ValidateAnnotations: keys are qualified names in any case; keys and values together at most
    256 KiB."""
    out: list[Cause] = []
    if not isinstance(annotations, dict):
        return out
    total = 0
    for key, value in annotations.items():
        for why in is_qualified_name(key.lower()):
            out.append(cause("FieldValueInvalid", field, f'Invalid value: "{key}": {why}'))
        total += len(key.encode()) + (len(value.encode()) if isinstance(value, str) else 0)
    if total > TOTAL_ANNOTATION_SIZE:
        out.append(
            cause("FieldValueTooLong", field, f"Too long: may not be more than {TOTAL_ANNOTATION_SIZE} bytes")
        )
    return out


def finalizer_causes(
    finalizers: object, kube: bool = True, field: str = "metadata.finalizers"
) -> list[Cause]:
    """apimachinery's ValidateFinalizers (qualified names, on the list's path; not both orphan and
    foregroundDeletion), then core's kube finalizer names (a name without a domain must be a
    standard one, on the item's path; `kube`: the kinds validated by core's ValidateObjectMeta, not
    custom resources, CRDs or admission configurations)."""
    if not isinstance(finalizers, list):
        return []
    names = [f for f in finalizers if isinstance(f, str)]
    out = [
        cause("FieldValueInvalid", field, f'Invalid value: "{name}": {why}')
        for name in names
        for why in is_qualified_name(name)
    ]
    if "orphan" in names and "foregroundDeletion" in names:
        out.append(
            cause(
                "FieldValueInvalid",
                field,
                f"Invalid value: {json.dumps(names, separators=(',', ':'))}: "
                "finalizer orphan and foregroundDeletion cannot be both set",
            )
        )
    for i, name in enumerate(names):
        if kube and "/" not in name and name not in _STANDARD_FINALIZERS:
            out.append(
                cause(
                    "FieldValueInvalid",
                    f"{field}[{i}]",
                    f'Invalid value: "{name}": '
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return out


def no_new_finalizers(new: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """ValidateObjectMetaUpdate: an object being deleted takes no new finalizers."""
    if not old.get("deletionTimestamp"):
        return []
    added = sorted(set(new.get("finalizers") or []) - set(old.get("finalizers") or []))
    if not added:
        return []
    shown = "[]string{" + ", ".join(json.dumps(f) for f in added) + "}"
    return [
        cause(
            "FieldValueForbidden",
            "metadata.finalizers",
            "Forbidden: no new finalizers can be added if the object is being deleted, "
            f"found new finalizers {shown}",
        )
    ]


def meta_causes(meta: dict[str, Any], rule: NameRule | None, kube: bool = True) -> list[Cause]:
    """ValidateObjectMeta in its order: the name (on create: `rule`; None on update, where the name
    cannot change), labels, annotations, finalizers."""
    out: list[Cause] = []
    if rule is not None:
        name = meta.get("name") or ""
        if not name:
            out.append(
                cause(
                    "FieldValueRequired", "metadata.name", "Required value: name or generateName is required"
                )
            )
        else:
            out.extend(name_causes(name, rule))
    out.extend(label_causes(meta.get("labels")))
    out.extend(annotation_causes(meta.get("annotations")))
    out.extend(finalizer_causes(meta.get("finalizers"), kube))
    return out
