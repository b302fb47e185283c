"""Bind-address parsing and aiohttp site start-up shared by the health, metrics and webhook servers.

Every server closes a connection that has not sent a complete request header within
`read_header_timeout` seconds of opening or of its previous response (Go's `ReadHeaderTimeout`, which
controller-runtime's scaffold and the emulator set to 32 s; Go's idle keep-alive timeout defaults to
it too): 100 half-sent requests no longer stay open forever. The health and metrics servers take
`READ_HEADER_TIMEOUT` as it is when they start; the webhook server has its own
`WebhookServer(read_header_timeout=...)`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ssl


READ_HEADER_TIMEOUT = 32.0  # seconds; see the module's docstring


def parse_bind_address(address: str) -> tuple[str | None, int] | None:
    """`"0"` or `""` -> None (disabled); `":8081"` -> (None, 8081) (all interfaces);
    `"127.0.0.1:0"` -> ("127.0.0.1", 0) (any free port)."""
    if address in ("0", ""):
        return None
    host, sep, port = address.rpartition(":")
    if not sep:
        raise ValueError(f"bind address {address!r} must look like ':8080' or 'host:port', or be '0'")
    return host.strip("[]") or None, int(port)


async def start_site(
    app: Any,
    address: str,
    ssl_context: ssl.SSLContext | None = None,
    *,
    read_header_timeout: float | None = None,
) -> tuple[Any, tuple[str, int]] | None:
    """Serve `app` on `address` (over TLS with `ssl_context`); returns (runner, (host, port) actually
    bound) or None when disabled. A connection idle or half-way through a request header for
    `read_header_timeout` seconds (default `READ_HEADER_TIMEOUT`) is closed."""
    parsed = parse_bind_address(address)
    if parsed is None:
        return None
    from aiohttp import web

    timeout = READ_HEADER_TIMEOUT if read_header_timeout is None else read_header_timeout
    if timeout <= 0:
        raise ValueError(f"read_header_timeout must be positive, got {timeout}")
    # aiohttp's keep-alive timer runs from the connection's start and from each response, and closes a
    # connection that has no complete request by then: Go's ReadHeaderTimeout and IdleTimeout in one.
    runner = web.AppRunner(app, access_log=None, handle_signals=False, keepalive_timeout=timeout)
    await runner.setup()
    site = web.TCPSite(runner, parsed[0], parsed[1], reuse_address=True, ssl_context=ssl_context)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()  # no half-set-up runner left behind by a failed bind
        raise
    bound = runner.addresses[0]
    return runner, (bound[0], bound[1])


async def stop_site(runner: Any, timeout: float) -> None:  # noqa: ASYNC109
    """Stop a server started by `start_site` within `timeout` seconds: stop listening, close idle
    connections, let in-flight requests finish until half of `timeout`, then cancel their handlers and
    close their connections (a handler that ignores cancellation is left after the other half).
    aiohttp's own default waits 60 s for a hung handler, past any pod's grace period."""
    # aiohttp waits `_shutdown_timeout` for the handler, then as long again for its cancellation
    runner._shutdown_timeout = max(timeout, 0.0) / 2
    await runner.cleanup()
