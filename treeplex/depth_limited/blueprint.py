"""The blueprint: an approximate equilibrium of the action abstraction (section 4 and 6.1).

The paper ran 1,000 iterations of CFR+, "less than 1 mbb/g of exploitability within the
action abstraction". :func:`compute_blueprint` runs a CFR-family solver through
:func:`treeplex.run.driver.solve` for at least ``min_iters`` iterations and until the
exploitability (gap / 2) is below ``target_mbb``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..model.compile import compile_game
from ..run.driver import make_solver, solve
from ..model.metrics import to_mbb
from ..poker.nlfh import NLFH
from ..model.problem import Problem
from ..model.strategy import behavioral_dict
from .index import NLFHIndex


@dataclass
class Blueprint:
    """Plans, local probabilities and dicts (by infoset key) of both players in ``game``."""

    game: NLFH
    problem: Problem
    index: NLFHIndex
    plans: tuple[np.ndarray, np.ndarray]
    b: tuple[np.ndarray, np.ndarray]
    dicts: tuple[dict, dict]
    exploitability_mbb: float
    iterations: int
    seconds: float
    compile_seconds: float


def compute_blueprint(game: NLFH, solver: str = "cfr+", *, min_iters: int = 1000, target_mbb: float = 1.0,
                      max_iters: int = 100_000, problem: Problem | None = None) -> Blueprint:
    """Solve ``game`` (its abstraction) with ``solver`` ("lp" for the exact LP)."""
    t0 = time.perf_counter()
    problem = problem or compile_game(game)
    t1 = time.perf_counter()
    if solver == "lp":
        res = solve(problem, "lp")
        seconds = res.seconds
    else:
        target_gap = 2.0 * target_mbb * game.big_blind / 1000.0
        s = make_solver(problem, solver)
        res = solve(problem, s, max_iters=min_iters)
        seconds = res.seconds
        if res.gap > target_gap:  # the same run goes on until the target
            res = solve(problem, s, target_gap=target_gap, max_iters=max_iters)
            seconds += res.seconds
    plans = (res.x, res.y)
    b = tuple(T.behavioral_from_plan(x) for T, x in zip(problem.treeplexes, plans))
    dicts = tuple(behavioral_dict(T, x) for T, x in zip(problem.treeplexes, plans))
    return Blueprint(game, problem, NLFHIndex(game, problem), plans, b, dicts,
                     to_mbb(res.exploitability, game.big_blind), res.iterations, seconds, t1 - t0)
