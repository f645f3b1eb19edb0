"""One driver for every solver: run to a target gap, an iteration cap or a time limit.

``solve(problem, "cfr+", target_gap=1e-6)`` returns a :class:`Result` with the reported
strategies, the last iterate, and the trace of gap checks (:mod:`treeplex.run.progress`, which
also holds restarts). When to check and stop: :mod:`treeplex.run.schedule`; checkpoints and
resuming: :mod:`treeplex.run.checkpoint`.

"gap" is always the saddle-point gap BR_0(y) - BR_1(x) in the game's payoff units;
exploitability is gap / 2. Gap checks are not solver work: they use uncounted products and
their time goes to ``check_seconds``, not ``seconds``. Neither counts numba's JIT (compiling
kernels on a first run, loading them from its cache later): that is ``jit_seconds``.
``algorithm="lp"`` solves exactly.
"""

from __future__ import annotations

import inspect
import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..backends import TIER_UP, starts_on_numpy

# Solver seconds this process may still spend on NumPy in small runs before it moves onto numba
# (ski rental over the whole process: many short solves, as in depth-limited solving, pay
# numba's start-up once, after their NumPy time has reached what that start-up costs).
NUMPY_BUDGET = TIER_UP
from .checkpoint import load_run, save_run
from ..errors import InputError, check_params
from ..io.files import check_output, remove_stale_temporaries
from ..core.jit import JitClock
from ..model.metrics import Evaluation, evaluate
from ..model.problem import Problem
from .progress import REPORTS, Bar, Progress
from .schedule import Schedule, check_stop
from ..solvers import ALGORITHMS, Solver


@dataclass
class Result:
    algorithm: str
    plans: tuple | Callable  # the reported realization plans (x, y), or a function computing them on first use
    evaluation: Evaluation
    iterations: int = 0
    gradients: int = 0
    seconds: float = 0.0
    check_seconds: float = 0.0
    jit_seconds: float = 0.0  # numba compiling or loading cached kernels; in neither of the above
    trace: list[dict] = field(default_factory=list)
    current: tuple[np.ndarray, np.ndarray] | None = None  # the last iterate (None: not computed, see Progress.final)
    stopped_by: str = ""
    whatif: dict | None = None  # a locked or raked solve's baseline and EV change (solve's ``whatif``)

    @property
    def x(self) -> np.ndarray:
        """Player 0's reported realization plan."""
        return self._plans()[0]

    @property
    def y(self) -> np.ndarray:
        """Player 1's."""
        return self._plans()[1]

    def _plans(self) -> tuple:
        """The plans, computed now if they were deferred (the fused engine's: a plan pair is
        the largest array of a postflop run, 8 B per sequence, only made when read)."""
        if callable(self.plans):
            self.plans = self.plans()
        return self.plans

    def profile_args(self, problem) -> tuple:
        """(x, y, keywords) for ``problem.solution``, ``strategy_dict`` and ``summary``: while
        the plans are deferred and the problem's results read a profile node by node (a
        postflop spot: :class:`~treeplex.poker.fused.FusedProfile`), no plans and the profile;
        else the plans."""
        if callable(self.plans) and "profile" in problem.strategy_options:
            return None, None, {"profile": self.plans}
        return self.x, self.y, {}

    def __getstate__(self) -> dict:
        self._plans()  # a pickled result (a Ray batch's) carries its plans, not the solver
        return self.__dict__

    @property
    def value(self) -> float:
        return self.evaluation.value

    @property
    def gap(self) -> float:
        return self.evaluation.gap

    @property
    def exploitability(self) -> float:
        return self.evaluation.exploitability


def make_solver(problem: Problem, algorithm: str, **params) -> Solver:
    check_solver_params(algorithm, params)
    return construct(algorithm, ALGORITHMS[algorithm], problem, **params)


def check_solver_params(algorithm: str, params: dict) -> None:
    """Refuse an unknown algorithm, parameter names it does not have, and values of the wrong type."""
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {algorithm!r}; choose from: lp, {', '.join(sorted(ALGORITHMS))}")
    known = _parameters(ALGORITHMS[algorithm])
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise InputError(f"algorithm {algorithm!r} has no parameter {', '.join(map(repr, unknown))}; "
                         f"its parameters: {', '.join(sorted(known)) or 'none'}")
    check_params(known, params, f"algorithm {algorithm!r}")


