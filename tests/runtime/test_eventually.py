"""`pyscaffold_op.testing.eventually`: what it accepts, what it retries, what a failure says."""

from __future__ import annotations

import pytest

from pyscaffold_op.runtime import NotFound
from pyscaffold_op.testing import eventually


class Countdown:
    """Not ready for the first `n` calls."""

    def __init__(self, n: int, error: Exception | None = None) -> None:
        self.n, self.calls, self.error = n, 0, error

    def __call__(self) -> str | None:
        self.calls += 1
        if self.calls <= self.n:
            if self.error is not None:
                raise self.error
            return None
        return f"ready after {self.calls}"


async def test_a_plain_callable_is_retried_until_truthy_and_its_value_returned() -> None:
    check = Countdown(3)
    assert await eventually(check, interval=0) == "ready after 4"


async def test_a_coroutine_function() -> None:
    check = Countdown(2)

    async def ready() -> str | None:
        return check()

    assert await eventually(ready, interval=0) == "ready after 3"


async def test_a_lambda_returning_an_awaitable() -> None:
    check = Countdown(1)

    async def ready() -> str | None:
        return check()

    assert await eventually(lambda: ready(), interval=0) == "ready after 2"


@pytest.mark.parametrize(
    "error", [AssertionError("not yet"), NotFound("widgets 'w' not found"), KeyError("k")]
)
async def test_exceptions_are_retried(error: Exception) -> None:
    assert await eventually(Countdown(2, error), interval=0) == "ready after 3"


async def test_the_failure_shows_the_last_value() -> None:
    def status() -> list[str]:
        return []

    with pytest.raises(AssertionError, match=r"^status not true after 0.01s: last value \[\]$"):
        await eventually(status, timeout=0.01, interval=0)


async def test_the_failure_shows_the_last_error_with_its_type_and_chains_it() -> None:
    def fetch() -> None:
        raise NotFound("widgets 'w' not found")

    with pytest.raises(
        AssertionError, match=r"^fetch not true after 0.01s: last error NotFound: .*widgets 'w' not found$"
    ) as info:
        await eventually(fetch, timeout=0.01, interval=0)
    assert isinstance(info.value.__cause__, NotFound)


async def test_a_value_after_an_error_replaces_it_in_the_message() -> None:
    calls = 0

    def flaky() -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("first call fails")
        return 0

    with pytest.raises(AssertionError, match=r"last value 0$"):
        await eventually(flaky, timeout=0.01, interval=0)
