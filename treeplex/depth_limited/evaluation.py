"""Exact evaluation of composed strategies in the game where the off-tree action is available.

A strategy given by infoset key (blueprint, subgame solutions, translated play) becomes a
realization plan of the compiled game; the exploitability is then exact: gap / 2 of the
profile, the sum of both players' best-response gains over two (treeplex.model.metrics), in chips
and in mbb/g. A plan (e.g. RPAT's mixture) can be passed instead of a dict.
"""

from __future__ import annotations

import numpy as np

from ..model.metrics import Evaluation, evaluate, to_mbb
from ..model.problem import Problem
from ..model.strategy import plan_from_dict


def plan_of(problem: Problem, player: int, strategy) -> np.ndarray:
    """Realization plan of ``strategy`` ({key: {action: p}} or already a plan) for ``player``.
    An infoset the dict lacks must be one the player's own plan never reaches (GameError)."""
    if isinstance(strategy, np.ndarray):
        return strategy
    return plan_from_dict(problem.treeplexes[player], strategy, player, complete=True)


def exploitability(problem: Problem, strategy0, strategy1, big_blind: float) -> tuple[float, Evaluation]:
    """(exploitability in mbb/g, the full evaluation in chips) of the profile."""
    ev = evaluate(problem, plan_of(problem, 0, strategy0), plan_of(problem, 1, strategy1))
    return to_mbb(ev.exploitability, big_blind), ev
