"""Suit isomorphism, exact: the game restricted to strategies that the suit symmetries fix.

Let G be the suit permutations that fix the starting board, the deck and both ranges
(:func:`.public_tree.card_symmetries`). G maps the game to itself, so it has an equilibrium
that G fixes, and restricted to G-invariant strategies the game keeps its value; for a
G-invariant opponent, a best response may be taken G-invariant too (average one over G), so
gaps are the same as well.

An invariant strategy is given by one public node per orbit (the public tree deals one card
per orbit: :func:`.public_tree.build_public_tree`) and, at node v, one infoset per orbit of
hands under Stab(v), the symmetries fixing the cards dealt so far. Stabilizers only shrink
down the tree, so a hand orbit at v lies in one orbit at each earlier node: these "orbit
infosets" form a treeplex. With E the expansion of an orbit plan to every hand of the
representative nodes (x_full[v, h, a] = x[v, orbit(h), a]) and M the payoff operator of the
representative tree with each terminal weighted by its orbit size (its chance weight
already is), the restricted payoff matrix is

    A_red = E0^T M E1     (sum over the members of both orbits),

so ``A_red y = E0^T (M (E1 y))``: one gather before and one scatter-add after the usual
products. A test solves spots with isomorphism on and off and gets the same values.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..model.problem import PayoffOperator
from ..core.treeplex import Treeplex
from .cards import HAND_CARDS, HAND_INDEX
from .hands_game import LazyKeys, LazyLabels
from .public_tree import permute_card


def hand_orbits(hands: np.ndarray, perms: list[tuple[int, ...]]) -> np.ndarray:
    """orbit id (0, 1, ... in order of first member) of each hand of ``hands`` under ``perms``."""
    pos = {int(h): i for i, h in enumerate(hands)}
    low = np.arange(len(hands))
    for perm in perms:
        c = HAND_CARDS[hands]
        img = HAND_INDEX[[permute_card(int(a), perm) for a in c[:, 0]], [permute_card(int(b), perm) for b in c[:, 1]]]
        low = np.minimum(low, [pos[int(h)] for h in img])  # the ranges are invariant: images are hands
    _, orbit = np.unique(low, return_inverse=True)
    return orbit.astype(np.int64)


class Reduction:
    """Orbit layout of a :class:`~.postflop.PostflopGame`'s representative tree, per player: at
    p's node v, hand h is in orbit ``orbits[p][v][h]`` and orbit o owns ``rbase[p][v] + o * k_v + a``,
    so the full sequence ``base_v + h * k_v + a`` maps to ``rbase_v + orbit(h) * k_v + a``.
    Nodes share their stabilizer's orbits (one set per board; ``class_orbits[p][c]`` those of
    stabilizer class c, ``members[p][0]`` each node's class). The map is computed where it is
    used (:func:`_gather_orbits`, :func:`_scatter_orbits`), never stored per full sequence (an
    int64 per full sequence was 2 GB on FLOP-FAST); :meth:`red_of` materializes it for the
    callers that index it at random."""

    def __init__(self, game):
        tree = game.tree
        self.game = game
        self.n_red, self.rbase, self.orbits, self.members, self.maps, self.class_orbits = [], [], [], [], [], []
        self.widths = []  # per player, int64[stabilizer classes]: the orbits of its hands
        stab_of = {}
        board_class = np.array([stab_of.setdefault(tuple(tree.stabilizer(b)), len(stab_of))
                                for b in range(len(tree.boards))], dtype=np.int64)
        stabs = list(stab_of)
        node_class = board_class[np.asarray(tree.board, dtype=np.int64)]
        k = np.asarray(tree.n_actions, dtype=np.int64)
        for p in (0, 1):
            n = len(game.hands[p])
            orbs = [hand_orbits(game.hands[p], list(st)) for st in stabs]
            width = np.array([int(o.max()) + 1 if n else 0 for o in orbs], dtype=np.int64)
            mine = tree.actor == p
            size = np.where(mine, width[node_class] * k, 0)
            rbase = np.where(mine, 1 + np.cumsum(size) - size, -1)
            flat = np.concatenate(orbs).astype(np.int64) if orbs else np.zeros(0, np.int64)
            # (nodes, base, rbase, k, node_class, orbit offset per class, orbits, hands, full length)
            self.maps.append((np.flatnonzero(mine), np.asarray(game.bases[p], np.int64), rbase, k, node_class,
                              n * np.arange(len(orbs), dtype=np.int64), flat, n, game.n_seqs(p)))
            self.n_red.append(int(1 + size.sum()))
            self.rbase.append(rbase)
            self.orbits.append([orbs[c] if m else None for c, m in zip(node_class.tolist(), mine.tolist())])
            self.class_orbits.append(orbs)
            self.widths.append(width)
            self.members.append((node_class, [np.unique(o, return_index=True)[1] for o in orbs]))

    def width(self, p: int, v: int) -> int:
        """How many hand orbits p's node v has (its stabilizer class's)."""
        return int(self.widths[p][self.members[p][0][v]])

    def red_of(self, p: int) -> np.ndarray:
        """int64[full sequences of p]: each one's orbit sequence (E_p as an index array)."""
        return _gather_orbits(np.arange(self.n_red[p], dtype=np.float64), *self.maps[p]).astype(np.int64)

    def expand(self, p: int, vec: np.ndarray) -> np.ndarray:
        """E_p vec: an orbit-layout vector on every hand of the representative tree."""
        return _gather_orbits(np.asarray(vec, np.float64), *self.maps[p])

    def reduce(self, p: int, vec: np.ndarray) -> np.ndarray:
        """E_p^T vec: a full-layout vector summed per orbit."""
        return _scatter_orbits(np.asarray(vec, np.float64), *self.maps[p], self.n_red[p], True)

    def pick(self, p: int, vec: np.ndarray) -> np.ndarray:
        """The orbit-layout vector of a full-layout one that is constant on the orbits (E_p's
        left inverse there): each orbit sequence the entry of its last member hand."""
        return _scatter_orbits(np.asarray(vec, np.float64), *self.maps[p], self.n_red[p], False)

    def treeplex(self, p: int) -> Treeplex:
        """The orbit treeplex: infoset (v, orbit o) with the parent of any member hand (the
        orbit's first hand)."""
        tree, game = self.game.tree, self.game
        nodes = tree.nodes_of(p)
        node_class, firsts = self.members[p]
        k = np.asarray(tree.n_actions, dtype=np.int64)
        width = np.array([len(f) for f in firsts], dtype=np.int64)
        counts = width[node_class[nodes]]
        _, _, rbase, _, _, orb_off, flat, _, _ = self.maps[p]
        start, end, parents = _orbit_infosets(nodes, counts, rbase, k, node_class, np.cumsum(width) - width,
                                              np.concatenate(firsts).astype(np.int64), tree.last_node[:, p],
                                              tree.last_act[:, p], orb_off, flat)
        members = [firsts[c] for c in node_class[nodes].tolist()]
        return Treeplex(start, end, parents,
                        LazyKeys(game, p, nodes, counts, members), LazyLabels(game, p, nodes, counts, members))


