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
