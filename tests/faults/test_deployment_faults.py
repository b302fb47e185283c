"""The scaffolded Deployment on a real cluster: a read-only root and the kubelet's grace period."""

from __future__ import annotations

import tempfile
from pathlib import Path

import httpx2 as httpx
import pytest
import yaml

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Manager, ManagerOptions

GOLDEN = Path(__file__).parents[2] / "testdata" / "project"


async def test_secure_metrics_need_no_writable_temp_dir(
    env: Environment, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Before: the self-signed certificate went through tempfile.TemporaryDirectory, and the manager
    # died with "No usable temporary directory" under readOnlyRootFilesystem: true.
    missing = tmp_path / "no-such-dir"
    monkeypatch.setenv("TMPDIR", str(missing))
    monkeypatch.setattr(tempfile, "tempdir", str(missing))  # what gettempdir() settled on
    with pytest.raises(FileNotFoundError):
        tempfile.TemporaryDirectory()  # the probe's premise: no temporary folder can be made
    mgr = Manager(
        env.config,
        ManagerOptions(
            health_probe_bind_address="0", metrics_bind_address="127.0.0.1:0", metrics_secure=True
        ),
    )
    async with mgr.running():
        assert mgr.metrics_address is not None
        host, port = mgr.metrics_address
        token = env.config.token  # the emulator's admin token
        async with httpx.AsyncClient(verify=False) as http:
            resp = await http.get(
                f"https://{host}:{port}/metrics", headers={"Authorization": f"Bearer {token}"}
            )
    assert resp.status_code == 200 and "controller_runtime" in resp.text


def test_the_kubelet_waits_longer_than_the_graceful_shutdown() -> None:
    # Before: terminationGracePeriodSeconds 10 < the 30 s graceful shutdown: SIGKILL mid-drain.
    deployment = next(
        doc
        for doc in yaml.safe_load_all((GOLDEN / "config/manager/manager.yaml").read_text())
        if doc and doc.get("kind") == "Deployment"
    )
    grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert grace > ManagerOptions().graceful_shutdown_timeout
