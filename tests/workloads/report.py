"""The session's results: `N/M scenarios agree`, each difference with the reason it is listed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Report:
    # scenario -> [(difference, reason it is listed or None)]
    results: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict)
    path: Path | None = None

    def lines(self) -> list[str]:
        agree = sum(1 for d in self.results.values() if not d)
        listed = sum(1 for d in self.results.values() if d and all(r for _, r in d))
        out = [
            f"workload corpus: {agree}/{len(self.results)} scenarios agree, "
            f"{listed} more differ only as listed (tests/workloads/allowlist.py)"
        ]
        for name, diffs in sorted(self.results.items()):
            if not diffs:
                continue
            out.append(f"- {name}")
            out.extend(f"    {d}  [{reason or 'NOT LISTED'}]" for d, reason in diffs)
        return out


REPORT = Report()
