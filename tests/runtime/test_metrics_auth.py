"""Secure metrics serving (controller-runtime's SecureServing + WithAuthenticationAndAuthorization):
TLS, TokenReview + SubjectAccessReview per scrape through the emulator, cached decisions."""

from __future__ import annotations

import asyncio
import json
import os
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.envtest.environment import TOKEN
from pyscaffold_op.runtime import ServerError
from pyscaffold_op.runtime.certs.certs import self_signed_cert
from pyscaffold_op.runtime.servers.authfilter import AuthFilter

from .conftest import make_manager


async def scrape(url: str, token: str | None = None, *, ssl_: Any = False) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as s, s.get(url, headers=headers, ssl=ssl_) as resp:
        return resp.status, await resp.text()


async def test_secure_metrics_authenticate_and_authorize(env: Environment) -> None:
    env.policy.add_token("scraper-token", "prometheus", groups=["monitoring"])
    env.policy.add_token("nobody-token", "nobody")
    env.policy.allow("monitoring", "get", paths="/metrics")
    mgr = make_manager(env, metrics_bind_address="127.0.0.1:0", metrics_secure=True)
    async with mgr.running():
        assert mgr.metrics_address is not None
        host, port = mgr.metrics_address
        url = f"https://{host}:{port}/metrics"
        assert await scrape(url) == (401, "Unauthorized\n")
        assert await scrape(url, "unknown-token") == (401, "Unauthorized\n")
        basic = {"Authorization": "Basic eDp5"}
        async with aiohttp.ClientSession() as s, s.get(url, headers=basic, ssl=False) as resp:
            assert resp.status == 401
        assert await scrape(url, "nobody-token") == (403, "Authorization denied for user nobody\n")
        status, body = await scrape(url, TOKEN)  # envtest-admin, system:masters
        assert status == 200 and "controller_runtime_webhook_panics_total 0.0" in body
        status, body = await scrape(url, "scraper-token")  # allowed through env.allow
        assert status == 200 and "controller_runtime_webhook_panics_total 0.0" in body

        # decisions are cached: a second scrape asks the API server nothing
        counts = dict(env.policy.counts)
        assert (await scrape(url, "scraper-token"))[0] == 200
        assert await scrape(url, "nobody-token") == (403, "Authorization denied for user nobody\n")
        assert await scrape(url, "unknown-token") == (401, "Unauthorized\n")
        assert dict(env.policy.counts) == counts
        reviews = [r for r in env.policy.reviews if r["kind"] == "SubjectAccessReview"]
        assert reviews[-1]["spec"]["nonResourceAttributes"] == {"path": "/metrics", "verb": "get"}
        assert reviews[-1]["spec"]["user"] == "prometheus"
        assert "monitoring" in reviews[-1]["spec"]["groups"]

        # TLS is really on: plain HTTP to the same port fails
        with pytest.raises(aiohttp.ClientError):
            await scrape(f"http://{host}:{port}/metrics", TOKEN)
        # and the self-signed certificate is for localhost / 127.0.0.1, not trusted by default
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await scrape(url, TOKEN, ssl_=ssl.create_default_context())


async def test_metrics_cert_dir_is_served(env: Environment, tmp_path: Path) -> None:
    cert_pem, key_pem = self_signed_cert("pyop-test", ips=("127.0.0.1",))
    (tmp_path / "tls.crt").write_bytes(cert_pem)
    (tmp_path / "tls.key").write_bytes(key_pem)
    mgr = make_manager(
        env, metrics_bind_address="127.0.0.1:0", metrics_secure=True, metrics_cert_dir=str(tmp_path)
    )
    async with mgr.running():
        assert mgr.metrics_address is not None
        host, port = mgr.metrics_address
        # verification on, trusting only the given certificate: it is the one served
        url = f"https://{host}:{port}/metrics"
        trust = ssl.create_default_context(cadata=cert_pem.decode())
        status, body = await scrape(url, TOKEN, ssl_=trust)
        assert status == 200 and "controller_runtime_webhook_panics_total 0.0" in body

        # a rotated certificate is picked up (the watcher polls; check() is one poll)
        new_cert, new_key = self_signed_cert("pyop-test", ips=("127.0.0.1",))
        (tmp_path / "tls.key").write_bytes(new_key)
        (tmp_path / "tls.crt").write_bytes(new_cert)
        for f in ("tls.crt", "tls.key"):
            os.utime(tmp_path / f, (1e9, 1e9))
        assert mgr.metrics_cert_watcher.check() is True
        assert mgr.metrics_cert_watcher.check() is False  # unchanged since
        new_trust = ssl.create_default_context(cadata=new_cert.decode())
        assert (await scrape(url, TOKEN, ssl_=new_trust))[0] == 200
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await scrape(url, TOKEN, ssl_=trust)


