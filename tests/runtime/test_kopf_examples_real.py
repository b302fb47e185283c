"""kopf's examples ported to pyop (examples/kopf) pass against the real kube-apiserver + etcd too: the
suite runs them on the emulator; this runs the same tests in real mode (`PYOP_ENVTEST=real`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pyscaffold_op.dev.oracles import REPO_ROOT, missing_reason, oracle_bin

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

APISERVER, ETCD = oracle_bin("kube-apiserver"), oracle_bin("etcd")
if APISERVER is None or ETCD is None:
    pytestmark.append(
        pytest.mark.skip(reason=missing_reason("kube-apiserver" if APISERVER is None else "etcd"))
    )


def test_the_kopf_examples_pass_against_the_real_apiserver() -> None:
    assert APISERVER is not None
    env = {**os.environ, "PYOP_ENVTEST": "real", "PYOP_ENVTEST_ASSETS": str(APISERVER.parent)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", "-m", "", "examples/kopf"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    summary = run.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "skipped" not in summary and "failed" not in summary, run.stdout
