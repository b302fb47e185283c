"""Start-up cost of importing pyop's parts, in fresh processes: `pyop --help`, the at operator's manager
module, and the built-in models (pyop's typed `core_v1` + `apps_v1` against lightkube's).

    python benchmarks/bench_imports.py [--runs 15] [--root PATH] [--case "at manager"]

`--root` adds another checkout (for example `git archive main | tar -x -C /tmp/main`): its
`pyscaffold_op` and `testdata/at/src` go first on PYTHONPATH, so "before" and "after" a change run
with the same interpreter and libraries, interleaved run by run so machine load hits both alike.
Each process reports its own CPU time (`time.process_time()` at exit: start-up plus imports), which
other engineers' test runs on the shared cores disturb much less than wall-clock time. Each checkout's
sources are byte-compiled first (`compileall`, as pip does at install), so no run pays for compiling
them, whatever PYTHONDONTWRITEBYTECODE says. With `--root`, the last column is this checkout's median
over the first root's, for issue 12's goal (`pyop --help` and the at manager within 10%).
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CASES: dict[str, str] = {
    "pyop --help": "import sys; sys.argv = ['pyop', '--help']\n"
    "from pyscaffold_op.cli import main\ntry: main()\nexcept SystemExit: pass",
    "at manager (__main__ imports)": "import programming_kubernetes.__main__",
    "lightkube core_v1 + apps_v1 + runtime.manager": "import pyscaffold_op.runtime.manager.manager, "
    "lightkube.resources.core_v1, lightkube.resources.apps_v1",
    "typed Pod + Deployment + runtime.manager": "import pyscaffold_op.runtime.manager.manager\n"
    "from pyscaffold_op.models.core_v1 import Pod\nfrom pyscaffold_op.models.apps_v1 import Deployment",
    "typed ConfigMap + runtime.manager": "import pyscaffold_op.runtime.manager.manager\n"
    "from pyscaffold_op.models.core_v1 import ConfigMap",
    "every class of typed core_v1 + runtime.manager": "import pyscaffold_op.runtime.manager.manager\n"
    "import pyscaffold_op.models.core_v1 as m\n[getattr(m, n) for n in dir(m) if n[:1].isupper()]",
}


_REPORT = "\nimport time as _t, sys as _s; _s.__stdout__.write(f'\\nCPU={_t.process_time()}\\n')"


def run_once(code: str, root: Path) -> float | None:
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{root / 'testdata' / 'at' / 'src'}"}
    proc = subprocess.run(  # cwd: `python -c` puts it first on sys.path, before PYTHONPATH
        [sys.executable, "-c", code + _REPORT],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return None  # not importable in that checkout (no typed models before they existed)
    return float(proc.stdout.rsplit("CPU=", 1)[1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--root", type=Path, action="append", default=None)
    parser.add_argument("--case", action="append", default=None, help="only cases whose name contains this")
    args = parser.parse_args()
    roots = [*(args.root or []), REPO]
    for root in roots:
        for tree in (root / "pyscaffold_op", root / "testdata" / "at" / "src"):
            compileall.compile_dir(tree, quiet=1)
    print(f"{args.runs} fresh processes per case and checkout (python -c), CPU seconds, median (min)")
    print(f"load average at start: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    ratio = len(roots) > 1
    print("| case | " + " | ".join(str(r) for r in roots) + (" | this / first |" if ratio else " |"))
    print("| --- |" + " --- |" * (len(roots) + ratio))
    for name, code in CASES.items():
        if args.case and not any(c in name for c in args.case):
            continue
        times: dict[Path, list[float]] = {r: [] for r in roots}
        for _ in range(args.runs):
            for root in roots:
                value = run_once(code, root)
                if value is not None:
                    times[root].append(value)
        cells = [f"{statistics.median(t):.3f} ({min(t):.3f})" if t else "n/a" for t in times.values()]
        first, last = times[roots[0]], times[REPO]
        if ratio:
            share = statistics.median(last) / statistics.median(first) if first and last else None
            cells.append("n/a" if share is None else f"{share:.0%}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"load average at end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
