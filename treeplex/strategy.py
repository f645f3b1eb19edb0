"""Realization plans <-> readable behavioral strategies keyed by infoset and action label."""

from __future__ import annotations

import json

import numpy as np

from .errors import GameError, read_json
from .problem import Problem
from .treeplex import Treeplex


def behavioral_dict(T: Treeplex, x: np.ndarray) -> dict[str, dict[str, float]]:
    """{infoset key: {action label: probability}} for realization plan ``x``.

    Infosets the player's own plan never reaches are reported uniform.
    """
    b = T.behavioral_from_plan(x)
    return {
        str(key): {a: float(b[T.start[j] + i]) for i, a in enumerate(T.action_labels[j])}
        for j, key in enumerate(T.infoset_keys)
    }


def profile_dict(problem: Problem, x: np.ndarray, y: np.ndarray) -> dict:
    return {"player0": behavioral_dict(problem.X, x), "player1": behavioral_dict(problem.Y, y)}


def plan_from_dict(T: Treeplex, strategy: dict[str, dict[str, float]], player: int) -> np.ndarray:
    """Realization plan from a behavioral dict; missing infosets play uniformly."""
    b = np.empty(T.n_seqs)
    b[0] = 1.0
    for j, key in enumerate(T.infoset_keys):
        probs = strategy.get(str(key))
        labels = T.action_labels[j]
        if probs is None:
            b[T.start[j] : T.end[j]] = 1.0 / len(labels)
            continue
        if not isinstance(probs, dict):
            raise GameError(f"player {player} infoset {key!r}: expected {{action: probability}}, got {probs!r:.60}")
        unknown = set(probs) - set(labels)
        if unknown:
            raise GameError(f"player {player} infoset {key!r}: unknown actions {sorted(unknown)}; has {list(labels)}")
        for a, q in probs.items():
            if isinstance(q, bool) or not isinstance(q, (int, float)):
                raise GameError(f"player {player} infoset {key!r}: the probability of {a!r} is {q!r:.40}, not a number")
        row = np.array([float(probs.get(a, 0.0)) for a in labels])
        if np.any(row < 0) or abs(row.sum() - 1.0) > 1e-6:
            raise GameError(f"player {player} infoset {key!r}: probabilities {row.tolist()} are not a distribution")
        b[T.start[j] : T.end[j]] = row / row.sum()
    return T.plan_from_behavioral(b)


def save_profile(path: str, problem: Problem, x: np.ndarray, y: np.ndarray, **meta) -> None:
    with open(path, "w") as f:
        json.dump({**meta, "game": problem.name, "strategies": profile_dict(problem, x, y)}, f, indent=1)


def load_profile(path: str, problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Read a file written by :func:`save_profile` (or ``solve --out``) as realization plans."""
    data = read_json(path, "strategy file")
    strat = data.get("strategies", data) if isinstance(data, dict) else None
    if not isinstance(strat, dict) or not all(isinstance(strat.get(p), dict) for p in ("player0", "player1")):
        raise GameError(f"{path}: not a strategy file (expected {{\"player0\": {{infoset: {{action: "
                        f"probability}}}}, \"player1\": ...}}, optionally under \"strategies\")")
    p0, p1 = strat["player0"], strat["player1"]
    return plan_from_dict(problem.X, p0, 0), plan_from_dict(problem.Y, p1, 1)
