"""Issue 38: `create api --external-api-module "os;import sys"` exited 0 and wrote the value into PROJECT
and the placeholder model. The external-kind flags are checked like every other flag: one line on
stderr, exit status 2, nothing written, for `create api` and `create webhook` alike."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pyscaffold_op.cli import main

from .test_cli_errors import run, snapshot

GO_PATH = "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
KIND = ["--group", "cert-manager", "--version", "v1", "--kind", "Issuer"]
CREATE_API = ["create", "api", *KIND, "--no-make"]
CREATE_WEBHOOK = ["create", "webhook", *KIND, "--defaulting", "--no-make"]

BAD = [
    # (flags, what the one line says)
    ([f"--external-api-path={GO_PATH}", "--external-api-domain=io", "--external-api-module=os;import sys"],
     "invalid --external-api-module 'os;import sys': neither a dotted Python module nor a Go module"),
    ([f"--external-api-path={GO_PATH}", "--external-api-domain=io", "--external-api-module=models.class"],
     "invalid --external-api-module 'models.class': neither a dotted Python module nor a Go module (a part"),
    ([f"--external-api-path={GO_PATH}", "--external-api-domain=io",
      "--external-api-module=github.com/cert-manager/cert-manager@v1.21.1 ; curl"],
     "is not a version, branch or commit"),
    (["--external-api-path=github.com/x;import os/v1", "--external-api-domain=io"],
     "'github.com/x;import os/v1': must be a valid Go import path: invalid char ';'"),
    (["--external-api-path=certmanager/v1", "--external-api-domain=io"],
     "must be a fully-qualified Go import path"),
    (["--external-api-path=github.com", "--external-api-domain=io"], "must include a package sub-path"),
    ([f"--external-api-path={GO_PATH}@v1.21.1", "--external-api-domain=io"],
     "version specifiers belong in --external-api-module"),
    ([f"--external-api-path={GO_PATH}", "--external-api-domain=IO"],
     "invalid --external-api-domain 'IO': must be a DNS-1123 subdomain"),
    ([f"--external-api-path={GO_PATH}", "--external-api-domain=io\nimport os"],
     "invalid --external-api-domain"),
]  # fmt: skip


@pytest.fixture(scope="module")
def _project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ext") / "demo"
    root.mkdir()
    cwd = Path.cwd()
    try:
        os.chdir(root)
        main(["init", "--domain", "example.com", "--repo", "example.com/demo"])
    except SystemExit as done:
        assert done.code in (0, None)
    finally:
        os.chdir(cwd)
    return root


@pytest.fixture
def project(_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(_project, root, symlinks=True)
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize("command", [CREATE_API, CREATE_WEBHOOK], ids=["create-api", "create-webhook"])
@pytest.mark.parametrize(("flags", "says"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_external_flags_are_one_line_exit_2_nothing_written(
    project: Path, command: list[str], flags: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(project)
    line = run([*command, *flags], capsys)
    assert says in line
    assert snapshot(project) == before


def test_good_external_flags_still_scaffold(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flags = [f"--external-api-path={GO_PATH}", "--external-api-domain=io"]
    module = "--external-api-module=github.com/cert-manager/cert-manager@v1.21.1"
    with pytest.raises(SystemExit) as done:
        main([*CREATE_API, *flags, module])
    assert done.value.code in (0, None), capsys.readouterr().err
    assert "module: github.com/cert-manager/cert-manager@v1.21.1" in (project / "PROJECT").read_text()
