"""The loss of river buckets on one river spot, measured exactly: solve the spot, merge each
player's hands into buckets (at each decision node a bucket plays the mixture of its hands'
actions, weighted by range weight x own reach: what one infoset per bucket would play), and
take the exploitability of the merged profile in the real spot (the engine's best responses).

The buckets are river-equity quantiles (the build's river rule) with edges from the equities of
all hands on ``n_boards`` random boards (seeded); a bucket is (quantile bin) on this board.
"""

from __future__ import annotations

import numpy as np

from ..model.metrics import evaluate, to_mbb
from ..poker.cards import parse_board
from ..poker.river import RiverGame
from ..run.driver import solve
from .equity import board_equities


def equity_edges(k: int, n_boards: int = 30, seed: int = 0) -> np.ndarray:
    """k - 1 quantile edges of river equity over all hands on ``n_boards`` random boards."""
    rng = np.random.default_rng(seed)
    eq = np.concatenate([board_equities(rng.permutation(52)[:5].tolist()) for _ in range(n_boards)])
    return np.quantile(eq[~np.isnan(eq)], np.arange(1, k) / k)


def merged_plan(game: RiverGame, T, p: int, plan: np.ndarray, bucket: np.ndarray) -> np.ndarray:
    """Player p's plan after merging hands with equal ``bucket`` (per hand of game.hands[p])."""
    b = T.behavioral_from_plan(plan)
    for v in game.tree.nodes_of(p):
        probs, reach = game.behavioral(p, plan, v)
        w = game.weight[p] * reach
        k = probs.shape[1]
        for g in np.unique(bucket):
            m = bucket == g
            mix = (w[m] @ probs[m]) / w[m].sum() if w[m].sum() > 0 else np.full(k, 1.0 / k)
            base = game.bases[p][v]
            for h in np.flatnonzero(m):
                b[base + h * k: base + (h + 1) * k] = mix
    return T.plan_from_behavioral(b)


def river_loss(board: str, k: int, pot: float = 2100, target_mbb: float = 1.0, **ranges) -> dict:
    """Exploitability (mbb/g) of the exact solution and of its k-bucket merge on a river spot."""
    game = RiverGame(pot=pot, board=board, **ranges)
    problem = game.problem()
    res = solve(problem, "cfr+", target_gap=2 * target_mbb * game.big_blind / 1000)
    edges = equity_edges(k)
    eq = board_equities(parse_board(board))
    plans = []
    for p, plan in ((0, res.x), (1, res.y)):
        bucket = np.searchsorted(edges, eq[game.hands[p]], side="right")
        plans.append(merged_plan(game, (problem.X, problem.Y)[p], p, plan, bucket))
    merged = evaluate(problem, *plans)
    return {"exact_mbb": to_mbb(res.evaluation.exploitability, game.big_blind),
            "merged_mbb": to_mbb(merged.exploitability, game.big_blind),
            "buckets_used": [int(len(np.unique(np.searchsorted(edges, eq[game.hands[p]], side="right"))))
                             for p in (0, 1)],
            "hands": [len(game.hands[0]), len(game.hands[1])]}
