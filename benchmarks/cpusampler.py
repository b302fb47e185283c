"""A CPU sampling profiler for the benchmarks' operators: `ITIMER_PROF` fires every `interval` seconds
of the process's CPU time and the signal handler counts the Python stack it interrupted. cProfile's
per-call cost inflates code made of many small calls; sampling does not, and C code (pydantic's
validators, the TLS library) is charged to the Python line that called it.

    with CpuSampler(0.001) as sampler:
        ...
    sampler.write_collapsed(path)  # "frame;frame;frame count" lines (flamegraph.pl, speedscope)
    print(sampler.summary())       # self and inclusive shares by function
"""

from __future__ import annotations

import collections
import signal
from pathlib import Path
from types import FrameType, TracebackType


def _label(frame: FrameType) -> str:
    code = frame.f_code
    return f"{Path(code.co_filename).name}:{code.co_name}"


class CpuSampler:
    def __init__(self, interval: float = 0.001) -> None:
        self.interval = interval
        self.stacks: collections.Counter[tuple[str, ...]] = collections.Counter()

    def _sample(self, _signum: int, frame: FrameType | None) -> None:
        stack: list[str] = []
        while frame is not None:
            stack.append(_label(frame))
            frame = frame.f_back
        self.stacks[tuple(reversed(stack))] += 1

    def __enter__(self) -> CpuSampler:
        signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, signal.SIG_DFL)

    def write_collapsed(self, path: Path) -> None:
        lines = [f"{';'.join(stack)} {count}" for stack, count in self.stacks.most_common()]
        path.write_text("\n".join(lines) + "\n")

    def summary(self, top: int = 40) -> str:
        total = sum(self.stacks.values()) or 1
        own: collections.Counter[str] = collections.Counter()
        inclusive: collections.Counter[str] = collections.Counter()
        for stack, count in self.stacks.items():
            own[stack[-1]] += count
            for name in set(stack):
                inclusive[name] += count
        rows = [f"{total} samples of {self.interval * 1000:g} ms CPU", "self%  incl%  function"]
        for name, _ in inclusive.most_common(top):
            rows.append(f"{100 * own[name] / total:5.1f}  {100 * inclusive[name] / total:5.1f}  {name}")
        rows.append("-- most self time")
        for name, count in own.most_common(top):
            rows.append(f"{100 * count / total:5.1f}  {100 * inclusive[name] / total:5.1f}  {name}")
        return "\n".join(rows)
