"""Treeplexes (sequence-form strategy polytopes) on flat arrays, and their passes.

A treeplex Q (EGT paper, section 3; Peña's slides, "complexes") is built from simplices:
each information set j owns a contiguous slice ``[start[j], end[j])`` of sequences and has a
parent sequence p_j. A realization plan q satisfies

    q[0] = 1 (the empty sequence),   sum_{s in slice j} q[s] = q[p_j],   q >= 0.

Infosets are numbered in topological order (an infoset's parent sequence belongs to an
earlier infoset), and their slices tile sequences 1..n-1 in that order. Bottom-up passes walk infosets in reverse order,
top-down passes in order. The kernels are numba-compiled loops over these arrays; there is
no Python object per node. Memory: 4 int32 per infoset + 1 int32 per sequence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable

import numpy as np

NUMPY_SEQS = 1 << 16  # treeplexes up to this many sequences run their passes in NumPy (no numba import)
UNREACHED_TOL = 1e-12  # an infoset whose actions carry at most this share of x[0] is unreached


@dataclass
class Treeplex:
    """One player's sequence-form polytope. Sequence 0 is the empty sequence."""

    start: np.ndarray  # int32[n_infosets]: first sequence of the infoset
    end: np.ndarray  # int32[n_infosets]: one past its last sequence
    parent: np.ndarray  # int32[n_infosets]: parent sequence p_j
    infoset_keys: list[Hashable] = field(default_factory=list)
    action_labels: list[tuple[str, ...]] = field(default_factory=list)

    def __post_init__(self):
        self.start = np.ascontiguousarray(self.start, dtype=np.int32)
        self.end = np.ascontiguousarray(self.end, dtype=np.int32)
        self.parent = np.ascontiguousarray(self.parent, dtype=np.int32)
        self.n_seqs = int(self.end[-1]) if len(self.end) else 1
        bounds = np.concatenate(([1], self.end[:-1]))
        if len(self.start) and (np.any(self.start != bounds) or np.any(self.end <= self.start)):
            raise ValueError("treeplex slices must be non-empty and tile sequences 1..n-1 in order")
        if np.any(self.parent >= self.start):
            raise ValueError("infosets must be in topological order (parent sequence first)")
        # infoset that owns each sequence (-1 for the empty sequence)
        self.seq_infoset = np.concatenate(([-1], np.repeat(np.arange(self.n_infosets, dtype=np.int32),
                                                           self.end - self.start))).astype(np.int32)
        self.depth = _depths(self.parent, self.seq_infoset)
        self._levels = None

    @property
    def n_infosets(self) -> int:
        return len(self.start)

    @property
    def seq_parent(self) -> np.ndarray:
        """Parent sequence of every sequence (-1 for the empty one)."""
        return np.concatenate(([-1], np.repeat(self.parent, self.end - self.start))).astype(np.int32)

    @property
    def nbytes(self) -> int:
        return self.start.nbytes + self.end.nbytes + self.parent.nbytes + self.seq_infoset.nbytes

    def seq_label(self, s: int) -> str:
        """Readable name of sequence ``s``: ``infoset_key:action``."""
        if s == 0:
            return "<empty>"
        j = self.seq_infoset[s]
        return f"{self.infoset_keys[j]}:{self.action_labels[j][s - self.start[j]]}"

    # ------------------------------------------------------------- strategies

    def uniform(self) -> np.ndarray:
        """Realization plan of the uniform behavioral strategy."""
        return self.plan_from_behavioral(self.uniform_behavioral())

    def uniform_behavioral(self) -> np.ndarray:
        """The uniform behavioral strategy: 1 / (the infoset's actions) at every sequence."""
        sizes = self.end - self.start
        return np.concatenate(([1.0], np.repeat(1.0 / sizes, sizes)))

    def plan_from_behavioral(self, b: np.ndarray) -> np.ndarray:
        """x[s] = x[p_j] * b[s] top-down; ``b[s]`` is the local probability of sequence s."""
        x = np.asarray(b, dtype=np.float64).copy()
        if self._numba():
            from .treeplex_kernels import plan_from_behavioral

            plan_from_behavioral(self.start, self.end, self.parent, x)
            return x
        x[0] = 1.0
        for js, seqs, sizes, _ in self.levels():
            x[seqs] *= np.repeat(x[self.parent[js]], sizes)
        return x

    def behavioral_from_plan(self, x: np.ndarray, tol: float = UNREACHED_TOL) -> np.ndarray:
        """b[s] = x[s] / m_j, where m_j = sum_{s' in j} x[s'] is the mass infoset j's own actions
        carry (negative entries, solver round-off, count as 0). For a realization plan
        m_j = x[p_j], so this is x[s] / x[p_j]; a solver's plan meets that only within its
        tolerance (an LP plan can give x[p_j] = 7e-8 and all of j's actions 0), and dividing by
        m_j keeps every row a distribution. Infoset j is *unreached*, and plays uniformly, iff
        m_j <= tol * x[0] (x[0] = 1 for a plan): its row then moves any value by at most
        tol * x[0] times the payoff range. Every other infoset keeps exactly its plan's ratios."""
        x = np.maximum(np.asarray(x, np.float64), 0.0)
        sizes = self.end - self.start
        b = np.repeat(1.0 / sizes, sizes)
        if self.n_infosets:  # reduceat sums [start_j, start_{j+1}): slices tile sequences 1..n-1
            mass = np.repeat(np.add.reduceat(x, self.start), sizes)
            reached = mass > tol * x[0]
            b[reached] = x[1:][reached] / mass[reached]
        return np.concatenate(([1.0], b))

    def best_response(self, g: np.ndarray) -> tuple[float, np.ndarray]:
        """max_{x in Q} <g, x>: returns (value, pure realization plan attaining it)."""
        g = np.asarray(g, dtype=np.float64)
        if self._numba():
            from .treeplex_kernels import best_response

            x = np.empty(self.n_seqs)
            return float(best_response(self.start, self.end, self.parent, g, x, np.empty(self.n_infosets, np.int32))), x
        value, choice = self._best_choices(g)
        b = np.zeros(self.n_seqs)
        b[choice] = 1.0
        return value, self.plan_from_behavioral(b)

    def best_response_value(self, g: np.ndarray, sign: float = 1.0) -> float:
        """max_{x in Q} <sign * g, x>, the value of :meth:`best_response` without its plan
        (one scratch array instead of three: gap checks on large games are allocation-bound)."""
        g = np.asarray(g, dtype=np.float64)
        if self._numba():
            from .treeplex_kernels import best_response_value

            return best_response_value(self.start, self.end, self.parent, g, float(sign))
        v = sign * g
        for js, seqs, sizes, offsets in reversed(self.levels()):
            np.add.at(v, self.parent[js], np.maximum.reduceat(v[seqs], offsets))
        return float(v[0])

    def best_response_behavioral(self, g: np.ndarray) -> tuple[float, np.ndarray]:
        """Like :meth:`best_response`, as a pure behavioral strategy that plays the argmax of the
        continuation value at *every* infoset, also those its own best response never reaches
        (:meth:`behavioral_from_plan` of the plan would play uniformly there)."""
        value, choice = self._best_choices(np.asarray(g, dtype=np.float64))
        b = np.zeros(self.n_seqs)
        b[0] = 1.0
        b[choice] = 1.0
        return value, b

    def _best_choices(self, g: np.ndarray) -> tuple[float, np.ndarray]:
        """Bottom-up v[p_j] += max_{s in j} v[s]: (v[0], the first argmax sequence of every infoset)."""
        choice = np.empty(self.n_infosets, np.int32)
        if self._numba():
            from .treeplex_kernels import best_response

            value = best_response(self.start, self.end, self.parent, g, np.empty(self.n_seqs), choice)
            return float(value), choice
        v = g.copy()
        for js, seqs, sizes, offsets in reversed(self.levels()):
            vals = v[seqs]
            best = np.maximum.reduceat(vals, offsets)
            at = np.where(vals == np.repeat(best, sizes), np.arange(len(seqs)), len(seqs))
            choice[js] = seqs[np.minimum.reduceat(at, offsets)]
            np.add.at(v, self.parent[js], best)
        return float(v[0]), choice

    def _numba(self) -> bool:
        """Whether the passes run the numba kernels (large treeplexes) or NumPy by level."""
        return self.n_seqs > NUMPY_SEQS

    def levels(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """Per depth, shallowest first: (infosets in decreasing order, their sequences, their
        sizes, each one's offset in the sequences). Bottom-up passes add an infoset's value into
        its parent in that order, the numba kernels' order, so both give the same bits."""
        if self._levels is None:
            order = np.lexsort((-np.arange(self.n_infosets), self.depth))
            cut = np.flatnonzero(np.diff(self.depth[order])) + 1
            self._levels = []
            for js in np.split(order, cut) if self.n_infosets else []:
                sizes = self.end[js] - self.start[js]
                offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
                seqs = np.repeat(self.start[js] - offsets, sizes) + np.arange(int(sizes.sum()))
                self._levels.append((js, seqs, sizes, offsets))
        return self._levels

    def check_plan(self, x: np.ndarray, tol: float = 1e-9) -> str | None:
        """Return None if ``x`` is a realization plan within ``tol``, else what is wrong."""
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self.n_seqs,):
            return f"expected shape ({self.n_seqs},), got {x.shape}"
        if not np.all(np.isfinite(x)):
            return f"non-finite entry at sequence {int(np.argmin(np.isfinite(x)))}"
        if abs(x[0] - 1.0) > tol:
            return f"empty sequence has mass {x[0]!r}, not 1"
        s = int(np.argmin(x))
        if x[s] < -tol:
            return f"negative mass {x[s]!r} on sequence {self.seq_label(s)}"
        sums = np.add.reduceat(x, self.start) if self.n_infosets else np.zeros(0)
        # reduceat sums [start_j, start_{j+1}); slices are contiguous and cover 1..n-1
        err = np.abs(sums - x[self.parent])
        if len(err) and err.max() > tol:
            j = int(np.argmax(err))
            return (
                f"infoset {self.infoset_keys[j]!r}: children sum to {sums[j]!r} "
                f"but parent sequence has {x[self.parent[j]]!r}"
            )
        return None

    def is_plan(self, x: np.ndarray, tol: float = 1e-9) -> bool:
        return self.check_plan(x, tol) is None

    def subtree_parts(self, parts: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Cut the infosets into at most ``parts`` groups of whole independent subtrees.

        Every infoset whose parent is the empty sequence roots a subtree (the infosets below
        it); passes over different subtrees touch disjoint sequences except sequence 0.
        Consecutive roots are grouped into parts of about equal sequence counts. Returns
        (lo, hi, ptr): part k is the runs of consecutive infosets [lo[q], hi[q]) for
        q in [ptr[k], ptr[k+1]), in increasing (topological) order; the infosets of a run
        all have the same number of actions (the kernels specialize on it). A player who
        never acts has no runs: every part is empty.
        """
        if self.n_infosets == 0:
            return np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(parts + 1, np.int64)
        root = _subtree_roots(self.parent, self.seq_infoset)
        size = np.bincount(root, weights=self.end - self.start, minlength=self.n_infosets)
        roots = np.flatnonzero(self.parent == 0)
        work = np.cumsum(size[roots])
        part_of_root = np.zeros(self.n_infosets, dtype=np.int64)
        if len(roots):
            part_of_root[roots] = np.minimum(((work - size[roots]) * parts) // work[-1], parts - 1)
        part = part_of_root[root]
        order = np.argsort(part, kind="stable")
        actions = (self.end - self.start)[order]
        cut = np.flatnonzero((np.diff(order) != 1) | (np.diff(part[order]) != 0) | (np.diff(actions) != 0)) + 1
        first = np.concatenate(([0], cut)).astype(np.int64)
        last = np.concatenate((cut, [len(order)])).astype(np.int64) - 1
        lo, hi = order[first].astype(np.int32), (order[last] + 1).astype(np.int32)
        ptr = np.searchsorted(part[order][first], np.arange(parts + 1)).astype(np.int64)
        return lo, hi, ptr


def _depths(parent: np.ndarray, seq_infoset: np.ndarray) -> np.ndarray:
    """Depth of every infoset (0 below the empty sequence), by pointer jumping: log2(depth) rounds."""
    up = seq_infoset[parent].astype(np.int64)  # parent infoset, -1 at the root
    depth = (up >= 0).astype(np.int32)
    while np.any(up >= 0):
        has = np.flatnonzero(up >= 0)
        depth[has] += depth[up[has]]
        up[has] = up[up[has]]
    return depth


def _subtree_roots(parent: np.ndarray, seq_infoset: np.ndarray) -> np.ndarray:
    """root[j]: the infoset below the empty sequence that infoset j descends from."""
    root = np.where(parent == 0, np.arange(len(parent)), seq_infoset[parent]).astype(np.int64)
    while True:
        nxt = root[root]
        if np.array_equal(nxt, root):
            return root
        root = nxt


@dataclass
class DeferredTreeplex:
    """A treeplex built on first use (``build()``), its size known before: a
    :class:`~treeplex.model.problem.Problem` holding one builds it when a solver or a result
    first asks for it. The fused postflop engine never does: on FLOP-FAST the two orbit
    treeplexes are about 2 GB it does not need."""

    n_seqs: int
    build: object  # () -> Treeplex

