"""pyop's controller-runtime: manager, controllers, work queue, informer cache and client, on asyncio.

Names resolve lazily (PEP 562), so `import pyscaffold_op.runtime` stays cheap;
prometheus_client and aiohttp load only when the part needing them is first used.

    from pyscaffold_op.runtime import Manager, Request, Result, load_config
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    # request/result
    "Request": "controller.request",
    "Result": "controller.request",
    "Reconciler": "controller.request",
    "TerminalError": "controller.request",
    # errors
    "ApiError": "client.errors",
    "NotFound": "client.errors",
    "AlreadyExists": "client.errors",
    "Conflict": "client.errors",
    "Invalid": "client.errors",
    "Gone": "client.errors",
    "BadRequest": "client.errors",
    "Forbidden": "client.errors",
    "Unauthorized": "client.errors",
    "TooManyRequests": "client.errors",
    "ServerError": "client.errors",
    "ServerTimeout": "client.errors",
    "ConfigError": "client.errors",
    "ignore_not_found": "client.errors",
    "is_not_found": "client.errors",
    "is_conflict": "client.errors",
    "is_already_exists": "client.errors",
    # config / client
    "load_config": "client.config",
    "in_cluster_config": "client.config",
    "RestConfig": "client.restconfig",
    "ExecConfig": "client.restconfig",
    "Client": "client.client",
    "CachedClient": "client.client",
    "StatusClient": "client.client",
    "new_client": "client.client",
    "Reader": "client.client",
    "ClientProtocol": "client.client",
    # time
    "Clock": "clock",
    "RealClock": "clock",
    "FakeClock": "clock",
    # queue / rate limiting
    "Queue": "controller.queue",
    "DelayingQueue": "controller.queue",
    "RateLimitingQueue": "controller.queue",
    "RateLimiter": "controller.ratelimiter",
    "ItemExponentialFailureRateLimiter": "controller.ratelimiter",
    "ItemFastSlowRateLimiter": "controller.ratelimiter",
    "BucketRateLimiter": "controller.ratelimiter",
    "MaxOfRateLimiter": "controller.ratelimiter",
    "default_controller_rate_limiter": "controller.ratelimiter",
    # events, sources, handlers, predicates
    "CreateEvent": "controller.event",
    "UpdateEvent": "controller.event",
    "DeleteEvent": "controller.event",
    "GenericEvent": "controller.event",
    "Source": "controller.source",
    "Kind": "controller.source",
    "Channel": "controller.source",
    "EventHandler": "controller.handler",
    "EnqueueRequestForObject": "controller.handler",
    "EnqueueRequestForOwner": "controller.handler",
    "EnqueueRequestsFromMapFunc": "controller.handler",
    "HandlerFuncs": "controller.handler",
    "Predicate": "controller.predicate",
    "Funcs": "controller.predicate",
    "GenerationChanged": "controller.predicate",
    "IgnoreStatusChanges": "controller.predicate",
    "LabelChanged": "controller.predicate",
    "AnnotationChanged": "controller.predicate",
    "ResourceVersionChanged": "controller.predicate",
    "and_": "controller.predicate",
    "or_": "controller.predicate",
    "not_": "controller.predicate",
    "new_predicate_funcs": "controller.predicate",
    # machinery
    "Informer": "cache.informer",
    "InformerCache": "cache.cache",
    "Indexer": "cache.store",
    "Controller": "controller.controller",
    "Builder": "controller.builder",
    "Manager": "manager.manager",
    "ManagerOptions": "manager.manager",
    "LeaderElectionLost": "manager.manager",
    "ShutdownTimeout": "manager.manager",
    "CacheSyncTimeout": "manager.startup",
    "BindError": "manager.startup",
    "parse_duration": "manager.startup",
    "LeaderElector": "manager.leader",
    "EventRecorder": "controller.recorder",
    "RuntimeMetrics": "servers.metrics",
    "setup_logging": "log",
    "AlreadyOwnedError": "controller.controllerutil",
    "OperationResult": "controller.controllerutil",
    "ping": "servers.health",
    "run": "loops",
}
_ALIASES = {"HandlerFuncs": "Funcs"}
_MODULES = {
    "controllerutil": "controller.controllerutil",
    "objmeta": "objects.objmeta",
    "predicate": "controller.predicate",
    "handler": "controller.handler",
    "source": "controller.source",
    "event": "controller.event",
}

__all__ = [
    "AlreadyExists",
    "AlreadyOwnedError",
    "AnnotationChanged",
    "ApiError",
    "BadRequest",
    "BindError",
    "BucketRateLimiter",
    "Builder",
    "CacheSyncTimeout",
    "CachedClient",
    "Channel",
    "Client",
    "ClientProtocol",
    "Clock",
    "ConfigError",
    "Conflict",
    "Controller",
    "CreateEvent",
    "DelayingQueue",
    "DeleteEvent",
    "EnqueueRequestForObject",
    "EnqueueRequestForOwner",
    "EnqueueRequestsFromMapFunc",
    "EventHandler",
    "EventRecorder",
    "ExecConfig",
    "FakeClock",
    "Forbidden",
    "Funcs",
    "GenerationChanged",
    "GenericEvent",
    "Gone",
    "HandlerFuncs",
    "IgnoreStatusChanges",
    "Indexer",
    "Informer",
    "InformerCache",
    "Invalid",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "Kind",
    "LabelChanged",
    "LeaderElectionLost",
    "LeaderElector",
    "Manager",
    "ManagerOptions",
    "MaxOfRateLimiter",
    "NotFound",
    "OperationResult",
    "Predicate",
    "Queue",
    "RateLimiter",
    "RateLimitingQueue",
    "Reader",
    "RealClock",
    "Reconciler",
    "Request",
    "ResourceVersionChanged",
    "RestConfig",
    "Result",
    "RuntimeMetrics",
    "ServerError",
    "ServerTimeout",
    "ShutdownTimeout",
    "Source",
    "StatusClient",
    "TerminalError",
    "TooManyRequests",
    "Unauthorized",
    "UpdateEvent",
    "and_",
    "controllerutil",
    "default_controller_rate_limiter",
    "event",
    "handler",
    "ignore_not_found",
    "in_cluster_config",
    "is_already_exists",
    "is_conflict",
    "is_not_found",
    "load_config",
    "new_client",
    "new_predicate_funcs",
    "not_",
    "objmeta",
    "or_",
    "parse_duration",
    "ping",
    "predicate",
    "run",
    "setup_logging",
    "source",
]


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{_MODULES[name]}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), _ALIASES.get(name, name))
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, eagerly
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
    from pyscaffold_op.runtime.controller.request import Reconciler, Request, Result, TerminalError
    from pyscaffold_op.runtime.controller.source import Channel, Kind, Source
    from pyscaffold_op.runtime.log import setup_logging
    from pyscaffold_op.runtime.loops import run
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
