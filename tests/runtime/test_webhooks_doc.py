"""The CronJob webhook of docs/webhooks.md runs: its markers generate the webhook configurations, its
types the CRD, and its test passes with the emulator calling the webhooks over HTTPS."""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from pyscaffold_op.apimachinery import CustomResource
from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Invalid, new_client
from pyscaffold_op.runtime.webhook import WebhookServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


@pytest.fixture
def doc_module(tmp_path: Path) -> Iterator[tuple[types.ModuleType, Path]]:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    webhook = next(b for b in blocks if "cronjob_webhook.py" in b)
    test = next(b for b in blocks if "async def test_cronjob_webhooks" in b)
    source = tmp_path / "cronjob_webhook.py"
    source.write_text(webhook)
    module = types.ModuleType("cronjob_webhook_doc")
    module.__dict__.update(pytest=pytest, Invalid=Invalid)
    sys.modules[module.__name__] = module
    saved = dict(CustomResource.registry)  # the doc's CronJob must not linger in the global registry
    try:
        exec(compile(webhook, str(source), "exec"), module.__dict__)
        exec(compile(test, "docs/webhooks.md:test", "exec"), module.__dict__)
        yield module, source
    finally:
        sys.modules.pop(module.__name__, None)
        CustomResource.registry.clear()
        CustomResource.registry.update(saved)


async def test_docs_cronjob_webhook(doc_module: tuple[types.ModuleType, Path], tmp_path: Path) -> None:
    from pyscaffold_op.gen.crd import build_crds
    from pyscaffold_op.gen.webhook import build_configurations, collect_markers

    module, source = doc_module
    [crd] = build_crds([module.CronJob])
    (tmp_path / "crd.yaml").write_text(yaml.safe_dump(crd))
    configurations = build_configurations(collect_markers(source.parent))
    assert [c["kind"] for c in configurations] == [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ]
    (tmp_path / "manifests.yaml").write_text(yaml.safe_dump_all(configurations))
    async with Environment(crd_paths=[tmp_path / "crd.yaml"], kubelet=None) as env:
        server = WebhookServer(host="127.0.0.1", port=0)
        async with server:
            env.webhook_service_url("system", "webhook-service", server.url, ca=server.ca_bundle)
            await env.install_webhooks([tmp_path / "manifests.yaml"])
            client = new_client(env.config)
            try:
                await module.test_cronjob_webhooks(server, client)
            finally:
                await client.close()


SCHEDULES = [
    "*/5 * * * *", "0 3 * * *", "0 0 * * MON-FRI", "0 0 ? * *", "0 0 1,15 * *", "0 9-17/2 * JAN-JUN *",
    "@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually", "@every 1h30m",
    "@every 90s", "@every often", "@reboot", "@fortnightly",
    "every day", "", "* * * *", "0 0 0 * * *", "*/5 * * * * *", "0 0 * * 7", "0 0 * * 5-7",
    "0 0 L * *", "0 0 * * 1#2", "H * * * *", "60 * * * *", "0 24 * * *", "0 0 32 * *", "0 0 * 13 *",
    "TZ=UTC 0 0 * * *", "CRON_TZ=UTC 0 0 * * *",
]  # fmt: skip


@pytest.mark.oracle
@pytest.mark.slow
async def test_the_docs_schedule_check_agrees_with_kube_apiserver(
    doc_module: tuple[types.ModuleType, Path],
) -> None:
    """The docs' `schedule_error` refuses exactly what kube-apiserver refuses in a batch/v1 CronJob's
    `spec.schedule` (robfig/cron's ParseStandard, and no TZ= prefix): the real server judges."""
    from pyscaffold_op.dev.oracles import missing_reason, oracle_bin
    from pyscaffold_op.models.batch_v1 import CronJob

    apiserver = oracle_bin("kube-apiserver")
    if apiserver is None or oracle_bin("etcd") is None:
        pytest.skip(missing_reason("kube-apiserver" if apiserver is None else "etcd"))
    module, _ = doc_module
    job = {
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    }
    disagreements = []
    async with Environment(real=True, assets=apiserver.parent) as env:
        client = new_client(env.config)
        try:
            for schedule in SCHEDULES:
                cronjob = CronJob.model_validate(
                    {
                        "metadata": {"name": "c", "namespace": "default"},
                        "spec": {"schedule": schedule, "jobTemplate": {"spec": job}},
                    }
                )
                try:
                    await client.create(cronjob, dry_run=True)
                    accepted = True
                except Invalid:
                    accepted = False
                if accepted != (module.schedule_error(schedule) is None):
                    disagreements.append((schedule, accepted, module.schedule_error(schedule)))
        finally:
            await client.close()
    assert not disagreements, disagreements