async def test_metrics_cert_dir_without_files_fails_to_start(env: Environment, tmp_path: Path) -> None:
    mgr = make_manager(
        env, metrics_bind_address="127.0.0.1:0", metrics_secure=True, metrics_cert_dir=str(tmp_path)
    )
    with pytest.raises(FileNotFoundError, match=r"tls\.crt"):
        await mgr.start(install_signal_handlers=False)


async def test_insecure_metrics_unchanged(
    env: Environment, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    mgr = make_manager(env, metrics_bind_address="127.0.0.1:0", metrics_cert_dir=str(tmp_path))
    assert "metrics_cert_dir is ignored" in caplog.text
    assert mgr.metrics_filter is None
    async with mgr.running():
        assert mgr.metrics_address is not None
        host, port = mgr.metrics_address
        status, body = await scrape(f"http://{host}:{port}/metrics")
        assert status == 200 and "controller_runtime_webhook_panics_total 0.0" in body


class FakeTransport:
    """Answers reviews from canned statuses (or raises), recording what was asked."""

    def __init__(self, *answers: Any, delay: float = 0.0) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.delay = delay

    async def request(self, method: str, path: str, *, body: bytes | None = None, **_: Any) -> bytes:
        assert method == "POST" and body is not None
        self.calls.append((path.rsplit("/", 1)[-1], json.loads(body)))
        await asyncio.sleep(self.delay)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return json.dumps({"status": answer}).encode()


ALICE = {
    "authenticated": True,
    "user": {"username": "alice", "uid": "1", "groups": ["g"], "extra": {"k": ["v"]}},
}


async def test_filter_api_errors_are_500_and_not_cached() -> None:
    t = FakeTransport(ServerError("boom", code=503), ALICE, ServerError("boom", code=503), {"allowed": True})
    f = AuthFilter(t)  # type: ignore[arg-type]
    assert await f.check("Bearer x", "get", "/metrics") == (500, "Authentication failed")
    assert await f.check("Bearer x", "get", "/metrics") == (500, "Authorization for user alice failed")
    assert await f.check("Bearer x", "get", "/metrics") == (200, "")
    assert [c[0] for c in t.calls] == [
        "tokenreviews",
        "tokenreviews",
        "subjectaccessreviews",
        "subjectaccessreviews",
    ]
    sar = t.calls[-1][1]["spec"]
    assert sar == {
        "user": "alice",
        "groups": ["g"],
        "uid": "1",
        "extra": {"k": ["v"]},
        "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
    }


async def test_filter_cache_expires() -> None:
    now = [0.0]
    t = FakeTransport(
        ALICE, {"allowed": False}, {"allowed": True}, {"authenticated": False}, ALICE, {"allowed": True}
    )
    f = AuthFilter(t, authn_ttl=60, allow_ttl=300, deny_ttl=30, clock=lambda: now[0])  # type: ignore[arg-type]
    assert (await f.check("Bearer x", "get", "/metrics"))[0] == 403
    now[0] = 29
    assert (await f.check("Bearer x", "get", "/metrics"))[0] == 403  # denial cached 30 s
    now[0] = 31
    assert (await f.check("Bearer x", "get", "/metrics"))[0] == 200  # asked again, now allowed
    assert len(t.calls) == 3
    now[0] = 61  # the token's user expired after a minute
    assert (await f.check("Bearer x", "get", "/metrics"))[0] == 401
    now[0] = 122
    assert (await f.check("Bearer x", "get", "/metrics"))[0] == 200
    assert [c[0] for c in t.calls][3:] == ["tokenreviews", "tokenreviews"]  # decision still cached
    assert (await f.check(None, "get", "/metrics"))[0] == 401
    assert (await f.check("Bearer ", "get", "/metrics"))[0] == 401
    assert len(t.calls) == 5


async def test_filter_concurrent_scrapes_share_one_review() -> None:
    t = FakeTransport(ALICE, {"allowed": True}, delay=0.02)
    f = AuthFilter(t)  # type: ignore[arg-type]
    results = await asyncio.gather(*(f.check("Bearer x", "get", "/metrics") for _ in range(10)))
    assert results == [(200, "")] * 10
    assert [c[0] for c in t.calls] == ["tokenreviews", "subjectaccessreviews"]
