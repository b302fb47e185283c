"""`/healthz` and `/readyz` (pkg/healthz): named checks, each a sync or async callable that returns
None/True when healthy and False or raises when not. `/healthz/<name>` checks one; `?verbose` lists all."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

Checker = Callable[[], Any]


def ping() -> None:
    """The always-healthy check (healthz.Ping), scaffolded as `healthz`/`readyz` by kubebuilder."""


class HealthChecks:
    def __init__(self) -> None:
        self.healthz: dict[str, Checker] = {}
        self.readyz: dict[str, Checker] = {}

    async def run(self, checks: dict[str, Checker], only: str | None = None) -> tuple[bool, list[str]]:
        ok, lines = True, []
        for name, check in checks.items():
            if only is not None and name != only:
                continue
            try:
                result = check()
                if inspect.isawaitable(result):
                    result = await result
                passed = result is None or bool(result)
                reason = "" if passed else "check returned false"
            except Exception as err:
                passed, reason = False, str(err) or type(err).__name__
            ok = ok and passed
            lines.append(f"[+]{name} ok" if passed else f"[-]{name} failed: {reason}")
        return ok, lines

    def app(self) -> Any:
        from aiohttp import web

        def endpoint(kind: str) -> Any:
            async def handle(request: web.Request) -> web.Response:
                checks = self.healthz if kind == "healthz" else self.readyz
                only = request.match_info.get("name")
                if only is not None and only not in checks:
                    return web.Response(status=404, text=f"no check named {only}\n")
                ok, lines = await self.run(checks, only)
                if "verbose" in request.query or not ok:
                    body = "\n".join(lines) + f"\n{kind} check {'passed' if ok else 'failed'}\n"
                else:
                    body = "ok"
                return web.Response(status=200 if ok else 500, text=body)

            return handle

        app = web.Application()
        for kind in ("healthz", "readyz"):
            app.router.add_get(f"/{kind}", endpoint(kind))
            app.router.add_get(f"/{kind}/{{name}}", endpoint(kind))
        return app
