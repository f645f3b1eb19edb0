"""JIT time is reported apart (jit_seconds), never inside a solve's seconds; kernels compile in a
second process where that helps (compile_aside)."""

import os

import numba as nb
import numpy as np
import pytest

import treeplex as tp
from treeplex.core.jit import JitClock, compile_aside
from treeplex.solvers import Solver


def test_jit_clock_counts_a_compilation_and_nothing_else():
    @nb.njit  # a fresh function: compiled on its first call, inside the clock
    def f(v):
        return v.sum() * 2.0

    with JitClock() as clock:
        np.arange(10.0).sum()
    assert clock.seconds == 0.0
    with JitClock() as clock:
        assert f(np.ones(3)) == 6.0
    assert clock.seconds > 0.0


class CompilesOnFirstStep(Solver):
    """A trivial solver (always uniform) whose first step JIT-compiles a fresh function."""

    def __init__(self, problem):
        super().__init__(problem)

        @nb.njit
        def touch(x):
            return x[0]

        self.touch = touch

    def step(self):
        self.touch(np.zeros(1))
        self.iteration += 1

    def average(self):
        return self.problem.X.uniform(), self.problem.Y.uniform()

    current = average


def test_driver_reports_jit_seconds_apart():
    p = tp.compile_game(tp.make_game("kuhn"))
    res = tp.solve(p, CompilesOnFirstStep(p), max_iters=3)
    assert res.jit_seconds > 0.0 and res.iterations == 3


MODULE = '''
import os

import numba as nb

if os.environ.get("TREEPLEX_TEST_BROKEN_IMPORT"):
    raise ImportError("this module cannot be imported now")

@nb.njit(cache=True)
def twice_sum(v):
    return 2.0 * v.sum()
'''


def _fresh_module(tmp_path, monkeypatch, name):
    """A module with a cached kernel, in a directory of its own (its cache starts empty)."""
    import importlib

    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module(name)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="compile_aside needs a second CPU")
def test_compile_aside_compiles_in_another_process_and_this_one_loads_it(tmp_path, monkeypatch):
    mod = _fresh_module(tmp_path, monkeypatch, "aside_kernel")
    v = np.arange(4.0)
    aside = compile_aside(mod.twice_sum, (v,), (v + 1.0,))  # one signature, compiled once
    assert aside is not None
    with JitClock() as clock:
        aside.wait()
    assert aside.proc.returncode == 0 and clock.seconds > 0.0  # the wait counts as JIT time
    assert compile_aside(mod.twice_sum, (v,)) is None  # in numba's cache now: nothing to do
    assert mod.twice_sum(v) == 12.0
    assert sum(mod.twice_sum.stats.cache_hits.values()) == 1  # loaded, not compiled here
    assert not mod.twice_sum.stats.cache_misses


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="compile_aside needs a second CPU")
def test_a_failed_compile_aside_leaves_the_kernel_to_compile_here(tmp_path, monkeypatch):
    mod = _fresh_module(tmp_path, monkeypatch, "aside_kernel_broken")
    monkeypatch.setenv("TREEPLEX_TEST_BROKEN_IMPORT", "1")  # the other process cannot import the kernel
    aside = compile_aside(mod.twice_sum, (np.ones(3),))
    aside.wait()
    assert aside.proc.returncode != 0
    assert mod.twice_sum(np.ones(3)) == 6.0
    assert sum(mod.twice_sum.stats.cache_misses.values()) == 1  # compiled here


def test_compile_aside_without_an_interpreter_to_start_compiles_here(tmp_path, monkeypatch):
    mod = _fresh_module(tmp_path, monkeypatch, "aside_kernel_no_python")
    monkeypatch.setattr("sys.executable", str(tmp_path / "no-such-python"))
    assert compile_aside(mod.twice_sum, (np.ones(2),)) is None
    assert mod.twice_sum(np.ones(2)) == 4.0
