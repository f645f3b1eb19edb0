"""Realization plans <-> readable behavioral strategies keyed by infoset and action label."""

from __future__ import annotations

import json

import numpy as np

from .game import GameError
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
        unknown = set(probs) - set(labels)
        if unknown:
            raise GameError(f"player {player} infoset {key!r}: unknown actions {sorted(unknown)}; has {list(labels)}")
        row = np.array([float(probs.get(a, 0.0)) for a in labels])
        if np.any(row < 0) or abs(row.sum() - 1.0) > 1e-6:
            raise GameError(f"player {player} infoset {key!r}: probabilities {row.tolist()} are not a distribution")
        b[T.start[j] : T.end[j]] = row / row.sum()
    return T.plan_from_behavioral(b)


def save_profile(path: str, problem: Problem, x: np.ndarray, y: np.ndarray, **meta) -> None:
    with open(path, "w") as f:
        json.dump({**meta, "game": problem.name, "strategies": profile_dict(problem, x, y)}, f, indent=1)


def load_profile(path: str, problem: Problem, game=None) -> tuple[np.ndarray, np.ndarray]:
    """Read a file written by :func:`save_profile` (or ``solve --out``) as realization plans;
    for an OpenSpiel ``game``, also an OpenSpiel policy file (``.pkl``, or ``.json`` with a
    ``"policy"`` table: :func:`treeplex.openspiel.load_policy`)."""
    from .openspiel import OpenSpielGame, load_policy, plans_from_policy

    if isinstance(game, OpenSpielGame) and path.endswith(".pkl"):
        return plans_from_policy(game, problem, load_policy(path))
    try:
        with open(path) as f:
            data = json.load(f)
        if isinstance(game, OpenSpielGame) and "policy" in data:
            return plans_from_policy(game, problem, data["policy"])
        strat = data.get("strategies", data)
        p0, p1 = strat["player0"], strat["player1"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise GameError(f"{path}: not a strategy file ({e})") from None
    return plan_from_dict(problem.X, p0, 0), plan_from_dict(problem.Y, p1, 1)
