"""CronJob spec validation as kube-apiserver v1.37 does it (`pkg/apis/batch/validation`,
`validateCronJobSpec`): `spec.schedule` parsed by robfig/cron v3's standard parser (which the server
calls through `ParseCronScheduleWithPanicRecovery`), `TZ=`/`CRON_TZ=` in the schedule refused in favour
of `spec.timeZone`, and `spec.timeZone` checked as an IANA name Go's `time.LoadLocation` can load.

The parser here only validates: it walks the schedule as robfig's `Parser.Parse` does and returns its
first error in its words (`expected exactly 5 fields, found 1: [x]`, `failed to parse int from x:
strconv.Atoi: parsing "x": invalid syntax`, ...). Computing the schedule's times is the CronJob
controller's job (`envtest/controllers/cronjob.py`).
"""

from __future__ import annotations

import os
import re
import zoneinfo
from typing import Any

from pyscaffold_op.envtest.registry.immutable import go_value
from pyscaffold_op.envtest.server.gotime import duration_error
from pyscaffold_op.envtest.status import Cause, cause

# robfig/cron v3 bounds: (min, max, names)
_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTHS = {name: i + 1 for i, name in enumerate(_MONTH_NAMES)}
_DAYS = {n: i for i, n in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
_BOUNDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}),  # seconds (the standard parser fills in "0")
    (0, 59, {}),  # minutes
    (0, 23, {}),  # hours
    (1, 31, {}),  # day of month
    (1, 12, _MONTHS),
    (0, 6, _DAYS),  # day of week
)
_DESCRIPTORS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
_EVERY = "@every "
_ATOI = re.compile(r"[+-]?[0-9]+")
_INT64 = 1 << 63
# kube-apiserver's validTimeZoneCharacters: one component of an IANA name
_TZ_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")


def _go_quote(s: str) -> str:
    """strconv.Quote for the strings a schedule holds (printable text)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _go_list(items: list[str]) -> str:
    """A []string printed with %s: `[a b c]`."""
    return "[" + " ".join(items) + "]"


# Go's platformZoneSources on Linux, searched in this order by time.LoadLocation
_GO_ZONE_SOURCES = ("/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ", "/etc/zoneinfo")


def load_location_error(name: str) -> str | None:
    """Why Go's `time.LoadLocation(name)` fails, or None when it loads. Go reads the system's zoneinfo
    folders first and reports the first error that is not "no such file" (a directory: EISDIR), then
    its embedded copy; Python's ZoneInfo skips directories, so they are looked at here first, and the
    answer does not depend on whether the tzdata package is installed."""
    if name in ("", "UTC", "Local"):
        return None
    if ".." in name or name[0] in "/\\":
        return "time: invalid location name"
    sources = [os.environ["ZONEINFO"]] if os.environ.get("ZONEINFO") else []
    for source in [*sources, *_GO_ZONE_SOURCES]:
        path = os.path.join(source, name)
        if os.path.isfile(path):
            break
        if os.path.isdir(path):
            return "is a directory"
    try:
        zoneinfo.ZoneInfo(name)
    except ValueError:  # a file that is not TZif data (ZoneInfoNotFoundError is a KeyError)
        return "malformed time zone information"
    except IsADirectoryError:  # the tzdata package's folder, when no system folder has the name
        return "is a directory"
    except (KeyError, OSError):
        return f"unknown time zone {name}"
    return None


def _atoi(expr: str) -> tuple[int, str | None]:
    """strconv.Atoi as robfig's mustParseInt uses it, with its errors."""
    if not _ATOI.fullmatch(expr):
        return 0, f"failed to parse int from {expr}: strconv.Atoi: parsing {_go_quote(expr)}: invalid syntax"
    num = int(expr)
    if not -_INT64 <= num < _INT64:
        return (
            0,
            f"failed to parse int from {expr}: strconv.Atoi: parsing {_go_quote(expr)}: value out of range",
        )
    if num < 0:
        return 0, f"negative number ({num}) not allowed: {expr}"
    return num, None


def _int_or_name(expr: str, names: dict[str, int]) -> tuple[int, str | None]:
    if expr.lower() in names:
        return names[expr.lower()], None
    return _atoi(expr)


