"""Locked infosets (node locking): behavioral probabilities fixed at some infosets of a treeplex.

A lock fixes b[s] = p_s for every sequence s of a locked infoset j (sum_{s in j} p_s = 1).
The plans that respect it,

    Q^lock = { q in Q : q_s = p_s q_{parent(j)} for every sequence s of every locked j },

are the lower-bounded treeplex Q^l of :mod:`.perturbed` with l = p at locked infosets
(L_j = 1: the bounds leave no freedom) and l = 0 elsewhere. So its best response is
:class:`~.perturbed.PerturbedTreeplex`'s (the lock's mixture at locked infosets, the max
elsewhere), and its exact LP adds the rows q_s - p_s q_{parent(j)} = 0
(:func:`treeplex.model.lp.constraint_matrix`). Regret minimizers respect it by playing p at
locked infosets with their regrets frozen at 0 (:func:`apply_locks`, run by the backend
between the regret pass and the plan pass).

**Weighted locks** (``hands: "KK:0.5"``): a hand locked with weight w in (0, 1) plays the
lock on a share w of its combos' probability and is free on the rest, b = w p + (1 - w) sigma
with sigma any mixture: the lower bounds l = w p (L_j = w < 1), Q^l itself. Its best response
is the same :class:`~.perturbed.PerturbedTreeplex` one; its LP adds the rows
q_s - w p_s q_{parent(j)} >= 0 (:func:`treeplex.refine.lp.solve_lp_perturbed`); regret
minimizers play b = l + (1 - L) RM(R) with the regrets of the free part (the lower-bounded
regret matching of Farina, Kroer & Sandholm 2017, :mod:`treeplex.backends.numba_regret`),
passed to them as the solver's lower bounds (:func:`partial_lower`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba as nb
import numpy as np


@dataclass
class Locks:
    """One player's locks on a treeplex of ``n_seqs`` sequences: ``seqs`` (int64, increasing)
    are all the sequences of the fully locked infosets, ``probs`` their locked probabilities;
    ``partial`` (float64[n_seqs] or None) the lower bounds w p of the weighted locks (w < 1)."""

    seqs: np.ndarray
    probs: np.ndarray
    n_seqs: int
    partial: np.ndarray | None = None
    _lower: np.ndarray | None = field(default=None, repr=False)

    @property
    def lower(self) -> np.ndarray:
        """float64[n_seqs]: p at locked sequences, w p at weighted ones, 0 elsewhere (the l of
        Q^l), made once."""
        if self._lower is None:
            self._lower = np.zeros(self.n_seqs) if self.partial is None else self.partial.copy()
            self._lower[self.seqs] = self.probs
        return self._lower

    def behavioral(self, b: np.ndarray) -> np.ndarray:
        """``b`` with the fully locked sequences set to the lock (in place; returned)."""
        b[self.seqs] = self.probs
        return b


def lower_bounds(problem) -> tuple[np.ndarray, np.ndarray]:
    """(l_X, l_Y) of ``problem.locks`` (zeros for a player without locks)."""
    return tuple(np.zeros(T.n_seqs) if lk is None else lk.lower for T, lk in zip(problem.treeplexes, problem.locks))


def partial_lower(problem) -> tuple | None:
    """(l_X, l_Y) of the weighted locks of ``problem.locks`` for a regret solver's lower
    bounds (zeros at fully locked infosets: the kernel plays those itself), or None."""
    if problem.locks is None or all(lk is None or lk.partial is None for lk in problem.locks):
        return None
    return tuple(np.zeros(T.n_seqs) if lk is None or lk.partial is None else lk.partial
                 for T, lk in zip(problem.treeplexes, problem.locks))


def by_part(locks: Locks | None, T, parts) -> tuple | None:
    """The kernel's form of ``locks`` for the backend's ``parts`` = (lo, hi, size, ptr) (runs
    of infosets per thread, :func:`treeplex.backends.numba_regret.runs`): (seqs, probs, ptr)
    with part k's locked sequences at ptr[k]:ptr[k+1]; None without locks."""
    if locks is None:
        return None
    lo, hi, _, ptr = parts
    part = np.zeros(T.n_infosets, dtype=np.int64)
    for k in range(len(ptr) - 1):
        for q in range(ptr[k], ptr[k + 1]):
            part[lo[q]:hi[q]] = k
    owner = part[T.seq_infoset[locks.seqs]]
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=len(ptr) - 1)
    return (locks.seqs[order].astype(np.int64), locks.probs[order].astype(np.float64),
            np.concatenate(([0], np.cumsum(counts))).astype(np.int64))


@nb.njit(cache=True)
def apply_locks(i0, i1, seqs, probs, b, R):
    """b[s] <- the lock and R[s] <- 0 at the locked sequences seqs[i0:i1]."""
    for i in range(i0, i1):
        s = seqs[i]
        b[s] = probs[i]
        R[s] = 0.0
