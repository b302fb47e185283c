"""pyop's controller-runtime: manager, controllers, work queue, informer cache and client, on asyncio.

Names resolve lazily (PEP 562), so `import pyscaffold_op.runtime` stays cheap;
prometheus_client and aiohttp load only when the part needing them is first used.

    from pyscaffold_op.runtime import Manager, Request, Result, load_config

The rooms (one concept each; docs/design.md, "Where each concept lives"): `client` (the API client,
its transport and configuration, API errors), `objects` (the object model the runtime handles: typed
`KubeObject`s and `RawObject`s, their metadata, `ResourceInfo`), `cache` (informers and their
stores), `controller` (the reconcile machinery: queue, sources, handlers, predicates, builder),
`manager` (the manager, its runnable groups, leader election, start diagnosis), `servers` (health,
metrics and their auth filter), `certs`, `webhook`; `clock`, `log` and `loops` serve every room.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# The public names, declared once: type checkers and IDEs read this block as imports; at run time
# `__getattr__` reads it (on the first name asked for) as the table of what to import lazily, and
# `__all__` is its names.
if TYPE_CHECKING:
    from pyscaffold_op.runtime.cache.cache import InformerCache
    from pyscaffold_op.runtime.cache.informer import Informer
    from pyscaffold_op.runtime.cache.store import Indexer
    from pyscaffold_op.runtime.client.client import (
        CachedClient,
        Client,
        ClientProtocol,
        Reader,
        StatusClient,
        new_client,
    )
    from pyscaffold_op.runtime.client.config import in_cluster_config, load_config
    from pyscaffold_op.runtime.client.errors import (
        AlreadyExists,
        ApiError,
        BadRequest,
        ConfigError,
        Conflict,
        Forbidden,
        Gone,
        Invalid,
        NotFound,
        ServerError,
        ServerTimeout,
        TooManyRequests,
        Unauthorized,
        ignore_not_found,
        is_already_exists,
        is_conflict,
        is_not_found,
    )
    from pyscaffold_op.runtime.client.restconfig import ExecConfig, RestConfig
    from pyscaffold_op.runtime.clock import Clock, FakeClock, RealClock
    from pyscaffold_op.runtime.controller import controllerutil, event, handler, predicate, source
    from pyscaffold_op.runtime.controller.builder import Builder
    from pyscaffold_op.runtime.controller.controller import Controller
    from pyscaffold_op.runtime.controller.controllerutil import AlreadyOwnedError, OperationResult
    from pyscaffold_op.runtime.controller.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
    from pyscaffold_op.runtime.controller.handler import (
        EnqueueRequestForObject,
        EnqueueRequestForOwner,
        EnqueueRequestsFromMapFunc,
        EventHandler,
    )
    from pyscaffold_op.runtime.controller.handler import Funcs as HandlerFuncs
    from pyscaffold_op.runtime.controller.predicate import (
        AnnotationChanged,
        Funcs,
        GenerationChanged,
        IgnoreStatusChanges,
        LabelChanged,
        Predicate,
        ResourceVersionChanged,
        and_,
        new_predicate_funcs,
        not_,
        or_,
    )
    from pyscaffold_op.runtime.controller.queue import DelayingQueue, Queue, RateLimitingQueue
    from pyscaffold_op.runtime.controller.ratelimiter import (
        BucketRateLimiter,
        ItemExponentialFailureRateLimiter,
        ItemFastSlowRateLimiter,
        MaxOfRateLimiter,
        RateLimiter,
        default_controller_rate_limiter,
    )
    from pyscaffold_op.runtime.controller.recorder import EventRecorder
    from pyscaffold_op.runtime.controller.request import Reconciler, Request, Result, TerminalError
    from pyscaffold_op.runtime.controller.source import Channel, Kind, Source
    from pyscaffold_op.runtime.log import setup_logging
    from pyscaffold_op.runtime.loops import run
    from pyscaffold_op.runtime.manager.cmd import (
        ManagerFlags,
        manager_flag_parser,
        parse_manager_flags,
        run_manager,
    )
    from pyscaffold_op.runtime.manager.leader import LeaderElector
    from pyscaffold_op.runtime.manager.manager import (
        LeaderElectionLost,
        Manager,
        ManagerOptions,
        ShutdownTimeout,
    )
    from pyscaffold_op.runtime.manager.startup import BindError, CacheSyncTimeout, parse_duration
    from pyscaffold_op.runtime.objects import objmeta
    from pyscaffold_op.runtime.servers.health import ping
    from pyscaffold_op.runtime.servers.metrics import RuntimeMetrics
    from pyscaffold_op.runtime.sharding.flags import add_sharding_flags, sharding_options
    from pyscaffold_op.runtime.sharding.shards import ShardingOptions, ShardLeaseLost


_exports: dict[str, tuple[str, str]] = {}


def _read_exports() -> dict[str, tuple[str, str]]:
    """name -> (module, attribute) of every import in the TYPE_CHECKING block above."""
    import ast

    loader: Any = globals()["__loader__"]  # its source, also from a zip or an installed wheel
    # pytest's assertion rewriter loads every module of a distribution with a pytest11 entry point (pyop's
    # fixtures) and has no get_source: then the file itself
    get_source = getattr(loader, "get_source", None)
    source = get_source(__name__) if get_source is not None else None
    if source is None and isinstance(globals().get("__file__"), str):
        import pathlib

        source = pathlib.Path(__file__).read_text(encoding="utf-8")
    assert source is not None, "pyscaffold_op.runtime needs its source to resolve its names"
    block = next(
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    )
    table: dict[str, tuple[str, str]] = {}
    for node in block.body:
        if not isinstance(node, ast.ImportFrom) or node.module is None:
            raise TypeError("the public-name block holds only `from module import name` lines")
        for alias in node.names:
            table[alias.asname or alias.name] = (node.module, alias.name)
    return table


def __getattr__(name: str) -> Any:
    if not _exports:
        _exports.update(_read_exports())
    if name == "__all__":
        value: Any = sorted(_exports)
    elif name in _exports:
        module_name, attribute = _exports[name]
        module = importlib.import_module(module_name)
        try:
            value = getattr(module, attribute)
        except AttributeError:  # a submodule not imported yet (`from ...controller import handler`)
            value = importlib.import_module(f"{module_name}.{attribute}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__getattr__("__all__"))
