"""Type-checked by tests/test_typing.py (not run): what `eventually` returns, as mypy and pyright see it."""

from typing import assert_type

from pyscaffold_op.testing import eventually


async def number() -> int:
    return 1


async def maybe_number() -> int | None:
    return None


def maybe_name(names: dict[str, str]) -> str | None:
    return names.get("a")


async def checks(names: dict[str, str]) -> None:
    assert_type(await eventually(number), int)  # a coroutine function: what it resolves to
    assert_type(await eventually(lambda: number()), int)  # a lambda returning an awaitable
    assert_type(await eventually(lambda: "ready"), str)  # a plain function
    # None means "not yet", so it is never returned: the result is not Optional
    assert_type(await eventually(maybe_number), int)
    assert_type(await eventually(lambda: maybe_number()), int)
    assert_type(await eventually(lambda: maybe_name(names)), str)
