"""How the emulator reaches a webhook: `clientConfig.url`, or `clientConfig.service` resolved to a URL
the test registered (`env.webhook_service_url(...)`: there is no cluster DNS), over HTTPS trusting
`clientConfig.caBundle` only. Failures carry the real API server's wording
(`failed to call webhook: Post "<url>?timeout=10s": ...`)."""

from __future__ import annotations

import base64
import binascii
import json
import ssl
from pathlib import Path
from typing import Any

from pyscaffold_op.envtest.admission import gotls
from pyscaffold_op.envtest.jsonutil import dumps


class CallError(Exception):
    """The webhook could not be called or answered nonsense (subject to failurePolicy)."""


# A CA given as PEM bytes, or as a file read at each call (it may be written after the emulator starts).
CA = bytes | Path | None


class ServiceRegistry:
    """`(namespace, name, port)` of a Service -> the base URL the emulator sends its requests to, and
    optionally the CA to trust when a clientConfig has no caBundle (what cert-manager's CA injector
    would have filled in)."""

    def __init__(self) -> None:
        self._urls: dict[tuple[str, str, int], tuple[str, CA]] = {}
        self._session: Any = None  # one pooled aiohttp session: keep-alive spares a TLS handshake per call

    def session(self) -> Any:
        import asyncio

        import aiohttp

        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._session._loop is not loop:
            self._session = aiohttp.ClientSession()
        return self._session

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    def register(self, namespace: str, name: str, url: str, port: int = 443, ca: CA = None) -> None:
        if not url.startswith("https://"):
            raise ValueError(f"webhook service URL {url!r} must be https:// (the API server only speaks TLS)")
        self._urls[(namespace, name, port)] = (url.rstrip("/"), ca)

    def unregister(self, namespace: str, name: str, port: int = 443) -> None:
        self._urls.pop((namespace, name, port), None)

    def resolve(self, client_config: dict[str, Any], timeout: float) -> tuple[str, str, str | None]:
        """(URL to call, URL to name in messages: the in-cluster one for services, caBundle)."""
        suffix = f"?timeout={_go_duration(timeout)}"
        bundle = client_config.get("caBundle") or None
        if client_config.get("url"):
            url = client_config["url"]
            return url + suffix, url + suffix, bundle
        svc = client_config.get("service") or {}
        ns, name, port = svc.get("namespace", ""), svc.get("name", ""), int(svc.get("port") or 443)
        path = svc.get("path") or ""
        shown = f"https://{name}.{ns}.svc:{port}{path}{suffix}"
        found = self._urls.get((ns, name, port))
        if found is None:
            raise CallError(
                f'failed to call webhook: Post "{shown}": service "{ns}/{name}" port {port} is not '
                f"known to the emulator: start it with --webhook-service {ns}/{name}=https://HOST:PORT "
                "and --webhook-ca FILE (make envtest adds both after pyop create webhook), or in Python "
                "env.webhook_service_url()"
            )
        base, ca = found
        if bundle is None and ca is not None:
            pem = ca.read_bytes() if isinstance(ca, Path) else ca
            bundle = base64.b64encode(pem).decode()
        return base + path + suffix, shown, bundle


def _go_duration(seconds: float) -> str:
    return f"{int(seconds)}s" if float(seconds).is_integer() else f"{seconds}s"


_contexts: dict[str, ssl.SSLContext] = {}


def _ssl_context(ca_bundle: str | None) -> ssl.SSLContext:
    key = ca_bundle or ""
    ctx = _contexts.get(key)
    if ctx is None:
        if ca_bundle:
            try:
                pem = base64.b64decode(ca_bundle, validate=True).decode()
            except (binascii.Error, UnicodeDecodeError) as err:
                raise CallError(f"failed to call webhook: invalid caBundle: {err}") from None
            ctx = ssl.create_default_context(cadata=pem)
        else:
            ctx = ssl.create_default_context()
        # as Go's x509 verification: a certificate in the pool is trusted as it is, even a leaf (envtest
        # puts the webhook's serving certificate in caBundle), and no stricter than RFC 5280 needs
        ctx.verify_flags = (ctx.verify_flags | ssl.VERIFY_X509_PARTIAL_CHAIN) & ~ssl.VERIFY_X509_STRICT
        _contexts[key] = ctx
    return ctx


async def post_review(
    services: ServiceRegistry, client_config: dict[str, Any], body: dict[str, Any], timeout_seconds: float
) -> dict[str, Any]:
    """POST a review and return the decoded answer; CallError on any failure."""
    import aiohttp

    url, shown, bundle = services.resolve(client_config, timeout_seconds)
    ctx = _ssl_context(bundle)
    try:
        async with services.session().post(
            url,
            data=dumps(body),
            # kube-apiserver's admission client names itself so (a webhook may log or check it)
            headers={"Content-Type": "application/json", "User-Agent": "kube-apiserver-admission"},
            ssl=ctx,
            timeout=aiohttp.ClientTimeout(total=timeout_seconds),
        ) as r:
            text = await r.read()
            if r.status != 200:
                raise CallError(
                    f'failed to call webhook: Post "{shown}": the server responded with status {r.status}'
                )
    except TimeoutError:
        raise CallError(f'failed to call webhook: Post "{shown}": context deadline exceeded') from None
    except aiohttp.ClientError as err:
        why = await gotls.dial_error(err, url)
        raise CallError(f'failed to call webhook: Post "{shown}": {why}') from None
    try:
        answer = json.loads(text)
    except ValueError as err:
        raise CallError(f"received invalid webhook response: {err}") from None
    if not isinstance(answer, dict):
        raise CallError("received invalid webhook response: not an object")
    return answer
