"""The informer cache: one shared informer per kind, and reads served from it (pkg/cache).

Controllers watching the same kind share one informer, so one list+watch per kind per manager.
Reads return deep copies: a reconciler that mutates what it read cannot corrupt the cache (as
controller-runtime's default; pass `unsafe_disable_deep_copy=True` to skip the copy).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pyscaffold_op.apimachinery import fieldselector, labels
from pyscaffold_op.apimachinery.fieldselector import FieldSelector
from pyscaffold_op.runtime import objmeta
from pyscaffold_op.runtime.errors import NotFound
from pyscaffold_op.runtime.informer import Informer
from pyscaffold_op.runtime.kinds import ResourceInfo, info_for
from pyscaffold_op.runtime.rest import RestTransport
from pyscaffold_op.runtime.store import NAMESPACE_INDEX

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from pyscaffold_op.runtime.client import ListOptions

T = TypeVar("T")


def field_index_name(field: str) -> str:
    return f"field:{field}"


class InformerCache:
    def __init__(
        self,
        transport: RestTransport,
        *,
        namespace: str | None = None,
        resync_period: float | None = 10 * 3600.0,
        unsafe_disable_deep_copy: bool = False,
    ) -> None:
        self.transport = transport
        self.namespace = namespace
        self.resync_period = resync_period
        self.unsafe_disable_deep_copy = unsafe_disable_deep_copy
        self._informers: dict[ResourceInfo, Informer] = {}
        self._started = False

    # -- informers ------------------------------------------------------------------------------------
    def get_informer(self, kind: type) -> Informer:
        """The shared informer for `kind`, created (and started, if the cache runs) on first use."""
        info = info_for(kind)
        informer = self._informers.get(info)
        if informer is None:
            # Spread resyncs like controller-runtime (+/-10%) so kinds do not resync in lockstep.
            resync = self.resync_period * random.uniform(0.9, 1.1) if self.resync_period else None
            informer = Informer(self.transport, info, namespace=self.namespace, resync_period=resync)
            self._informers[info] = informer
            if self._started:
                informer.start()
        return informer

    def has_informer(self, kind: type) -> bool:
        try:
            return info_for(kind) in self._informers
        except TypeError:
            return False

    def informers(self) -> list[Informer]:
        return list(self._informers.values())

    def index_field(self, kind: type, field: str, extract: Callable[[Any], list[str]]) -> None:
        """Index `kind` by `extract(obj)`; `list(kind, fields={field: value})` then uses the index
        (client.FieldIndexer.IndexField)."""
        self.get_informer(kind).add_index(field_index_name(field), extract)

    async def start(self) -> None:
        self._started = True
        for informer in self._informers.values():
            informer.start()

    async def wait_for_cache_sync(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        results = await asyncio.gather(*(i.wait_for_sync(timeout) for i in self._informers.values()))
        return all(results)

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self._informers.values())

    async def stop(self) -> None:
        self._started = False
        await asyncio.gather(*(i.stop() for i in self._informers.values()))

    # -- reads ----------------------------------------------------------------------------------------
    async def _synced_informer(self, kind: type) -> Informer:
        informer = self.get_informer(kind)
        if not informer.has_synced():
            if not self._started:
                raise RuntimeError(f"cache for {informer.info.kind} is not started; read after mgr.start()")
            await informer.wait_for_sync()
        return informer

    def _copy(self, info: ResourceInfo, obj: Any) -> Any:
        return obj if self.unsafe_disable_deep_copy else info.copy(obj)

    async def get(self, kind: type[T], name: str, namespace: str | None = None) -> T:
        informer = await self._synced_informer(kind)
        info = informer.info
        ns = (namespace or self.transport.default_namespace) if info.namespaced else ""
        obj = informer.store.get(f"{ns}/{name}" if ns else name)
        if obj is None:
            raise NotFound(f'{info.plural}.{info.group or "core"} "{name}" not found', reason="NotFound")
        return self._copy(info, obj)

    async def list(
        self, kind: type[T], namespace: str | None = None, **options: Unpack[ListOptions]
    ) -> list[T]:
        informer = await self._synced_informer(kind)
        info, store = informer.info, informer.store
        if namespace and info.namespaced:
            candidates = store.by_index(NAMESPACE_INDEX, namespace)
        else:
            candidates = list(store.values())
        fields = fieldselector.matcher(options.get("fields"))
        if not fields.empty():
            candidates = _filter_fields(informer, candidates, fields)
        if options.get("labels"):
            selector = labels.matcher(options.get("labels"))
            candidates = [o for o in candidates if selector.matches(objmeta.labels(o))]
        candidates.sort(key=objmeta.key)
        return [self._copy(info, o) for o in candidates]


def _filter_fields(informer: Informer, objs: list[Any], fields: FieldSelector) -> list[Any]:
    """Field selectors: an equality through a registered field index when there is one, else by
    evaluating the path on the object's wire form (slower, but `fields={"status.phase": "Running"}`
    just works)."""
    for req in fields.requirements:
        index = field_index_name(req.field)
        if req.equal and informer.store.has_index(index):
            keep = {id(o) for o in informer.store.by_index(index, req.value)}
            objs = [o for o in objs if id(o) in keep]
        else:
            objs = [o for o in objs if req.matches(informer.info.to_dict(o))]
    return objs
