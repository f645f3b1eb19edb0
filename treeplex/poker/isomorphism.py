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
    """Orbit layout of a :class:`~.postflop.PostflopGame`'s representative tree, per player:
    ``red_of[p]`` maps every full sequence (``base_v + h * k_v + a``) to its orbit sequence."""

    def __init__(self, game):
        tree = game.tree
        self.game = game
        self.red_of, self.n_red, self.rbase, self.orbits = [], [], [], []
        cache = {}
        for p in (0, 1):
            n = len(game.hands[p])
            red_of = np.zeros(game.n_seqs(p), dtype=np.int64)
            rbase, orbits, nxt = {}, {}, 1
            for v in tree.nodes_of(p):
                stab = tuple(tree.stabilizer(tree.board[v]))
                if (p, stab) not in cache:
                    cache[p, stab] = hand_orbits(game.hands[p], list(stab))
                orb = orbits[v] = cache[p, stab]
                k = len(tree.actions[v])
                rbase[v] = nxt
                full = game.bases[p][v] + np.arange(n)[:, None] * k + np.arange(k)[None, :]
                red_of[full] = nxt + orb[:, None] * k + np.arange(k)[None, :]
                nxt += (int(orb.max()) + 1) * k if n else 0
            self.red_of.append(red_of)
            self.n_red.append(nxt)
            self.rbase.append(rbase)
            self.orbits.append(orbits)

    def treeplex(self, p: int) -> Treeplex:
        """The orbit treeplex: infoset (v, orbit o) with the parent of any member hand."""
        tree, game = self.game.tree, self.game
        nodes = tree.nodes_of(p)
        starts, parents, sizes, members = [], [], [], []
        first_of = {}
        for v in nodes:
            orb, k = self.orbits[p][v], len(tree.actions[v])
            key = id(orb)
            if key not in first_of:  # a member hand of each orbit, in orbit order (shared per stabilizer)
                first_of[key] = np.unique(orb, return_index=True)[1]
            first = first_of[key]
            members.append(first)
            starts.append(self.rbase[p][v] + np.arange(len(first)) * k)
            sizes.append(np.full(len(first), k))
            last = tree.node_last[v][p]
            if last is None:
                parents.append(np.zeros(len(first), dtype=np.int64))
            else:
                u, a = last
                parents.append(self.red_of[p][game.bases[p][u] + first * len(tree.actions[u]) + a])
        start = np.concatenate(starts)
        counts = [len(m) for m in members]
        return Treeplex(start, start + np.concatenate(sizes), np.concatenate(parents),
                        LazyKeys(game, p, nodes, counts, members), LazyLabels(game, p, nodes, counts, members))

    def expand(self, p: int, plan: np.ndarray) -> np.ndarray:
        """E x: an orbit plan of player p on every hand of the representative tree."""
        return _gather(plan, self.red_of[p])


class SymmetricPayoff(PayoffOperator):
    """A_red = E0^T M E1 (module docstring); ``inner`` is M, the representative tree's operator."""

    def __init__(self, inner: PayoffOperator, reduction: Reduction):
        self.inner, self.red = inner, reduction
        self.shape = (reduction.n_red[0], reduction.n_red[1])
        self.gradients = 0

    def _matvec(self, y):
        return _scatter_add(self.inner.matvec(_gather(np.asarray(y, np.float64), self.red.red_of[1]), count=False),
                            self.red.red_of[0], self.shape[0])

    def _rmatvec(self, x):
        return _scatter_add(self.inner.rmatvec(_gather(np.asarray(x, np.float64), self.red.red_of[0]), count=False),
                            self.red.red_of[1], self.shape[1])

    def max_abs_entry(self) -> float:
        """Upper bound: an orbit pair sums at most |G|^2 entries of M."""
        return self.inner.max_abs_entry() * len(self.red.game.tree.symmetries) ** 2

    @property
    def nnz(self) -> int:
        return self.inner.nnz

    @property
    def nbytes(self) -> int:
        return self.inner.nbytes + sum(r.nbytes for r in self.red.red_of)

    def to_sparse(self):
        import scipy.sparse as sp

        E = [sp.csr_matrix((np.ones(len(r)), (np.arange(len(r)), r)), shape=(len(r), n))
             for r, n in zip(self.red.red_of, self.shape)]
        return (E[0].T @ self.inner.to_sparse() @ E[1]).tocsr()

    def on_device(self, xp):
        """Products on ``xp`` arrays as prefix sums per board (:mod:`treeplex.poker.device_operator`)."""
        from .device_operator import PokerArrayOperator, supports

        return PokerArrayOperator(self, xp) if supports(self) else None


@nb.njit(cache=True)
def _gather(v, idx):
    out = np.empty(len(idx))
    for i in range(len(idx)):
        out[i] = v[idx[i]]
    return out


@nb.njit(cache=True)
def _scatter_add(v, idx, n):
    out = np.zeros(n)
    for i in range(len(idx)):
        out[idx[i]] += v[i]
    return out
