"""Multi-valued leaf tables of NLFH: v_i(s, sigma*_i, sigma^j_{-i}) at the end of the first round.

A leaf state s = (hole h0, hole h1, leaf node l), l a "deal" node (the first betting round is
over). For continuation strategy j of the ``chooser`` and the blueprint of the solving
player,

    V[j, l, h0, h1] = E[player 0's payoff | s]
                    = sum_{z below s} c(z) u0(z) pi_0(z | s) pi_1(z | s) / P(h0, h1),

computed exactly in one pass over the nonzeros of the compiled game's payoff matrix: each
nonzero A[r, c] is a terminal (or a sum of terminals that differ only in the flop) whose
deeper last action tells the leaf above it, and "pseudo-plans" that give every first-round
action probability 1 turn x[r] y[c] into the reach *below* the leaf (Section 4: "traversing
the entire game tree once"). Memory: k * leaves * H^2 float64 (H = possible holes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..poker.nlfh import NLFH, PublicNode
from .index import NLFHIndex
from .translation import rpat_probability, translate


@dataclass
class LeafTable:
    """``values[j, row[l], h0, h1]``: player 0's chips at leaf state (h0, h1, node l) when the
    ``chooser`` plays continuation strategy ``names[j]`` and the other player its blueprint."""

    game: NLFH
    chooser: int
    row: dict[int, int]  # leaf node id -> row
    values: np.ndarray  # [k, n_leaves, H, H]
    names: list[str]

    @property
    def k(self) -> int:
        return self.values.shape[0]

    @property
    def nbytes(self) -> int:
        return self.values.nbytes

    def first(self, k: int) -> "LeafTable":
        return LeafTable(self.game, self.chooser, self.row, self.values[:k], self.names[:k])

    def by_node(self) -> dict[int, np.ndarray]:
        """{leaf node id: values[:, row, :, :]} (views)."""
        return {nid: self.values[:, r] for nid, r in self.row.items()}

    def append(self, values: np.ndarray, name: str) -> "LeafTable":
        return LeafTable(self.game, self.chooser, self.row, np.concatenate([self.values, values[None]]),
                         self.names + [name])


def leaf_nodes(start: PublicNode) -> list[PublicNode]:
    """The "deal" nodes (ends of the first round) below ``start`` in the abstraction."""
    out, stack = [], [start]
    while stack:
        n = stack.pop()
        if n.kind == "deal":
            out.append(n)
        elif n.kind == "decision" and n.rnd == 0:
            stack.extend(n.child(a) for a in n.actions)
    return sorted(out, key=lambda n: n.id)


class LeafEvaluator:
    """Computes leaf values of one compiled NLFH game for any pair of behavioral strategies."""

    def __init__(self, index: NLFHIndex):
        self.index = index
        g = index.game
        self.leaves = leaf_nodes(g.root)
        self.row = {n.id: r for r, n in enumerate(self.leaves)}
        A = index.problem.A.to_sparse().tocoo()
        n_nodes = len(g.nodes)
        depth = np.array([n.depth for n in g.nodes])
        leaf_row = np.array([self.row.get(n.leaf.id, -1) if n.leaf is not None else -1 for n in g.nodes])
        r, c = A.row, A.col
        n0, n1 = index.child[0][r], index.child[1][c]
        assert n0.max() < n_nodes and n1.max() < n_nodes
        deeper = np.where(depth[n0] >= depth[n1], n0, n1)
        lr = leaf_row[deeper]
        h0, h1 = index.hole[0][r], index.hole[1][c]
        keep = (lr >= 0) & (h0 >= 0) & (h1 >= 0)
        H = index.n_holes
        self.r, self.c, self.a = r[keep], c[keep], A.data[keep]
        self.flat = (lr[keep] * H + h0[keep]) * H + h1[keep]
        self.shape = (len(self.leaves), H, H)
        with np.errstate(divide="ignore"):
            self.inv_deal = np.where(index.deal > 0, 1.0 / np.where(index.deal > 0, index.deal, 1.0), 0.0)

    def pseudo_plan(self, player: int, b: np.ndarray) -> np.ndarray:
        """Realization weights below the first round: first-round actions count as 1."""
        b = np.where(self.index.round[player] == 0, 1.0, b)
        return self.index.problem.treeplexes[player].plan_from_behavioral(b)

    def values(self, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
        """[leaves, H, H]: player 0's expected chips at each leaf state under (b0, b1) after it."""
        w = self.a * self.pseudo_plan(0, b0)[self.r] * self.pseudo_plan(1, b1)[self.c]
        v = np.bincount(self.flat, weights=w, minlength=int(np.prod(self.shape))).reshape(self.shape)
        return v * self.inv_deal[None]

    def table(self, chooser: int, blueprint: tuple[np.ndarray, np.ndarray], strategies: list[np.ndarray],
              names: list[str]) -> LeafTable:
        """Leaf table with the chooser's ``strategies`` against the other player's blueprint."""
        vals = []
        for b in strategies:
            pair = (b, blueprint[1]) if chooser == 0 else (blueprint[0], b)
            vals.append(self.values(*pair))
        return LeafTable(self.index.game, chooser, dict(self.row), np.stack(vals), list(names))


