"""Time for the runtime: the package's one `Clock` protocol, real clock and `FakeClock`
(`pyscaffold_op.clock`, below both the runtime and the emulator, so one fake drives a manager and
the emulator's controllers together). The work queue, rate limiters and leader election read time
only through a `Clock`, so a test says "advance 5 ms" instead of sleeping."""

from pyscaffold_op.clock import REAL_CLOCK, Clock, FakeClock, RealClock, Timer

__all__ = ["REAL_CLOCK", "Clock", "FakeClock", "RealClock", "Timer"]
