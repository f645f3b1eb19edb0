"""The resolve gadget as a payoff operator (Burch, Johanson & Bowling 2014; Brown & Sandholm
2017, Reach subgame solving): the chooser enters the subgame with every hand, and before each
of its top infosets g it may instead take a fixed value ``alt[g]`` (its bound). A solution holds
every top infoset's best-response value of "enter" to at most its alt, up to the solve's gap.
"""

from __future__ import annotations

import numpy as np

from ..core.treeplex import Treeplex
from .problem import PayoffOperator


def gadget_treeplex(start: np.ndarray, end: np.ndarray, parent: np.ndarray, G: int) -> Treeplex:
    """The chooser's treeplex for :class:`GadgetPayoff`: G gadget infosets (alt, enter) =
    sequences (1 + 2g, 2 + 2g) first, then the inner infosets ``start``/``end`` (sequences
    s >= 1 of the inner layout, moved to s + 2G); an inner ``parent`` -1 - g is gadget g's enter,
    0 the empty sequence."""
    parent = np.asarray(parent, np.int64)
    g = np.arange(G)
    return Treeplex(np.concatenate((1 + 2 * g, np.asarray(start) + 2 * G)),
                    np.concatenate((3 + 2 * g, np.asarray(end) + 2 * G)),
                    np.concatenate((np.zeros(G, np.int64), np.where(parent < 0, -2 * parent,
                                                                        np.where(parent > 0, parent + 2 * G, 0)))))


class GadgetPayoff(PayoffOperator):
    """``inner`` with 2G sequences put first on the ``chooser``'s side: gadget g's "alt" is
    sequence 1 + 2g, paying ``alt[g]`` (against the other's empty sequence), its "enter" 2 + 2g
    (no payoff of its own); the inner sequence s >= 1 becomes s + 2G."""

    def __init__(self, inner, chooser: int, alt: np.ndarray):
        self.inner, self.chooser, self.alt = inner, chooser, np.asarray(alt, np.float64)
        self.G = len(self.alt)
        shape = list(inner.shape)
        shape[chooser] += 2 * self.G
        self.shape = tuple(shape)
        self.gradients = 0

    def inner_vector(self, x: np.ndarray) -> np.ndarray:
        """The chooser's vector in ``inner``'s layout (the gadget sequences dropped)."""
        return np.concatenate((x[:1], x[1 + 2 * self.G:]))

    def _product(self, own, v, out):
        G = self.G
        if own == self.chooser:  # the chooser's gradient, given the other's vector
            g = self.inner._product(own, v, None)
            res = np.zeros(self.shape[own])
            res[0], res[1 + 2 * G:] = g[0], g[1:]
            res[1:1 + 2 * G:2] = self.alt * v[0]
        else:
            res = self.inner._product(own, self.inner_vector(v), None)
            res[0] += self.alt @ v[1:1 + 2 * G:2]
        if out is None:
            return res
        out[...] = res
        return out

    @property
    def nnz(self) -> int:
        return self.inner.nnz + self.G

    def max_abs_entry(self) -> float:
        return max(self.inner.max_abs_entry(), float(np.abs(self.alt).max(initial=0.0)))

    def to_sparse(self):
        import scipy.sparse as sp

        A = sp.csr_matrix(self.inner.to_sparse())
        if self.chooser == 1:
            A = A.T.tocsr()
        gad = sp.csr_matrix((self.alt, (2 * np.arange(self.G), np.zeros(self.G, np.int64))),  # rows 1 + 2g
                            shape=(2 * self.G, A.shape[1]))
        out = sp.vstack([A[:1], gad, A[1:]]).tocsr()
        return out if self.chooser == 0 else out.T.tocsr()


