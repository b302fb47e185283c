"""Regenerate the golden trees `testdata/project/`, `testdata/at/`, `testdata/cronjob/`: `make testdata`.

The tree is exactly what the at example's commands produce (seed 000):

    pyop init --domain viper.run --repo github.com/AbyssViper/programming-kubernetes
    pyop create api --group programming-kubernetes --version v1alpha1 --kind At --resource --controller

plus the generated manifests (what `create api`'s default `--make` adds).
`tests/scaffold/test_golden.py` regenerates it into a temporary folder and fails on any difference.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from pyscaffold_op.scaffold.api import create_api
from pyscaffold_op.scaffold.init import InitOptions, init_project
from pyscaffold_op.scaffold.inputs import ApiOptions

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


def generate_manifests(dest: Path) -> None:
    """`make manifests` in-process."""
    from pyscaffold_op.gen import generate_manifests as generate

    generate(dest)


def build_golden(dest: Path) -> None:
    """The whole golden tree into `dest`: the scaffold and its manifests."""
    scaffold_at_example(dest)
    generate_manifests(dest)


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
    build_golden(dest)
    files = sum(1 for path in dest.rglob("*") if path.is_file())
    print(f"regenerated {dest} ({files} files, with generated manifests)", file=sys.stderr)
    if dest == GOLDEN_DIR:
        from pyscaffold_op.dev.golden_at import AT
        from pyscaffold_op.dev.template_history import TEMPLATES, record

        revision, new = record(TEMPLATES / "init")  # `pyop upgrade` of projects made by this template
        if new:
            print(f"recorded template revision {revision} in templates/history", file=sys.stderr)

        from pyscaffold_op.dev.golden_cronjob import CRONJOB

        for example in (AT, CRONJOB):
            if example.directory.is_dir():
                example.refresh()
                done = f"regenerated {example.directory} (scaffold output + its hand-finished files)"
                print(done, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
