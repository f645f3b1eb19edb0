"""JIT time is reported apart (jit_seconds), never inside a solve's seconds."""

import numba as nb
import numpy as np

import treeplex as tp
from treeplex.jit import JitClock
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
