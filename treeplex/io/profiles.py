"""Reading a strategy profile file as realization plans: treeplex's own JSON (``solve --out``),
or an OpenSpiel policy for an OpenSpiel game (``solve --warm-start``)."""

from __future__ import annotations

import numpy as np

from ..errors import GameError, read_json
from ..model.problem import Problem
from ..model.strategy import plan_from_dict
from .openspiel import load_policy, plans_from_policy


def load_profile(path: str, problem: Problem, game=None) -> tuple[np.ndarray, np.ndarray]:
    """Read a strategy profile file (``solve --out``) as realization plans; for an OpenSpiel
    ``game`` (``game.spiel_game`` set), also an OpenSpiel policy file (``.pkl``, or ``.json``
    with a ``"policy"`` table: :func:`treeplex.io.openspiel.load_policy`)."""
    spiel = game is not None and game.spiel_game is not None
    if spiel and path.endswith(".pkl"):
        return plans_from_policy(game, problem, load_policy(path))
    data = read_json(path, "strategy file")
    if spiel and isinstance(data, dict) and "policy" in data:
        return plans_from_policy(game, problem, data["policy"])
    strat = data.get("strategies", data) if isinstance(data, dict) else None
    if not isinstance(strat, dict) or not all(isinstance(strat.get(p), dict) for p in ("player0", "player1")):
        raise GameError(f"{path}: not a strategy file (expected {{\"player0\": {{infoset: {{action: "
                        f"probability}}}}, \"player1\": ...}}, optionally under \"strategies\")")
    p0, p1 = strat["player0"], strat["player1"]
    return plan_from_dict(problem.X, p0, 0), plan_from_dict(problem.Y, p1, 1)
