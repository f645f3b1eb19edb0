"""One driver for every solver: run to a target gap, an iteration cap or a time limit.

``solve(problem, "cfr+", target_gap=1e-6)`` returns a :class:`Result` with the averaged
strategies, the last iterate, and a trace of rows

    iteration, gradients, seconds, gap_average, gap_current, + solver extras (mu, tau, ...)

"gap" is always the saddle-point gap BR_0(y) - BR_1(x) in the game's payoff units;
exploitability is gap / 2. Gap checks are not solver work: they use uncounted products and
their time goes to ``check_seconds``, not ``seconds``. Neither counts numba's JIT (compiling
kernels on a first run, loading them from its cache later): that is ``jit_seconds``.
``algorithm="lp"`` solves exactly.
"""

from __future__ import annotations

import csv
import inspect
import json
import math
import time
from dataclasses import dataclass, field

import numpy as np

from .checkpoint import load_checkpoint, save_checkpoint
from .errors import InputError, check_params
from .files import check_output, remove_stale_temporaries
from .jit import JitClock
from .metrics import Evaluation, evaluate
from .problem import Problem
from .solvers import ALGORITHMS, Solver


@dataclass
class Result:
    algorithm: str
    x: np.ndarray  # player 0's reported realization plan
    y: np.ndarray  # player 1's
    evaluation: Evaluation
    iterations: int = 0
    gradients: int = 0
    seconds: float = 0.0
    check_seconds: float = 0.0
    jit_seconds: float = 0.0  # numba compiling or loading cached kernels; in neither of the above
    trace: list[dict] = field(default_factory=list)
    current: tuple[np.ndarray, np.ndarray] | None = None
    stopped_by: str = ""

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
            if n not in ("self", "problem") and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
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
    check_every: int | None = None,
    progress: bool = False,
    on_check=None,
    checkpoint: str | None = None,
    resume: str | None = None,
    restart: bool = False,
    report: str = "average",
    **params,
) -> Result:
    """Run ``algorithm`` (a registered name or a ready :class:`Solver`) until a stop rule fires.

    Stops when the gap of the average <= ``target_gap``, after ``max_iters`` iterations, or
    after ``time_limit`` seconds of solver time. With none given, runs 1000 iterations; with
    only a target, at most 1,000,000 (stopped_by ``max_iters`` if the target is not met). Each
    given rule must be a positive number (an exact solution is ``algorithm="lp"``). The
    gap is checked every ``check_every`` iterations (default: every iteration up to 10 (every
    10 on games of 1M sequences or more, :func:`_min_check_step`), then about 50 checks per
    run on a geometric schedule, with extra checks where the last two predict the target:
    see :func:`_toward_target`). ``on_check(solver, row)`` is called
    after every check.

    ``checkpoint=PATH`` saves the solver and the driver's progress at every check (and at
    the end); ``resume=PATH`` continues such a run exactly where it was saved: same iterates,
    same trace (the algorithm and its parameters come from the file: ``algorithm`` must be
    None or the same name, and ``params`` the same values; ``max_iters`` and ``time_limit``
    count the iterations and solver seconds before the save). ``restart=True``
    restarts the solver from its average whenever the gap of the average has halved since
    the last restart (solvers with a ``restart()`` method: the CFR family); the result is
    then the best profile met at a check.

    ``report`` chooses the strategy profile returned and tested against ``target_gap``: the
    ``"average"`` of the iterates (default; the one regret minimization guarantees), the
    ``"current"`` iterate, or the ``"best"`` of the two (predictive variants' last iterates
    often converge faster than their averages).
    """
    if report not in REPORTS:
        raise InputError(f"report must be one of {', '.join(REPORTS)}, got {report!r}")
    _check_stop(target_gap, max_iters, time_limit, check_every)
    with JitClock() as jit:
        res = _solve(problem, algorithm, jit, target_gap=target_gap, max_iters=max_iters, time_limit=time_limit,
                     check_every=check_every, progress=progress, on_check=on_check, checkpoint=checkpoint,
                     resume=resume, restart=restart, report=report, **params)
    res.jit_seconds = jit.seconds
    return res


