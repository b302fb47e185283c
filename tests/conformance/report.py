"""The session's results: `N/M scenarios agree` and each difference."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Report:
    results: dict[str, list[str]] = field(default_factory=dict)  # scenario -> differences
    allowed: dict[str, str] = field(default_factory=dict)  # scenario -> documented reason
    path: Path | None = None

    def lines(self) -> list[str]:
        agree = sum(1 for d in self.results.values() if not d)
        out = [f"conformance corpus: {agree}/{len(self.results)} scenarios agree"]
        for name, diffs in sorted(self.results.items()):
            if not diffs:
                continue
            reason = self.allowed.get(name)
            out.append(f"- {name}" + (f"  [{reason}]" if reason else "  [NOT ALLOWED]"))
            out.extend(f"    {d}" for d in diffs)
        return out


REPORT = Report()
