"""The numba backend: every treeplex pass on NumPy arrays in this process.

Kernels: :mod:`.numba_regret` (regret update, written once), the dilated entropies of
:mod:`treeplex.core.dilated_entropy` and :mod:`treeplex.core.perturbed`, the treeplex's own
passes (plans, best response). Treeplexes larger than ``PARALLEL_SEQS`` sequences update
one part of independent subtrees per thread; smaller problems on a CSR matrix run a whole
CFR iteration in one numba call (no Python between the products and the passes).
"""

from __future__ import annotations

import weakref

import numba as nb
import numpy as np

from ..core.jit import compile_aside
from ..core.locks import by_part
from ..core.threads import PARALLEL_SEQS
from .state import RegretState, first_play, host_bounds
from .numba_regret import (
    _plan_runs,
    counterfactual_values,
    csr_iteration,
    kernel_args,
    runs,
    update_parts,
)


class NumbaBackend:
    name = "numba"
    auto = False  # True when driver.solve picked this backend itself (see backends.starts_on_numpy)

    @property
    def problem(self):
        """The problem this backend runs (held weakly: the problem owns the backend)."""
        return self._problem()

    def __init__(self, problem):
        self._problem = weakref.ref(problem)  # the problem owns its backend: no cycle to wait for the collector
        self.treeplexes = problem.treeplexes
        self._arrays = tuple((T.start, T.end, T.parent) for T in self.treeplexes)
        self._parts = tuple(runs(T, nb.get_num_threads() if T.n_seqs > PARALLEL_SEQS else 1)
                            for T in self.treeplexes)  # independent subtrees per thread, or one part
        self._g = tuple(np.empty(T.n_seqs) for T in self.treeplexes)  # gradient buffers, one per player
        small = all(T.n_seqs <= PARALLEL_SEQS for T in self.treeplexes)
        locks = problem.locks or (None, None)
        self._locks = tuple(by_part(lk, T, parts) for lk, T, parts in zip(locks, self.treeplexes, self._parts))
        self._locks_of = locks
        # fuse whole CFR iterations on a small CSR game (without locks: they are applied per part)
        self._csr = problem.A.csr if small and problem.locks is None else None
        self._aside = None  # first iteration: None; then the regret update compiling elsewhere (jit.Aside) or False

    # ------------------------------------------------------------------ arrays

    def asarray(self, a, dtype=np.float64) -> np.ndarray:
        return np.asarray(a, dtype=dtype)

    def to_numpy(self, a):
        return a

    def lerp(self, a: np.ndarray, b: np.ndarray, tau: float) -> np.ndarray:
        """(1 - tau) a + tau b, a new array (one loop: EGT's interpolations)."""
        return _lerp(a, b, tau)

    def bounds(self, lower):
        """Per player, what the passes take as ``lower``: None, or (l per sequence, L = sum
        of l per infoset) for lower bounds ``lower`` = (l_X, l_Y)."""
        return host_bounds(self.treeplexes, lower)

    # ------------------------------------------------------------------ CFR

    def regret_state(self, p: int, dtype, lower=None) -> RegretState:
        """Uniform play (l + (1 - L) uniform on a perturbed treeplex; the lock at locked
        infosets), zero regrets and sums."""
        T = self.treeplexes[p]
        n = T.n_seqs
        b, x = first_play(T, lower)
        if self._locks_of[p] is not None:
            x = T.plan_from_behavioral(self._locks_of[p].behavioral(b))
        return RegretState(b=b.astype(dtype), R=np.zeros(n, dtype=dtype), x=x.astype(dtype),
                           xsum=np.zeros(n, dtype=dtype), logprior=np.zeros(0))

    def regret_update(self, p: int, g: np.ndarray, s: RegretState, coef, avg, plain: bool = False,
                      lower=None) -> float:
        """The regret pass then the plan pass for player p against its gradient ``g``
        (overwritten with the counterfactual values); returns <g, x> of the plan played."""
        if self._aside:
            self._aside.wait()
            self._aside = False
        return update_parts(*self._update_args(p, g, s, coef, avg, plain, lower))

    def _update_args(self, p, g, s, coef, avg, plain, lower) -> tuple:
        return (self._parts[p], *self._arrays[p], g, s.b, s.R, s.x, s.xsum, *kernel_args(coef, plain), s.logprior,
                lower, *avg, self._locks[p])

    def regret_update_runs(self, p: int, g: np.ndarray, s: RegretState, coef, plain: bool, part) -> float:
        """:meth:`regret_update` over the infosets of ``part`` only, for samplers that update a
        subset (public-chance sampling, :mod:`treeplex.solvers.pcs`): ``part`` = (lo, hi,
        size, ptr) as one part of :func:`.numba_regret.runs`, runs of consecutive infosets in
        increasing order that hold every ancestor infoset of each one. The regret pass then the
        plan pass over them; the running average is left alone (the caller weights it)."""
        start, end, parent = self._arrays[p]
        return update_parts(part, start, end, parent, g, s.b, s.R, s.x, s.xsum, *kernel_args(coef, plain),
                            s.logprior, None, 1.0, 0.0)

    def plan_runs(self, p: int, s: RegretState, part) -> None:
        """x <- plan of b over the infosets of ``part`` (as :meth:`regret_update_runs`), top-down
        from their parents' x; the running average is left alone."""
        start, end, parent = self._arrays[p]
        lo, hi, size, ptr = part
        _plan_runs(lo, hi, size, ptr[0], ptr[-1], start, end, parent, s.b, s.x, s.xsum, 1.0, 0.0)

    def cfr_iteration(self, players, coef, avg, plain: bool, alternating: bool, lower=(None, None)) -> None:
        """One iteration: player 0 against A y, then player 1 against -A^T x (the new x when
        ``alternating``); fused into one numba call on a CSR matrix of a small game."""
        A = self.problem.A
        s0, s1 = players
        if self._csr is not None:
            csr_iteration(*self._arrays, *self._csr, (s0.b, s0.R, s0.x, s0.xsum, s0.logprior),
                          (s1.b, s1.R, s1.x, s1.xsum, s1.logprior), kernel_args(coef, plain), avg, alternating, lower)
            A.charge(2)
            return
        g0, g1 = self._g  # the products write into them; the regret pass then overwrites them
        if self._aside is None:
            self._compile_aside(players, coef, avg, plain, lower)
        A.matvec(s1.x, out=g0)
        if not alternating:
            A.rmatvec(s0.x, out=g1)
        self.regret_update(0, g0, s0, coef, avg, plain, lower[0])
        if alternating:
            A.rmatvec(s0.x, out=g1)
        np.negative(g1, out=g1)
        self.regret_update(1, g1, s1, coef, avg, plain, lower[1])

    def _compile_aside(self, players, coef, avg, plain, lower) -> None:
        """On a first run (numba's cache empty), the regret update compiles in a second process
        while this one compiles the plan pass it calls (which the other process then loads from
        the cache) and the products (on their first call): :func:`~treeplex.core.jit.compile_aside`."""
        calls = [self._update_args(p, self._g[p], s, coef, avg, plain, lower[p]) for p, s in enumerate(players)]
        self._aside = compile_aside(update_parts, *calls) or False
        if self._aside:
            for parts, start, end, parent, _, b, _, x, xsum, *_ in calls:
                lo, hi, size, ptr = parts
                _plan_runs.compile(tuple(nb.typeof(a) for a in (lo, hi, size, ptr[0], ptr[-1], start, end, parent,
                                                                 b, x, xsum, 1.0, 0.0)))

    def counterfactual_values(self, p: int, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        """v[s] = g[s] + the values under ``b`` of the infosets below s (a new array)."""
        v = np.array(g, dtype=np.float64)
        counterfactual_values(*self._arrays[p], v, b)
        return v

    # ------------------------------------------------------------------ smoothing, best response

    def dilated_entropy(self, p: int, weights: str = "egt", lower=None):
        """The dilated entropy DGF of player p's treeplex (EGT paper, section 3), or the
        perturbed dilated entropy on Q^l (EFPE paper, section 3) when ``lower`` is given."""
        if lower is None:
            from ..core.dilated_entropy import DilatedEntropy

            return DilatedEntropy(self.treeplexes[p], weights)
        from ..core.perturbed import PerturbedDilatedEntropy

        return PerturbedDilatedEntropy(self.treeplexes[p], lower[0], "thm3" if weights == "kroer2017" else weights)

    def best_response(self, p: int, g: np.ndarray, lower=None) -> tuple[float, np.ndarray]:
        """max_x <g, x> over player p's treeplex (or Q^l): (value, maximizing plan)."""
        if lower is None:
            return self.treeplexes[p].best_response(g)
        from ..core.perturbed import PerturbedTreeplex

        return PerturbedTreeplex(self.treeplexes[p], lower[0]).best_response(g)


@nb.njit(cache=True)
def _lerp(a, b, tau):
    out = np.empty_like(a)
    for i in range(len(a)):
        out[i] = (1.0 - tau) * a[i] + tau * b[i]
    return out

