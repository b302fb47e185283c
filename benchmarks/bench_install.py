"""Measure what installing pyop brings: the closure of each install variant.

    python benchmarks/bench_install.py [--variants runtime,envtest,cli] [--without-lightkube]

Builds pyop's wheel, then for each variant creates a fresh virtual environment, installs the wheel with
that extra (dependencies from the configured package index, through pip's cache), and reports:
* distributions installed (pip, setuptools and pyop itself not counted);
* MB installed: files in site-packages less pip/setuptools, without the bytecode pip compiles at install
  (`__pycache__`, shown apart: an image built with `pip install --no-compile` leaves it out);
* import time of what an operator imports (`pyscaffold_op.runtime` and its main names), best of 5 runs,
  less the interpreter's own start.
`--without-lightkube` also measures the runtime closure less lightkube and the distributions only it
needs (what a runtime that stops using lightkube would reach), and that less cryptography too (needed
only for the self-signed metrics certificate). Goal: runtime closure under 25 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
NOT_COUNTED = {"pip", "setuptools", "pyscaffold-op"}
IMPORT_RUNTIME = (
    "import pyscaffold_op.runtime as r; "
    "r.Manager, r.Client, r.load_config, r.Request, r.Result; "
    "import pyscaffold_op.apimachinery as a; a.CustomResource"
)
# lightkube and the distributions nothing else in the runtime closure needs (httpx2 and its HTTP/2 and
# websocket stack; pyyaml for kubeconfig files).
LIGHTKUBE_ONLY = (
    "lightkube", "lightkube-models", "httpx2", "httpcore2", "anyio", "h11", "h2", "hpack", "hyperframe",
    "wsproto", "truststore", "pyyaml",
)  # fmt: skip
CRYPTOGRAPHY = ("cryptography", "cffi", "pycparser")


def run(*args: str | Path, cwd: Path | None = None) -> str:
    return subprocess.run([str(a) for a in args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def build_wheel(dest: Path) -> Path:
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", dest, REPO_ROOT)
    return next(dest.glob("pyscaffold_op-*.whl"))


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def tree_size(path: Path, *, bytecode: bool) -> int:
    files = [path] if path.is_file() else path.rglob("*")
    return sum(
        f.stat().st_size
        for f in files
        if f.is_file() and not f.is_symlink() and ("__pycache__" in f.parts) == bytecode
    )


def distributions(python: Path) -> list[str]:
    listed = json.loads(run(python, "-m", "pip", "list", "--format", "json"))
    return sorted(d["name"].lower() for d in listed if d["name"].lower() not in NOT_COUNTED)


def installed_mb(venv: Path, *, bytecode: bool = False) -> float:
    skipped = {"pip", "setuptools", "pkg_resources", "_distutils_hack", "distutils"}
    counted = [p for p in site_packages(venv).iterdir() if p.name.split("-")[0] not in skipped]
    return sum(tree_size(p, bytecode=bytecode) for p in counted) / 1e6


def import_seconds(python: Path, code: str) -> float:
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        run(python, "-c", code)
        best = min(best, time.perf_counter() - started)
    baseline = min(_timed(python, "pass") for _ in range(5))
    return best - baseline


def _timed(python: Path, code: str) -> float:
    started = time.perf_counter()
    run(python, "-c", code)
    return time.perf_counter() - started


def measure(wheel: Path, extra: str | None, work: Path, *, drop: tuple[str, ...] = ()) -> dict[str, object]:
    venv = work / f"venv-{extra or 'runtime'}-{len(drop)}"
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    target = f"{wheel}[{extra}]" if extra else str(wheel)
    run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", target)
    if drop:
        run(python, "-m", "pip", "uninstall", "-q", "-y", *drop)
    dists = distributions(python)
    return {
        "variant": extra or "runtime",
        "dropped": list(drop),
        "distributions": len(dists),
        "names": dists,
        "mb": round(installed_mb(venv), 1),
        "bytecode_mb": round(installed_mb(venv, bytecode=True), 1),
        "import_s": None if drop else round(import_seconds(python, IMPORT_RUNTIME), 3),
    }


def _label(result: dict[str, object]) -> str:
    dropped = result["dropped"]
    if not dropped:
        return str(result["variant"])
    less = "lightkube stack" + (" + cryptography" if "cryptography" in dropped else "")  # type: ignore[operator]
    return f"{result['variant']} less {less}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="runtime,envtest,cli")
    parser.add_argument("--without-lightkube", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the raw results as JSON")
    args = parser.parse_args(argv)
    env_note = f"python {sys.version.split()[0]}, {os.cpu_count()} cores"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        wheel = build_wheel(work / "dist")
        results = []
        for variant in args.variants.split(","):
            extra = None if variant == "runtime" else variant
            results.append(measure(wheel, extra, work))
        if args.without_lightkube:
            results.append(measure(wheel, None, work, drop=LIGHTKUBE_ONLY))
            results.append(measure(wheel, None, work, drop=LIGHTKUBE_ONLY + CRYPTOGRAPHY))
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"pyop install closures ({env_note})")
    header = (
        f"{'variant':<32} {'distributions':>13} {'MB installed':>12} {'+ bytecode':>10} {'import (s)':>10}"
    )
    print(header)
    for r in results:
        imp = "-" if r["import_s"] is None else f"{r['import_s']:.3f}"
        print(
            f"{_label(r):<32} {r['distributions']:>13} {r['mb']:>12.1f} {r['bytecode_mb']:>10.1f} {imp:>10}"
        )
    for r in results:
        print(f"\n{_label(r)}: {', '.join(r['names'])}")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
