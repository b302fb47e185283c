"""Go's `time.Parse` for the layouts the API's time types read (metav1.Time: RFC 3339, metav1.MicroTime:
RFC 3339 with microseconds) and `time.ParseDuration` (metav1.Duration), for their error texts:
`parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`,
`parsing time "2024-13-01T00:00:00Z": month out of range`, `time: invalid duration "x"`.

A port of the parts of Go's `time/format.go` these layouts reach; a value either parses (None) or
gets Go's message."""

from __future__ import annotations

import calendar
import re

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"

# each layout as (literal prefix, element) chunks, the element's layout text or "" at the end
_CHUNKS: dict[str, list[tuple[str, str]]] = {
    RFC3339: [
        ("", "2006"),
        ("-", "01"),
        ("-", "02"),
        ("T", "15"),
        (":", "04"),
        (":", "05"),
        ("", "Z07:00"),
        ("", ""),
    ],
    RFC3339_MICRO: [
        ("", "2006"),
        ("-", "01"),
        ("-", "02"),
        ("T", "15"),
        (":", "04"),
        (":", "05"),
        ("", ".000000"),
        ("", "Z07:00"),
        ("", ""),
    ],
}


class _Bad(Exception):
    """errBad: the element does not parse."""


def _quote(s: str) -> str:
    """time's quote(): double quotes, with `"` and `\\` escaped and non-printables as \\x escapes."""
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            out.extend(f"\\x{b:02x}" for b in ch.encode())
    out.append('"')
    return "".join(out)


def _digit(s: str, i: int) -> bool:
    return len(s) > i and "0" <= s[i] <= "9"


def _getnum(s: str, fixed: bool) -> tuple[int, str]:
    if not _digit(s, 0):
        raise _Bad
    if not _digit(s, 1):
        if fixed:
            raise _Bad
        return int(s[0]), s[1:]
    return int(s[:2]), s[2:]


def _skip(value: str, prefix: str) -> str:
    while prefix:
        if not value or value[0] != prefix[0]:
            raise _Bad
        prefix, value = prefix[1:], value[1:]
    return value


def parse_error(layout: str, value: str) -> str | None:
    """Why `time.Parse(layout, value)` fails, in Go's words, or None when it parses."""
    original = value
    year = month = day = 0

    def error(layout_elem: str, value_elem: str, message: str = "") -> str:
        if message:
            return f"parsing time {_quote(original)}{message}"
        return (
            f"parsing time {_quote(original)} as {_quote(layout)}: cannot parse {_quote(value_elem)} "
            f"as {_quote(layout_elem)}"
        )

    chunks = _CHUNKS[layout]
    for index, (prefix, elem) in enumerate(chunks):
        try:
            value = _skip(value, prefix)
        except _Bad:
            return error(prefix, value)
        if not elem:
            if value:
                return error("", value, f": extra text: {_quote(value)}")
            break
        hold = value
        out_of_range = ""
        try:
            if elem == "2006":
                if len(value) < 4 or not _digit(value, 0):
                    raise _Bad
                text, value = value[:4], value[4:]
                if not text.isdigit():
                    raise _Bad
                year = int(text)
            elif elem == "01":
                month, value = _getnum(value, True)
                if not 1 <= month <= 12:
                    out_of_range = "month"
            elif elem == "02":
                day, value = _getnum(value, True)
            elif elem == "15":
                hour, value = _getnum(value, False)
                if hour >= 24:
                    out_of_range = "hour"
            elif elem == "04":
                minute, value = _getnum(value, True)
                if minute >= 60:
                    out_of_range = "minute"
            elif elem == "05":
                second, value = _getnum(value, True)
                if second >= 60:
                    out_of_range = "second"
                elif (
                    len(value) >= 2
                    and value[0] in ".,"
                    and _digit(value, 1)
                    and chunks[index + 1][1] != ".000000"
                ):  # a fraction the layout does not have: read and dropped
                    n = 2
                    while _digit(value, n):
                        n += 1
                    value = value[n:]
            elif elem == ".000000":
                if len(value) < 7 or value[0] != "." or not value[1:7].isdigit():
                    raise _Bad
                value = value[7:]
            elif elem == "Z07:00":
                if value[:1] == "Z":
                    value = value[1:]
                else:
                    if len(value) < 6 or value[3] != ":":
                        raise _Bad
                    sign, hh, mm, value = value[0], value[1:3], value[4:6], value[6:]
                    hours, _ = _getnum(hh, True)
                    minutes, _ = _getnum(mm, True)
                    if hours > 24:
                        out_of_range = "time zone offset hour"
                    if minutes > 60:
                        out_of_range = "time zone offset minute"
                    if sign not in "+-":
                        raise _Bad
        except _Bad:
            if out_of_range:
                return error(elem, value, f": {out_of_range} out of range")
            return error(elem, hold)
        if out_of_range:
            return error(elem, value, f": {out_of_range} out of range")
    if day < 1 or day > _days_in(month, year):
        return error("", value, ": day out of range")
    return None


def _days_in(month: int, year: int) -> int:
    if not 1 <= month <= 12:
        return 31
    return calendar.monthrange(year if year > 0 else 2000 + year % 400, month)[1]


_UNITS = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "μs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}
_DURATION_PART = re.compile(r"(\d*)(\.\d*)?([^\d.]*)")


def duration_error(text: str) -> str | None:
    """Why `time.ParseDuration(text)` fails, in Go's words, or None when it parses."""
    quoted = _quote(text)
    s = text
    if s[:1] in "+-":
        s = s[1:]
    if s == "0":
        return None
    if not s:
        return f"time: invalid duration {quoted}"
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            return f"time: invalid duration {quoted}"
        m = _DURATION_PART.match(s)
        assert m is not None
        whole, fraction, unit = m.group(1), m.group(2) or "", m.group(3)
        if not whole and fraction in ("", "."):
            return f"time: invalid duration {quoted}"
        if not unit:
            return f"time: missing unit in duration {quoted}"
        if unit not in _UNITS:
            return f"time: unknown unit {_quote(unit)} in duration {quoted}"
        s = s[m.end() :]
    return None
