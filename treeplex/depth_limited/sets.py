"""The opponent's continuation strategies at the depth limit (section 4): bias and self-generative.

**bias** (used by Modicum on the second round): the blueprint, then the blueprint with the
probability of one class of actions multiplied by 10 and renormalized: fold, check/call,
bet/raise. :data:`BIAS` continues the list past the paper's four (our extension, so that k up
to 16 can be compared): x100 versions, each bet size alone, and a few mixtures.

**self-generative** (used by Modicum on the first round): start from the blueprint; solve the
depth-limited subgame rooted at the start of the game with the current set; add the
opponent's best response to (subgame solution, blueprint beyond the depth limit); repeat.
A best response here is exact (the paper approximates it), and a best response at every
infoset, as an MDP solve gives (:func:`best_response_everywhere`). *Weakening*: if the new
strategy does better against the blueprint than the opponent's blueprint does, its leaf values are
lowered uniformly (for the opponent) by the difference.
"""

from __future__ import annotations

import time

import numpy as np

from ..model.strategy import behavioral_from_dict
from .index import NLFHIndex, renormalize
from .leaves import LeafEvaluator, LeafTable
from .nlfh_subgames import nlfh_subgame
from .subgame import solve_subgame

BIAS: list[tuple[str, dict[str, float]]] = [
    ("blueprint", {}),
    ("fold x10", {"fold": 10}),
    ("call x10", {"call": 10}),
    ("raise x10", {"raise": 10}),
    ("fold x100", {"fold": 100}),
    ("call x100", {"call": 100}),
    ("raise x100", {"raise": 100}),
    ("p0.5 x10", {"p0.5": 10}),
    ("p1 x10", {"p1": 10}),
    ("all-in x10", {"a": 10}),
    ("never fold", {"fold": 0.1}),
    ("passive", {"raise": 0.1}),
    ("fold+raise x10", {"fold": 10, "raise": 10}),
    ("p0.5 x100", {"p0.5": 100}),
    ("p1 x100", {"p1": 100}),
    ("all-in x100", {"a": 100}),
]


def action_class(label: str) -> str:
    return "fold" if label == "f" else ("call" if label in ("x", "c") else "raise")


def biased(index: NLFHIndex, player: int, b: np.ndarray, factors: dict[str, float]) -> np.ndarray:
    """``b`` with the second-round probabilities of the classes/labels in ``factors`` multiplied
    (a raise label's own factor applies on top of "raise"), then renormalized."""
    labels = index.label[player]
    mult = np.ones(len(b))
    for s in range(1, len(b)):
        if index.round[player][s] == 1:
            mult[s] = factors.get(action_class(labels[s]), 1.0) * factors.get(labels[s], 1.0)
    return renormalize(index.problem.treeplexes[player], b * mult)


def bias_table(ev: LeafEvaluator, chooser: int, blueprint: tuple[np.ndarray, np.ndarray], k: int) -> LeafTable:
    """Leaf table of the first ``k`` strategies of :data:`BIAS`."""
    if not 1 <= k <= len(BIAS):
        raise ValueError(f"bias: k must be in 1..{len(BIAS)}, got {k}")
    strategies = [biased(ev.index, chooser, blueprint[chooser], f) for _, f in BIAS[:k]]
    return ev.table(chooser, blueprint, strategies, [n for n, _ in BIAS[:k]])


def br_values(T, g: np.ndarray) -> np.ndarray:
    """Per sequence s of treeplex ``T``: g[s] plus the best-response value of every infoset
    below s, v[p_j] += max_{s' in j} v[s'] bottom-up: a sequence's counterfactual
    best-response value for gradient ``g`` (its own reach not counted); v[0] = max_x <g, x>."""
    v = np.asarray(g, dtype=np.float64).copy()
    for js, seqs, _, offsets in reversed(T.levels()):
        np.add.at(v, T.parent[js], np.maximum.reduceat(v[seqs], offsets))
    return v


def best_response_everywhere(problem, player: int, other_plan: np.ndarray) -> tuple[np.ndarray, float]:
    """``player``'s best response to the other's plan as a pure behavioral strategy that is a
    best response at *every* infoset, also those it never reaches itself (the paper's MDP
    best response): the leaf table uses it below every leaf, not only below the leaves its
    own first-round play reaches. Returns (behavioral, player 0's value)."""
    if player == 0:
        v, b = problem.X.best_response_behavioral(problem.A.matvec(other_plan, count=False))
        return b, v
    v, b = problem.Y.best_response_behavioral(-problem.A.rmatvec(other_plan, count=False))
    return b, -v


def self_generative_table(ev: LeafEvaluator, chooser: int, blueprint: tuple[np.ndarray, np.ndarray], k: int, *,
                          weaken: bool = True, solver: str = "lp") -> tuple[LeafTable, list[dict]]:
    """Leaf table of k self-generated strategies, and a log row per added strategy
    (subgame value, best-response value, weakening, seconds)."""
    index = ev.index
    problem = index.problem
    me = 1 - chooser
    T_me = problem.treeplexes[me]
    plans = [problem.treeplexes[p].plan_from_behavioral(blueprint[p]) for p in (0, 1)]
    v_bp = float(plans[0] @ problem.A.matvec(plans[1], count=False))
    table = ev.table(chooser, blueprint, [blueprint[chooser]], ["blueprint"])
    log = []
    game = index.game
    while table.k < k:
        t0 = time.perf_counter()
        sub = nlfh_subgame(game, game.root, index.deal, index.holes, leaf_values=table.by_node(), chooser=chooser)
        sol = solve_subgame(sub, solver=solver, k=table.k, leaf_table_bytes=table.nbytes)
        b_me = behavioral_from_dict(T_me, sol.strategies[me], me, default=blueprint[me])
        b_br, v_br = best_response_everywhere(problem, chooser, T_me.plan_from_behavioral(b_me))
        plan_br = problem.treeplexes[chooser].plan_from_behavioral(b_br)
        pair = (b_br, blueprint[1]) if chooser == 0 else (blueprint[0], b_br)
        values = ev.values(*pair)
        # weakening: the new strategy's value against the blueprint, in the chooser's terms
        own = [plan_br, plans[1]] if chooser == 0 else [plans[0], plan_br]
        v_new = float(own[0] @ problem.A.matvec(own[1], count=False))
        sign = 1.0 if chooser == 0 else -1.0
        delta = max(0.0, sign * (v_new - v_bp)) if weaken else 0.0
        values = values - sign * delta
        table = table.append(values, f"self-generated {table.k}")
        log.append({"k": table.k, "subgame_value": sol.value, "br_value": v_br, "weakening": delta,
                    "seconds": time.perf_counter() - t0, **{f"cost_{a}": b for a, b in sol.cost.items()}})
    return table, log
