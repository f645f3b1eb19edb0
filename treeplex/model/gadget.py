"""The resolve gadget as a payoff operator (Burch, Johanson & Bowling 2014; Brown & Sandholm
2017, Reach subgame solving): the chooser enters the subgame with every hand, and before each
of its top infosets g it may instead take a fixed value ``alt[g]`` (its bound). A solution holds
every top infoset's best-response value of "enter" to at most its alt, up to the solve's gap.
And the Maxmargin gadget (Moravcik et al. 2016; Brown & Sandholm 2017, §4), where the other
player raises the smallest margin alt - enter per unit of the infoset's weight instead.
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


class PrefixedPayoff(PayoffOperator):
    """``inner`` with E sequences put first on the ``chooser``'s side (after its empty
    sequence), sequence 1 + e paying ``const[e]`` against the other's empty sequence; the inner
    sequence s >= 1 becomes s + E, its entries times ``scale[s]`` (None: 1). The resolve and
    Maxmargin gadgets are two cases."""

    def __init__(self, inner, chooser: int, const: np.ndarray, scale: np.ndarray | None = None):
        self.inner, self.chooser = inner, chooser
        self.const = np.asarray(const, np.float64)
        self.E = len(self.const)
        self.scale = None if scale is None else np.asarray(scale, np.float64)
        shape = list(inner.shape)
        shape[chooser] += self.E
        self.shape = tuple(shape)
        self.gradients = 0

    def inner_vector(self, x: np.ndarray) -> np.ndarray:
        """The chooser's vector in ``inner``'s layout (the prefixed sequences dropped)."""
        return np.concatenate((x[:1], x[1 + self.E:]))

    def _product(self, own, v, out):
        E, sc = self.E, (1.0 if self.scale is None else self.scale)
        if own == self.chooser:  # the chooser's gradient, given the other's vector
            g = self.inner._product(own, v, None) * sc
            res = np.zeros(self.shape[own])
            res[0], res[1 + E:] = g[0], g[1:]
            res[1:1 + E] = self.const * v[0]
        else:
            res = self.inner._product(own, self.inner_vector(v) * sc, None)
            res[0] += self.const @ v[1:1 + E]
        if out is None:
            return res
        out[...] = res
        return out

    @property
    def nnz(self) -> int:
        return self.inner.nnz + int(np.count_nonzero(self.const))

    def max_abs_entry(self) -> float:
        sc = 1.0 if self.scale is None else float(np.abs(self.scale).max(initial=1.0))
        return max(self.inner.max_abs_entry() * sc, float(np.abs(self.const).max(initial=0.0)))

    def to_sparse(self):
        import scipy.sparse as sp

        A = sp.csr_matrix(self.inner.to_sparse())
        if self.chooser == 1:
            A = A.T.tocsr()
        if self.scale is not None:
            A = (sp.diags(self.scale) @ A).tocsr()
        pre = sp.csr_matrix((self.const, (np.arange(self.E), np.zeros(self.E, np.int64))), shape=(self.E, A.shape[1]))
        out = sp.vstack([A[:1], pre, A[1:]]).tocsr()
        return out if self.chooser == 0 else out.T.tocsr()


class GadgetPayoff(PrefixedPayoff):
    """The resolve gadget: 2G sequences first on the ``chooser``'s side, gadget g's "alt"
    sequence 1 + 2g paying ``alt[g]`` (against the other's empty sequence), its "enter" 2 + 2g
    (no payoff of its own); the inner sequence s >= 1 becomes s + 2G."""

    def __init__(self, inner, chooser: int, alt: np.ndarray):
        self.alt = np.asarray(alt, np.float64)
        self.G = len(self.alt)
        const = np.zeros(2 * self.G)
        const[0::2] = self.alt
        super().__init__(inner, chooser, const)


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


class MarginPayoff(PrefixedPayoff):
    """Maxmargin (Moravcik et al. 2016; Brown & Sandholm 2017, "Safe and nested subgame
    solving", §4): the chooser picks one reached gadget g at a root infoset and plays below it;
    its payoff is g's margin against its bound per unit of g's weight, (enter_g - alt_g) / w_g
    in player 0's chips (``w_g`` > 0: chance times the other's reach into g, the units of
    ``alt``). The other player minimizes the largest normalized excess over the bounds, i.e.
    maximizes the smallest margin alt_g - enter_g (for chooser 1 the signs turn with its sense).
    ``owner[s]``: the gadget of the chooser's inner sequence s (-1 for the empty sequence);
    the root's actions are the R ``reached`` gadgets, sequences 1..R."""

    def __init__(self, inner, chooser: int, alt: np.ndarray, w: np.ndarray, owner: np.ndarray, reached: np.ndarray):
        self.reached = np.asarray(reached, np.int64)
        self.w = w = np.asarray(w, np.float64)
        inv = np.where(w > 0, 1.0 / np.where(w > 0, w, 1.0), 1.0)
        super().__init__(inner, chooser, -np.asarray(alt, np.float64)[self.reached] / w[self.reached],
                         np.where(np.asarray(owner) >= 0, inv[np.maximum(owner, 0)], 1.0))
