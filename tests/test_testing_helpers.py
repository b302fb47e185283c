"""pyscaffold_op.testing's `consistently` (Gomega's Consistently) and `object_reference`
(client-go's ref.GetReference)."""

from __future__ import annotations

import asyncio

import pytest

from pyscaffold_op.apimachinery import ObjectMeta
from pyscaffold_op.models.apps_v1 import Deployment
from pyscaffold_op.models.core_v1 import ObjectReference, Pod
from pyscaffold_op.testing import consistently, object_reference


async def test_consistently_holds_for_the_whole_duration_and_returns_the_last_value() -> None:
    calls = 0

    async def counted() -> int:
        nonlocal calls
        calls += 1
        return calls

    loop = asyncio.get_running_loop()
    began = loop.time()
    last = await consistently(counted, duration=0.05, interval=0.01)
    assert loop.time() - began >= 0.05
    assert last == calls and calls >= 3


async def test_consistently_fails_at_the_first_falsy_value_naming_the_check() -> None:
    values = iter([True, True, False, True])

    def still_idle() -> bool:
        return next(values)

    with pytest.raises(
        AssertionError, match=r"^still_idle stopped being true after \d\.\d{3}s: it returned False$"
    ):
        await consistently(still_idle, duration=5, interval=0.001)


async def test_consistently_fails_at_an_exception_chaining_it() -> None:
    def broken() -> bool:
        raise KeyError("gone")

    with pytest.raises(
        AssertionError, match=r"broken stopped being true after .*: it raised KeyError: 'gone'"
    ) as raised:
        await consistently(broken)
    assert isinstance(raised.value.__cause__, KeyError)


def test_object_reference_of_a_typed_object_takes_the_kind_from_its_class() -> None:
    pod = Pod(metadata=ObjectMeta(name="p", namespace="ns", uid="u-1", resource_version="42"))
    pod.api_version = pod.kind = None  # type: ignore[assignment]  # as a read body may leave them
    assert object_reference(pod) == ObjectReference(
        api_version="v1", kind="Pod", name="p", namespace="ns", uid="u-1", resource_version="42"
    )


def test_object_reference_leaves_unset_what_the_object_has_not() -> None:
    ref = object_reference(Deployment(metadata=ObjectMeta(name="d")))
    assert ref.model_dump(by_alias=True, exclude_none=True) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "d",
    }


def test_object_reference_of_a_dict_reads_its_kind_and_refuses_without_one() -> None:
    body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "n", "uid": "u"}}
    assert object_reference(body) == ObjectReference(
        api_version="batch/v1", kind="Job", name="j", namespace="n", uid="u"
    )
    with pytest.raises(ValueError, match="no apiVersion and kind"):
        object_reference({"metadata": {"name": "x"}})
