"""Semantic versions as blang/semver's `Parse` reads them (what OLM and operator-framework/api use):
MAJOR.MINOR.PATCH, no leading `v`, no leading zeros, optional `-pre.release` and `+build`."""

from __future__ import annotations

import re

_NUM = r"(0|[1-9][0-9]*)"
_PRE = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_RE = re.compile(
    rf"^{_NUM}\.{_NUM}\.{_NUM}(?:-({_PRE}(?:\.{_PRE})*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


def parse(text: str) -> tuple[int, int, int, str] | None:
    """(major, minor, patch, prerelease), or None when `text` is not a semantic version."""
    match = _RE.match(text or "")
    if match is None:
        return None
    return int(match[1]), int(match[2]), int(match[3]), match[4] or ""
