"""Cut a postflop spot at its first deal: a trunk (the starting street's betting) and parts
(the chance subtrees below the first dealt card, grouped by that card), each with its own
piece of both treeplexes and of the payoff operator (:mod:`treeplex.split` solves on them).

A *piece* is a set of public decision nodes and terminals. For player p it lays out, in a
local numbering,

- local 0: the empty sequence;
- 1 .. nB: the *boundary*: player p's sequences outside the piece that the piece needs, the
  parents of its infosets and the last sequences of its terminals (an all-in runout ends
  below the deal on a sequence of the trunk). They come as (node, action) pairs, hand by
  hand: pair i, hand h is local ``1 + i * n_hands + h``, so a boundary vector has
  ``n_hands x boundary pairs`` entries;
- then the piece's own sequences, node by node in the tree's order, hand h of node v at
  ``base'_v + h * k_v + a`` as in :mod:`.hands_game`.

The piece's operator is :class:`.streets_operator.StreetsPayoff` on its terminals with
these local bases, so ``A_piece @ y_local`` is the piece's terminals' share of ``A @ y`` on
the local sequences (boundary entries included). The trunk is the piece of the starting
street (it has no boundary); a part, the piece of some dealt cards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..treeplex import Treeplex
from .cards import HAND_CARDS
from .streets_operator import StreetsPayoff


@dataclass
class Side:
    """One player's local layout in a piece (see the module docstring)."""

    pairs: np.ndarray  # int64[n_pairs, 2]: (global base_v + a, k_v) of each boundary pair
    start: np.ndarray  # int32[n_infosets]: local first sequence of each own infoset
    end: np.ndarray
    parent: np.ndarray  # local parent sequence (0, a boundary entry or an own sequence)
    glob: np.ndarray  # int64[n_own]: global sequence of each own sequence (local 1 + nB + i)
    n_hands: int
    local: dict  # own decision node -> its local base
    index: dict  # boundary pair -> its position

    @property
    def n_boundary(self) -> int:
        return len(self.pairs) * self.n_hands

    @property
    def boundary_global(self) -> np.ndarray:
        """Global sequence of boundary entries 1..nB (pair by pair, hand by hand)."""
        h = np.arange(self.n_hands)
        return (self.pairs[:, :1] + self.pairs[:, 1:] * h).ravel()

    @property
    def n_seqs(self) -> int:
        return 1 + self.n_boundary + len(self.glob)

    def runs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lo, hi, ptr) of the regret kernels: runs of infosets with equal action counts, one part."""
        k = self.end - self.start
        cut = np.flatnonzero(np.diff(k) != 0) + 1
        lo = np.concatenate(([0], cut)).astype(np.int32)
        hi = np.concatenate((cut, [len(k)])).astype(np.int32)
        return lo, hi, np.array([0, len(lo)], dtype=np.int64)

    def treeplex(self) -> Treeplex:
        """The layout as a :class:`Treeplex` (a piece without boundary: the trunk)."""
        assert self.n_boundary == 0
        return Treeplex(self.start, self.end, self.parent)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.pairs, self.start, self.end, self.parent, self.glob))


def deal_depth(game) -> int:
    """Board cards at the cut: the starting board plus the first dealt card."""
    if len(game.board) == 5:
        raise InputError("split: a river spot has no card to deal; split flop or turn spots")
    if len(game.symmetries) > 1:
        raise InputError("split: give the spot with isomorphism false (parts are cut by dealt card)")
    return len(game.board) + 1


def node_parts(game, parts: int) -> tuple[np.ndarray, np.ndarray]:
    """(part of each decision node, part of each terminal): -1 for the trunk, else the part of
    the first dealt card; cards are cut into ``parts`` runs of about equal sequence counts."""
    t, n0 = game.tree, len(game.board)
    card_of_board = np.array([b[n0] if len(b) > n0 else -1 for b in t.boards])
    node_card = card_of_board[np.array(t.board, dtype=np.int64)]
    work = np.zeros(52)
    for v in range(t.n_nodes):
        if node_card[v] >= 0:
            work[node_card[v]] += len(t.actions[v]) * game.n_hands[t.actor[v]]
    cards = np.flatnonzero(work)
    if parts > max(1, len(cards)):
        raise InputError(f"split: {parts} parts but only {len(cards)} dealt cards to share")
    cum = np.cumsum(work[cards])
    part_of_card = np.full(52, -1)
    part_of_card[cards] = np.minimum(((cum - work[cards]) * parts) // cum[-1], parts - 1)
    part_of_card = np.append(part_of_card, -1)  # index -1: the trunk
    return (part_of_card[node_card],
            part_of_card[card_of_board[np.array(t.term_board, dtype=np.int64)]])


def side(game, p: int, nodes: list[int], terms: np.ndarray, inside: np.ndarray) -> Side:
    """Player p's layout of the piece of decision ``nodes`` (global ids, tree order) and
    terminals ``terms``; ``inside[v]`` says whether node v belongs to the piece."""
    t, base, n = game.tree, game.bases[p], game.n_hands[p]
    lasts = [t.node_last[v][p] for v in nodes] + [t.last[i][p] for i in terms]
    pairs = sorted({(base[u] + a, len(t.actions[u])) for u, a in (x for x in lasts if x is not None)
                    if not inside[u]})
    pair_index = {pr: i for i, pr in enumerate(pairs)}
    mine = [v for v in nodes if t.actor[v] == p]
    k = np.array([len(t.actions[v]) for v in mine], dtype=np.int64)
    local = dict(zip(mine, 1 + len(pairs) * n + np.concatenate(([0], np.cumsum(n * k)[:-1])).astype(np.int64)))
    hands = np.arange(n)
    starts, parents = [], []
    for v, kv in zip(mine, k):
        starts.append(local[v] + hands * kv)
        b, stride = where(game, p, t.node_last[v][p], inside, local, pair_index)
        parents.append(b + hands * stride)
    start = np.concatenate(starts) if starts else np.zeros(0, np.int64)
    glob = (np.concatenate([base[v] + np.arange(n * kv) for v, kv in zip(mine, k)]) if mine
            else np.zeros(0, np.int64))
    return Side(np.array(pairs, dtype=np.int64).reshape(-1, 2), start.astype(np.int32),
                (start + np.repeat(k, n)).astype(np.int32),
                (np.concatenate(parents) if parents else start).astype(np.int32), glob.astype(np.int64), n,
                local, pair_index)


def where(game, p, last, inside, local, pair_index) -> tuple[int, int]:
    """(local base, stride) of p's sequence ``last`` = (node, action) or None: the empty
    sequence (0, 0), an own node's (base'_v + a, k_v), or a boundary pair's (first entry, 1)."""
    if last is None:
        return 0, 0
    u, a = last
    k = len(game.tree.actions[u])
    if inside[u]:
        return local[u] + a, k
    return 1 + pair_index[(game.bases[p][u] + a, k)] * game.n_hands[p], 1


