"""Nested solving of an off-tree action (sections 5 and 6.1).

After the opponent's off-tree bet (a size the blueprint's abstraction lacks):

1. a depth-limited subgame rooted right after the bet, leaves at the end of the first round.
   A leaf's k values are the average of the leaf values of the corresponding leaves after
   the two neighbouring in-abstraction sizes (section 6.1), scaled by the pot. With
   ``root_safety`` the opponent first picks alt/enter at its root infosets, alt paying its
   best-response value against the blueprint *within the abstraction* at that infoset
   (Proposition 1's bound): the off-tree bet must not gain over the sizes already there.
   Without it, the opponent's range at the root is the average of its blueprint ranges for
   the two neighbouring sizes (unsafe).
2. once the flop is to be dealt, the rest of the game at each leaf of that subgame is solved
   to the end (the flop is dealt inside): ``round2="unsafe"`` with both players' ranges
   from step 1 (Ganzfried & Sandholm 2015), or ``"safe"``: resolve gadget (Burch et al.
   2014; Brown & Sandholm 2017), the opponent's root infosets getting their step-1 leaf
   value as alt (the best of the k values given the responder's step-1 strategy), raised by
   the opponent's *gift* from step 1 (``gifts=True``, Brown & Sandholm 2017's Reach subgame
   solving): a hole whose step-1 value of entering sits below its root alt by a margin m can
   be allowed up to m / (n * P(leaf)) more at each of the n leaves it reaches with
   probability P(leaf) (the responder's and chance's part), since in all it still gains at
   most m. Without it, hands that never bring the bet to a leaf (they fold, or never make
   it) keep their leaf value as a bound that the responder must meet there, and with leaf
   values that leave no room for the real leaf's betting (borrowed from the all-in, near
   all-in) these bounds cannot all be met: the LP gives up the strong hands' bounds, which
   are the ones that do reach (the off-tree sweep at 6-20 pot).

The result is the responder's strategy (by infoset key) below the off-tree node, with the
cost of every solve.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..poker.nlfh import NLFH, PublicNode
from ..core.treeplex import Treeplex
from .blueprint import Blueprint
from .leaves import LeafTable, first_offtree, bracket, leaf_nodes, offtree_leaf_values
from .nlfh_subgames import nlfh_subgame, reach
from .sets import br_values
from .subgame import GADGET_TAG, LEAF_TAG, solve_subgame


@dataclass
class OffTreeResponse:
    """The responder's strategy below the off-tree node, and what computing it cost."""

    responder: int
    strategy: dict
    neighbours: list
    first_round: dict  # cost of the depth-limited solve
    second_round: list[dict] = field(default_factory=list)  # one cost row per leaf solved to the end
    seconds: float = 0.0

    def cost_summary(self) -> dict:
        r2 = self.second_round
        return {
            "depth_limited_seconds": self.first_round["build_seconds"] + self.first_round["solve_seconds"],
            "depth_limited_histories": self.first_round["histories"],
            "leaves": self.first_round["leaves"],
            "k": self.first_round["k"],
            "leaf_table_bytes": self.first_round["leaf_table_bytes"],
            "second_round_subgames": len(r2),
            "second_round_seconds": sum(c["build_seconds"] + c["solve_seconds"] for c in r2),
            "second_round_histories": sum(c["histories"] for c in r2),
            "total_seconds": self.seconds,
        }


def infoset_br_values(T: Treeplex, g: np.ndarray) -> np.ndarray:
    """Counterfactual best-response value of every infoset for gradient ``g`` (bottom-up max)."""
    return np.maximum.reduceat(br_values(T, g)[1:], T.start - 1)


def root_bounds(bp: Blueprint, node: PublicNode, opponent: int, r_resp: np.ndarray) -> np.ndarray:
    """[H] the opponent's best-response value (player 0's chips, per unit of reach) at its
    infosets (hole, ``node``) against the responder's blueprint, within the abstraction."""
    problem, index = bp.problem, bp.index
    T = problem.treeplexes[opponent]
    g = problem.A.matvec(bp.plans[1], count=False) if opponent == 0 else -problem.A.rmatvec(bp.plans[0], count=False)
    cf = infoset_br_values(T, g)
    gnode = bp.game.node(node.hist_str)
    deal = index.deal if opponent == 0 else index.deal.T
    norm = deal @ r_resp  # [H] chance x responder reach of the opponent's infoset
    where = {str(k): j for j, k in enumerate(T.infoset_keys)}
    out = np.zeros(index.n_holes)
    for h, cards in enumerate(index.holes):
        j = where.get(f"{bp.game.cards_name(cards)}||{gnode.hist_str}")
        if j is not None and norm[h] > 0:
            out[h] = cf[j] / norm[h] * (1.0 if opponent == 0 else -1.0)
    return out