WEIGHTINGS = ("average", "rpat", "blend")


def bracket(node: PublicNode, x: float, weighting: str = "average") -> list[tuple[str, float]]:
    """The abstraction's raises at ``node`` just below and above pot fraction ``x``, each with
    weight 1/2 (``weighting="average"``: Section 6.1 averages the two), or with RPAT's f(x)
    and 1 - f(x) (``"rpat"``: the pseudo-harmonic mapping's probabilities, more weight on the
    nearer size), or half-way between the two (``"blend"``: (1/2 + f(x)) / 2); one neighbour
    (weight 1) at the edges."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {', '.join(map(repr, WEIGHTINGS))}, got {weighting!r}")
    sizes = sorted((node.fraction_of(to), label) for label, to in node.raise_sizes().items())
    below = [lab for f, lab in sizes if f < x]
    above = [lab for f, lab in sizes if f > x]
    same = [lab for f, lab in sizes if f == x]
    if same:
        return [(same[0], 1.0)]
    picks = ([below[-1]] if below else []) + ([above[0]] if above else [])
    if weighting != "average" and len(picks) == 2:
        a = max(f for f, lab in sizes if f < x)
        b = min(f for f, lab in sizes if f > x)
        f = rpat_probability(x, a, b)
        if weighting == "blend":
            f = (0.5 + f) / 2
        return [(picks[0], f), (picks[1], 1.0 - f)]
    return [(lab, 1.0 / len(picks)) for lab in picks]


def offtree_leaf_values(table: LeafTable, start: PublicNode, weighting: str = "average") -> dict[int, np.ndarray]:
    """Leaf values of every leaf below ``start`` in a game that has off-tree sizes ``table``'s
    game lacks. A leaf reached through an off-tree raise gets the weighted average of the
    corresponding leaves (same later actions, nearest sizes) after the two neighbouring
    in-abstraction sizes (:func:`bracket`; section 6.1), each scaled by the pot ratio (values
    as a fraction of the pot, appendix A); other leaves map one to one. ``weighting``: see
    :func:`bracket`."""
    g = table.game
    out = {}
    for leaf in leaf_nodes(start):
        off = first_offtree(leaf, g)
        if off is None:
            choices = [(None, 1.0)]
        else:
            x = off.fraction_of(off.raise_to_of(off_label(leaf, off)))
            choices = [((off, lab), w) for lab, w in bracket(translate(off, g), x, weighting)]
        acc = 0.0
        for sub, w in choices:
            dst = translate(leaf, g, substitute=sub)
            if dst.kind != "deal":
                raise ValueError(f"leaf {leaf.hist_str!r} translates to a {dst.kind} node {dst.hist_str!r}")
            acc = acc + w * table.values[:, table.row[dst.id]] * (leaf.contrib[0] / dst.contrib[0])
        out[leaf.id] = acc
    return out


def off_label(node: PublicNode, ancestor: PublicNode) -> str:
    """The label taken at ``ancestor`` on the path to ``node``."""
    for src, label in node.path():
        if src is ancestor:
            return label
    raise ValueError(f"{ancestor.hist_str!r} is not above {node.hist_str!r}")


def first_offtree(node: PublicNode, game: NLFH) -> PublicNode | None:
    """The first node on ``node``'s path whose label ``game``'s abstraction lacks there."""
    d = game.root
    for src, label in node.path():
        if label == "":
            d = d.after_deal()
            continue
        if label not in d.actions:
            return src
        d = d.child(label)
    return None
