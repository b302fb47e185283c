"""ObjectMeta as the server checks and fills it on writes: name rules, label rules, generateName."""

from __future__ import annotations

import random

from pyscaffold_op.apimachinery.fielderrors import Cause, cause
from pyscaffold_op.apimachinery.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)

# Same alphabet as apimachinery's rand.String: no vowels (no words), no confusable characters.
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def generate_name(prefix: str) -> str:
    return prefix[:58] + "".join(random.choice(_ALPHABET) for _ in range(5))


def name_causes(name: str, label: bool, field: str = "metadata.name") -> list[Cause]:
    """Causes for an invalid object name (DNS-1123 subdomain, or label for namespaces/services)."""
    problems = is_dns1123_label(name) if label else is_dns1123_subdomain(name)
    return [cause("FieldValueInvalid", field, f'Invalid value: "{name}": {why}') for why in problems]


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