def _solve(problem, algorithm, jit, *, target_gap, max_iters, time_limit, check_every, progress, on_check,
           checkpoint, resume, restart, report, **params) -> Result:
    """:func:`solve`'s loop; ``jit`` (a :class:`JitClock`) is subtracted from every timing."""
    if algorithm == "lp" and resume is None:
        from .lp import solve_lp  # scipy (HiGHS) only when the LP runs

        lp = solve_lp(problem)
        return Result("lp", lp.x, lp.y, evaluate(problem, lp.x, lp.y), iterations=lp.simplex_iterations,
                      seconds=lp.seconds, stopped_by="exact" if lp.exact else "lp-approximate")
    trace: list[dict] = []
    seconds = check_seconds = 0.0
    restart_gap = math.inf
    best = None  # (x, y, gap) of the best average checked, kept when restarting
    last = None  # (iteration, gap) at the last check
    if checkpoint is not None:
        check_output(checkpoint, "checkpoint", regular=True)
        remove_stale_temporaries(checkpoint)
    if resume is not None:
        name, saved, state, progress_state = load_checkpoint(resume, problem)
        _check_resume(resume, algorithm, params, name, saved)
        params = saved
        solver = make_solver(problem, name, **params)
        try:
            solver.load_state_dict(state)
        except InputError as e:
            raise InputError(f"{resume}: {e}") from None
        trace = progress_state["trace"]
        seconds, check_seconds = progress_state["seconds"], progress_state["check_seconds"]
        restart_gap = progress_state["restart_gap"]
        last = tuple(progress_state["last_check"]) if progress_state.get("last_check") else None
        if "best_x" in progress_state["arrays"]:
            best = (progress_state["arrays"]["best_x"], progress_state["arrays"]["best_y"], progress_state["best_gap"])
    elif isinstance(algorithm, Solver):
        solver, params = algorithm, {}
    else:
        solver = make_solver(problem, algorithm, **params)
    if restart and not hasattr(solver, "restart"):
        raise InputError(f"algorithm {solver.name!r} does not support restarting")
    saved_params = {k: v for k, v in params.items() if k != "prior"}  # the prior lives on in the state
    if target_gap is None and max_iters is None and time_limit is None:
        max_iters = DEFAULT_ITERS
    elif max_iters is None and time_limit is None:
        max_iters = TARGET_ONLY_ITERS  # a target the solver never reaches must not run forever
    bar = _progress(progress, max_iters, target_gap)
    stopped_by = ""

    def save():
        if checkpoint is not None:
            save_checkpoint(checkpoint, problem, solver.name, saved_params, solver.state_dict(),
                            {"trace": trace, "seconds": seconds, "check_seconds": check_seconds,
                             "restart_gap": restart_gap, "best_gap": best[2] if best else None,
                             "last_check": last, "next_check": next_check},
                            {"best_x": best[0], "best_y": best[1]} if best else None)

    it = solver.iteration
    min_step = _min_check_step(problem)
    next_check = it + (check_every or max(min_step, it // 10))
    if resume is not None and progress_state.get("next_check") and check_every is None:
        next_check = int(progress_state["next_check"])
    while True:
        done_iters = max_iters is not None and solver.iteration >= max_iters
        done_time = time_limit is not None and seconds >= time_limit
        if done_iters or done_time:  # e.g. resumed from a run that had already finished
            stopped_by = "max_iters" if done_iters else "time_limit"
            break
        t0, j0 = time.perf_counter(), jit.seconds
        solver.step()
        seconds += time.perf_counter() - t0 - (jit.seconds - j0)
        it = solver.iteration
        done_iters = max_iters is not None and it >= max_iters
        done_time = time_limit is not None and seconds >= time_limit
        if it >= next_check or done_iters or done_time:
            t1, j1 = time.perf_counter(), jit.seconds
            avg, cur = solver.average(), solver.current()
            ev = evaluate(problem, *avg)
            gap_current = evaluate(problem, *cur).gap
            row = {
                "iteration": it,
                "gradients": solver.gradients,
                "seconds": seconds,
                "gap_average": ev.gap,
                "gap_current": gap_current,
                **solver.trace_extra(),
            }
            chosen, gap = _pick(report, avg, ev.gap, cur, gap_current)
            if restart:
                if best is None or gap < best[2]:
                    best = (*chosen, gap)
                if ev.gap <= restart_gap / 2 or restart_gap == math.inf:
                    if restart_gap < math.inf:
                        solver.restart()
                    restart_gap = ev.gap
                row["restart_gap"] = restart_gap
            trace.append(row)
            if on_check is not None:
                on_check(solver, row)
            if target_gap is not None and gap <= target_gap:
                stopped_by = "target"
            next_check = it + (check_every or max(min_step, it // 10))
            if check_every is None and target_gap is not None:
                next_check = _toward_target(it, next_check, last, gap, target_gap)
            last = (it, gap)
            check_seconds += time.perf_counter() - t1 - (jit.seconds - j1)
            save()
            if bar is not None:
                bar.set_postfix_str(f"gap={ev.gap:.3e} current={row['gap_current']:.3e}")
                bar.update(it - bar.n)
        if stopped_by or done_iters or done_time:
            stopped_by = stopped_by or ("max_iters" if done_iters else "time_limit")
            break
    if bar is not None:
        bar.close()
    avg, cur = solver.average(), solver.current()
    (x, y), gap = _pick(report, avg, evaluate(problem, *avg).gap, cur, evaluate(problem, *cur).gap)
    if best is not None and best[2] < gap:
        x, y = best[0], best[1]  # restarts make the iterates non-monotone: report the best one checked
    return Result(
        algorithm=solver.name, x=x, y=y, evaluation=evaluate(problem, x, y), iterations=solver.iteration,
        gradients=solver.gradients, seconds=seconds, check_seconds=check_seconds, trace=trace,
        current=solver.current(), stopped_by=stopped_by,
    )


LARGE_SEQS = 10**6  # sequences (both players) from which gap checks start 10 iterations apart


def _min_check_step(problem: Problem) -> int:
    """Fewest iterations between default gap checks: 1, or 10 on games of at least
    ``LARGE_SEQS`` sequences. A check evaluates the average and the current iterate (four
    products and four best responses, about two iterations' work), so checking every early
    iteration doubled the time to target of a postflop turn spot; 10 is postflop-solver's
    own interval between exploitability checks."""
    return 10 if problem.X.n_seqs + problem.Y.n_seqs >= LARGE_SEQS else 1


DEFAULT_ITERS = 1000  # iterations when no stop rule is given
TARGET_ONLY_ITERS = 1_000_000  # the cap when only a target gap is given


def _check_stop(target_gap, max_iters, time_limit, check_every) -> None:
    """Refuse stop rules that can never fire or make no sense (negative, NaN, zero target)."""
    def positive(v, what, kind=(int, float)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, kind) or not 0 < v < math.inf):
            raise InputError(f"{what} must be a positive {'whole ' if kind is int else ''}number, got {v!r}")

    positive(target_gap, "target gap (--target)")
    positive(time_limit, "time limit (--time-limit)")
    positive(max_iters, "max iterations (--max-iters)", int)
    positive(check_every, "check interval (--check-every)", int)


def _check_resume(path: str, algorithm, params: dict, name: str, saved: dict) -> None:
    """Refuse resuming with another algorithm or other parameters than the checkpoint's."""
    if isinstance(algorithm, Solver) or algorithm not in (None, name):
        given = algorithm.name if isinstance(algorithm, Solver) else algorithm
        raise InputError(f"{path} is a checkpoint of {name!r}, not of {given!r}; resume without --algorithm "
                         f"(or with --algorithm {name})")
    if "prior" in params:
        raise InputError("a resumed run continues from its checkpoint: --warm-start does not apply")
    for k, v in params.items():
        if k not in saved or json.loads(json.dumps(v, default=str)) != saved[k]:
            was = f"with {k}={saved[k]!r}" if k in saved else f"without {k}"
            raise InputError(f"{path} was run {was}, not with {k}={v!r}; resume without --param {k}")


def _toward_target(it: int, scheduled: int, last, gap: float, target: float) -> int:
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


REPORTS = ("average", "current", "best")


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


def _pick(report: str, avg, gap_avg: float, cur, gap_cur: float):
    """(profile, gap) that ``report`` selects from the average and the current iterate."""
    if report == "current" or (report == "best" and gap_cur < gap_avg):
        return cur, gap_cur
    return avg, gap_avg


def _progress(enabled: bool, total: int | None, target: float | None = None):
    if not enabled:
        return None
    from tqdm import tqdm

    desc = f"target {target:.1e}" if target is not None else None
    return tqdm(total=total, desc=desc, unit="it", dynamic_ncols=True, leave=False)


def write_trace(trace: list[dict], path: str, meta: dict | None = None) -> None:
    """Write the trace as CSV; ``meta`` (algorithm, game) goes in a leading '#' comment line."""
    cols: list[str] = []
    for row in trace:
        cols += [k for k in row if k not in cols]
    with open(path, "w", newline="") as f:
        if meta:
            f.write("# " + " ".join(f"{k}={v}" for k, v in meta.items()) + "\n")
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(trace)