def construct(algorithm: str, cls, *args, **params) -> Solver:
    """``cls(*args, **params)``, with a value the solver cannot take as an :class:`InputError`."""
    try:
        return cls(*args, **params)
    except (TypeError, ValueError) as e:
        if isinstance(e, InputError):
            raise
        raise InputError(f"algorithm {algorithm!r}: bad parameter value ({e})") from None


def _parameters(cls) -> dict:
    """{keyword parameter: default} of a solver class, following ``**kw`` up to its base classes."""
    names: dict = {}
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        sig = inspect.signature(klass.__init__)
        for n, p in sig.parameters.items():
            if n not in ("self", "problem", "lower") and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                names.setdefault(n, p.default)
        if not any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
            break
    return names


def solve(
    problem: Problem,
    algorithm: str | Solver | None = "cfr+",
    *,
    target_gap: float | None = None,
    max_iters: int | None = None,
    time_limit: float | None = None,
    deadline: float | None = None,
    check_every: int | None = None,
    progress: bool = False,
    on_check=None,
    checkpoint: str | None = None,
    resume: str | None = None,
    restart: bool = False,
    report: str = "average",
    backend: str | None = None,
    whatif: bool | str = False,
    **params,
) -> Result:
    """Run ``algorithm`` (a registered name or a ready :class:`Solver`) until a stop rule fires.

    Stops when the gap of the reported profile <= ``target_gap``, after ``max_iters``
    iterations, or after ``time_limit`` seconds of solver time, each a positive number (an
    exact solution is ``algorithm="lp"``); the defaults with none or only a target, and when
    the gap is checked (every ``check_every`` iterations if given), are in
    :mod:`treeplex.run.schedule`. ``on_check(solver, row)`` is called after every check.
    ``deadline`` (a ``time.perf_counter()`` time, for play in real time) also stops the
    iterations there, wall clock, whatever the solver's setup and JIT took (``stopped_by``
    ``"deadline"``); its last gap check and the result's evaluation come after it.

    ``checkpoint=PATH`` saves the solver and the driver's progress at every check (and at
    the end); ``resume=PATH`` continues such a run exactly where it was saved: same iterates,
    same trace (the algorithm and its parameters come from the file: ``algorithm`` must be
    None or the same name, and ``params`` the same values; ``max_iters`` and ``time_limit``
    count the iterations and solver seconds before the save). ``restart=True``
    restarts the solver from its average whenever the gap of the average has halved since
    the last restart (solvers with ``restartable``: the CFR family); the result is then the
    best profile met at a check.

    ``report`` chooses the strategy profile returned and tested against ``target_gap``: the
    ``"average"`` of the iterates (default; the one regret minimization guarantees), the
    ``"current"`` iterate, or the ``"best"`` of the two (predictive variants' last iterates
    often converge faster than their averages).

    ``backend`` ("numba", "array" or "gpu"; :mod:`treeplex.backends`) makes the problem's
    passes run there from now on (``problem.use_backend``). None keeps the problem's, or, for
    a problem that has none yet, is "auto": a small game starts on NumPy and moves onto numba
    once this process's small runs have spent ``TIER_UP`` solver seconds there
    (``NUMPY_BUDGET``; :func:`treeplex.backends.starts_on_numpy`).

    ``whatif`` (a locked or raked postflop spot, :mod:`treeplex.run.whatif`): True solves the
    baseline (the spot without locks, or without rake) first with the same algorithm, stop rule
    and parameters, a path reads it from a ``solve --out`` file of it, as ``treeplex solve``
    does; ``Result.whatif`` then holds ``baseline`` and ``lock_ev_gain`` (locked) or
    ``rake_ev_cost`` (raked). ``problem`` may then be the spot itself (a ``PostflopGame``;
    range-wide frequency locks have a problem only once the baseline is known).
    """
    global NUMPY_BUDGET
    if whatif is not False:
        return _solve_whatif(problem, whatif, dict(
            algorithm=algorithm, target_gap=target_gap, max_iters=max_iters, time_limit=time_limit, deadline=deadline,
            check_every=check_every, progress=progress, on_check=on_check, report=report, backend=backend,
            restart=restart, **params), dict(checkpoint=checkpoint, resume=resume))
    tier_at = math.inf
    if backend is not None:
        problem.use_backend(backend)
    elif starts_on_numpy(problem) and NUMPY_BUDGET > 0:
        problem.use_backend("array")
        problem.backend.auto = True  # picked here, not by the caller: the next solve() decides again
        tier_at = NUMPY_BUDGET
    if report not in REPORTS:
        raise InputError(f"report must be one of {', '.join(REPORTS)}, got {report!r}")
    check_stop(target_gap, max_iters, time_limit, check_every)
    with JitClock() as jit:  # its seconds are taken out of every timing
        if algorithm == "lp" and resume is None:
            if params:  # e.g. --param compression=16 without a stop rule: the LP would drop it unsaid
                given = ", ".join("a warm start" if k == "prior" else k for k in sorted(params))
                raise InputError(f"the exact LP takes no solver parameters ({given} given); name an iterative "
                                 "solver (--algorithm) or give a stop rule (--target, --max-iters, --time-limit)")
            return _solve_lp(problem, jit)
        if checkpoint is not None:
            check_output(checkpoint, "checkpoint", regular=True)
            remove_stale_temporaries(checkpoint)
        solver, params, run, saved_schedule = _start(problem, algorithm, params, resume)
        if restart and not solver.restartable:
            solver.restart()  # Solver.restart's refusal, an InputError
        schedule = Schedule(problem, solver.iteration, target_gap, max_iters, time_limit, check_every,
                            **saved_schedule, deadline=deadline)
        bar = Bar(progress, schedule.max_iters, target_gap)
        seconds, limit, wall = run.seconds, schedule.time_limit, schedule.deadline
        run_start, tier_at = seconds, seconds + tier_at
        stopped_by = schedule.over(solver.iteration, seconds)  # e.g. resumed from a run that had finished
        batched, chunk = solver.batch_steps, 1
        while not stopped_by:
            due = schedule.due()
            while True:  # the hot loop: nothing per iteration but the step and its timing
                t0, j0 = time.perf_counter(), jit.seconds
                if batched:  # sampling: one call for many iterations of a few microseconds each, never past a check
                    solver.run(max(1, min(chunk, due - solver.iteration)))
                else:
                    solver.step()
                took = time.perf_counter() - t0 - (jit.seconds - j0)
                seconds += took
                if batched and took < 5e-4 and chunk < 1 << 20:
                    chunk *= 2  # batches of about a millisecond at most: the time limit stays as sharp
                if seconds >= tier_at:  # once: small runs that last pay numba's start-up
                    solver = _onto_numba(problem, solver, algorithm, params, jit)
                    tier_at, NUMPY_BUDGET = math.inf, 0.0
                if solver.iteration >= due or seconds >= limit or (wall < math.inf and time.perf_counter() >= wall):
                    break
            t1, j1 = time.perf_counter(), jit.seconds
            run.seconds = seconds
            row, gap = run.check(problem, solver, report, restart)
            cost = time.perf_counter() - t1 - (jit.seconds - j1)
            if on_check is not None:
                on_check(solver, row)
            stopped_by = schedule.checked(solver.iteration, gap, seconds,
                                          cost if getattr(solver, "cheap_checks", False) else 0.0)
            run.check_seconds += time.perf_counter() - t1 - (jit.seconds - j1)
            if checkpoint is not None:
                save_run(checkpoint, problem, solver, params, run, schedule)
            bar.show(row)
        bar.close()
        if problem._backend is not None and problem._backend.auto:
            NUMPY_BUDGET -= seconds - run_start
        plans, evaluation, current = run.final(problem, solver, report)
        return Result(algorithm=solver.name, plans=plans, evaluation=evaluation, iterations=solver.iteration,
                      gradients=solver.gradients, seconds=run.seconds, check_seconds=run.check_seconds,
                      jit_seconds=jit.seconds, trace=run.trace, current=current, stopped_by=stopped_by)


