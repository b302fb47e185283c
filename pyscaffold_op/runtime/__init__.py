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
    "Request": "request",
    "Result": "request",
    "Reconciler": "request",
    "TerminalError": "request",
    # errors
    "ApiError": "errors",
    "NotFound": "errors",
    "AlreadyExists": "errors",
    "Conflict": "errors",
    "Invalid": "errors",
    "Gone": "errors",
    "BadRequest": "errors",
    "Forbidden": "errors",
    "Unauthorized": "errors",
    "TooManyRequests": "errors",
    "ServerError": "errors",
    "ServerTimeout": "errors",
    "ConfigError": "errors",
    "ignore_not_found": "errors",
    "is_not_found": "errors",
    "is_conflict": "errors",
    "is_already_exists": "errors",
    # config / client
    "load_config": "config",
    "in_cluster_config": "config",
    "RestConfig": "restconfig",
    "ExecConfig": "restconfig",
    "Client": "client",
    "CachedClient": "client",
    "StatusClient": "client",
    "new_client": "client",
    "Reader": "client",
    "ClientProtocol": "client",
    # time
    "Clock": "clock",
    "RealClock": "clock",
    "FakeClock": "clock",
    # queue / rate limiting
    "Queue": "queue",
    "DelayingQueue": "queue",
    "RateLimitingQueue": "queue",
    "RateLimiter": "ratelimiter",
    "ItemExponentialFailureRateLimiter": "ratelimiter",
    "ItemFastSlowRateLimiter": "ratelimiter",
    "BucketRateLimiter": "ratelimiter",
    "MaxOfRateLimiter": "ratelimiter",
    "default_controller_rate_limiter": "ratelimiter",
    # events, sources, handlers, predicates
    "CreateEvent": "event",
    "UpdateEvent": "event",
    "DeleteEvent": "event",
    "GenericEvent": "event",
    "Source": "source",
    "Kind": "source",
    "Channel": "source",
    "EventHandler": "handler",
    "EnqueueRequestForObject": "handler",
    "EnqueueRequestForOwner": "handler",
    "EnqueueRequestsFromMapFunc": "handler",
    "HandlerFuncs": "handler",
    "Predicate": "predicate",
    "Funcs": "predicate",
    "GenerationChanged": "predicate",
    "IgnoreStatusChanges": "predicate",
    "LabelChanged": "predicate",
    "AnnotationChanged": "predicate",
    "ResourceVersionChanged": "predicate",
    "and_": "predicate",
    "or_": "predicate",
    "not_": "predicate",
    "new_predicate_funcs": "predicate",
    # machinery
    "Informer": "informer",
    "InformerCache": "cache",
    "Indexer": "store",
    "Controller": "controller",
    "Builder": "builder",
    "Manager": "manager",
    "ManagerOptions": "manager",
    "LeaderElectionLost": "manager",
    "ShutdownTimeout": "manager",
    "CacheSyncTimeout": "startup",
    "BindError": "startup",
    "parse_duration": "startup",
    "LeaderElector": "leader",
    "EventRecorder": "recorder",
    "RuntimeMetrics": "metrics",
    "setup_logging": "log",
    "AlreadyOwnedError": "controllerutil",
    "OperationResult": "controllerutil",
    "ping": "health",
    "run": "loops",
}
_ALIASES = {"HandlerFuncs": "Funcs"}
_MODULES = {"controllerutil", "objmeta", "predicate", "handler", "source", "event"}

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
        return importlib.import_module(f"{__name__}.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), _ALIASES.get(name, name))
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, eagerly
    from pyscaffold_op.runtime import controllerutil, event, handler, objmeta, predicate, source
    from pyscaffold_op.runtime.builder import Builder
    from pyscaffold_op.runtime.cache import InformerCache
    from pyscaffold_op.runtime.client import (
        CachedClient,
        Client,
        ClientProtocol,
        Reader,
        StatusClient,
        new_client,
    )
    from pyscaffold_op.runtime.clock import Clock, FakeClock, RealClock
    from pyscaffold_op.runtime.config import in_cluster_config, load_config
    from pyscaffold_op.runtime.controller import Controller
    from pyscaffold_op.runtime.controllerutil import AlreadyOwnedError, OperationResult
    from pyscaffold_op.runtime.errors import (
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
    from pyscaffold_op.runtime.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
    from pyscaffold_op.runtime.handler import (
        EnqueueRequestForObject,
        EnqueueRequestForOwner,
        EnqueueRequestsFromMapFunc,
        EventHandler,
    )
    from pyscaffold_op.runtime.handler import Funcs as HandlerFuncs
    from pyscaffold_op.runtime.health import ping
    from pyscaffold_op.runtime.informer import Informer
    from pyscaffold_op.runtime.leader import LeaderElector
    from pyscaffold_op.runtime.log import setup_logging
    from pyscaffold_op.runtime.loops import run
    from pyscaffold_op.runtime.manager import LeaderElectionLost, Manager, ManagerOptions, ShutdownTimeout
    from pyscaffold_op.runtime.metrics import RuntimeMetrics
    from pyscaffold_op.runtime.predicate import (
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
    from pyscaffold_op.runtime.queue import DelayingQueue, Queue, RateLimitingQueue
    from pyscaffold_op.runtime.ratelimiter import (
        BucketRateLimiter,
        ItemExponentialFailureRateLimiter,
        ItemFastSlowRateLimiter,
        MaxOfRateLimiter,
        RateLimiter,
        default_controller_rate_limiter,
    )
    from pyscaffold_op.runtime.request import Reconciler, Request, Result, TerminalError
    from pyscaffold_op.runtime.restconfig import ExecConfig, RestConfig
    from pyscaffold_op.runtime.source import Channel, Kind, Source
    from pyscaffold_op.runtime.startup import BindError, CacheSyncTimeout, parse_duration
    from pyscaffold_op.runtime.store import Indexer
