"""Public tree x hands: the sequence form shared by the river endgame and postflop subgames.

A poker subgame is a public tree (betting nodes, perhaps chance nodes dealing board cards,
terminals) and, for each player p, a list of hands (indices into :data:`.cards.HAND_CARDS`)
with range weights. Player p's sequences are laid out by p's decision nodes in the tree's
order; within node v, hand h's infoset owns ``base_v + h * k_v + a`` for its k_v actions,
and its parent is the same hand's sequence at p's last (node, action) before v. The tree
must provide ``nodes_of(p)``, ``actions``, ``node_last``, ``history`` and, per terminal,
``last``, ``kind`` (``"fold"``/``"showdown"``), ``payoff0``, ``stake`` and ``chance`` (the
runout's chance weight, 1 on a one-street tree).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from ..model.game import Game
from ..model.problem import Problem
from ..core.treeplex import Treeplex
from .cards import HAND_CARDS, hand_name


class HandsProblem(Problem):
    """The :class:`Problem` of a :class:`HandsGame` (``game``), with its per-hand results and summaries."""

    @property
    def tree(self) -> None:
        """None: sequences are laid out as public node x hand, not by a walk of the rules view."""
        return None

    @property
    def strategy_options(self) -> tuple[str, ...]:
        return self.game.strategy_options

    def strategy_dict(self, x, y, **kw) -> dict:
        """The game's per-hand strategies; ``kw`` go to the game (postflop: ``streets``)."""
        return self.game.strategy_dict(x, y, **kw)

    def solution(self, x, y, **kw) -> dict:
        return self.strategy_dict(x, y, **kw)

    def summary(self, x, y, **kw) -> str:
        return self.game.summary(x, y, **kw)


