"""Time spent in numba's JIT, kept out of solve times.

:class:`JitClock` listens to numba's ``numba:compiler_lock`` event, which brackets every
compilation and every load or save of a cached kernel (numba.core.event); nested events
count once. ``seconds`` is their total while the clock is installed, plus what was
:meth:`~JitClock.charge`\\ d to it (numba's own import, when a run moves onto numba).

Small games never import numba (:mod:`treeplex.backends`, "auto"), so the clock starts
listening only once numba is imported: at ``with``, or at the first ``seconds`` read after.
"""

from __future__ import annotations

import sys
import time


class JitClock:
    """Seconds numba held its compiler lock (compiling, or loading/saving cached kernels)."""

    def __init__(self):
        self._charged = 0.0
        self._listener = None
        self._on = False

    @property
    def seconds(self) -> float:
        self._listen()
        return self._charged + (self._listener.seconds if self._listener is not None else 0.0)

    def charge(self, seconds: float) -> None:
        self._charged += seconds

    def _listen(self) -> None:
        if self._on and self._listener is None and "numba" in sys.modules:
            from numba.core import event

            self._listener = _listener_class()()
            event.register("numba:compiler_lock", self._listener)

    def __enter__(self):
        self._on = True
        self._listen()
        return self

    def __exit__(self, *exc):
        self._on = False
        if self._listener is not None:
            from numba.core import event

            event.unregister("numba:compiler_lock", self._listener)


def _listener_class():
    from numba.core import event

    class Listener(event.Listener):
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

    return Listener
