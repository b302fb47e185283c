"""Bad input and failures of the machine give one line on stderr and exit status 2, never a
traceback, and change no file (the scaffolder rolls back what it had moved into place)."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest

from pyscaffold_op.cli import main

INVALID_CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  names: {kind: Thing, plural: things}
  scope: Nowhere
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
"""


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line `pyop argv` prints on stderr; fails unless it exits with status 2."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err.strip()


def snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize("port", ["-1", "70000"])
def test_serve_port_out_of_range(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["envtest", "serve", "--port", port], capsys) == (
        f"error: --port {port}: must be a port number from 0 to 65535 (0: any free port)"
    )


def test_serve_malformed_and_invalid_crds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: CustomResourceDefinition\nspec: [unclosed\n")
    line = run(["envtest", "serve", "--crds", str(bad)], capsys)
    assert line.startswith(f"error: --crds {bad}: not valid YAML: ") and "(line 3)" in line
    folder = tmp_path / "crds"
    folder.mkdir()
    (folder / "thing.yaml").write_text(INVALID_CRD)
    line = run(["envtest", "serve", "--crds", str(folder)], capsys)
    assert line == (
        'error: --crds: CustomResourceDefinition.apiextensions.k8s.io "things.example.com" is invalid: '
        'spec.scope: Unsupported value: "Nowhere": supported values: "Cluster", "Namespaced"'
    )


def test_serve_kubeconfig_out_unwritable(capsys: pytest.CaptureFixture[str]) -> None:
    line = run(["envtest", "serve", "--kubeconfig-out", "/proc/nope/kc"], capsys)
    assert line.startswith("error: --kubeconfig-out /proc/nope/kc: cannot write it: "), line
    assert "--port" not in line


def test_serve_interrupted_while_starting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pyscaffold_op.envtest import Environment

    async def interrupted(self: Environment) -> Environment:
        raise KeyboardInterrupt  # what Ctrl-C raises in the middle of start()

    monkeypatch.setattr(Environment, "start", interrupted)
    assert run(["envtest", "serve"], capsys) == "error: interrupted while starting; nothing is served"


def test_create_api_kind_too_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    line = run(["create", "api", "--group", "g", "--version", "v1", "--kind", "A" * 300, "--no-make"], capsys)
    assert line.endswith("must be at most 63 characters, not 300")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "repo", ["../../tmp/evil", "github.com//x", "github.com/a b", "github.com/x/.hidden"]
)
def test_init_repo_must_be_a_module_path(
    repo: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.chdir(tmp_path)
    line = run(["init", "--domain", "viper.run", "--repo", repo], capsys)
    assert line.startswith(f"error: invalid repo {repo!r}: must be a "), line
    assert list(tmp_path.iterdir()) == []


def test_init_on_a_full_disk_rolls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pyscaffold_op.scaffold import transaction

    (tmp_path / "NOTES.md").write_text("mine\n")
    before = snapshot(tmp_path)
    real_replace = os.replace
    moves = 0

    def replace(src: object, dst: object) -> None:
        nonlocal moves
        moves += 1
        if moves == 12:  # some files are already in place when the disk fills up
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(transaction.os, "replace", replace)
    monkeypatch.chdir(tmp_path)
    line = run(["init", "--domain", "viper.run", "--repo", "github.com/x/full"], capsys)
    assert line.startswith("error: ") and line.endswith(": No space left on device"), line
    assert moves == 12  # eleven files were in place: the rollback removed them
    assert snapshot(tmp_path) == before


def test_ctrl_c_while_moving_files_into_place_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyscaffold_op.scaffold import transaction

    real_replace, calls = os.replace, []

    def interrupted_replace(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 5:  # Ctrl-C in the middle of the moves
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(transaction.os, "replace", interrupted_replace)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["init", "--domain", "viper.run", "--repo", "github.com/a/b"])
    assert exit_.value.code == 130  # the shell's status for SIGINT, as typer reports it
    assert len(calls) == 5 and snapshot(tmp_path) == {}
