"""Small helpers for asynchronous tests of controllers."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

from pyscaffold_op.clock import FakeClock

if TYPE_CHECKING:
    from pyscaffold_op.apimachinery import KubeObject
    from pyscaffold_op.runtime.objects.reference import object_reference

T = TypeVar("T")
K = TypeVar("K", bound="KubeObject")

__all__ = ["FakeClock", "consistently", "eventually", "load_sample", "object_reference"]

_NOTHING = object()


def __getattr__(name: str) -> Any:
    """`object_reference` is the runtime's (a reconciler uses it too), imported on first use."""
    if name == "object_reference":
        from pyscaffold_op.runtime.objects.reference import object_reference

        return object_reference
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# A check returns its value or something falsy meaning "not yet", typically None; what `eventually`
# returns is a value the check returned truthy, so its type is the check's without None (`At | None`
# checks give an `At`).
@overload
async def eventually(
    check: Callable[[], Awaitable[T | None]],
    *,
    timeout: float = ...,  # noqa: ASYNC109
    interval: float = ...,
) -> T: ...  # a coroutine function or a lambda returning an awaitable: what it resolves to


@overload
async def eventually(check: Callable[[], T | None], *, timeout: float = ..., interval: float = ...) -> T: ...  # noqa: ASYNC109


async def eventually(
    check: Callable[[], Any],
    *,
    timeout: float = 5.0,  # noqa: ASYNC109 - a polling deadline, not a cancellation scope
    interval: float = 0.02,
) -> Any:
    """Call `check()` (a plain function, a coroutine function, or a lambda returning an awaitable)
    until it returns a truthy value, and return that value.

    An exception from `check` (an AssertionError, a NotFound, ...) counts as "not yet" and is retried.
    After `timeout` seconds it fails with an AssertionError that names the check and shows the last
    value it returned, or the last error with its type (chained as the cause), so a failing test says
    what it waited for.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last_value: object = _NOTHING
    last_error: Exception | None = None
    while True:
        try:
            result = check()
            value = await result if inspect.isawaitable(result) else result
        except Exception as err:  # cancellation and KeyboardInterrupt are BaseException: they propagate
            last_error = err
        else:
            if value:
                return value
            last_value, last_error = value, None
        if loop.time() >= deadline:
            raise _failure(check, timeout, last_value, last_error)
        await asyncio.sleep(interval)


@overload
async def consistently(
    check: Callable[[], Awaitable[T | None]],
    *,
    duration: float = ...,
    interval: float = ...,
) -> T: ...  # like `eventually`: every value it returns was truthy, so never None


@overload
async def consistently(
    check: Callable[[], T | None], *, duration: float = ..., interval: float = ...
) -> T: ...


async def consistently(
    check: Callable[[], Any],
    *,
    duration: float = 0.1,
    interval: float = 0.01,
) -> Any:
    """Call `check()` (plain, coroutine function, or a lambda returning an awaitable) every `interval`
    seconds for `duration` seconds; every call must return something truthy. Returns the last value.

    Gomega's `Consistently` (same defaults: 100 ms, polled every 10 ms): the way to say something does
    *not* happen, e.g. that a controller leaves an object alone. The first falsy value or exception
    fails at once with an AssertionError naming the check, when it failed and what it returned or
    raised (chained as the cause).
    """
    loop = asyncio.get_running_loop()
    began = loop.time()
    deadline = began + duration
    while True:
        try:
            result = check()
            value = await result if inspect.isawaitable(result) else result
        except Exception as err:  # cancellation and KeyboardInterrupt are BaseException: they propagate
            raise _broken(check, loop.time() - began, f"raised {type(err).__name__}: {err}", err) from err
        if not value:
            raise _broken(check, loop.time() - began, f"returned {value!r}", None)
        if loop.time() >= deadline:
            return value
        await asyncio.sleep(min(interval, max(0.0, deadline - loop.time())))


def _broken(check: object, after: float, what: str, error: Exception | None) -> AssertionError:
    failure = AssertionError(f"{_name(check)} stopped being true after {after:.3f}s: it {what}")
    failure.__cause__ = error
    return failure


def _name(check: object) -> str:
    name = getattr(check, "__qualname__", None) or repr(check)
    return name.rpartition("<locals>.")[2]  # `fetch`, not `test_x.<locals>.fetch`


def _failure(check: object, timeout: float, value: object, error: Exception | None) -> AssertionError:
    name = getattr(check, "__qualname__", None) or repr(check)
    name = name.rpartition("<locals>.")[2]  # `fetch`, not `test_x.<locals>.fetch`
    detail = f"last error {type(error).__name__}: {error}" if error is not None else f"last value {value!r}"
    failure = AssertionError(f"{name} not true after {timeout}s: {detail}")
    failure.__cause__ = error
    return failure


def load_sample(model: type[K], path: str | Path) -> K:
    """The object of `model`'s kind in a YAML file (a sample under config/samples), as a `model`.

    The file may hold several documents (`---`); the one whose apiVersion and kind are `model`'s is
    taken. Fails with the file's name when there is none, or when the sample does not fit the model
    (a required field the sample leaves out, a value of the wrong type): keep your samples valid.
    """
    from ruamel.yaml import YAML

    path = Path(path)
    gvk = model.gvk
    docs: list[Any] = [d for d in YAML(typ="safe", pure=True).load_all(path.read_text(encoding="utf-8")) if d]
    found = [d for d in docs if d.get("apiVersion") == gvk.api_version and d.get("kind") == gvk.kind]
    if not found:
        raise ValueError(f"{path}: no {gvk.kind} of apiVersion {gvk.api_version} in it")
    try:
        return model.model_validate(found[0])
    except ValueError as err:
        raise ValueError(f"{path}: the sample is not a valid {gvk.kind}: {err}") from err