@dataclass
class Piece:
    """Both players' :class:`Side` and the piece's :class:`StreetsPayoff`."""

    sides: tuple[Side, Side]
    A: StreetsPayoff

    @property
    def nbytes(self) -> int:
        return self.sides[0].nbytes + self.sides[1].nbytes + self.A.nbytes


def piece(game, part: int, parts: int) -> Piece:
    """The trunk (``part`` = -1) or part ``part`` of ``parts`` of ``game`` (a PostflopGame
    with isomorphism off), with its operator."""
    deal_depth(game)
    t = game.tree
    node_part, term_part = node_parts(game, parts)
    inside = node_part == part
    nodes = [v for v in range(t.n_nodes) if inside[v]]
    terms = np.flatnonzero(term_part == part)
    sides = tuple(side(game, p, nodes, terms, inside) for p in (0, 1))
    kind, value, base, stride = game.terminal_arrays()
    lb, ls = [np.zeros(len(terms), np.int64) for _ in (0, 1)], [np.zeros(len(terms), np.int64) for _ in (0, 1)]
    for p, sd in enumerate(sides):
        for i, term in enumerate(terms):
            lb[p][i], ls[p][i] = where(game, p, t.last[term][p], inside, sd.local, sd.index)
    used = np.unique(np.array(t.term_board, dtype=np.int64)[terms]) if len(terms) else np.zeros(0, np.int64)
    boards = game._boards()[used]
    A = StreetsPayoff((sides[0].n_seqs, sides[1].n_seqs), [HAND_CARDS[h] for h in game.hands], game.weight, boards,
                      game._river_orders([t.boards[b] for b in used]), kind[terms], value[terms],
                      np.searchsorted(used, np.array(t.term_board, dtype=np.int64)[terms]), lb, ls)
    return Piece(sides, A)


def part_sizes(game, parts: int) -> list[tuple[int, int]]:
    """(sequences of player 0, of player 1) of each part, boundary included, from the public
    tree alone (nothing allocated): what the memory check of a split solve counts."""
    t = game.tree
    node_part, term_part = node_parts(game, parts)
    out = []
    for k in range(parts):
        inside = node_part == k
        nodes = [v for v in range(t.n_nodes) if inside[v]]
        terms = np.flatnonzero(term_part == k)
        sizes = []
        for p in (0, 1):
            lasts = [t.node_last[v][p] for v in nodes] + [t.last[i][p] for i in terms]
            pairs = {x for x in lasts if x is not None and not inside[x[0]]}
            own = sum(len(t.actions[v]) for v in nodes if t.actor[v] == p)
            sizes.append(1 + game.n_hands[p] * (len(pairs) + own))
        out.append(tuple(sizes))
    return out