def _solve_whatif(problem, source, kw: dict, saving: dict) -> Result:
    """:func:`solve` with ``whatif``: the baseline by :func:`treeplex.run.whatif.baseline_for`
    (the one ``treeplex solve`` and ``batch`` use), then the spot, then the record."""
    from .whatif import baseline_for, record

    if source is True:
        source = None
    elif not isinstance(source, str):
        raise InputError(f"whatif must be True, False or a solve --out file of the baseline, got {source!r}")
    if source is None and not isinstance(kw["algorithm"], str):
        raise InputError("whatif=True needs an algorithm by name (the baseline is solved with it too)")
    if source is None and any(saving.values()):
        raise InputError("checkpoint and resume with whatif=True need whatif=FILE (they would save the baseline's run)")
    game = getattr(problem, "game", None) if isinstance(problem, Problem) else problem
    baseline = baseline_for(game, source, lambda q: solve(q, **kw))
    problem = game.problem()
    res = solve(problem, **kw, **saving)
    res.whatif = record(problem, res, baseline)
    return res


def _onto_numba(problem: Problem, solver: Solver, algorithm, params: dict, jit: JitClock) -> Solver:
    """The same run, continued on the numba backend: a new solver given ``solver``'s state.
    Importing numba and building the backend is start-up, so it is charged to ``jit``."""
    if not isinstance(algorithm, str) and algorithm is not None:  # a ready solver stays where it is
        return solver
    t0, j0 = time.perf_counter(), jit.seconds
    state = solver.state_dict()
    problem.use_backend("numba")
    moved = make_solver(problem, solver.name, **params)
    moved.load_state_dict(state)
    jit.charge(time.perf_counter() - t0 - (jit.seconds - j0))
    return moved


