"""What a run records and reports: the trace, its timings, restarts, and the profile it returns.

A gap check appends a trace row

    iteration, gradients, seconds, gap_average, gap_current, + solver extras (mu, tau, ...)

(+ ``restart_gap`` when restarting), gaps in the game's payoff units. ``report`` picks the
profile returned and tested against the target: the ``"average"`` of the iterates, the
``"current"`` iterate, or the ``"best"`` of the two at each check. Restarting (solvers with
``restartable``: the CFR family) warm-starts the solver from its average whenever the gap
of the average has halved since the last restart; the iterates are then non-monotone, so
the best profile met at a check is kept and returned if it beats the final one.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from typing import Callable

from ..model.metrics import Evaluation, evaluate
from ..model.problem import Problem

REPORTS = ("average", "current", "best")


@dataclass
class Progress:
    """The driver's record of a run: all that a checkpoint keeps besides the solver and the schedule."""

    trace: list[dict] = field(default_factory=list)
    seconds: float = 0.0  # solver time, s (without checks and JIT)
    check_seconds: float = 0.0  # gap checks' time, s
    restart_gap: float = math.inf  # gap of the average at the last restart (inf: before the first check)
    best: tuple | None = None  # (x, y, gap): the best profile checked, kept when restarting

    def check(self, problem: Problem, solver, report: str, restart: bool) -> tuple[dict, float]:
        """Evaluate the solver's average and current iterate, append their trace row and,
        with ``restart``, keep the best profile and restart the solver if due.
        Returns (row, gap of the profile ``report`` picks).

        A solver with a cheap evaluation of one profile (``evaluate_profile``: the fused
        postflop engine's best-response walk) has only the reported one checked (both for
        ``"best"``); the other's gap is NaN in the trace."""
        quick = getattr(solver, "evaluate_profile", None)
        if quick is not None and (ev := quick("average" if report != "current" else "current")) is not None:
            ev_cur = quick("current") if report == "best" else None
            if report == "current":
                ev, ev_cur = Evaluation(math.nan, math.nan, math.nan), ev
            row = {"iteration": solver.iteration, "gradients": solver.gradients, "seconds": self.seconds,
                   "gap_average": ev.gap, "gap_current": math.nan if ev_cur is None else ev_cur.gap,
                   **solver.trace_extra()}
            self.trace.append(row)
            return row, (ev if report == "average" or ev_cur is None or ev.gap <= ev_cur.gap else ev_cur).gap
        avg, cur = solver.average(), solver.current()
        ev, ev_cur = evaluate(problem, *avg), evaluate(problem, *cur)
        row = {"iteration": solver.iteration, "gradients": solver.gradients, "seconds": self.seconds,
               "gap_average": ev.gap, "gap_current": ev_cur.gap, **solver.trace_extra()}
        chosen, picked = pick(report, avg, ev, cur, ev_cur)
        if restart:
            if self.best is None or picked.gap < self.best[2]:
                self.best = (*chosen, picked.gap)
            if ev.gap <= self.restart_gap / 2 or self.restart_gap == math.inf:
                if self.restart_gap < math.inf:
                    solver.restart()
                self.restart_gap = ev.gap
            row["restart_gap"] = self.restart_gap
        self.trace.append(row)
        return row, picked.gap

    def final(self, problem: Problem, solver, report: str) -> tuple[tuple | Callable, Evaluation, tuple]:
        """((x, y), evaluation) of the profile ``report`` picks from the solver's average and
        current iterate, or of the best one checked if restarts left it better; and the current
        iterate (computed once: on large spots each plan pair is GBs), or None where the average
        is reported by a solver with cheap checks (the fused engine). There the evaluation is
        the engine's walk and the plans are deferred (a function, called when they are read: the
        plan pair is the largest array of the run, about 0.8 GB on FLOP-FAST, 32 MB on TURN)."""
        quick = getattr(solver, "evaluate_profile", None)
        cheap = getattr(solver, "cheap_checks", False)
        if report == "average" and cheap and self.best is None:
            return solver.profile(report), quick(report, value=True), None
        avg = solver.average()
        cur = None if report == "average" and cheap else solver.current()
        if report == "best":
            (x, y), ev = pick(report, avg, evaluate(problem, *avg), cur, evaluate(problem, *cur))
        else:  # only the profile reported is evaluated: by the fused engine's walks, or by products
            x, y = avg if report == "average" else cur
            ev = quick(report, value=True) if quick is not None else None
            if ev is None:
                ev = evaluate(problem, x, y)
        if self.best is not None and self.best[2] < ev.gap:
            x, y = self.best[0], self.best[1]
            ev = evaluate(problem, x, y)
        return (x, y), ev, cur


def pick(report: str, avg, ev_avg: Evaluation, cur, ev_cur: Evaluation):
    """(profile, evaluation) that ``report`` selects from the average and the current iterate."""
    if report == "current" or (report == "best" and ev_cur.gap < ev_avg.gap):
        return cur, ev_cur
    return avg, ev_avg


class Bar:
    """A tqdm progress bar over iterations showing the gaps of the last check; nothing if not ``enabled``."""

    def __init__(self, enabled: bool, total: int | None, target: float | None = None):
        self.bar = None
        if enabled:
            from tqdm import tqdm

            desc = f"target {target:.1e}" if target is not None else None
            self.bar = tqdm(total=total, desc=desc, unit="it", dynamic_ncols=True, leave=False)

    def show(self, row: dict) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"gap={row['gap_average']:.3e} current={row['gap_current']:.3e}")
            self.bar.update(row["iteration"] - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


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
