"""`pyop envtest serve --real`: the same command and kubeconfig over the real kube-apiserver + etcd.

The flag checks need no binaries; serving needs kube-apiserver and etcd (`make oracles`), and the
real server judges: the kubeconfig, the CRDs installed with `--crds`, and webhooks whose CA file the
webhook server writes only after `serve` started (what `make envtest` then `make run` do).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from pyscaffold_op.dev.oracles import missing_reason, oracle_bin
from pyscaffold_op.models.core_v1 import Namespace
from pyscaffold_op.runtime import Invalid, load_config, new_client
from pyscaffold_op.runtime.webhook import WebhookServer, mutate_path, webhook_managed_by
from tests.runtime.webhook_kinds import WidgetDefaulter, WidgetValidator
from tests.runtime.widgets import Widget, widget

from .test_serve_webhooks import MANIFEST as VALIDATING

MANIFEST = f"""\
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- name: mwidget-v1.kb.io
  admissionReviewVersions: [v1]
  clientConfig:
    service: {{name: webhook-service, namespace: system, path: {mutate_path(Widget)}}}
  failurePolicy: Fail
  sideEffects: None
  rules:
  - {{apiGroups: [test.pyop.io], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [widgets]}}
---
{VALIDATING}"""

CRDS = Path(__file__).parents[1] / "runtime" / "crds"
APISERVER = oracle_bin("kube-apiserver")
needs_binaries = pytest.mark.skipif(
    APISERVER is None or oracle_bin("etcd") is None, reason=missing_reason("kube-apiserver")
)


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyscaffold_op", "envtest", "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--real", "--kubelet"], "--kubelet: the real kube-apiserver runs no such simulation"),
        (["--real", "--workloads"], "--workloads: the real kube-apiserver runs no such simulation"),
        (["--real", "--no-tls"], "--no-tls: the real kube-apiserver serves HTTPS only"),
        (
            ["--real", "--authorization-mode", "AlwaysAllow"],
            "--authorization-mode AlwaysAllow: the real kube-apiserver takes RBAC",
        ),
        (["--assets", "/nowhere"], "--assets /nowhere: only --real and --cluster run binaries"),
        (["--real", "--bare"], "--bare and --real: choose one server"),
        (["--cluster", "--real"], "--real and --cluster: choose one server"),
        (["--bare", "--kubelet"], "--kubelet: the bare emulator runs no such simulation"),
        (["--real", "--assets", "/nowhere"], "--assets /nowhere: no such folder"),
        (["--real", "--assets", "/tmp"], "--real: /tmp: no executable kube-apiserver or etcd"),
    ],
)
def test_flags_the_real_server_cannot_honour_are_one_line(args: list[str], message: str) -> None:
    done = serve(*args)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {message}"), done.stderr


@pytest.mark.oracle
@pytest.mark.slow
@needs_binaries
async def test_real_serves_the_crds_and_calls_a_webhook_server_started_after_it(tmp_path: Path) -> None:
    assert APISERVER is not None
    certs, kubeconfig = tmp_path / "certs", tmp_path / "kubeconfig"
    (tmp_path / "manifests.yaml").write_text(MANIFEST)
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=certs, generate_missing=True)
    webhook_managed_by(server).for_(Widget).with_defaulter(WidgetDefaulter()).with_validator(
        WidgetValidator()
    ).complete()
    await server.start_serving()  # the port is known; its CA is written only when make run's manager starts
    ca = certs / "ca.crt"
    ca.unlink()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pyscaffold_op", "envtest", "serve",
        "--real", "--assets", str(APISERVER.parent),
        "--crds", str(CRDS), "--kubeconfig-out", str(kubeconfig),
        "--webhooks", str(tmp_path / "manifests.yaml"),
        "--webhook-service", f"system/webhook-service={server.url}", "--webhook-ca", str(ca),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 120)
        assert line.decode().strip() == str(kubeconfig)
        said = (await proc.stderr.readline()).decode()
        assert said.startswith("# serving https://127.0.0.1:") and "kube-apiserver v" in said, said
        client = new_client(load_config(kubeconfig=str(kubeconfig)))
        try:
            assert any(ns.metadata.name == "default" for ns in await client.list(Namespace))
            # no CA yet: the server cannot trust the webhook server, and failurePolicy Fail refuses
            with pytest.raises(Exception, match="failed calling webhook"):
                await client.create(widget("early"))
            ca.write_bytes(server.ca_bundle)  # now the manager "starts" and writes its CA

            async def denied() -> str:
                try:
                    pink = widget("w")
                    pink.spec.color = "pink"
                    await client.create(pink)
                except Invalid as err:
                    return str(err)
                return ""

            message = await _eventually(denied, 30)
            assert 'spec.color: Unsupported value: "pink"' in message
            colourless = widget("ok")
            colourless.spec.color = ""
            created = await client.create(colourless)
            assert created.spec.color == "green"  # the defaulting webhook ran
        finally:
            await client.close()
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 30)
        await server.stop()
    assert proc.returncode == 0


async def _eventually(check: object, timeout: float) -> str:  # noqa: ASYNC109
    from pyscaffold_op.testing import eventually

    return await eventually(check, timeout=timeout)  # type: ignore[arg-type]