def _solve_lp(problem: Problem, jit: JitClock) -> Result:
    """The exact solution by linear programming (scipy's HiGHS, imported only when it runs)."""
    from ..model.lp import solve_lp

    lp = solve_lp(problem)
    return Result("lp", (lp.x, lp.y), evaluate(problem, lp.x, lp.y), iterations=lp.simplex_iterations,
                  seconds=lp.seconds, jit_seconds=jit.seconds, stopped_by="exact" if lp.exact else "lp-approximate")


def _start(problem: Problem, algorithm, params: dict, resume: str | None):
    """(solver, its parameters to checkpoint, progress, saved schedule) of a new run, or of
    the run checkpointed at ``resume``. A warm start's ``prior`` is not checkpointed: it
    lives on in the solver's state."""
    if resume is None:
        if algorithm is not None and not isinstance(algorithm, str):  # a ready solver
            return algorithm, {}, Progress(), {}
        solver = make_solver(problem, algorithm, **params)
        return solver, {k: v for k, v in params.items() if k != "prior"}, Progress(), {}
    name, params, state, run, saved_schedule = load_run(resume, problem, algorithm, params)
    solver = make_solver(problem, name, **params)
    try:
        solver.load_state_dict(state)
    except InputError as e:
        raise InputError(f"{resume}: {e}") from None
    return solver, params, run, saved_schedule


def gradient_grid(solver: Solver, budget: int, n_points: int, first: int = 4):
    """Step ``solver`` until it has made ``budget`` gradient computations, yielding the solver
    seconds so far each time its count passes the next point of a log grid from ``first`` to
    ``budget`` (the x axis of the EGT paper's figure 3). What the caller evaluates at a yield
    is not timed. Used by the experiments that plot against gradient computations.
    """
    grid = np.unique(np.geomspace(first, budget, n_points).astype(int))
    k, seconds = 0, 0.0
    while k < len(grid):
        t0 = time.perf_counter()
        solver.step()
        seconds += time.perf_counter() - t0
        if solver.gradients < grid[k] and solver.gradients < budget:
            continue
        while k < len(grid) and grid[k] <= solver.gradients:
            k += 1
        yield seconds
        if solver.gradients >= budget:
            return