class HandsGame(Game):
    """Base of :class:`.river.RiverGame` and :class:`.postflop.PostflopGame`: subclasses set
    ``tree``, ``hands`` (int arrays of hand indices per player) and ``weight``."""

    tree = None
    strategy_options: tuple[str, ...] = ()  # keywords of strategy_dict (postflop: "streets")
    hands: list[np.ndarray]
    weight: list[np.ndarray]

    @property
    def n_hands(self) -> tuple[int, int]:
        return (len(self.hands[0]), len(self.hands[1]))

    @cached_property
    def bases(self) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`layout` of both players."""
        return (self.layout(0), self.layout(1))

    @cached_property
    def _arrays(self) -> dict:
        return tree_arrays(self.tree)

    def layout(self, p: int) -> np.ndarray:
        """First sequence of each of player p's decision nodes (within it: h * k_v + a), by
        node (-1 at the other player's nodes)."""
        ar, n = self._arrays, len(self.hands[p])
        mine = ar["actor"] == p
        size = np.where(mine, n * ar["k"], 0)
        return np.where(mine, 1 + np.cumsum(size) - size, -1)

    def n_seqs(self, p: int) -> int:
        ar = self._arrays
        return 1 + len(self.hands[p]) * int(ar["k"][ar["actor"] == p].sum())

    def treeplex(self, p: int) -> Treeplex:
        ar, n = self._arrays, len(self.hands[p])
        nodes = self.tree.nodes_of(p)
        base, k = self.bases[p], ar["k"]
        hands = np.arange(n)
        start = (base[nodes][:, None] + hands[None, :] * k[nodes][:, None]).ravel()
        u, a = ar["last_node"][nodes, p], ar["last_act"][nodes, p]
        has = u >= 0
        parents = np.where(has[:, None], (base[np.where(has, u, 0)] + a)[:, None]
                           + hands[None, :] * k[np.where(has, u, 0)][:, None], 0).ravel()
        return Treeplex(start, start + np.repeat(k[nodes], n), parents,
                        LazyKeys(self, p, nodes), LazyLabels(self, p, nodes))

    def terminal_arrays(self):
        """(kind 0 fold / 1 showdown, value = chips x chance, base[p], stride[p]) per terminal:
        player p's last sequence before terminal t is ``base[p][t] + h * stride[p][t]``."""
        ar = self._arrays
        base, stride = [], []
        for p in (0, 1):
            u, a = ar["term_last_node"][:, p], ar["term_last_act"][:, p]
            has = u >= 0
            uu = np.where(has, u, 0)
            base.append(np.where(has, self.bases[p][uu] + a, 0).astype(np.int64))
            stride.append(np.where(has, ar["k"][uu], 0).astype(np.int64))
        kind = ar["kinds"].astype(np.int8)
        value = np.where(kind == 0, ar["payoff0"], ar["stake"]) * ar["chance"]
        return kind, value, base, stride

    def node_block(self, p: int, vec: np.ndarray, v: int) -> np.ndarray:
        """float[n_hands, k]: the entries of ``vec`` (one per sequence) of player p's hands at node v."""
        n, k = len(self.hands[p]), len(self.tree.actions[v])
        b = self.bases[p][v]
        return vec[b: b + n * k].reshape(n, k)

    def behavioral(self, p: int, plan: np.ndarray, v: int):
        """(float[n_hands, k] action probabilities, own reach of each hand) at node v."""
        block = self.node_block(p, plan, v)
        k = block.shape[1]
        reach = block.sum(axis=1)
        probs = np.where(reach[:, None] > 0, block / np.where(reach > 0, reach, 1.0)[:, None], 1.0 / k)
        return probs, reach

    def range_weight(self, p: int) -> np.ndarray:
        """Player p's range weight per hand, as summaries weight hands (a bunched postflop spot
        scales each by the folders' effect on it: :meth:`.postflop.PostflopGame.range_weight`)."""
        return self.weight[p]

    def frequencies(self, p: int, probs: np.ndarray, reach: np.ndarray):
        """(range-weighted action frequencies, share of p's range weight reaching) at a node."""
        rw = self.range_weight(p)
        w = rw * reach
        total = w.sum()
        share = float(total / rw.sum())
        freq = (w @ probs / total).tolist() if total > 0 else [float("nan")] * probs.shape[1]
        return freq, share

    def deals(self) -> list[tuple[int, int, float]]:
        """(hand index 0, hand index 1, probability) for every card-disjoint pair."""
        c0, c1 = HAND_CARDS[self.hands[0]], HAND_CARDS[self.hands[1]]
        out = [(i, j, self.weight[0][i] * self.weight[1][j]) for i in range(len(c0)) for j in range(len(c1))
               if len({*c0[i], *c1[j]}) == 4]
        z = sum(p for _, _, p in out)
        return [(i, j, p / z) for i, j, p in out]

    def hand_position(self, p: int, name: str) -> int:
        """Index of hand ``name`` (e.g. "AsKd") among player p's hands."""
        return self._positions[p][name]

    @cached_property
    def _positions(self) -> list[dict[str, int]]:
        return [{hand_name(h): i for i, h in enumerate(hs)} for hs in self.hands]


class PublicTreeGame(HandsGame):
    """Base of the games on a public tree with chance nodes (:class:`.postflop.PostflopGame`,
    :class:`.nlfh52.NLFH52`), which the fused engine (:mod:`.fused`) walks. Subclasses give
    the tree's ``children``/``chance_children`` (``(kind, id)`` per child), ``kind``,
    ``boards`` and the arrays of :class:`~.public_tree.PublicTree`, :meth:`problem` (which
    sets ``reduction`` under isomorphism) and ``_river_orders()``: per player (ptr, hand
    indices weakest first, strengths) per board of the tree, filled on the boards with a
    showdown (5 cards: the river of a postflop spot, the flop of ``nlfh52``)."""

    _fused = None  # the fused engine's flat tree, built once, by fused_tree()

    def fused_tree(self):
        """The public tree flattened for the fused engine (:mod:`.fused`), built once, after
        the problem (whose orbit layout it follows)."""
        if self._fused is None:
            from .fused import FusedTree

            self.problem()
            self._fused = FusedTree(self)
        return self._fused

    def terminal_rake(self) -> np.ndarray:
        """Chips raked at each terminal: none here (:meth:`.postflop.PostflopGame.terminal_rake`)."""
        return np.zeros(self.tree.n_terminals)

    def digest(self) -> str:
        """sha256 of what fixes the payoffs and the sequence layout: the tree's arrays
        (:func:`tree_arrays`), its boards and each terminal's, both players' hands and weights,
        the rake at each terminal, the folding ranges of a bunched postflop spot.
        Checkpoints identify the game by it, building no treeplex (the fused engine never does)."""
        import hashlib

        h = hashlib.sha256()
        tb = getattr(self.tree, "term_board", None)
        for a in (*self._arrays.values(), self._boards(), *([] if tb is None else [tb]), *self.hands, *self.weight,
                  self.terminal_rake(), *getattr(self, "folded", ())):
            a = np.ascontiguousarray(a)
            h.update(f"{a.dtype.str}{a.shape}".encode())
            h.update(a.tobytes())
        return h.hexdigest()

    def _boards(self) -> np.ndarray:
        """int32[boards, 5]: each board's cards, -1 padded."""
        out = np.full((len(self.tree.boards), 5), -1, dtype=np.int32)
        for b, cards in enumerate(self.tree.boards):
            out[b, :len(cards)] = cards
        return out


def tree_arrays(tree) -> dict:
    """The tree's decision nodes and terminals as arrays: ``actor``, ``k`` (actions), p's last
    (node, action) before each node (``last_node``/``last_act`` [n, 2], -1: none) and
    terminal (``term_last_*``), ``kinds`` (0 fold, 1 showdown), ``payoff0``, ``stake``,
    ``chance``. A :class:`~.public_tree.PublicTree` keeps them; a tree of lists (the river's
    :class:`~.betting.BettingTree`) is converted."""
    if hasattr(tree, "last_node"):
        return {"actor": tree.actor, "k": tree.n_actions, "last_node": tree.last_node, "last_act": tree.last_act,
                "term_last_node": tree.term_last_node, "term_last_act": tree.term_last_act, "kinds": tree.kinds,
                "payoff0": tree.payoff0, "stake": tree.stake, "chance": np.asarray(tree.chance, dtype=np.float64)}

    def last(rows):
        pairs = np.array([[(-1, -1) if x is None else x for x in r] for r in rows], dtype=np.int64).reshape(-1, 2, 2)
        return pairs[:, :, 0], pairs[:, :, 1]

    ln, la = last(tree.node_last)
    tn, ta = last(tree.last)
    return {"actor": np.array(tree.actor, dtype=np.int64),
            "k": np.array([len(a) for a in tree.actions], dtype=np.int64),
            "last_node": ln, "last_act": la, "term_last_node": tn, "term_last_act": ta,
            "kinds": np.array([0 if k == "fold" else 1 for k in tree.kind], dtype=np.int8),
            "payoff0": np.array(tree.payoff0, dtype=np.float64), "stake": np.array(tree.stake, dtype=np.float64),
            "chance": np.array(tree.chance, dtype=np.float64)}


class LazyKeys(Sequence):
    """Infoset keys ``"AsKd:history"`` made on demand (a flop tree has tens of millions).

    Node ``nodes[i]`` owns infosets ``offsets[i]:offsets[i+1]``; its infoset j is hand
    ``members[i][j]`` (the hand's index, or with ``members`` None simply j)."""

    def __init__(self, game: HandsGame, p: int, nodes: list[int], counts=None, members=None):
        self.game, self.p, self.nodes, self.members = game, p, nodes, members
        counts = [len(game.hands[p])] * len(nodes) if counts is None else counts
        self.offsets = np.concatenate(([0], np.cumsum(counts, dtype=np.int64)))

    def __len__(self):
        return int(self.offsets[-1])

    def _locate(self, j):
        if not -len(self) <= j < len(self):
            raise IndexError(j)
        j %= len(self)
        i = int(np.searchsorted(self.offsets, j, side="right")) - 1
        return i, int(j - self.offsets[i])

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self[i] for i in range(*j.indices(len(self)))]
        i, local = self._locate(j)
        h = local if self.members is None else int(self.members[i][local])
        return f"{hand_name(self.game.hands[self.p][h])}:{self.game.tree.history[self.nodes[i]]}"


class LazyLabels(LazyKeys):
    """Action labels of each infoset: its node's actions."""

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self[i] for i in range(*j.indices(len(self)))]
        return self.game.tree.actions[self.nodes[self._locate(j)[0]]]


def frequency_table(title: str, nodes: list[dict]) -> str:
    """The summary of a public-tree game: ``title``, then one line per node of a
    ``strategy_dict``'s ``nodes`` (history, player, reach, range-weighted action frequencies)."""
    lines = [title, "node (history)                          player  reach   frequencies"]
    for nd in nodes:
        acts = ("  ".join(f"{a} {100 * f:5.1f}%" for a, f in zip(nd["actions"], nd["frequencies"]))
                if nd["reach"] > 0 else "(never reached)")
        lines.append(f"{(nd['history'] or '<root>'):40s} {nd['player']:>4d}  {100 * nd['reach']:5.1f}%  {acts}")
    return "\n".join(lines)