def maxmargin_treeplex(start: np.ndarray, end: np.ndarray, parent: np.ndarray, reached: np.ndarray) -> Treeplex:
    """The chooser's treeplex for :class:`MarginPayoff`: one root infoset whose actions are the
    R reached gadgets (sequences 1..R, in the order of ``reached``, gadget indices), then the
    inner infosets (sequence s >= 1 moved to s + R); an inner ``parent`` -1 - g hangs from
    gadget g's root action, or from the empty sequence where g is not reached (no payoff there)."""
    parent = np.asarray(parent, np.int64)
    R = len(reached)
    action = np.zeros(int(-parent.min(initial=0)) + 1, np.int64)
    action[np.asarray(reached, np.int64)] = 1 + np.arange(R)
    return Treeplex(np.concatenate(([1], np.asarray(start) + R)), np.concatenate(([1 + R], np.asarray(end) + R)),
                    np.concatenate(([0], np.where(parent < 0, action[np.maximum(-1 - parent, 0)],
                                                  np.where(parent > 0, parent + R, 0)))))


class MarginPayoff(PayoffOperator):
    """Maxmargin (Moravcik et al. 2016; Brown & Sandholm 2017, "Safe and nested subgame
    solving", §4): the chooser picks one reached gadget g at a root infoset and plays below it;
    its payoff is g's margin against its bound per unit of g's weight, (enter_g - alt_g) / w_g
    in player 0's chips (``w_g`` > 0: chance times the other's reach into g, the units of
    ``alt``). The other player minimizes the largest normalized excess over the bounds, i.e.
    maximizes the smallest margin alt_g - enter_g (for chooser 1 the signs turn with its sense).
    ``owner[s]``: the gadget of the chooser's inner sequence s (-1 for the empty sequence)."""

    def __init__(self, inner, chooser: int, alt: np.ndarray, w: np.ndarray, owner: np.ndarray, reached: np.ndarray):
        self.inner, self.chooser = inner, chooser
        self.reached = np.asarray(reached, np.int64)
        self.w = w = np.asarray(w, np.float64)
        self.R = len(self.reached)
        self.root = -np.asarray(alt, np.float64)[self.reached] / w[self.reached]  # each root action's own payoff
        inv = np.where(w > 0, 1.0 / np.where(w > 0, w, 1.0), 1.0)
        self.scale = np.where(np.asarray(owner) >= 0, inv[np.maximum(owner, 0)], 1.0)  # per inner chooser sequence
        shape = list(inner.shape)
        shape[chooser] += self.R
        self.shape = tuple(shape)
        self.gradients = 0

    def inner_vector(self, x: np.ndarray) -> np.ndarray:
        """The chooser's vector in ``inner``'s layout (the root actions dropped)."""
        return np.concatenate((x[:1], x[1 + self.R:]))

    def _product(self, own, v, out):
        R = self.R
        if own == self.chooser:
            g = self.inner._product(own, v, None) * self.scale
            res = np.zeros(self.shape[own])
            res[0], res[1 + R:] = g[0], g[1:]
            res[1:1 + R] = self.root * v[0]
        else:
            res = self.inner._product(own, self.inner_vector(v) * self.scale, None)
            res[0] += self.root @ v[1:1 + R]
        if out is None:
            return res
        out[...] = res
        return out

    @property
    def nnz(self) -> int:
        return self.inner.nnz + self.R

    def max_abs_entry(self) -> float:
        return max(self.inner.max_abs_entry() * float(self.scale.max(initial=1.0)),
                   float(np.abs(self.root).max(initial=0.0)))

    def to_sparse(self):
        import scipy.sparse as sp

        A = sp.csr_matrix(self.inner.to_sparse())
        if self.chooser == 1:
            A = A.T.tocsr()
        A = sp.diags(self.scale) @ A
        root = sp.csr_matrix((self.root, (np.arange(self.R), np.zeros(self.R, np.int64))), shape=(self.R, A.shape[1]))
        out = sp.vstack([A[:1], root, A[1:]]).tocsr()
        return out if self.chooser == 0 else out.T.tocsr()