def respond_to_offtree(bp: Blueprint, table: LeafTable | None, game_x: NLFH, after: PublicNode, *,
                       root_safety: bool = True, round2: str = "safe", solver: str = "lp",
                       depth_limit: bool = True, leaf_weighting: str = "average", gifts: bool = True,
                       **solve_kw) -> OffTreeResponse:
    """Nested solving after the off-tree action leading to ``after`` (a node of ``game_x``, the
    game in which it exists); ``table`` holds the chooser's (the bettor's) leaf values of the
    blueprint's game. See the module docstring. ``depth_limit=False`` solves the subgame after
    the bet to the end of the game in one piece (the reference the paper mentions, "about
    10,000x larger" in real NLFH; ``table`` is then unused). ``leaf_weighting``: how leaves
    after the off-tree bet mix the two bracketing sizes' values (:func:`.leaves.bracket`:
    "average", the paper's 1/2 each, "rpat" or "blend"). ``gifts``: round-2 alts raised by the step-1
    margins (module docstring; needs ``root_safety`` and ``round2="safe"``). ``solve_kw`` go to
    the solver."""
    if round2 not in ("safe", "unsafe"):
        raise ValueError(f"round2 must be 'safe' or 'unsafe', got {round2!r}")
    t_start = time.perf_counter()
    G, index = bp.game, bp.index
    holes = index.holes
    opp = after.parent.to_act
    resp = 1 - opp
    if depth_limit and table.chooser != opp:
        raise ValueError(f"the leaf table's chooser is player {table.chooser}, the off-tree bettor is {opp}")
    gparent = G.node(after.parent.hist_str)
    x = after.parent.fraction_of(after.parent.raise_to_of(after.label))
    neighbours = bracket(gparent, x, leaf_weighting)
    leaf_values = offtree_leaf_values(table, after, leaf_weighting) if depth_limit else {}

    # the root: chance x the responder's blueprint reach (x the opponent's range if unsafe)
    r_resp = reach(bp.dicts[resp], G, gparent, resp, holes)
    if root_safety:
        r_opp = np.ones(len(holes))
        alt = (opp, root_bounds(bp, gparent, opp, r_resp))
    else:
        r_opp = sum(w * reach(bp.dicts[opp], G, gparent.child(lab), opp, holes) for lab, w in neighbours)
        alt = None
    weights = _pair_weights(index.deal, opp, r_opp, r_resp)
    sub = nlfh_subgame(game_x, after, weights, holes, leaf_values=leaf_values, chooser=opp, alt=alt,
                       to_end=not depth_limit)
    lt_bytes = sum(v.nbytes for v in leaf_values.values())
    sol = solve_subgame(sub, solver=solver, k=table.k if depth_limit else 0, leaf_table_bytes=lt_bytes, **solve_kw)
    first = tuple(snap_strategy(st) for st in sol.strategies)  # LP noise -> 0 (see snap_strategy)
    strategy = dict(first[resp])
    if not depth_limit:
        return OffTreeResponse(resp, strategy, neighbours, sol.cost, [], time.perf_counter() - t_start)

    # the second round, solved to the end at every leaf
    names = [G.cards_name(c) for c in holes]
    if root_safety:
        enter = np.array([first[opp].get(f"{n}||{after.hist_str}{GADGET_TAG}", {"enter": 1.0})["enter"]
                          for n in names])
        r_opp = r_opp * enter
    rows = []
    leaves = []
    for leaf in leaf_nodes(after):
        rr = r_resp * reach(first[resp], game_x, leaf, resp, holes, start=after)
        if rr.any():  # else the responder never gets here: its play here does not matter
            leaves.append((leaf, rr))
    if gifts and root_safety and round2 == "safe":
        margin = step1_margins(sol, [f"{n}||{after.hist_str}{GADGET_TAG}" for n in names], weights, opp, alt[1])
        p_leaf = [_opp_reach_share(_pair_weights(index.deal, opp, np.ones(len(holes)), rr), weights, opp)
                  for _, rr in leaves]
        n_reached = np.sum([p > 0 for p in p_leaf], axis=0) if p_leaf else np.zeros(len(holes))
    for i, (leaf, rr) in enumerate(leaves):
        if round2 == "unsafe":
            ro = r_opp * reach(first[opp], game_x, leaf, opp, holes, start=after)
            w2 = _pair_weights(index.deal, opp, ro if ro.any() else np.ones(len(holes)), rr)
            sub2 = nlfh_subgame(game_x, leaf, w2, holes)
        else:
            w2 = _pair_weights(index.deal, opp, np.ones(len(holes)), rr)
            bound = _leaf_bounds(leaf_values[leaf.id], w2, opp)
            if gifts and root_safety:
                ok = (p_leaf[i] > 0) & (n_reached > 0)  # per unit of the leaf's reach: m / (n P(leaf))
                gift = np.where(ok, margin / np.where(ok, p_leaf[i] * n_reached, 1.0), 0.0)
                bound = gifted_bounds(bound, gift, G.stack, opp)
            sub2 = nlfh_subgame(game_x, leaf, w2, holes, alt=(opp, bound))
        s2 = solve_subgame(sub2, solver=solver, **solve_kw)
        strategy.update(s2.strategies[resp])
        rows.append(s2.cost)
    strategy = {k: v for k, v in strategy.items() if not k.endswith((GADGET_TAG, LEAF_TAG))}
    return OffTreeResponse(resp, strategy, neighbours, sol.cost, rows, time.perf_counter() - t_start)


