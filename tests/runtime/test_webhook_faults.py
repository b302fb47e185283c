"""Issue 28 items 1 and 6: hostile AdmissionReviews get a 400 (not a 500 page), a handler's panic a 500
denial counted in controller_runtime_webhook_panics_total (the server lives on), and a blocking sync
validator stalls only its own request."""

from __future__ import annotations

import asyncio
import ssl
import threading
from typing import Any

import httpx2 as httpx
import pytest

from pyscaffold_op.runtime import RuntimeMetrics
from pyscaffold_op.runtime.webhook import WebhookServer, validate_path, webhook_managed_by
from tests.runtime.test_webhook_server import review, widget
from tests.runtime.widgets import Widget


class Hostile:
    """Blocks (sync) on `release` for size 7; raises what `raise_` holds for size 8."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.blocked = threading.Event()
        self.raise_: BaseException | None = None

    def validate_create(self, obj: Widget) -> None:
        if obj.spec.size == 7:
            self.blocked.set()
            assert self.release.wait(30)
        if obj.spec.size == 8 and self.raise_ is not None:
            raise self.raise_

    def validate_update(self, old: Widget, new: Widget) -> None:
        return None

    def validate_delete(self, obj: Widget) -> None:
        return None


@pytest.fixture
async def served() -> Any:
    validator = Hostile()
    s = WebhookServer(host="127.0.0.1", port=0)
    s.bind_metrics(RuntimeMetrics().registry)
    webhook_managed_by(s).for_(Widget).with_validator(validator).complete()
    async with s:
        assert s.ca_bundle is not None
        ctx = ssl.create_default_context(cadata=s.ca_bundle.decode())
        async with httpx.AsyncClient(verify=ctx, base_url=s.url, timeout=30) as c:
            yield s, c, validator


async def test_undecodable_reviews_are_400s(served: Any) -> None:
    s, c, _v = served
    path = validate_path(Widget)
    deep = b"[" * 100_000 + b"]" * 100_000
    r = await c.post(path, content=deep, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "nesting too deep" in r.text
    r = await c.post(path, content=b"\xff\xfe{", headers={"Content-Type": "application/json"})
    assert r.status_code == 400

    def answer(body: Any) -> dict[str, Any]:
        return body["response"]  # type: ignore[no-any-return]

    for body, needle in [
        ({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": "x"}, "request"),
        ({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": ["x"]}, "request"),
        (
            {
                **review("CREATE", widget()),
                "request": {**review("CREATE", widget())["request"], "uid": ["u"]},
            },
            "uid",
        ),
        (
            {**review("CREATE", widget()), "request": {**review("CREATE", widget())["request"], "uid": 7}},
            "uid",
        ),
        (
            {
                **review("CREATE", widget()),
                "request": {**review("CREATE", widget())["request"], "object": "o"},
            },
            "object",
        ),
        (
            {
                **review("CREATE", widget()),
                "request": {**review("CREATE", widget())["request"], "operation": 1},
            },
            "operation",
        ),
        ([1, 2], "AdmissionReview"),
    ]:
        r = await c.post(path, json=body)
        assert r.status_code == 200, r.text
        resp = answer(r.json())
        assert (
            resp["allowed"] is False and resp["status"]["code"] == 400 and needle in resp["status"]["message"]
        )
        sent = (
            body["request"].get("uid") if isinstance(body, dict) and isinstance(body["request"], dict) else 0
        )
        assert resp["uid"] == (sent if isinstance(sent, str) else "")  # never a hostile uid echoed back
    assert s.metrics.panics._value.get() == 0


@pytest.mark.parametrize(
    "exc", [SystemExit(0), KeyboardInterrupt(), asyncio.CancelledError(), RuntimeError("boom")]
)
async def test_a_validator_panic_is_a_500_denial_and_counted(served: Any, exc: BaseException) -> None:
    s, c, v = served
    v.raise_ = exc
    path = validate_path(Widget)
    for n in range(3):
        r = await c.post(path, json=review("CREATE", widget(size=8)))
        assert r.status_code == 200
        resp = r.json()["response"]
        if isinstance(exc, RuntimeError):  # an ordinary exception from a validator is a denial
            assert resp["allowed"] is False and resp["status"]["code"] == 403
            continue
        assert resp["uid"] == "u-1" and resp["allowed"] is False and resp["status"]["code"] == 500
        assert resp["status"]["message"].startswith(f"panic: {type(exc).__name__}")
        assert s.metrics.panics._value.get() == n + 1
    r = await c.post(path, json=review("CREATE", widget(size=1)))  # still serving
    assert r.json()["response"]["allowed"] is True


async def test_a_blocking_sync_validator_stalls_only_its_own_request(served: Any) -> None:
    _s, c, v = served
    path = validate_path(Widget)
    slow = asyncio.create_task(c.post(path, json=review("CREATE", widget(size=7))))
    try:
        assert await asyncio.to_thread(v.blocked.wait, 30)
        # the event loop is free while the validator blocks its thread: others are answered
        for _ in range(3):
            r = await c.post(path, json=review("CREATE", widget(size=1)))
            assert r.json()["response"]["allowed"] is True
        assert not slow.done()
    finally:
        v.release.set()
    assert (await slow).json()["response"]["allowed"] is True


async def test_a_conversion_review_with_a_list_as_uid_fails() -> None:
    from pyscaffold_op.runtime.webhook import Conversion
    from tests.runtime.webhook_kinds import Shape, ShapeV2

    review = {"kind": "ConversionReview", "request": {"uid": ["x"], "desiredAPIVersion": "shapes.pyop.io/v2"}}
    resp = (await Conversion([Shape, ShapeV2])(review))["response"]
    assert resp["uid"] == "" and resp["result"]["status"] == "Failure" and "uid" in resp["result"]["message"]
