"""Bind-address parsing and aiohttp site start-up shared by the health and metrics servers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ssl


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
    app: Any, address: str, ssl_context: ssl.SSLContext | None = None
) -> tuple[Any, tuple[str, int]] | None:
    """Serve `app` on `address` (over TLS with `ssl_context`); returns (runner, (host, port) actually
    bound) or None when disabled."""
    parsed = parse_bind_address(address)
    if parsed is None:
        return None
    from aiohttp import web

    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, parsed[0], parsed[1], reuse_address=True, ssl_context=ssl_context)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()  # no half-set-up runner left behind by a failed bind
        raise
    bound = runner.addresses[0]
    return runner, (bound[0], bound[1])
