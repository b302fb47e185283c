"""The informer's lists, as client-go's reflector makes them: the first with resourceVersion=0 (the
API server answers it from its watch cache, without an etcd read), a relist after a 410 with none (the
latest state), pages continued without a version."""

from __future__ import annotations

from typing import Any

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Client
from pyscaffold_op.runtime.cache.informer import Informer
from pyscaffold_op.runtime.client.rest import RestTransport
from pyscaffold_op.runtime.objects.kinds import info_for
from pyscaffold_op.testing import eventually

from .widgets import Widget, widget


class Recording(RestTransport):
    lists: list[dict[str, Any]]

    async def request(self, method: str, path: str, **kw: Any) -> Any:
        params = kw.get("params") or {}
        if method == "GET" and "watch" not in params and "limit" in params and params["limit"] != 1:
            self.lists.append(dict(params))
        return await super().request(method, path, **kw)


async def test_first_list_any_version_relist_latest_pages_without_one(env: Environment, api: Client) -> None:
    for i in range(5):
        await api.create(widget(f"w{i}"))
    transport = Recording(env.config)
    transport.lists = []
    informer = Informer(transport, info_for(Widget), page_size=2)
    informer.start()
    try:
        assert await informer.wait_for_sync(5)
        assert len(informer.store) == 5
        first = transport.lists
        assert first[0].get("resourceVersion") == "0"
        assert all("resourceVersion" not in p and p.get("continue") for p in first[1:])
        await informer.stop()
        transport.lists = []
        await api.create(widget("late"))
        env.compact()  # the re-watch gets 410: a relist of the latest state
        informer.start()
        await eventually(lambda: len(informer.store) == 6)
        assert informer.stats["relists_on_gone"] == 1
        assert transport.lists and all("resourceVersion" not in p for p in transport.lists)
    finally:
        await informer.stop()
        await transport.close()
