"""Object name rules (apimachinery validation) and the messages the real server uses."""

from __future__ import annotations

import random
import re

from pyscaffold_op.envtest.errors import cause

_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)

# Same alphabet as apimachinery's rand.String: no vowels (no words), no confusable characters.
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def generate_name(prefix: str) -> str:
    return prefix[:58] + "".join(random.choice(_ALPHABET) for _ in range(5))


def name_causes(name: str, label: bool, field: str = "metadata.name") -> list[dict[str, str]]:
    """Causes for an invalid object name (DNS-1123 subdomain, or label for namespaces/services)."""
    out = []
    if label:
        if len(name) > 63:
            out.append(
                cause(
                    "FieldValueInvalid", field, f'Invalid value: "{name}": must be no more than 63 characters'
                )
            )
        if not _LABEL.fullmatch(name):
            out.append(cause("FieldValueInvalid", field, f'Invalid value: "{name}": {LABEL_MSG}'))
    else:
        if len(name) > 253:
            out.append(
                cause(
                    "FieldValueInvalid",
                    field,
                    f'Invalid value: "{name}": must be no more than 253 characters',
                )
            )
        if not _SUBDOMAIN.fullmatch(name):
            out.append(cause("FieldValueInvalid", field, f'Invalid value: "{name}": {SUBDOMAIN_MSG}'))
    return out


_QUALIFIED = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


def label_causes(labels: object, field: str = "metadata.labels") -> list[dict[str, str]]:
    """Label keys must be qualified names, values at most 63 chars of [-A-Za-z0-9_.]."""
    out: list[dict[str, str]] = []
    if not isinstance(labels, dict):
        return out
    for k, v in labels.items():
        key_name = k.rsplit("/", 1)[-1]
        if not _QUALIFIED.fullmatch(key_name) or len(key_name) > 63:
            out.append(
                cause(
                    "FieldValueInvalid",
                    field,
                    f'Invalid value: "{k}": name part must consist of '
                    "alphanumeric characters, '-', '_' or '.', and must start and end with an "
                    "alphanumeric character",
                )
            )
        if not isinstance(v, str) or (v and (len(v) > 63 or not _QUALIFIED.fullmatch(v))):
            out.append(
                cause(
                    "FieldValueInvalid",
                    field,
                    f'Invalid value: "{v}": a valid label must be an '
                    "empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
                    "start and end with an alphanumeric character",
                )
            )
    return out
