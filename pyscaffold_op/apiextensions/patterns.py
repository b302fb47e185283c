"""Regular expressions as the API server runs them (Go's RE2): the one place patterns are compiled.

Schema `pattern`s and CEL's `matches()` both come here. They run on google-re2, because Python's `re`
differs on exactly the inputs validation is about: `$` also matches before a trailing newline (so
`^[a-z]+$` accepted "abc\\n"), `\\d`, `\\w` and `\\s` match non-ASCII characters, and it knows lookarounds
and backreferences, which RE2 (and so the API server) refuses.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import re2

__all__ = ["compiled", "pattern_problem", "search"]

_RE2_UNSUPPORTED = re.compile(r"\(\?(?:=|!|<=|<!)|\\[1-9]|\(\?P=|\\[gk]<")
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # the error is raised to the caller; RE2 would also print it to stderr


@lru_cache(maxsize=1024)
def compiled(pattern: str) -> Any:
    """The RE2 program for `pattern` (cached); raises `re2.error` when RE2 refuses it."""
    return re2.compile(pattern, _OPTIONS)


def search(pattern: str, value: str) -> bool:
    """Whether `pattern` matches somewhere in `value` (unanchored, like Go's `MatchString`)."""
    return compiled(pattern).search(value) is not None


def pattern_problem(pattern: str) -> str:
    """Why RE2 (what the API server compiles patterns with) rejects `pattern`, or ""."""
    found = _RE2_UNSUPPORTED.search(pattern)
    if found:
        return f"RE2 has no lookaround or backreferences ({found.group(0)!r})"
    try:
        compiled(pattern)
    except re2.error as err:
        reason = err.args[0] if err.args else err
        return reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
    return ""
