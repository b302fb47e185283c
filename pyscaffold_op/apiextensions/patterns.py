"""Regular expressions as the API server runs them (Go's RE2): the one place patterns are compiled.

Schema `pattern`s and CEL's `matches()` both come here, so swapping Python's `re` for an RE2 binding
changes this module only.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["pattern_problem", "search"]

_RE2_UNSUPPORTED = re.compile(r"\(\?(?:=|!|<=|<!)|\\[1-9]|\(\?P=|\\[gk]<")


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def search(pattern: str, value: str) -> bool:
    """Whether `pattern` matches somewhere in `value` (unanchored, like Go's `MatchString`)."""
    return _compiled(pattern).search(value) is not None


def pattern_problem(pattern: str) -> str:
    """Why RE2 (what the API server compiles patterns with) rejects `pattern`, or ""."""
    try:
        _compiled(pattern)
    except re.error as err:
        return str(err)
    found = _RE2_UNSUPPORTED.search(pattern)
    if found:
        return f"RE2 has no lookaround or backreferences ({found.group(0)!r})"
    return ""
