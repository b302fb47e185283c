"""17-admission: the validator and defaulter of KopfExample, called over HTTPS by the API server with
the configurations their markers generate; they read dryRun, the subresource and the headers from
`admission_request()`."""

from __future__ import annotations

import ssl
from typing import Any

import admission
import httpx2 as httpx
import pytest
from kopfexample import KopfExample, KopfExampleStatus, kopf_example

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import ApiError, Client
from pyscaffold_op.runtime.webhook import WebhookServer


@pytest.fixture
def webhooks(webhook_server: WebhookServer) -> WebhookServer:
    admission.register(webhook_server)
    return webhook_server


async def create_raw(envtest: Environment, body: dict[str, Any], dry_run: bool = False) -> httpx.Response:
    """POST as kubectl would, to read the Warning headers the runtime client does not surface."""
    config = envtest.config
    verify: Any = ssl.create_default_context(cadata=config.ca_data.decode()) if config.ca_data else False
    url = f"{config.server}/apis/kopf.dev/v1/namespaces/default/kopfexamples"
    async with httpx.AsyncClient(verify=verify, headers={"Authorization": f"Bearer {config.token}"}) as c:
        return await c.post(url, json=body, params={"dryRun": "All"} if dry_run else None)


async def test_the_validator_reads_the_request(envtest: Environment, client: Client, webhooks: Any) -> None:
    wrong = kopf_example("kex-wrong", field="wrong").to_dict()
    dry = await create_raw(envtest, wrong, dry_run=True)
    assert dry.status_code == 201, dry.text  # a dry run may be wrong (kopf's `dryrun`)
    warnings = ", ".join(dry.headers.get_list("Warning"))  # one header or several: the same to clients
    assert "Accessing as user-agent: kube-apiserver-admission" in warnings  # kopf's authhook
    assert "Also update status.field to match spec.field: 'wrong' != None" in warnings
    with pytest.raises(ApiError, match=r"Meh! I don't like it\. Change the field\.") as denied:
        await client.create(kopf_example("kex-wrong", field="wrong"))
    assert denied.value.code == 403
    with pytest.raises(ApiError, match=r"I'm too lazy anyway\. Go away!") as lazy:
        await client.create(kopf_example("kex-lazy", field="not-allowed"))
    assert lazy.value.code == 555  # kopf's AdmissionError(code=555)


async def test_status_writes_are_checked_and_labelled_objects_mutated(client: Client, webhooks: Any) -> None:
    kex = await client.create(kopf_example("kex-1"))
    assert kex.spec.injected == 123  # somelabel=somevalue: the defaulter injected it
    plain = kopf_example("kex-2")
    plain.metadata.labels = {}
    assert (await client.create(plain)).spec.injected is None
    kex.status = KopfExampleStatus(field="other")
    with pytest.raises(ApiError, match=r"status\.field MUST be equal to spec\.field!"):
        await client.status().update(kex)
    kex.status = KopfExampleStatus(field="value")
    written = await client.status().update(kex)
    assert written.status is not None and written.status.field == "value"
    assert isinstance(written, KopfExample)
