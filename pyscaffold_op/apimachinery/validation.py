"""Name rules of k8s.io/apimachinery/pkg/util/validation, with its messages.

Each `is_*` returns the list of problems (empty when valid), worded as the API server words them, so
the scaffolder's one-line errors and the emulator's 422 causes say the same thing about the same name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
    "max_len_error",
]

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = rf"{_LABEL_FMT}(\.{_LABEL_FMT})*"
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = f"({_QUALIFIED_FMT})?"

_LABEL = re.compile(_LABEL_FMT)
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT)
_DNS1035 = re.compile(_DNS1035_FMT)
_QUALIFIED = re.compile(_QUALIFIED_FMT)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def content_max_len_error(length: int) -> str:
    """The words of apimachinery v0.37's `validate/content` rules (label keys and values), which
    count bytes where util/validation's count characters."""
    return f"must be no more than {length} bytes"


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    shown = ",  or ".join(f"'{e}'" for e in examples)
    return f"{message} (e.g. {shown}, regex used for validation is '{fmt}')"


@dataclass(frozen=True)
class _Rule:
    max_len: int
    regex: re.Pattern[str]
    message: str
    fmt: str
    examples: tuple[str, ...]
    content: bool = False  # a `validate/content` rule: its length is in bytes, and says so

    def check(self, value: str) -> list[str]:
        if self.content:
            errors = [content_max_len_error(self.max_len)] if len(value.encode()) > self.max_len else []
        else:
            errors = [max_len_error(self.max_len)] if len(value) > self.max_len else []
        if not self.regex.fullmatch(value):
            errors.append(_regex_error(self.message, self.fmt, *self.examples))
        return errors


_DNS1123_LABEL = _Rule(
    63,
    _LABEL,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character",
    _LABEL_FMT,
    ("my-name", "123-abc"),
)
_DNS1123_SUBDOMAIN = _Rule(
    253,
    _SUBDOMAIN,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
    "must start and end with an alphanumeric character",
    _SUBDOMAIN_FMT,
    ("example.com",),
)
_DNS1035_LABEL = _Rule(
    63,
    _DNS1035,
    "a lowercase RFC 1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character",
    _DNS1035_FMT,
    ("my-name", "abc-123"),
)
_LABEL_VALUE_RULE = _Rule(
    63,
    _LABEL_VALUE,
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
    "must start and end with an alphanumeric character",
    _LABEL_VALUE_FMT,
    ("MyValue", "my_value", "12345"),
    content=True,
)


def is_dns1123_label(value: str) -> list[str]:
    """A DNS-1123 label (namespace names, most resource names of the core group): at most 63. A
    valid subdomain that is no label can only have dots, and is told so."""
    errors = _DNS1123_LABEL.check(value)
    if not _LABEL.fullmatch(value) and _SUBDOMAIN.fullmatch(value):
        errors[-1] = "must not contain dots"
    return errors


# content.IsDNS1123Subdomain: a label key's prefix (util/validation's own counts characters)
_CONTENT_SUBDOMAIN = _Rule(
    _DNS1123_SUBDOMAIN.max_len,
    _DNS1123_SUBDOMAIN.regex,
    _DNS1123_SUBDOMAIN.message,
    _DNS1123_SUBDOMAIN.fmt,
    _DNS1123_SUBDOMAIN.examples,
    content=True,
)


def is_dns1123_subdomain(value: str) -> list[str]:
    """A DNS-1123 subdomain (most object names, API groups): at most 253."""
    return _DNS1123_SUBDOMAIN.check(value)


def is_dns1035_label(value: str) -> list[str]:
    """A DNS-1035 label (CRD plural, singular, short names, categories): starts with a letter."""
    return _DNS1035_LABEL.check(value)


def is_qualified_name(value: str) -> list[str]:
    """A label or annotation key: `[prefix/]name`, the prefix a DNS-1123 subdomain (apimachinery's
    content.IsLabelKey, whose words these are)."""
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a valid label key "
            + _regex_error(
                "must consist of alphanumeric characters, '-', '_' or '.', and must "
                "start and end with an alphanumeric character",
                _QUALIFIED_FMT,
                "MyName",
                "my.name",
                "123-abc",
            )
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    errors: list[str] = []
    if len(parts) == 2:
        if not parts[0]:
            errors.append("prefix part must be non-empty")
        else:
            errors += [f"prefix part {e}" for e in _CONTENT_SUBDOMAIN.check(parts[0])]
    name = parts[-1]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errors.append("name part " + content_max_len_error(63))
    if not _QUALIFIED.fullmatch(name):
        errors.append(
            _regex_error(
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
                "and end with an alphanumeric character",
                _QUALIFIED_FMT,
                "MyName",
                "my.name",
                "123-abc",
            )
        )
    return errors


def is_valid_label_value(value: str) -> list[str]:
    """A label value: empty, or at most 63 of `[-A-Za-z0-9_.]` starting and ending alphanumeric."""
    return _LABEL_VALUE_RULE.check(value)
