"""Time spent in numba's JIT, kept out of solve times, and compiling on a second core.

:class:`JitClock` listens to numba's ``numba:compiler_lock`` event, which brackets every
compilation and every load or save of a cached kernel (numba.core.event); nested events
count once. ``seconds`` is their total while the clock is installed, plus what was
:meth:`~JitClock.charge`\\ d to it (numba's own import, when a run moves onto numba).

Small games never import numba (:mod:`treeplex.backends`, "auto"), so the clock starts
listening only once numba is imported: at ``with``, or at the first ``seconds`` read after.

:func:`compile_aside` compiles a kernel into numba's cache in a second process while this one
compiles another (a first run's two independent kernels, on two cores).
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


def compile_aside(dispatcher, *calls):
    """Compile numba ``dispatcher`` for the argument types of ``calls`` (tuples of arguments)
    in a second process, which writes numba's cache, while this process compiles something
    else: on a first river run, the regret update compiles there and the showdown sweep here
    (README river on 2 cores: 17.8-18.7 s of wall time before, 11.7-13.1 s after).

    Returns an :class:`Aside` to wait on before the first call, or None where it would not
    help: each signature is compiled or cached already, this process has one CPU, or the
    other process cannot start. After the wait, the first call loads the kernel from the
    cache, or compiles it here if the other process failed."""
    import os
    import pickle
    import subprocess

    import numba

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    sigs = list(dict.fromkeys(tuple(numba.typeof(a) for a in args) for args in calls))
    sigs = [sig for sig in sigs if not _cached(dispatcher, sig)]
    if not sigs or cpus < 2:
        return None
    code = ("import importlib, pickle, sys; path, m, n, sigs = pickle.load(sys.stdin.buffer); sys.path[:] = path; "
            "[getattr(importlib.import_module(m), n).compile(s) for s in sigs]")
    try:
        message = pickle.dumps((sys.path, dispatcher.py_func.__module__, dispatcher.py_func.__name__, sigs))
        proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    except Exception:  # no interpreter to start (embedded Python), types that do not pickle: compile here
        return None
    try:
        with proc.stdin:
            proc.stdin.write(message)
    except OSError:  # it died at once; the wait returns at once and the kernel compiles here
        pass
    return Aside(proc)


class Aside:
    """A kernel compiling in another process (:func:`compile_aside`)."""

    TIMEOUT = 600.0  # seconds; past it the other process is stopped and the kernel compiles here

    def __init__(self, proc):
        self.proc = proc

    def wait(self) -> None:
        """Block until the other process has written the kernel to numba's cache (or failed).
        Counted as JIT time: :class:`JitClock` sees it as numba's compiler lock."""
        import subprocess

        from numba.core import event

        with event.trigger_event("numba:compiler_lock"):
            try:
                self.proc.wait(self.TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _cached(dispatcher, sig) -> bool:
    """``dispatcher`` has ``sig`` compiled in this process or in numba's cache index (read
    through numba's private cache API, as of numba 0.6x; if that fails, True: compile here)."""
    if sig in dispatcher.overloads:
        return True
    try:
        cache = dispatcher._cache
        return cache._index_key(sig, dispatcher.targetctx.codegen()) in cache._cache_file._load_index()
    except Exception:
        return True
