"""When the driver checks the gap, and when it stops.

A run stops at the first check whose reported gap is <= the target gap, or once it has made
``max_iters`` iterations, spent ``time_limit`` seconds of solver time or passed its
``deadline``, a wall-clock time for play in real time (whichever comes first). With no rule
given it makes :data:`DEFAULT_ITERS` iterations; with only a target, at most
:data:`TARGET_ONLY_ITERS`.

The gap is checked every ``check_every`` iterations or, by default, every
:func:`min_check_step` iterations up to 10, then every 10% of the iterations so far (about
50 checks per run, a geometric schedule), with extra checks where the last two predict the
target (:func:`toward_target`).
"""

from __future__ import annotations

import math
import time

from ..errors import InputError
from ..model.problem import Problem

DEFAULT_ITERS = 1000  # iterations when no stop rule is given
TARGET_ONLY_ITERS = 1_000_000  # the cap when only a target gap is given
LARGE_SEQS = 10**6  # sequences (both players) from which gap checks start 10 iterations apart


def check_stop(target_gap, max_iters, time_limit, check_every) -> None:
    """Refuse stop rules that can never fire or make no sense (negative, NaN, zero target)."""
    def positive(v, what, kind=(int, float)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, kind) or not 0 < v < math.inf):
            raise InputError(f"{what} must be a positive {'whole ' if kind is int else ''}number, got {v!r}")

    positive(target_gap, "target gap (--target)")
    positive(time_limit, "time limit (--time-limit)")
    positive(max_iters, "max iterations (--max-iters)", int)
    positive(check_every, "check interval (--check-every)", int)


CHECK_SHARE = 0.1  # the most of the solver time cheap checks may take (see Schedule.checked)


class Schedule:
    """The stop rule and the next gap check of one run, from solver iteration ``it``.

    ``next_check`` and ``last`` ((iteration, gap) of the last check) continue a resumed run's
    schedule; a given ``check_every`` replaces the saved ``next_check``. ``deadline`` (a
    ``time.perf_counter()`` time, not saved with a checkpoint) stops the iterations there,
    whatever the setup and numba's compile took (after one iteration at least).
    """

    def __init__(self, problem: Problem, it: int, target_gap: float | None, max_iters: int | None,
                 time_limit: float | None, check_every: int | None, next_check: int | None = None, last=None,
                 deadline: float | None = None):
        if target_gap is None and max_iters is None and time_limit is None:
            max_iters = DEFAULT_ITERS
        elif max_iters is None and time_limit is None:
            max_iters = TARGET_ONLY_ITERS  # a target the solver never reaches must not run forever
        self.target_gap, self.max_iters, self.check_every = target_gap, max_iters, check_every
        self.time_limit = math.inf if time_limit is None else time_limit  # solver seconds
        self.deadline = math.inf if deadline is None else deadline  # wall clock
        self.min_step = min_check_step(problem)
        self.next_check = int(next_check) if next_check and check_every is None else self._after(it)
        self.last = last

    def _after(self, it: int) -> int:
        """The geometric schedule's next check after iteration ``it``."""
        return it + (self.check_every or max(self.min_step, it // 10))

    def due(self) -> int:
        """The iteration at which the next check is due (the next scheduled one or the cap)."""
        return self.next_check if self.max_iters is None else min(self.next_check, self.max_iters)

    def over(self, it: int, seconds: float) -> str:
        """``"max_iters"`` or ``"time_limit"`` if the run has used up either, else ``""``."""
        if self.max_iters is not None and it >= self.max_iters:
            return "max_iters"
        return "time_limit" if seconds >= self.time_limit else ""

    def checked(self, it: int, gap: float, seconds: float, cost: float = 0.0) -> str:
        """Record a check at iteration ``it`` with reported ``gap``, schedule the next one,
        and say why the run stops (``"target"``, :meth:`over`), or ``""`` to go on.

        ``cost`` (seconds this check took; given by the driver for solvers whose checks are
        cheap walks, the fused postflop engine) keeps checks at most ``CHECK_SHARE`` of the
        solver time: the next check is at least cost / (CHECK_SHARE x seconds per iteration)
        iterations on, unless ``check_every`` is fixed."""
        self.next_check = self._after(it)
        if self.check_every is None and self.target_gap is not None:
            self.next_check = toward_target(it, self.next_check, self.last, gap, self.target_gap)
        if self.check_every is None and cost > 0.0 and seconds > 0.0 and it > 0:
            self.next_check = max(self.next_check, it + math.ceil(cost / (CHECK_SHARE * seconds / it)))
        self.last = (it, gap)
        if self.target_gap is not None and gap <= self.target_gap:
            return "target"
        return self.over(it, seconds) or ("deadline" if time.perf_counter() >= self.deadline else "")


def min_check_step(problem: Problem) -> int:
    """Fewest iterations between default gap checks: 1, or 10 on games of at least
    ``LARGE_SEQS`` sequences. A check evaluates the average and the current iterate (four
    products and four best responses, about two iterations' work), so checking every early
    iteration doubled the time to target of a postflop turn spot; 10 is postflop-solver's
    own interval between exploitability checks."""
    return 10 if sum(problem.n_seqs) >= LARGE_SEQS else 1


def toward_target(it: int, scheduled: int, last, gap: float, target: float) -> int:
    """The next check: ``scheduled`` (the geometric schedule), or, once the gap is within 2x
    of ``target``, earlier where the last two checks, extrapolated as gap ~ c t^-a, cross it
    sooner; at least 1% of ``it`` on.

    So a run whose gap falls steadily stops within about 1% of the iteration where it reaches
    its target, instead of up to 10% after it, for a few more checks near the end.
    """
    if last is None or not (2.0 * target >= gap > target > 0.0) or not (last[1] > gap) or last[0] >= it:
        return scheduled
    a = math.log(last[1] / gap) / math.log(it / last[0])
    log_cross = math.log(it) + math.log(gap / target) / a
    if log_cross >= math.log(scheduled):
        return scheduled
    return max(it + max(1, it // 100), math.ceil(math.exp(log_cross)))