# HiGHS returns probabilities such as 9e-10 where it means 0 (its primal feasibility
# tolerance is 1e-7: it cannot tell them apart). Left in the first-round solution, such a
# probability lets a hole reach a second-round leaf with weight ~1e-9 of the others; its
# round-2 payoff entries then sit ~1e9x below the rest and the exact LP refuses the subgame
# (treeplex/lp.py, LP_RANGE; the off-tree sweep at 0.8 pot). Dropping it from the round-2
# subgame alone would leave that hole's (reached) infosets without a strategy, so the noise
# is cleaned where it is produced: action probabilities below SNAP_PROB become 0 and the
# infoset is renormalized, which moves the exploitability by at most ~SNAP_PROB x the stakes.
SNAP_PROB = 1e-7


def snap_strategy(strategy: dict) -> dict:
    """{infoset: {action: p}} with every p < ``SNAP_PROB`` set to 0, renormalized (see above)."""
    out = {}
    for key, probs in strategy.items():
        if all(p == 0 or p >= SNAP_PROB for p in probs.values()):
            out[key] = probs
            continue
        kept = {a: (p if p >= SNAP_PROB else 0.0) for a, p in probs.items()}
        total = sum(kept.values())
        out[key] = {a: p / total for a, p in kept.items()} if total > 0 else probs
    return out


def step1_margins(sol, gadget_keys: list[str], weights: np.ndarray, opp: int, root_alt: np.ndarray) -> np.ndarray:
    """[H] how far each opponent hole's value of entering the step-1 subgame (its gadget
    infoset ``gadget_keys[h]``; against the responder's step-1 strategy, the leaves at their
    best of k values) stays below its root alt, in the opponent's favour (>= 0), per unit of
    reach (root_alt's units: player 0's chips)."""
    problem = sol.problem
    T = problem.treeplexes[opp]
    g = problem.A.matvec(sol.plans[1], count=False) if opp == 0 else -problem.A.rmatvec(sol.plans[0], count=False)
    v = br_values(T, g)
    share = weights.sum(axis=1 - opp) / weights.sum()  # the subgame's root weight of each opponent hole
    where = {str(k): j for j, k in enumerate(T.infoset_keys)}
    sign = 1.0 if opp == 0 else -1.0
    out = np.zeros(len(root_alt))
    for h in range(len(root_alt)):
        j = where.get(gadget_keys[h])
        if j is None or share[h] <= 0:
            continue
        enter = v[T.start[j] + T.action_labels[j].index("enter")] / share[h] * sign  # player 0's chips
        out[h] = max(0.0, sign * (root_alt[h] - enter))
    return out


