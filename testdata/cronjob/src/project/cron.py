# Copyright The Kubernetes authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Cron schedules as the Go tutorial reads them: robfig/cron v1.2.0's `ParseStandard` and `Next`.

Five fields (minute, hour, day of month, month, day of week: numbers, `*`, `?`, ranges, steps, lists,
month and weekday names) or a descriptor (`@hourly`, `@daily`/`@midnight`, `@weekly`, `@monthly`,
`@yearly`/`@annually`, `@every <Go duration>`). The errors are robfig's, word for word. A port and
not croniter: croniter accepts what robfig refuses (`L`, `W`, `#`, `H`, six fields, weekday 7) and
reads `*/2` in a day field as a restriction, where robfig (and Vixie cron) require both day fields.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from pyscaffold_op.runtime import parse_duration

STAR = 1 << 63  # the field started with * or ?: see _day_matches


@dataclass(frozen=True)
class _Bounds:
    low: int
    high: int
    names: tuple[str, ...] = ()  # names[i] is the value low + i


MINUTES, HOURS = _Bounds(0, 59), _Bounds(0, 23)
DAYS_OF_MONTH = _Bounds(1, 31)
MONTHS = _Bounds(1, 12, ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))
DAYS_OF_WEEK = _Bounds(0, 6, ("sun", "mon", "tue", "wed", "thu", "fri", "sat"))


class ScheduleError(ValueError):
    """The schedule does not parse; the message is robfig/cron's."""


def _bits(low: int, high: int, step: int) -> int:
    return sum(1 << i for i in range(low, high + 1, step))


def _all(bounds: _Bounds) -> int:
    return _bits(bounds.low, bounds.high, 1) | STAR


@dataclass(frozen=True)
class SpecSchedule:
    """A five-field schedule (robfig's SpecSchedule, seconds always 0): one bit per allowed value."""

    minute: int
    hour: int
    dom: int
    month: int
    dow: int

    def next(self, t: datetime) -> datetime | None:
        """The first activation strictly after `t` (in t's time zone), or None within five years."""
        t = t.replace(microsecond=0) + timedelta(seconds=1)
        added = False
        year_limit = t.year + 5
        while t.year <= year_limit:
            if not (1 << t.month) & self.month:
                if not added:
                    added, t = True, t.replace(day=1, hour=0, minute=0, second=0)
                t = (t.replace(day=28) + timedelta(days=4)).replace(day=1)  # the next month's first day
                continue
            if not self._day_matches(t):
                if not added:
                    added, t = True, t.replace(hour=0, minute=0, second=0)
                t += timedelta(days=1)
                continue
            if not (1 << t.hour) & self.hour:
                if not added:
                    added, t = True, t.replace(minute=0, second=0)
                t += timedelta(hours=1)
                continue
            if not (1 << t.minute) & self.minute:
                if not added:
                    added, t = True, t.replace(second=0)
                t += timedelta(minutes=1)
                continue
            if t.second:  # robfig's seconds field is 0 for ParseStandard
                if not added:
                    added = True
                t += timedelta(seconds=60 - t.second)
                continue
            return t
        return None

    def _day_matches(self, t: datetime) -> bool:
        dom_match = bool((1 << t.day) & self.dom)
        dow_match = bool((1 << (t.isoweekday() % 7)) & self.dow)
        if self.dom & STAR or self.dow & STAR:
            return dom_match and dow_match
        return dom_match or dow_match


@dataclass(frozen=True)
class EverySchedule:
    """`@every <duration>`: activations a fixed delay apart (robfig's ConstantDelaySchedule)."""

    delay: timedelta

    def next(self, t: datetime) -> datetime | None:
        return t.replace(microsecond=0) + self.delay


Schedule = SpecSchedule | EverySchedule

_DESCRIPTORS: dict[str, SpecSchedule] = {
    "@yearly": SpecSchedule(1, 1, 1 << 1, 1 << 1, _all(DAYS_OF_WEEK)),
    "@monthly": SpecSchedule(1, 1, 1 << 1, _all(MONTHS), _all(DAYS_OF_WEEK)),
    "@weekly": SpecSchedule(1, 1, _all(DAYS_OF_MONTH), _all(MONTHS), 1),
    "@daily": SpecSchedule(1, 1, _all(DAYS_OF_MONTH), _all(MONTHS), _all(DAYS_OF_WEEK)),
    "@hourly": SpecSchedule(1, _all(HOURS), _all(DAYS_OF_MONTH), _all(MONTHS), _all(DAYS_OF_WEEK)),
}
_DESCRIPTORS["@annually"], _DESCRIPTORS["@midnight"] = _DESCRIPTORS["@yearly"], _DESCRIPTORS["@daily"]


def parse_standard(spec: str) -> Schedule:
    """robfig/cron's ParseStandard: the schedule, or ScheduleError with robfig's message."""
    if not spec:
        raise ScheduleError("Empty spec string")
    if spec.startswith("@"):
        return _descriptor(spec)
    fields = spec.split()
    if len(fields) != 5:
        raise ScheduleError(f"Expected exactly 5 fields, found {len(fields)}: {spec}")
    bounds = (MINUTES, HOURS, DAYS_OF_MONTH, MONTHS, DAYS_OF_WEEK)
    minute, hour, dom, month, dow = (_field(text, b) for text, b in zip(fields, bounds, strict=True))
    return SpecSchedule(minute, hour, dom, month, dow)


def _descriptor(spec: str) -> Schedule:
    if (known := _DESCRIPTORS.get(spec)) is not None:
        return known
    if spec.startswith("@every "):
        try:
            seconds = parse_duration(spec.removeprefix("@every "))
        except ValueError as err:
            raise ScheduleError(f"Failed to parse duration {spec}: {err}") from None
        return EverySchedule(timedelta(seconds=max(1, int(seconds))))
    raise ScheduleError(f"Unrecognized descriptor: {spec}")


def _field(text: str, bounds: _Bounds) -> int:
    bits = 0
    for expr in filter(None, text.split(",")):
        bits |= _range(expr, bounds)
    return bits


def _range(expr: str, bounds: _Bounds) -> int:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = bounds.low, bounds.high, STAR
    else:
        start = _int_or_name(low_and_high[0], bounds)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], bounds)
        else:
            raise ScheduleError(f"Too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _int(range_and_step[1])
        if len(low_and_high) == 1:  # "N/step" means "N-max/step"
            end = bounds.high
    else:
        raise ScheduleError(f"Too many slashes: {expr}")
    if start < bounds.low:
        raise ScheduleError(f"Beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise ScheduleError(f"End of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise ScheduleError(f"Beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"Step of range should be a positive number: {expr}")
    return _bits(start, end, step) | extra


def _int_or_name(expr: str, bounds: _Bounds) -> int:
    if expr.lower() in bounds.names:
        return bounds.low + bounds.names.index(expr.lower())
    return _int(expr)


def _int(expr: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", expr):
        raise ScheduleError(f'Failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax')
    number = int(expr)
    if number < 0:
        raise ScheduleError(f"Negative number ({number}) not allowed: {expr}")
    return number
