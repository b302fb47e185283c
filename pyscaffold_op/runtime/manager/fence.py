"""`RenewalAge`: how old a lease holder's last successful renewal is, judged by the holder alone.

Leader election and sharding both fence a replica by this age (docs/runtime.md, "A replica that was
not running"): once the last successful renewal is older than `renew_deadline`, the holder acts as if
it had lost its Lease, whatever its renew loop has noticed yet. The age is measured

* on the holder's own *monotonic* clock, so wall-clock steps and skew between machines do not matter;
* from when the renewal was *sent*, not when its answer came: the others saw the new record no earlier
  than that, so they count their `lease_duration` from a later moment than we count our deadline.

A process that was not running (SIGSTOP, a frozen VM, an event loop blocked by code that never awaits)
sees this age jump past the deadline the moment it runs again, before its renew loop has a turn.
"""

from __future__ import annotations

from pyscaffold_op.runtime.clock import Clock


class RenewalAge:
    """The send time of the last successful renewal, and whether it is within `deadline`."""

    __slots__ = ("clock", "deadline", "last")

    def __init__(self, clock: Clock, deadline: float) -> None:
        self.clock, self.deadline = clock, deadline
        self.last: float | None = None
        """Monotonic time the last successful renewal was sent; None before the first."""

    def sending(self) -> float:
        """The moment a renewal is sent: pass it to `renewed()` once the server took it."""
        return self.clock.monotonic()

    def renewed(self, sent: float) -> None:
        self.last = sent

    def forget(self) -> None:
        """No renewal counts any more (the lease was given up)."""
        self.last = None

    def age(self) -> float | None:
        """Seconds since the last successful renewal was sent (None before the first)."""
        return None if self.last is None else self.clock.monotonic() - self.last

    def fresh(self) -> bool:
        """True when a renewal succeeded and was sent at most `deadline` seconds ago."""
        last = self.last
        return last is not None and self.clock.monotonic() - last <= self.deadline

    def expired(self) -> bool:
        """True when a renewal succeeded once but the last one is older than `deadline`."""
        last = self.last
        return last is not None and self.clock.monotonic() - last > self.deadline
