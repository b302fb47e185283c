"""The Kubernetes CEL semver library (k8s.io/apiserver/pkg/cel/library/semverlib.go).

Versions parse as github.com/blang/semver/v4 parses them (its error texts), with the library's
optional normalization (`semver(s, true)`: no `v`, missing minor/patch filled, leading zeros dropped).
Two versions are equal when they compare equal: build metadata is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyscaffold_op.apiextensions import celtypes
from pyscaffold_op.apiextensions.celtypes import Decl

__all__ = ["SemverError", "Version", "declarations", "normalize_and_parse", "parse"]

TYPE = "kubernetes.Semver"
_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")
_UINT64_MAX = (1 << 64) - 1


class SemverError(ValueError):
    """Not a semantic version; `str()` is blang/semver's error text."""


@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()

    def compare(self, other: Version) -> int:
        for mine, theirs in ((self.major, other.major), (self.minor, other.minor), (self.patch, other.patch)):
            if mine != theirs:
                return 1 if mine > theirs else -1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for a, b in zip(self.pre, other.pre, strict=False):
            if a == b:
                continue
            if isinstance(a, int) and isinstance(b, int):
                return 1 if a > b else -1
            if isinstance(a, int) != isinstance(b, int):
                return -1 if isinstance(a, int) else 1  # numeric identifiers sort first
            return 1 if str(a) > str(b) else -1
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def canonical(self) -> str:
        # numeric and alphanumeric prerelease identifiers stay told apart (`#` is in neither)
        pre = ".".join(f"#{p}" if isinstance(p, int) else p for p in self.pre)
        return f"{self.major}.{self.minor}.{self.patch}" + (f"-{pre}" if self.pre else "")

    @staticmethod
    def from_canonical(text: str) -> Version:
        core, _, pre = text.partition("-")
        major, minor, patch = (int(p) for p in core.split("."))
        items = tuple(int(p[1:]) if p.startswith("#") else p for p in pre.split(".")) if pre else ()
        return Version(major, minor, patch, items)


def _contains_only(text: str, allowed: frozenset[str]) -> bool:
    return all(ch in allowed for ch in text)


def _leading_zeroes(text: str) -> bool:
    return len(text) > 1 and text[0] == "0"


def _parse_uint(text: str) -> int:
    """Go's strconv.ParseUint(text, 10, 64), with its errors."""
    if not text or not _contains_only(text, _NUMBERS):
        raise SemverError(f"strconv.ParseUint: parsing {celtypes.go_quote(text)}: invalid syntax")
    value = int(text)
    if value > _UINT64_MAX:
        raise SemverError(f"strconv.ParseUint: parsing {celtypes.go_quote(text)}: value out of range")
    return value


def _number(text: str, what: str) -> int:
    q = celtypes.go_quote(text)
    if not _contains_only(text, _NUMBERS):
        raise SemverError(f"Invalid character(s) found in {what.lower()} number {q}")
    if _leading_zeroes(text):
        raise SemverError(f"{what} number must not contain leading zeroes {q}")
    return _parse_uint(text)


def parse(text: str) -> Version:
    """blang/semver's Parse."""
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "Major")
    minor = _number(parts[1], "Minor")
    patch_text = parts[2]
    build: list[str] = []
    pre_texts: list[str] = []
    if "+" in patch_text:
        patch_text, _, build_text = patch_text.partition("+")
        build = build_text.split(".")
    if "-" in patch_text:
        patch_text, _, pre_text = patch_text.partition("-")
        pre_texts = pre_text.split(".")
    patch = _number(patch_text, "Patch")
    pre: list[int | str] = []
    for item in pre_texts:
        if not item:
            raise SemverError("Prerelease is empty")
        q = celtypes.go_quote(item)
        if _contains_only(item, _NUMBERS):
            if _leading_zeroes(item):
                raise SemverError(f"Numeric PreRelease version must not contain leading zeroes {q}")
            pre.append(_parse_uint(item))
        elif _contains_only(item, _ALPHANUM):
            pre.append(item)
        else:
            raise SemverError(f"Invalid character(s) found in prerelease {q}")
    for item in build:
        if not item:
            raise SemverError("Build meta data is empty")
        if not _contains_only(item, _ALPHANUM):
            raise SemverError(f"Invalid character(s) found in build meta data {celtypes.go_quote(item)}")
    return Version(major, minor, patch, tuple(pre))


def normalize_and_parse(text: str) -> Version:
    """The library's normalizeAndParse (semver.ParseTolerant without trimming spaces)."""
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in _NUMBERS:
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if any(ch in parts[-1] for ch in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return parse(".".join(parts))


# ------------------------------------------------------------------ the CEL functions


def _v(value: Any) -> Version:
    return Version.from_canonical(celtypes.state(value))


def _to_semver(text: str, normalize: bool = False) -> Any:
    version = normalize_and_parse(text) if normalize else parse(text)
    return celtypes.make(TYPE, version.canonical())


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        _ = normalize_and_parse(text) if normalize else parse(text)
    except SemverError:
        return False
    return True


def _int64(value: int) -> int:
    """Go's int64(uint64): the server hands version numbers over as CEL ints."""
    return value - (1 << 64) if value >= 1 << 63 else value


def declarations() -> dict[str, list[Any]]:
    """Overloads by function name."""
    from cel_expr_python import cel

    T = cel.Type
    S = celtypes.message_type(TYPE)

    def member(oid: str, ret: Any, params: list[Any], impl: Any) -> Any:
        return Decl(oid, ret, params, is_member=True, impl=impl)

    return {
        "semver": [
            Decl("string_to_semver", S, [T.STRING], impl=_to_semver),
            Decl("string_bool_to_semver", S, [T.STRING, T.BOOL], impl=_to_semver),
        ],
        "isSemver": [
            Decl("is_semver_string", T.BOOL, [T.STRING], impl=_is_semver),
            Decl("is_semver_string_bool", T.BOOL, [T.STRING, T.BOOL], impl=_is_semver),
        ],
        "isGreaterThan": [
            member("semver_is_greater_than", T.BOOL, [S, S], lambda a, b: _v(a).compare(_v(b)) == 1)
        ],
        "isLessThan": [
            member("semver_is_less_than", T.BOOL, [S, S], lambda a, b: _v(a).compare(_v(b)) == -1)
        ],
        "compareTo": [member("semver_compare_to", T.INT, [S, S], lambda a, b: _v(a).compare(_v(b)))],
        "major": [member("semver_major", T.INT, [S], lambda v: _int64(_v(v).major))],
        "minor": [member("semver_minor", T.INT, [S], lambda v: _int64(_v(v).minor))],
        "patch": [member("semver_patch", T.INT, [S], lambda v: _int64(_v(v).patch))],
    }
