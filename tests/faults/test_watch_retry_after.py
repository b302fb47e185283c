"""Issue 38 (an earlier probe): a 429 with `Retry-After` on a watch request is honoured, as client-go's
`Request.Watch` does (up to maxRetries, then the reflector backs off). Before: the watch raised at the
first 429 and the informer asked again after its own 0.8-1.6 s backoff, whatever the server said."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from runtime.widgets import Widget  # `tests/` is on sys.path: the runtime tests are `runtime`

from pyscaffold_op.runtime.cache.informer import Informer
from pyscaffold_op.runtime.client.errors import ServerError, TooManyRequests
from pyscaffold_op.runtime.objects.kinds import info_for
from pyscaffold_op.testing import eventually
from tests.runtime.test_http1pool import WATCH_HEAD, Server, _chunk, reply, running, transport_for

LIST = json.dumps(
    {"apiVersion": "test.pyop.io/v1", "kind": "WidgetList", "items": [], "metadata": {"resourceVersion": "5"}}
)
BUSY = json.dumps(
    {"kind": "Status", "code": 429, "reason": "TooManyRequests", "details": {"retryAfterSeconds": 3}}
)
BOOKMARK = (
    b'{"type":"BOOKMARK","object":{"kind":"Widget","apiVersion":"test.pyop.io/v1",'
    b'"metadata":{"resourceVersion":"6"}}}\n'
)


def api_server(watch_answers: list[tuple[str, str]]) -> Server:
    """Lists answer an empty list; each watch gets the next (status, extra headers) of
    `watch_answers`, and once they are used up a stream with one bookmark that stays open."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (request := await server.read_request(reader)) is not None:
            if "watch=true" not in request[0]:
                writer.write(reply(LIST.encode()))
            elif watch_answers:
                status, extra = watch_answers.pop(0)
                writer.write(reply(BUSY.encode(), status, extra))
            else:
                writer.write(WATCH_HEAD + _chunk(BOOKMARK))
                await writer.drain()
                await server.read_request(reader)  # until the client hangs up
                return

    server = Server(handle)
    return server


def _watches(server: Server) -> int:
    return sum("watch=true" in line for _, line in server.requests)


async def test_a_watch_answered_429_with_retry_after_is_sent_again_after_that_long() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    busy = ("429 Too Many Requests", "Retry-After: 3\r\n")
    server = api_server([busy, busy, ("503 Service Unavailable", "Retry-After: 1\r\n")])
    async with running(server) as port:
        transport = transport_for(port)
        transport.sleep = sleep
        try:
            async with transport.stream_lines("/apis/x", {"watch": "true"}) as lines:
                assert await anext(lines) == BOOKMARK.rstrip()
                assert lines.received >= 1
        finally:
            await transport.close()
    assert slept == [3.0, 3.0, 1.0] and _watches(server) == 4


async def test_a_watch_429_without_the_header_or_past_max_retries_is_raised() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    again = ("429 Too Many Requests", "Retry-After: 1\r\n")
    server = api_server([("429 Too Many Requests", ""), again, again, again])
    async with running(server) as port:
        transport = transport_for(port, max_retries=2)
        transport.sleep = sleep
        try:
            with pytest.raises(TooManyRequests):  # no header: at once
                async with transport.stream_lines("/apis/x", {"watch": "true"}):
                    pass
            assert slept == []
            with pytest.raises(TooManyRequests):  # two retries, then the third 429 is the answer
                async with transport.stream_lines("/apis/x", {"watch": "true"}):
                    pass
        finally:
            await transport.close()
    assert slept == [1.0, 1.0]


async def test_the_informers_watch_waits_the_servers_retry_after() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    server = api_server([("429 Too Many Requests", "Retry-After: 3\r\n")])
    async with running(server) as port:
        transport = transport_for(port)
        transport.sleep = sleep
        informer = Informer(transport, info_for(Widget))
        informer.start()
        try:
            await eventually(lambda: informer.resource_version == "6")  # the bookmark of the second watch
            assert slept == [3.0] and _watches(server) == 2
            assert informer.stats["errors"] == 0  # the transport's retry: the informer saw no error
        finally:
            await informer.stop()
            await transport.close()


async def test_past_the_transports_retries_the_informer_still_waits_retry_after(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = api_server([("429 Too Many Requests", "Retry-After: 3\r\n")])
    async with running(server) as port:
        transport = transport_for(port, max_retries=0)
        informer = Informer(transport, info_for(Widget))
        caplog.set_level(logging.DEBUG, "pyscaffold_op.runtime.informer")
        informer.start()
        try:
            await eventually(lambda: informer.stats["errors"] == 1)
            assert isinstance(informer.last_error, ServerError | TooManyRequests)
            # the Status' retryAfterSeconds (3) beats the backoff's first 0.8-1.6 s
            assert any("retrying in 3.0s" in r.getMessage() for r in caplog.records), caplog.text
        finally:
            await informer.stop()
            await transport.close()
