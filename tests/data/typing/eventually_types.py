"""Type-checked by tests/test_typing.py (not run): what `eventually` returns, as mypy sees it."""

from typing import assert_type

from pyscaffold_op.testing import eventually


async def number() -> int:
    return 1


async def checks() -> None:
    assert_type(await eventually(number), int)  # a coroutine function: what it resolves to
    assert_type(await eventually(lambda: number()), int)  # a lambda returning an awaitable
    assert_type(await eventually(lambda: "ready"), str)  # a plain function
