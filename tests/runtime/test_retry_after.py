"""Issue 28 item 5: a 429 (or a 5xx) with Retry-After is sent again after the header's seconds, at most
10 times (client-go's maxRetries), whatever the verb; without the header it is an error at once."""

from __future__ import annotations

import asyncio

import pytest

from pyscaffold_op.runtime.client.errors import ServerError, TooManyRequests
from pyscaffold_op.runtime.client.rest import MAX_RETRIES, retry_after
from tests.runtime.test_http1pool import Server, reply, running, transport_for


def busy_server(answers: list[tuple[str, str]]) -> Server:
    """Answers each request with the next (status, extra headers) of `answers`, then 200s."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await server.read_request(reader) is not None:
            status, extra = answers.pop(0) if answers else ("200 OK", "")
            body = b'{"kind":"Status","code":%d}' % int(status[:3]) if status[0] != "2" else b'{"ok":1}'
            writer.write(reply(body, status, extra))

    server = Server(handle)
    return server


def test_retry_after_is_client_go_s_check_wait() -> None:
    assert retry_after(429, {"retry-after": "3"}) == 3.0
    assert retry_after(503, {"retry-after": "1"}) == 1.0
    assert retry_after(500, {"retry-after": "0"}) == 0.0
    assert retry_after(429, {}) is None  # no header: no retry
    assert retry_after(429, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert retry_after(409, {"retry-after": "1"}) is None  # only 429 and 5xx
    assert retry_after(429, {"retry-after": "-5"}) == 0.0
    assert retry_after(429, {"retry-after": "86400"}) == 60.0  # capped


@pytest.mark.parametrize("method", ["GET", "POST", "PATCH", "DELETE"])
async def test_429_with_retry_after_is_honoured_then_succeeds(method: str) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    server = busy_server([("429 Too Many Requests", "Retry-After: 2\r\n")] * 3)
    async with running(server) as port:
        transport = transport_for(port)
        transport.sleep = sleep
        try:
            body = b"{}" if method in ("POST", "PATCH") else None
            assert (
                await transport.request(method, "/api/v1/namespaces/x/configmaps", body=body) == b'{"ok":1}'
            )
        finally:
            await transport.close()
    assert slept == [2.0, 2.0, 2.0]
    assert len(server.requests) == 4 and all(line.startswith(method) for _c, line in server.requests)


async def test_retries_are_capped_at_ten() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    assert MAX_RETRIES == 10
    server = busy_server([("429 Too Many Requests", "Retry-After: 1\r\n")] * 25)
    async with running(server) as port:
        transport = transport_for(port)
        transport.sleep = sleep
        try:
            with pytest.raises(TooManyRequests):
                await transport.request("GET", "/api/v1/pods")
        finally:
            await transport.close()
    assert slept == [1.0] * 10 and len(server.requests) == 11


async def test_no_retry_without_the_header_and_5xx_with_it() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    server = busy_server(
        [("429 Too Many Requests", ""), ("503 Service Unavailable", "Retry-After: 4\r\n"), ("500 Oops", "")]
    )
    async with running(server) as port:
        transport = transport_for(port)
        transport.sleep = sleep
        try:
            with pytest.raises(TooManyRequests):
                await transport.request("GET", "/api/v1/pods")
            assert slept == []
            with pytest.raises(ServerError) as err:  # the 503 is retried after 4 s; the 500 is final
                await transport.request("GET", "/api/v1/pods")
            assert err.value.code == 500
        finally:
            await transport.close()
    assert slept == [4.0] and len(server.requests) == 3
