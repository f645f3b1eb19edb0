"""Cut a postflop spot at its first deal: a trunk (the starting street's betting) and parts
(the chance subtrees below the first dealt card, grouped by that card), each with its own
piece of both treeplexes and of the payoff operator (:mod:`treeplex.scale.split` solves on them).

Ownership. A decision node below the deal belongs to the part of its first dealt card; so
does a terminal below the deal whose players' last actions are in that part. Terminals on
the starting street, and the all-in runouts (dealt with no betting, so their last actions
are in the trunk), belong to the trunk.

*Roots* are a part's decision nodes whose actor's last action is outside the part: the
first nodes of each player below the deal. In the trunk, each root of player p is a *stub*:
an infoset of one action per hand, in the root's place in the tree order, standing for the
part's infoset there. Its one sequence carries the value that the part sends up and passes
it on to its parent unchanged (b = 1), and its plan is the parent's plan, which the part
needs: so every sum the trunk makes is the single-process solve's, in the same order.

A *piece* lays out, for player p, in a local numbering:

- local 0: the empty sequence;
- a part's *boundary*: one entry per (root, hand), root i hand h at ``1 + i * n_hands + h``,
  the parent of the part's infoset there (its stub in the trunk); a boundary vector has
  ``n_hands x roots`` entries;
- then the piece's own sequences, node by node in the tree's order, hand h of node v at
  ``base'_v + h * k_v + a`` as in :mod:`.hands_game` (a stub: k_v = 1).

The piece's operator is :class:`.streets_operator.StreetsPayoff` on its terminals with
these local bases: ``A_piece @ y_local`` is its terminals' share of ``A @ y``, summed in the
same group order as the whole spot's operator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..core.treeplex import Treeplex
from .cards import HAND_CARDS
from .streets_operator import StreetsPayoff


@dataclass
class Side:
    """One player's local layout in a piece (see the module docstring)."""

    roots: np.ndarray  # int64[n_roots]: the part's root nodes (global ids), boundary entries in this order
    start: np.ndarray  # int32[n_infosets]: local first sequence of each infoset
    end: np.ndarray
    parent: np.ndarray  # local parent sequence (0, a boundary entry or an own sequence)
    glob: np.ndarray  # int64[n_own]: global sequence of own sequence 1 + nB + i (-1: a stub)
    n_hands: int
    local: dict  # own decision node -> its local base

    @property
    def n_boundary(self) -> int:
        return len(self.roots) * self.n_hands

    @property
    def n_seqs(self) -> int:
        return 1 + self.n_boundary + len(self.glob)

    def parts(self, n: int) -> tuple:
        """(lo, hi, size, ptr) of the regret kernels: the infosets cut into at most ``n`` parts
        of whole subtrees below the roots (:func:`~treeplex.backends.numba_regret.runs` of the
        layout shifted down by nB, the roots' parents becoming the empty sequence)."""
        from ..backends.numba_regret import runs

        nb = self.n_boundary
        shifted = Treeplex(self.start - nb, self.end - nb, np.where(self.parent <= nb, 0, self.parent - nb))
        return runs(shifted, n)

    def treeplex(self) -> Treeplex:
        """The layout as a :class:`Treeplex` (the trunk: no boundary)."""
        assert self.n_boundary == 0
        return Treeplex(self.start, self.end, self.parent)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.roots, self.start, self.end, self.parent, self.glob))


def check_splittable(game) -> None:
    if len(game.board) == 5:
        raise InputError("split: a river spot has no card to deal; split flop or turn spots")
    if len(game.symmetries) > 1:
        raise InputError("split: give the spot with isomorphism false (parts are cut by dealt card)")
    if getattr(game, "bunching", None) is not None:
        raise InputError("split: a bunched spot runs on its whole sequence form (the parts' operators take products "
                         "of two ranges); solve it with treeplex solve")