def _pair_weights(deal: np.ndarray, opp: int, r_opp: np.ndarray, r_resp: np.ndarray) -> np.ndarray:
    """deal[h0, h1] x reach of each player's hole."""
    r0, r1 = (r_opp, r_resp) if opp == 0 else (r_resp, r_opp)
    return deal * r0[:, None] * r1[None, :]


def _opp_reach_share(w2: np.ndarray, weights: np.ndarray, opp: int) -> np.ndarray:
    """[H] P(leaf | opponent hole) from the responder's and chance's side: the leaf's pair
    weights ``w2`` over the step-1 root's, summed over the responder's holes."""
    num = w2.sum(axis=1 - opp)
    den = weights.sum(axis=1 - opp)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def gifted_bounds(bound: np.ndarray, gift: np.ndarray, cap, opp: int) -> np.ndarray:
    """Leaf bounds raised (in the opponent's favour) by its ``gift`` (>= 0), at most to ``cap``
    (what a hand can win there, the stack, in the bounds' units); a bound already past the
    cap stays. The gift of Reach subgame solving (Brown & Sandholm 2017): a hand whose step-1
    value of entering sits m below its root alt may gain m / (n P(leaf)) more at each of the n
    leaves it reaches, per unit of the leaf's reach (m / n in units that carry the reach)."""
    if opp == 0:
        return np.minimum(bound + gift, np.maximum(bound, cap))
    return np.maximum(bound - gift, np.minimum(bound, -cap))


def best_leaf_sums(values: np.ndarray, w: np.ndarray, opp: int) -> tuple[np.ndarray, np.ndarray]:
    """([H], [H]) the opponent's value at its leaf infosets, the best of the k values
    ``values[j, h0, h1]`` (player 0's chips per pair) summed with the weights ``w[h0, h1]`` of
    the other player's holes, and the weights' sum (what a value per unit of reach divides by)."""
    if opp == 0:
        return np.einsum("kab,ab->ka", values, w).max(axis=0), w.sum(axis=1)
    return np.einsum("kab,ab->kb", values, w).min(axis=0), w.sum(axis=0)


def _leaf_bounds(values: np.ndarray, w: np.ndarray, opp: int) -> np.ndarray:
    """[H] :func:`best_leaf_sums` per unit of reach (player 0's chips); 0 where nothing reaches."""
    best, den = best_leaf_sums(values, w, opp)
    return np.where(den > 0, best / np.where(den > 0, den, 1.0), 0.0)


def solve_own_offtree(bp: Blueprint, table: LeafTable, game_x: NLFH, *, solver: str = "lp", **solve_kw) -> tuple[dict, list[dict]]:
    """The strategy of the player who *uses* the extra sizes of ``game_x``: a depth-limited
    subgame at the start of the game (its first round with the extra sizes, the opponent
    choosing among ``table``'s k continuations at the leaves), then on lines through an extra
    size the rest of the game solved to the end with both ranges from that solve (unsafe);
    elsewhere in the second round, the blueprint. Returns (strategy by key, cost rows)."""
    G, index = bp.game, bp.index
    holes = index.holes
    opp = table.chooser
    me = 1 - opp
    leaf_values = offtree_leaf_values(table, game_x.root)
    sub = nlfh_subgame(game_x, game_x.root, index.deal, holes, leaf_values=leaf_values, chooser=opp)
    sol = solve_subgame(sub, solver=solver, k=table.k, leaf_table_bytes=sum(v.nbytes for v in leaf_values.values()),
                        **solve_kw)
    first = tuple(snap_strategy(st) for st in sol.strategies)  # LP noise -> 0 (see snap_strategy)
    strategy = dict(bp.dicts[me])
    strategy.update(first[me])
    costs = [sol.cost]
    for leaf in leaf_nodes(game_x.root):
        if first_offtree(leaf, G) is None:
            continue
        r_me = reach(first[me], game_x, leaf, me, holes)
        if not r_me.any():
            continue
        r_opp = reach(first[opp], game_x, leaf, opp, holes)
        w = _pair_weights(index.deal, opp, r_opp if r_opp.any() else np.ones(len(holes)), r_me)
        s2 = solve_subgame(nlfh_subgame(game_x, leaf, w, holes), solver=solver, **solve_kw)
        strategy.update(s2.strategies[me])
        costs.append(s2.cost)
    return {k: v for k, v in strategy.items() if not k.endswith((GADGET_TAG, LEAF_TAG))}, costs
