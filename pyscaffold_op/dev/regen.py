"""Regenerate the golden trees `testdata/project/` and `testdata/at/`: `python -m pyscaffold_op.dev.regen`.

The tree is exactly what the at example's commands produce (seed 000):

    pyop init --domain viper.run --repo github.com/AbyssViper/programming-kubernetes
    pyop create api --group programming-kubernetes --version v1alpha1 --kind At --resource --controller

plus, once the generator provides `pyscaffold_op.gen.generate_manifests`, the generated manifests
(what `create api`'s default `--make` would add). `tests/scaffold/test_golden.py` regenerates it into a
temporary folder and fails on any difference.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from pyscaffold_op.scaffold.api import ApiOptions, create_api
from pyscaffold_op.scaffold.init import InitOptions, init_project

REPO_ROOT = Path(__file__).resolve().parents[2]
GOLDEN_DIR = REPO_ROOT / "testdata" / "project"

AT_INIT = InitOptions(domain="viper.run", repo="github.com/AbyssViper/programming-kubernetes")
AT_API = ApiOptions(
    group="programming-kubernetes", version="v1alpha1", kind="At", resource=True, controller=True
)


def scaffold_at_example(dest: Path) -> None:
    """`pyop init` + `pyop create api --no-make` of the at example into the empty (or new) folder `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    init_project(AT_INIT, dest)
    create_api(AT_API, dest)


def generate_manifests(dest: Path) -> bool:
    """`make manifests` in-process when the generator is available; False when it is not (yet)."""
    try:
        from pyscaffold_op.gen import generate_manifests as generate
    except ImportError:
        return False
    generate(dest)
    return True


def build_golden(dest: Path) -> bool:
    """The whole golden tree into `dest`; returns whether manifests were generated."""
    scaffold_at_example(dest)
    return generate_manifests(dest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pyscaffold_op.dev.regen", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--dest", type=Path, default=GOLDEN_DIR, help="Folder to (re)create (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    dest: Path = args.dest.resolve()
    if dest.exists():
        shutil.rmtree(dest)
    generated = build_golden(dest)
    files = sum(1 for path in dest.rglob("*") if path.is_file())
    note = (
        "with generated manifests"
        if generated
        else "without manifests (no pyscaffold_op.gen.generate_manifests)"
    )
    print(f"regenerated {dest} ({files} files, {note})", file=sys.stderr)
    if dest == GOLDEN_DIR and generated:
        from pyscaffold_op.dev.golden_at import AT_DIR, refresh_at

        if AT_DIR.is_dir():
            refresh_at(AT_DIR)
            print(f"regenerated {AT_DIR} (scaffold output + its hand-finished files)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
