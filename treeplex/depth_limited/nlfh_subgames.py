"""NLFH subgames rooted at any public node, depth-limited at the end of the first round.

The root is a chance node over hole pairs (h0, h1) with the given weights (chance times the
players' reaches, as the caller decides). Rooted in the first round, the subgame's leaves are
the "deal" nodes below, where the chooser picks among the leaf table's k values; rooted at a
"deal" node or in the second round, it runs to the end of the game. With ``alt`` the
opponent first picks alt/enter at each of its root infosets (resolve gadget).
"""

from __future__ import annotations

import numpy as np

from ..poker.nlfh import NLFH, PublicNode
from .subgame import DepthLimitedGame, resolve_gadget, root_chance


def nlfh_subgame(game: NLFH, node: PublicNode, weights: np.ndarray, holes: list, *, board: tuple = (),
                 leaf_values: dict[int, np.ndarray] | None = None, chooser: int = 0,
                 alt: tuple[int, np.ndarray] | None = None, to_end: bool = False) -> DepthLimitedGame:
    """The subgame of ``game`` at public ``node``.

    ``weights[h0, h1]``: root weight of the hole pair (holes[h0], holes[h1]) (normalized here).
    ``leaf_values``: {leaf node id: [k, H, H] player 0's chips} for a first-round root.
    ``alt = (opponent, bound[H])``: resolve gadget with the opponent's bound (player 0's chips)
    per own hole index. ``to_end``: no depth limit even when rooted in the first round.
    """
    items = []
    for h0, h1 in zip(*np.nonzero(weights > 0)):
        state = game.state((holes[h0], holes[h1]), node, board)
        if alt is not None:
            opp, bound = alt
            h = (h0, h1)[opp]
            key = f"{game.cards_name(holes[h])}|{game.cards_name(board)}|{node.hist_str}"
            state = resolve_gadget(state, opp, key, bound[h])
        items.append((f"{game.cards_name(holes[h0])},{game.cards_name(holes[h1])}", weights[h0, h1], state))
    root = root_chance(items)
    depth_limited = node.kind == "decision" and node.rnd == 0 and not to_end
    if depth_limited and leaf_values is None:
        raise ValueError("a subgame rooted in the first round needs leaf values")
    index = {tuple(c): i for i, c in enumerate(holes)}

    def is_leaf(s) -> bool:
        return depth_limited and getattr(s, "node", None) is not None and s.node.kind == "deal"

    def values(s):
        return leaf_values[s.node.id][:, index[s.holes[0]], index[s.holes[1]]]

    def key(s):
        return f"{game.cards_name(s.holes[chooser])}||{s.node.hist_str}"

    return DepthLimitedGame(root, is_leaf, values, key, chooser, name=f"{game.name} @ {node.hist_str or 'root'}",
                            payoff_unit="chips", big_blind=game.big_blind)


def reach(strategy: dict, game: NLFH, node: PublicNode, player: int, holes: list, start: PublicNode | None = None,
          board: tuple = ()) -> np.ndarray:
    """[H]: probability that ``player`` holding each hole takes its own actions on the path
    from ``start`` (default: the root) to ``node`` under ``strategy`` ({key: {action: p}}).
    An infoset the strategy lacks counts as probability 1. Second-round keys use ``board``."""
    r = np.ones(len(holes))
    names = [game.cards_name(c) for c in holes]
    on = start is None
    for src, label in node.path():
        on = on or src is start
        if not on or label == "" or src.to_act != player:
            continue
        b = game.cards_name(board) if src.rnd == 1 else ""
        for h, name in enumerate(names):
            probs = strategy.get(f"{name}|{b}|{src.hist_str}")
            if probs is not None:
                r[h] *= probs.get(label, 0.0)
    return r
