"""`RunnableGroups`: what a manager runs, by group, and the order the groups start in.

controller-runtime's `runnableGroup`s, with pyop's order (unchanged from the hand-written start):

1. servers and caches: the webhook server first (a conversion webhook must answer before the caches
   can list the kinds it converts), then the caches start (their first lists go out), then the health
   probe and metrics servers start while those lists are in flight, then the caches are waited for
   (`cache_sync_timeout`); the probes answer during a long sync, as controller-runtime's do;
3. everywhere: controllers and runnables that need no lease, on every replica;
4. leader election: once this replica leads, the controllers and runnables that need the lease.

A stop asked for during any step ends the start there. The manager supplies the steps that are its
own (`StartSteps`: serving, syncing the caches, winning the election, spawning a task); the groups
hold the controllers and runnables and decide what starts when. Stop is the reverse, in
`Manager._shutdown`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pyscaffold_op.runtime.controller.controller import Controller


class StartSteps(Protocol):
    """The manager's side of a start: each step returns False when a stop came first."""

    async def start_webhooks(self) -> None: ...
    async def start_caches(self) -> None: ...
    async def start_servers(self) -> None: ...
    async def wait_for_caches(self) -> bool: ...
    async def elect(self) -> bool: ...
    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> None: ...


class RunnableGroups:
    """The manager's controllers and other runnables, and the order their groups start in."""

    def __init__(self) -> None:
        self.controllers: list[Controller] = []
        self.others: list[tuple[Any, bool]] = []  # (runnable, needs the lease)

    def add_controller(self, ctrl: Controller) -> None:
        if any(c.name == ctrl.name for c in self.controllers):
            raise ValueError(f"a controller named {ctrl.name!r} already exists; use named() to pick another")
        self.controllers.append(ctrl)

    def add(self, runnable: Any, *, need_leader_election: bool) -> None:
        self.others.append((runnable, need_leader_election))

    def leader_controllers(self) -> list[Controller]:
        return [c for c in self.controllers if c.need_leader_election]

    async def start(self, steps: StartSteps) -> bool:
        """Start every group in order; False when a stop came before the last one started."""
        await steps.start_webhooks()
        await steps.start_caches()
        await steps.start_servers()
        if not await steps.wait_for_caches():
            return False
        await self._start_group(steps, leader=False)
        if not await steps.elect():
            return False
        await self._start_group(steps, leader=True)
        return True

    async def _start_group(self, steps: StartSteps, *, leader: bool) -> None:
        for ctrl in self.controllers:
            if bool(ctrl.need_leader_election) is leader:
                await ctrl.start()
        for runnable, needs_leader in self.others:
            if bool(needs_leader) is leader:
                steps.spawn(run_runnable(runnable), f"runnable {runnable!r}")


async def run_runnable(runnable: Any) -> None:
    """Run an async callable, or an object with `start()` (sync or async)."""
    fn: Callable[[], Any] = getattr(runnable, "start", runnable)
    result = fn()
    if inspect.isawaitable(result):
        await result
