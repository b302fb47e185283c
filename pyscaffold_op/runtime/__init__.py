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
    from pyscaffold_op.runtime.cache.cache import (
        InformerCache as InformerCache,
    )
    from pyscaffold_op.runtime.cache.informer import (
        Informer as Informer,
    )
    from pyscaffold_op.runtime.cache.liveness import (
        WatchLiveness as WatchLiveness,
    )
    from pyscaffold_op.runtime.cache.store import (
        Indexer as Indexer,
    )
    from pyscaffold_op.runtime.client.apply import (
        apply_configuration as apply_configuration,
    )
    from pyscaffold_op.runtime.client.client import (
        CachedClient as CachedClient,
    )
    from pyscaffold_op.runtime.client.client import (
        Client as Client,
    )
    from pyscaffold_op.runtime.client.client import (
        ClientProtocol as ClientProtocol,
    )
    from pyscaffold_op.runtime.client.client import (
        Reader as Reader,
    )
    from pyscaffold_op.runtime.client.client import (
        StatusClient as StatusClient,
    )
    from pyscaffold_op.runtime.client.client import (
        new_client as new_client,
    )
    from pyscaffold_op.runtime.client.config import (
        in_cluster_config as in_cluster_config,
    )
    from pyscaffold_op.runtime.client.config import (
        load_config as load_config,
    )
    from pyscaffold_op.runtime.client.errors import (
        AlreadyExists as AlreadyExists,
    )
    from pyscaffold_op.runtime.client.errors import (
        ApiError as ApiError,
    )
    from pyscaffold_op.runtime.client.errors import (
        BadRequest as BadRequest,
    )
    from pyscaffold_op.runtime.client.errors import (
        ConfigError as ConfigError,
    )
    from pyscaffold_op.runtime.client.errors import (
        Conflict as Conflict,
    )
    from pyscaffold_op.runtime.client.errors import (
        Forbidden as Forbidden,
    )
    from pyscaffold_op.runtime.client.errors import (
        Gone as Gone,
    )
    from pyscaffold_op.runtime.client.errors import (
        Invalid as Invalid,
    )
    from pyscaffold_op.runtime.client.errors import (
        NotFound as NotFound,
    )
    from pyscaffold_op.runtime.client.errors import (
        ServerError as ServerError,
    )
    from pyscaffold_op.runtime.client.errors import (
        ServerTimeout as ServerTimeout,
    )
    from pyscaffold_op.runtime.client.errors import (
        TooManyRequests as TooManyRequests,
    )
    from pyscaffold_op.runtime.client.errors import (
        Unauthorized as Unauthorized,
    )
    from pyscaffold_op.runtime.client.errors import (
        ignore_not_found as ignore_not_found,
    )
    from pyscaffold_op.runtime.client.errors import (
        is_already_exists as is_already_exists,
    )
    from pyscaffold_op.runtime.client.errors import (
        is_conflict as is_conflict,
    )
    from pyscaffold_op.runtime.client.errors import (
        is_not_found as is_not_found,
    )
    from pyscaffold_op.runtime.client.restconfig import (
        ExecConfig as ExecConfig,
    )
    from pyscaffold_op.runtime.client.restconfig import (
        RestConfig as RestConfig,
    )
    from pyscaffold_op.runtime.clock import (
        Clock as Clock,
    )
    from pyscaffold_op.runtime.clock import (
        FakeClock as FakeClock,
    )
    from pyscaffold_op.runtime.clock import (
        RealClock as RealClock,
    )
    from pyscaffold_op.runtime.controller import (
        controllerutil as controllerutil,
    )
    from pyscaffold_op.runtime.controller import (
        event as event,
    )
    from pyscaffold_op.runtime.controller import (
        handler as handler,
    )
    from pyscaffold_op.runtime.controller import (
        predicate as predicate,
    )
    from pyscaffold_op.runtime.controller import (
        source as source,
    )
    from pyscaffold_op.runtime.controller.builder import (
        Builder as Builder,
    )
    from pyscaffold_op.runtime.controller.controller import (
        Controller as Controller,
    )
    from pyscaffold_op.runtime.controller.controllerutil import (
        AlreadyOwnedError as AlreadyOwnedError,
    )
    from pyscaffold_op.runtime.controller.controllerutil import (
        OperationResult as OperationResult,
    )
    from pyscaffold_op.runtime.controller.daemon import (
        DaemonContext as DaemonContext,
    )
    from pyscaffold_op.runtime.controller.daemon import (
        Stopped as Stopped,
    )
    from pyscaffold_op.runtime.controller.diff import (
        Change as Change,
    )
    from pyscaffold_op.runtime.controller.diff import (
        diff as diff,
    )
    from pyscaffold_op.runtime.controller.event import (
        CreateEvent as CreateEvent,
    )
    from pyscaffold_op.runtime.controller.event import (
        DeleteEvent as DeleteEvent,
    )
    from pyscaffold_op.runtime.controller.event import (
        GenericEvent as GenericEvent,
    )
    from pyscaffold_op.runtime.controller.event import (
        UpdateEvent as UpdateEvent,
    )
    from pyscaffold_op.runtime.controller.events import (
        EventRecorder as EventRecorder,
    )
    from pyscaffold_op.runtime.controller.fromkopf import (
        KopfMarks as KopfMarks,
    )
    from pyscaffold_op.runtime.controller.fromkopf import (
        release_from_kopf as release_from_kopf,
    )
    from pyscaffold_op.runtime.controller.handler import (
        EnqueueRequestForObject as EnqueueRequestForObject,
    )
    from pyscaffold_op.runtime.controller.handler import (
        EnqueueRequestForOwner as EnqueueRequestForOwner,
    )
    from pyscaffold_op.runtime.controller.handler import (
        EnqueueRequestsFromMapFunc as EnqueueRequestsFromMapFunc,
    )
    from pyscaffold_op.runtime.controller.handler import (
        EventHandler as EventHandler,
    )
    from pyscaffold_op.runtime.controller.handler import (
        Funcs as HandlerFuncs,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        ABSENT as ABSENT,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        PRESENT as PRESENT,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        AnnotationChanged as AnnotationChanged,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        FieldChanged as FieldChanged,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        Funcs as Funcs,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        GenerationChanged as GenerationChanged,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        IgnoreStatusChanges as IgnoreStatusChanges,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        LabelChanged as LabelChanged,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        ObjectFilter as ObjectFilter,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        Predicate as Predicate,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        ResourceVersionChanged as ResourceVersionChanged,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        and_ as and_,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        field_changed as field_changed,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        matching as matching,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        new_predicate_funcs as new_predicate_funcs,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        not_ as not_,
    )
    from pyscaffold_op.runtime.controller.predicate import (
        or_ as or_,
    )
    from pyscaffold_op.runtime.controller.queue import (
        DelayingQueue as DelayingQueue,
    )
    from pyscaffold_op.runtime.controller.queue import (
        Queue as Queue,
    )
    from pyscaffold_op.runtime.controller.queue import (
        RateLimitingQueue as RateLimitingQueue,
    )
    from pyscaffold_op.runtime.controller.ratelimiter import (
        BucketRateLimiter as BucketRateLimiter,
    )
    from pyscaffold_op.runtime.controller.ratelimiter import (
        ItemExponentialFailureRateLimiter as ItemExponentialFailureRateLimiter,
    )
    from pyscaffold_op.runtime.controller.ratelimiter import (
        ItemFastSlowRateLimiter as ItemFastSlowRateLimiter,
    )
    from pyscaffold_op.runtime.controller.ratelimiter import (
        MaxOfRateLimiter as MaxOfRateLimiter,
    )
    from pyscaffold_op.runtime.controller.ratelimiter import (
        RateLimiter as RateLimiter,
    )
    from pyscaffold_op.runtime.controller.ratelimiter import (
        default_controller_rate_limiter as default_controller_rate_limiter,
    )
    from pyscaffold_op.runtime.controller.recorder import (
        LegacyEventRecorder as LegacyEventRecorder,
    )
    from pyscaffold_op.runtime.controller.request import (
        ReconcileContext as ReconcileContext,
    )
    from pyscaffold_op.runtime.controller.request import (
        Reconciler as Reconciler,
    )
    from pyscaffold_op.runtime.controller.request import (
        Request as Request,
    )
    from pyscaffold_op.runtime.controller.request import (
        Result as Result,
    )
    from pyscaffold_op.runtime.controller.request import (
        TerminalError as TerminalError,
    )
    from pyscaffold_op.runtime.controller.source import (
        Channel as Channel,
    )
    from pyscaffold_op.runtime.controller.source import (
        Kind as Kind,
    )
    from pyscaffold_op.runtime.controller.source import (
        Source as Source,
    )
    from pyscaffold_op.runtime.log import (
        setup_logging as setup_logging,
    )
    from pyscaffold_op.runtime.loops import (
        run as run,
    )
    from pyscaffold_op.runtime.manager.cmd import (
        ManagerFlags as ManagerFlags,
    )
    from pyscaffold_op.runtime.manager.cmd import (
        manager_flag_parser as manager_flag_parser,
    )
    from pyscaffold_op.runtime.manager.cmd import (
        parse_manager_flags as parse_manager_flags,
    )
    from pyscaffold_op.runtime.manager.cmd import (
        run_manager as run_manager,
    )
    from pyscaffold_op.runtime.manager.leader import (
        LeaderElector as LeaderElector,
    )
    from pyscaffold_op.runtime.manager.manager import (
        LeaderElectionLost as LeaderElectionLost,
    )
    from pyscaffold_op.runtime.manager.manager import (
        Manager as Manager,
    )
    from pyscaffold_op.runtime.manager.manager import (
        ManagerOptions as ManagerOptions,
    )
    from pyscaffold_op.runtime.manager.manager import (
        ShutdownTimeout as ShutdownTimeout,
    )
    from pyscaffold_op.runtime.manager.startup import (
        BindError as BindError,
    )
    from pyscaffold_op.runtime.manager.startup import (
        CacheSyncTimeout as CacheSyncTimeout,
    )
    from pyscaffold_op.runtime.manager.startup import (
        parse_duration as parse_duration,
    )
    from pyscaffold_op.runtime.objects import (
        objmeta as objmeta,
    )
    from pyscaffold_op.runtime.objects.reference import (
        object_reference as object_reference,
    )
    from pyscaffold_op.runtime.servers.health import (
        ping as ping,
    )
    from pyscaffold_op.runtime.servers.metrics import (
        RuntimeMetrics as RuntimeMetrics,
    )
    from pyscaffold_op.runtime.sharding.flags import (
        add_sharding_flags as add_sharding_flags,
    )
    from pyscaffold_op.runtime.sharding.flags import (
        sharding_options as sharding_options,
    )
    from pyscaffold_op.runtime.sharding.shards import (
        ShardingOptions as ShardingOptions,
    )
    from pyscaffold_op.runtime.sharding.shards import (
        ShardLeaseLost as ShardLeaseLost,
    )


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
