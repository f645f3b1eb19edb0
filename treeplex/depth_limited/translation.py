"""Action translation between NLFH betting trees, and RPAT (Ganzfried & Sandholm, IJCAI 2013).

Pot-fraction labels (``p0.5``) mean the same thing in every tree, so a history in one tree
maps to another tree label by label: a label the other node offers is kept; another raise
goes to the raise there whose pot fraction is nearest; check/call and fold go to what is
legal (``x`` <-> ``c``, ``f`` -> ``x``). This is how the leaves and infosets below an
off-tree bet are matched with the ones below its in-abstraction neighbours.

RPAT maps an off-tree size x between the abstraction's sizes A < x < B (pot fractions) to A
with probability f(x) = ((B - x)(1 + A)) / ((B - A)(1 + x)), else to B, once per hand; the
agent then plays the blueprint as if that size had been bet. As a strategy of the game with
the off-tree action this is the mixture f * plan_A + (1 - f) * plan_B of the two translated
plans (realization plans mix linearly).
"""

from __future__ import annotations

import numpy as np

from ..model.game import GameError
from ..poker.nlfh import NLFH, PublicNode
from ..core.treeplex import Treeplex


def nearest_label(label: str, src: PublicNode, dst: PublicNode) -> str:
    """The action at ``dst`` that corresponds to ``label`` taken at ``src``."""
    acts = dst.actions
    if label in acts:
        return label
    passive = "c" if "c" in acts else "x"
    if label in ("x", "c", "f"):
        return passive
    x = src.fraction_of(src.raise_to_of(label))
    sizes = dst.raise_sizes()
    if not sizes:
        return passive
    return min(sizes, key=lambda lab: (abs(dst.fraction_of(sizes[lab]) - x), sizes[lab]))


def translate(node: PublicNode, game: NLFH, substitute: tuple[PublicNode, str] | None = None) -> PublicNode:
    """``node``'s history replayed in ``game`` with nearest labels; at ``substitute[0]`` (a node
    on the path) the label ``substitute[1]`` is used instead. Stops early if the replay ends
    (a raise that became a call can end a round sooner)."""
    d = game.root
    for src, label in node.path():
        if label == "":
            if d.kind != "deal":
                return d
            d = d.after_deal()
            continue
        if d.kind != "decision":
            return d
        if substitute is not None and src is substitute[0]:
            label = substitute[1]
        else:
            label = nearest_label(label, src, d)
        d = d.child(label)
    return d


def is_below(node: PublicNode, top: PublicNode) -> bool:
    """Whether ``top`` is ``node`` or one of its ancestors."""
    while node is not None:
        if node is top:
            return True
        node = node.parent
    return False


def rpat_probability(x: float, a: float, b: float) -> float:
    """f(x): probability of mapping x to the smaller size a (a < x < b, pot fractions)."""
    if not a < x < b:
        raise ValueError(f"RPAT needs a < x < b, got a={a}, x={x}, b={b}")
    return ((b - x) * (1 + a)) / ((b - a) * (1 + x))


def translated_behavioral(T: Treeplex, index_parse, strategy: dict, game_abs: NLFH, after: PublicNode,
                          label: str, default: np.ndarray) -> tuple[np.ndarray, int]:
    """Local probabilities (per sequence of ``T``) that play, below the off-tree node ``after``,
    ``strategy`` (a blueprint of ``game_abs`` by infoset key) as if ``label`` had been bet
    instead; elsewhere ``default``. At each infoset the blueprint's probabilities of the
    translated infoset are pushed onto this node's nearest labels. Returns (b, infosets that
    had no translation and play check/call)."""
    b = default.copy()
    missing = 0
    for j, key in enumerate(T.infoset_keys):
        hole, board, node = index_parse(key)
        if not is_below(node, after):
            continue
        dst = translate(node, game_abs, substitute=(after.parent, label))
        hole_name = str(key).split("|")[0]
        probs = strategy.get(f"{hole_name}|{board}|{dst.hist_str}") if dst.kind == "decision" else None
        labels = T.action_labels[j]
        row = np.zeros(len(labels))
        if probs is None or dst.to_act != node.to_act:
            row[labels.index("c" if "c" in labels else "x")] = 1.0
            missing += 1
        else:
            for a, p in probs.items():
                row[labels.index(nearest_label(a, dst, node))] += p
        b[T.start[j] : T.end[j]] = row
    return b, missing


def rpat_bracket(node: PublicNode, x: float) -> tuple[tuple[float, str], tuple[float, str]]:
    """((a, label), (b, label)): the abstraction's raises at ``node`` just below and just above
    the pot fraction ``x``. A size below the smallest raise (RPAT's paper would translate it
    against check/call) or equal to a raise is refused with a one-line :class:`GameError`."""
    sizes = sorted((node.fraction_of(to), lab) for lab, to in node.raise_sizes().items())
    below = [s for s in sizes if s[0] < x]
    above = [s for s in sizes if s[0] > x]
    if not below or not above or any(f == x for f, _ in sizes):
        where = f"at {node.hist_str!r}" if node.hist_str else "at the first action"
        have = ", ".join(f"{f:.3g}" for f, _ in sizes) or "none"
        raise GameError(f"off-tree size {x:.3g} x pot is not strictly between two of the abstraction's raise sizes "
                        f"{where} (raises there: {have} x pot); RPAT and the depth-limited leaves need one on "
                        f"each side")
    return below[-1], above[0]


def rpat_plan(T: Treeplex, index_parse, strategy: dict, game_abs: NLFH, after: PublicNode,
              default: np.ndarray) -> tuple[np.ndarray, dict]:
    """The RPAT realization plan of the player responding to the off-tree node ``after``.

    ``strategy`` = that player's blueprint in ``game_abs`` (by key); ``default`` = its local
    probabilities in the game with the off-tree action (used away from ``after``).
    """
    parent = game_abs.node(after.parent.hist_str)
    x = after.parent.fraction_of(after.parent.raise_to_of(after.label))
    (a, la), (bb, lb) = rpat_bracket(parent, x)
    f = rpat_probability(x, a, bb)
    ba, miss_a = translated_behavioral(T, index_parse, strategy, game_abs, after, la, default)
    bb_, miss_b = translated_behavioral(T, index_parse, strategy, game_abs, after, lb, default)
    plan = f * T.plan_from_behavioral(ba) + (1 - f) * T.plan_from_behavioral(bb_)
    return plan, {"f": f, "A": la, "B": lb, "untranslated_infosets": miss_a + miss_b}