def owners(game, parts: int) -> tuple[np.ndarray, np.ndarray]:
    """(part of each decision node, part of each terminal), -1 for the trunk (module
    docstring); the dealt cards are cut into ``parts`` runs of about equal sequence counts."""
    check_splittable(game)
    t, n0 = game.tree, len(game.board)
    card_of_board = np.array([b[n0] if len(b) > n0 else -1 for b in t.boards])
    node_card = card_of_board[np.array(t.board, dtype=np.int64)]
    work = np.zeros(52)
    dealt = node_card >= 0
    np.add.at(work, node_card[dealt], (t.n_actions * np.asarray(game.n_hands)[t.actor])[dealt])
    cards = np.flatnonzero(work)
    if parts > len(cards):
        raise InputError(f"split: {parts} parts but only {len(cards)} dealt cards with betting below them to share")
    cum = np.cumsum(work[cards])
    part_of_card = np.full(53, -1)  # index -1 (no dealt card): the trunk
    part_of_card[cards] = np.minimum(((cum - work[cards]) * parts) // cum[-1], parts - 1)
    node_part = part_of_card[node_card]
    term_part = part_of_card[card_of_board[np.array(t.term_board, dtype=np.int64)]]
    last = t.term_last_node
    apart = ((last < 0) | (node_part[np.maximum(last, 0)] != term_part[:, None])).any(axis=1)
    term_part[(term_part >= 0) & apart] = -1  # an all-in runout
    return node_part, term_part


def roots(game, p: int, node_part: np.ndarray) -> list[int]:
    """Player p's nodes below the deal whose p's last action is in the trunk (or none)."""
    t = game.tree
    return [v for v in t.nodes_of(p) if node_part[v] >= 0
            and (t.node_last[v][p] is None or node_part[t.node_last[v][p][0]] != node_part[v])]


def side(game, p: int, mine: list[int], tops: list[int], stubs=frozenset()) -> Side:
    """Player p's layout of the piece whose p's nodes are ``mine`` (tree order), of which
    ``tops`` are a part's roots (boundary entries for parents) and ``stubs`` the trunk's stubs."""
    t, base, n = game.tree, game.bases[p], game.n_hands[p]
    top_index = {v: i for i, v in enumerate(tops)}
    k = np.array([1 if v in stubs else len(t.actions[v]) for v in mine], dtype=np.int64)
    local = dict(zip(mine, 1 + len(tops) * n + np.concatenate(([0], np.cumsum(n * k)[:-1])).astype(np.int64)))
    hands = np.arange(n)
    starts, parents, glob = [], [], []
    for v, kv in zip(mine, k):
        starts.append(local[v] + hands * kv)
        if v in top_index:
            parents.append(1 + top_index[v] * n + hands)
        else:
            b, stride = where(game, p, t.node_last[v][p], local)
            parents.append(b + hands * stride)
        glob.append(np.full(n, -1) if v in stubs else base[v] + np.arange(n * kv))
    cat = (lambda a: np.concatenate(a) if a else np.zeros(0, np.int64))
    start = cat(starts)
    return Side(np.array(tops, dtype=np.int64), start.astype(np.int32), (start + np.repeat(k, n)).astype(np.int32),
                cat(parents).astype(np.int32), cat(glob).astype(np.int64), n, local)


def where(game, p, last, local) -> tuple[int, int]:
    """(local base, stride) of p's sequence ``last`` = (node, action) or None (the empty
    sequence): hand h's is ``base + h * stride``."""
    if last is None:
        return 0, 0
    u, a = last
    return local[u] + a, len(game.tree.actions[u])


@dataclass
class Piece:
    """Both players' :class:`Side` and the piece's :class:`StreetsPayoff`."""

    sides: tuple[Side, Side]
    A: StreetsPayoff

    @property
    def nbytes(self) -> int:
        return self.sides[0].nbytes + self.sides[1].nbytes + self.A.nbytes


def piece(game, part: int, parts: int) -> Piece:
    """The trunk (``part`` = -1, with a stub for every root) or part ``part`` of ``parts``
    of ``game`` (a PostflopGame with isomorphism off), with its operator."""
    t = game.tree
    node_part, term_part = owners(game, parts)
    inside = node_part == part
    terms = np.flatnonzero(term_part == part)
    sides = []
    for p in (0, 1):
        top = roots(game, p, node_part)
        stubs = frozenset(top) if part == -1 else frozenset()
        sides.append(side(game, p, [v for v in t.nodes_of(p) if inside[v] or v in stubs],
                          [] if part == -1 else [v for v in top if inside[v]], stubs))
    kind, value, _, _ = game.terminal_arrays()
    lb, ls = ([np.array([where(game, p, t.last[i][p], sides[p].local)[j] for i in terms], dtype=np.int64)
               for p in (0, 1)] for j in (0, 1))
    tb = np.array(t.term_board, dtype=np.int64)[terms]
    used = np.unique(tb)
    A = StreetsPayoff((sides[0].n_seqs, sides[1].n_seqs), [HAND_CARDS[h] for h in game.hands], game.weight,
                      game._boards()[used], game._river_orders([t.boards[b] for b in used]), kind[terms],
                      value[terms], np.searchsorted(used, tb), lb, ls)
    return Piece(tuple(sides), A)


def part_sizes(game, parts: int) -> list[tuple[int, int]]:
    """(sequences of player 0, of player 1) of each part, boundary included, from the public
    tree alone (nothing allocated): what the memory check of a split solve counts."""
    t = game.tree
    node_part, _ = owners(game, parts)
    out = []
    for k in range(parts):
        sizes = []
        for p in (0, 1):
            top = sum(1 for v in roots(game, p, node_part) if node_part[v] == k)
            own = sum(len(t.actions[v]) for v in t.nodes_of(p) if node_part[v] == k)
            sizes.append(1 + game.n_hands[p] * (top + own))
        out.append(tuple(sizes))
    return out