def _range_error(expr: str, low: int, high: int, names: dict[str, int]) -> str | None:
    """robfig's getRange: `number | number "-" number [ "/" number ]`, or `*`/`?` for the whole range."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start, err = _int_or_name(low_and_high[0], names)
        if err:
            return err
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end, err = _int_or_name(low_and_high[1], names)
            if err:
                return err
        else:
            return f"too many hyphens: {expr}"
    step = 1
    if len(range_and_step) == 2:
        step, err = _atoi(range_and_step[1])
        if err:
            return err
        if len(low_and_high) == 1:  # "N/step" means "N-max/step"
            end = high
    elif len(range_and_step) > 2:
        return f"too many slashes: {expr}"
    if start < low:
        return f"beginning of range ({start}) below minimum ({low}): {expr}"
    if end > high:
        return f"end of range ({end}) above maximum ({high}): {expr}"
    if start > end:
        return f"beginning of range ({start}) beyond end of range ({end}): {expr}"
    if step == 0:
        return f"step of range should be a positive number: {expr}"
    return None


def schedule_error(spec: str) -> str | None:
    """Why robfig/cron v3's `ParseStandard(spec)` fails, in its words (as kube-apiserver reports it,
    a panic included), or None when it parses."""
    if not spec:
        return "empty spec string"
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space, eq = spec.find(" "), spec.find("=")
        if space < 0:  # robfig slices spec[eq+1:-1]: the server recovers the panic
            return "invalid schedule format: runtime error: slice bounds out of range [:-1]"
        location = spec[eq + 1 : space]
        problem = load_location_error(location)
        if problem:
            return f"provided bad location {location}: {problem}"
        spec = spec[space:].strip()
    if spec.startswith("@"):
        if spec in _DESCRIPTORS:
            return None
        if spec.startswith(_EVERY):
            problem = duration_error(spec[len(_EVERY) :])
            return f"failed to parse duration {spec}: {problem}" if problem else None
        return f"unrecognized descriptor: {spec}"
    fields = spec.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: {_go_list(fields)}"
    for field, (low, high, names) in zip(["0", *fields], _BOUNDS, strict=True):
        for expr in (part for part in field.split(",") if part):
            problem = _range_error(expr, low, high, names)
            if problem:
                return problem
    return None


def _invalid(path: str, value: Any, detail: str) -> Cause:
    return cause("FieldValueInvalid", path, f"Invalid value: {go_value(value)}: {detail}")


def schedule_causes(spec: dict[str, Any], old_spec: dict[str, Any] | None) -> list[Cause]:
    """`spec.schedule` as validateCronJobSpec checks it; a schedule stored with TZ may keep it."""
    schedule = spec.get("schedule")
    if not isinstance(schedule, str) or not schedule:
        return [cause("FieldValueRequired", "spec.schedule", "Required value")]
    out: list[Cause] = []
    problem = schedule_error(schedule)
    if problem:
        out.append(_invalid("spec.schedule", schedule, problem))
    old_schedule = (old_spec or {}).get("schedule")
    allow_tz = isinstance(old_schedule, str) and "TZ" in old_schedule
    if allow_tz and "TZ" in schedule and spec.get("timeZone") is not None:
        out.append(
            _invalid(
                "spec.schedule", schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"
            )
        )
    elif not allow_tz and "TZ" in schedule:
        out.append(
            _invalid(
                "spec.schedule", schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
            )
        )
    return out


def time_zone_causes(spec: dict[str, Any], old_spec: dict[str, Any] | None) -> list[Cause]:
    """`spec.timeZone` as validateTimeZone checks it (on create, and on an update that changes it)."""
    tz = spec.get("timeZone")
    if tz is None or not isinstance(tz, str) or (old_spec is not None and old_spec.get("timeZone") == tz):
        return []
    path = "spec.timeZone"
    if not tz:
        return [_invalid(path, tz, "timeZone must be nil or non-empty string")]
    for part in tz.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TZ_PART.fullmatch(part):
            return [_invalid(path, tz, f"unknown time zone {tz}")]
    out: list[Cause] = []
    if tz.lower() == "local":
        out.append(
            _invalid(
                path,
                tz,
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
            )
        )
    problem = load_location_error(tz)
    if problem:
        out.append(_invalid(path, tz, problem))
    return out


def spec_causes(obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    """The schedule, starting deadline and time zone of a CronJob write, in validateCronJobSpec's order
    (the job template's checks come next, from `podspec`)."""
    spec = obj.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    old_spec = None if old is None else (old.get("spec") if isinstance(old.get("spec"), dict) else {})
    out = schedule_causes(spec, old_spec)
    deadline = spec.get("startingDeadlineSeconds")
    if isinstance(deadline, int) and deadline < 0:
        out.append(_invalid("spec.startingDeadlineSeconds", deadline, "must be greater than or equal to 0"))
    return [*out, *time_zone_causes(spec, old_spec)]


def name_causes(obj: dict[str, Any]) -> list[Cause]:
    """On create only: the controller names Jobs `<name>-<11 characters>`, and a Job name is a label."""
    name = (obj.get("metadata") or {}).get("name")
    if isinstance(name, str) and len(name) > 52:
        return [_invalid("metadata.name", name, "must be no more than 52 characters")]
    return []
