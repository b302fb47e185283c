"""`pyop version` and `pyop completion`: what is installed, and completion in a real bash."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pyscaffold_op import __version__

from .conftest import RunPyop

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_version_names_pyop_kubernetes_python_and_platform(pyop: RunPyop, tmp_path: Path) -> None:
    run = pyop("version", cwd=tmp_path)
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[0] == f"pyop {__version__}"
    assert lines[1].startswith("kubernetes 1.") and "envtest reports v1." in lines[1]
    assert lines[2].startswith(f"python {platform.python_version()} ")
    assert lines[3] == f"platform {platform.system().lower()}/{platform.machine()}"
    assert pyop("--version", cwd=tmp_path).out == f"pyop {__version__}\n"  # unchanged


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_the_script_for_the_shell(pyop: RunPyop, tmp_path: Path, shell: str) -> None:
    run = pyop("completion", shell, cwd=tmp_path)
    assert run.code == 0, run.err
    assert f"_PYOP_COMPLETE=complete_{shell}" in run.out
    assert pyop("completion", "tcsh", cwd=tmp_path).code == 2


def complete_in_bash(words: list[str], tmp_path: Path) -> list[str]:
    """What bash offers after `words` (the last one being completed), with pyop's completion script."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "pyop"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pyscaffold_op "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    script = subprocess.run(
        ["pyop", "completion", "bash"], env=env, capture_output=True, text=True, check=True
    ).stdout
    words_array = " ".join(f"'{w}'" for w in words)
    program = f"{script}\nCOMP_WORDS=({words_array}); COMP_CWORD={len(words) - 1}\n"
    program += '_pyop_completion pyop; printf "%s\\n" "${COMPREPLY[@]}"\n'
    run = subprocess.run(["bash", "-c", program], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_commands_subcommands_and_flags(tmp_path: Path) -> None:
    assert complete_in_bash(["pyop", "cr"], tmp_path) == ["create"]
    assert complete_in_bash(["pyop", "create", "w"], tmp_path) == ["webhook"]
    assert "--domain" in complete_in_bash(["pyop", "init", "--dom"], tmp_path)
    assert set(complete_in_bash(["pyop", "completion", ""], tmp_path)) == {"bash", "zsh", "fish"}
