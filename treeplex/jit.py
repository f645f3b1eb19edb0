"""Time spent in numba's JIT, kept out of solve times.

:class:`JitClock` listens to numba's ``numba:compiler_lock`` event, which brackets every
compilation and every load or save of a cached kernel (numba.core.event); nested events
count once. ``seconds`` is their total while the clock is installed.
"""

from __future__ import annotations

import time

from numba.core import event


class JitClock(event.Listener):
    """Seconds numba held its compiler lock (compiling, or loading/saving cached kernels)."""

    def __init__(self):
        self.seconds = 0.0
        self._depth = 0
        self._t0 = 0.0

    def on_start(self, ev):
        if self._depth == 0:
            self._t0 = time.perf_counter()
        self._depth += 1

    def on_end(self, ev):
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._t0

    def __enter__(self):
        event.register("numba:compiler_lock", self)
        return self

    def __exit__(self, *exc):
        event.unregister("numba:compiler_lock", self)