class SymmetricPayoff(PayoffOperator):
    """A_red = E0^T M E1 (module docstring); ``inner`` is M, the representative tree's operator."""

    def __init__(self, inner: PayoffOperator, reduction: Reduction):
        self.inner, self.red = inner, reduction
        self.shape = (reduction.n_red[0], reduction.n_red[1])
        self.gradients = 0

    def _matvec(self, y):
        return self.red.reduce(0, self.inner.matvec(self.red.expand(1, y), count=False))

    def _rmatvec(self, x):
        return self.red.reduce(1, self.inner.rmatvec(self.red.expand(0, x), count=False))

    def keep_scratch(self, keep: bool) -> None:
        self.inner.keep_scratch(keep)

    def max_abs_entry(self) -> float:
        """Upper bound: an orbit pair sums at most |G|^2 entries of M."""
        return self.inner.max_abs_entry() * len(self.red.game.tree.symmetries) ** 2

    @property
    def nnz(self) -> int:
        return self.inner.nnz

    @property
    def nbytes(self) -> int:
        return self.inner.nbytes

    def to_sparse(self):
        import scipy.sparse as sp

        E = [sp.csr_matrix((np.ones(len(r)), (np.arange(len(r)), r)), shape=(len(r), n))
             for r, n in zip((self.red.red_of(0), self.red.red_of(1)), self.shape)]
        return (E[0].T @ self.inner.to_sparse() @ E[1]).tocsr()

    def on_device(self, xp):
        """Products on ``xp`` arrays as prefix sums per board (:mod:`treeplex.poker.device_operator`)."""
        from .device_operator import PokerArrayOperator, supports

        return PokerArrayOperator(self, xp) if supports(self) else None


@nb.njit(cache=True)
def _gather_orbits(v, nodes, base, rbase, k, node_class, orb_off, orbs, n, n_full):
    """out[base_v + h k_v + a] = v[rbase_v + orbit(h) k_v + a] over p's nodes (and out[0] = v[0]);
    node v's orbits are ``orbs[orb_off[node_class[v]]:][:n]``."""
    out = np.empty(n_full)
    out[0] = v[0]
    for v_ in nodes:
        kv, b, r, o = k[v_], base[v_], rbase[v_], orb_off[node_class[v_]]
        for h in range(n):
            row = r + orbs[o + h] * kv
            for a in range(kv):
                out[b + h * kv + a] = v[row + a]
    return out


@nb.njit(cache=True)
def _scatter_orbits(v, nodes, base, rbase, k, node_class, orb_off, orbs, n, n_full, n_red, add):
    """The transpose of :func:`_gather_orbits`: out[rbase_v + orbit(h) k_v + a] += v[base_v + h k_v + a]
    (``add`` False: = instead of +=, the last member hand's entry)."""
    out = np.zeros(n_red)
    out[0] = v[0]
    for v_ in nodes:
        kv, b, r, o = k[v_], base[v_], rbase[v_], orb_off[node_class[v_]]
        for h in range(n):
            row = r + orbs[o + h] * kv
            for a in range(kv):
                out[row + a] = out[row + a] + v[b + h * kv + a] if add else v[b + h * kv + a]
    return out


@nb.njit(cache=True)
def _orbit_infosets(nodes, counts, rbase, k, node_class, class_off, firsts, last_node, last_act, orb_off, orbs):
    """(start, end, parent) of the orbit infosets (v, o), node by node: o owns ``rbase_v + o k_v``
    on, and its parent is the orbit sequence of its first hand's parent sequence."""
    n = 0
    for c in counts:
        n += c
    start = np.empty(n, np.int32)
    end = np.empty(n, np.int32)
    parent = np.empty(n, np.int32)
    i = 0
    for j in range(len(nodes)):
        v = nodes[j]
        kv, u, a, off = k[v], last_node[v], last_act[v], class_off[node_class[v]]
        for o in range(counts[j]):
            start[i] = rbase[v] + o * kv
            end[i] = start[i] + kv
            if u < 0:
                parent[i] = 0
            else:
                parent[i] = rbase[u] + orbs[orb_off[node_class[u]] + firsts[off + o]] * k[u] + a
            i += 1
    return start, end, parent
