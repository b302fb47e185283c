"""Cost of admission webhooks in the emulator: creates of a Widget with no webhooks, and with a
mutating and a validating webhook served over HTTPS by the runtime's WebhookServer (the same process:
client, emulator and webhook server share one event loop, so the CPU column is the whole round trip).

    python benchmarks/bench_webhooks.py [N]
"""

from __future__ import annotations

import asyncio
import base64
import sys
import time
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyscaffold_op.envtest import Environment  # noqa: E402
from pyscaffold_op.runtime.webhook import (  # noqa: E402
    WebhookServer,
    mutate_path,
    validate_path,
    webhook_managed_by,
)
from tests.runtime.webhook_kinds import WidgetDefaulter, WidgetValidator  # noqa: E402
from tests.runtime.widgets import Widget  # noqa: E402

CRDS = ROOT / "tests" / "runtime" / "crds"
RULE = {
    "operations": ["CREATE", "UPDATE"],
    "apiGroups": ["test.pyop.io"],
    "apiVersions": ["v1"],
    "resources": ["widgets"],
}


def configuration(server: WebhookServer, kind: str, name: str, path: str) -> dict[str, Any]:
    assert server.ca_bundle is not None
    client = {"url": server.url + path, "caBundle": base64.b64encode(server.ca_bundle).decode()}
    hook = {"name": f"{name}.bench.io", "clientConfig": client, "rules": [RULE], "sideEffects": "None",
            "admissionReviewVersions": ["v1"]}  # fmt: skip
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name},
            "webhooks": [hook]}  # fmt: skip


async def run(n: int, hooks: bool) -> tuple[float, float]:
    """(wall ms, CPU ms) per create."""
    async with Environment(crd_paths=[CRDS], kubelet=None) as env:
        server = WebhookServer(host="127.0.0.1", port=0)
        webhook_managed_by(server).for_(Widget).with_defaulter(WidgetDefaulter()).with_validator(
            WidgetValidator()
        ).complete()
        async with server, httpx2.AsyncClient(base_url=env.url) as c:
            if hooks:
                for kind, name, path in (
                    ("MutatingWebhookConfiguration", "m", mutate_path(Widget)),
                    ("ValidatingWebhookConfiguration", "v", validate_path(Widget)),
                ):
                    r = await c.post(
                        f"/apis/admissionregistration.k8s.io/v1/{kind.lower()}s",
                        json=configuration(server, kind, name, path),
                    )
                    assert r.status_code == 201, r.text
            wall, cpu = time.perf_counter(), time.process_time()
            for i in range(n):
                body = {"apiVersion": "test.pyop.io/v1", "kind": "Widget", "metadata": {"name": f"w{i}"},
                        "spec": {"size": 1, "color": ""}}  # fmt: skip
                r = await c.post("/apis/test.pyop.io/v1/namespaces/default/widgets", json=body)
                assert r.status_code == 201, r.text
            return (time.perf_counter() - wall) / n * 1000, (time.process_time() - cpu) / n * 1000


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    for hooks in (False, True, False, True):  # interleaved: the machine's load drifts
        wall, cpu = asyncio.run(run(n, hooks))
        print(f"webhooks={hooks!s:5}  {wall:6.2f} ms/create wall  {cpu:5.2f} ms/create CPU")


if __name__ == "__main__":
    main()
