"""`pyop envtest serve --webhooks ... --webhook-service ... --webhook-ca ...` against a manager-style
webhook server that wrote its own CA into its cert dir (what `make run` does), driven by kubectl."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from pyscaffold_op.runtime.webhook import WebhookServer, mutate_path, validate_path, webhook_managed_by
from tests.runtime.webhook_kinds import WidgetDefaulter, WidgetValidator
from tests.runtime.widgets import Widget

CRDS = Path(__file__).parents[1] / "runtime" / "crds"

MANIFEST = f"""\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- name: vwidget-v1.kb.io
  admissionReviewVersions: [v1]
  clientConfig:
    service: {{name: webhook-service, namespace: system, path: {validate_path(Widget)}}}
  failurePolicy: Fail
  sideEffects: None
  rules:
  - {{apiGroups: [test.pyop.io], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [widgets]}}
"""


def test_serve_rejects_a_bad_webhook_service() -> None:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "pyscaffold_op", "envtest", "serve", "--webhook-service", "system=http://x"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("expected NAMESPACE/NAME=https://HOST:PORT")


@pytest.mark.slow
@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_serve_calls_the_local_webhook_server(tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=certs, generate_missing=True)
    webhook_managed_by(server).for_(Widget).with_defaulter(WidgetDefaulter()).with_validator(
        WidgetValidator()
    ).complete()
    (tmp_path / "manifests.yaml").write_text(MANIFEST)
    kubeconfig = tmp_path / "kubeconfig"
    async with server:
        assert (certs / "ca.crt").is_file() and mutate_path(Widget) in server.paths()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "pyscaffold_op", "envtest", "serve", "--no-kubelet",
            "--crds", str(CRDS), "--kubeconfig-out", str(kubeconfig),
            "--webhooks", str(tmp_path / "manifests.yaml"),
            "--webhook-service", f"system/webhook-service={server.url}",
            "--webhook-ca", str(certs / "ca.crt"),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            assert proc.stdout is not None
            line = await asyncio.wait_for(proc.stdout.readline(), 60)
            assert line.decode().strip() == str(kubeconfig)
            kubectl = await asyncio.create_subprocess_exec(
                "kubectl", "--kubeconfig", str(kubeconfig), "create", "-f", "-",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            body = b"apiVersion: test.pyop.io/v1\nkind: Widget\nmetadata: {name: w}\n"
            body += b"spec: {size: 1, color: pink}\n"
            _out, err = await asyncio.wait_for(kubectl.communicate(body), 60)
            assert kubectl.returncode == 1
            assert 'The Widget "w" is invalid: spec.color: Unsupported value: "pink"' in err.decode()
        finally:
            proc.terminate()
            await proc.wait()
