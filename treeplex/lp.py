"""Exact equilibrium by the sequence-form linear program (von Stengel 1996), solved by HiGHS.

With the treeplex constraints written E x = e (X) and F y = f (Y), player 0's problem
max_x min_y x^T A y is, by LP duality on the inner minimum,

    max_{x, v}  f^T v   s.t.  F^T v <= A^T x,   E x = e,   x >= 0,   v free,

and player 1's is the mirror image  min_{y, u} e^T u  s.t.  E^T u >= A y,  F y = f,  y >= 0.
Both optimal values equal the game value (player 0's). We solve the two LPs, which is
simpler to trust than reading one LP's duals, and report both plans.

Exactness: A is divided by its largest |entry| before HiGHS sees it (and the value scaled
back), and a game whose entries span more than ``LP_RANGE`` (HiGHS drops matrix entries below
1e-9 of the largest) is refused, after zeroing rounding residue (see :func:`scaled_payoffs`). The gap of the returned profile is computed; above
``EXACT_GAP`` x max |A_ij| HiGHS is rerun with tight tolerances, and a result still above it
is reported as not exact (``LPResult.exact``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from .errors import InputError
from .metrics import evaluate
from .problem import Problem
from .treeplex import Treeplex

LP_RANGE = 1e9  # largest max|A_ij| / min|A_ij| (nonzero) the LP resolves
NOISE = 1e-12  # relative to the median |A_ij|: below it (and unresolvable), an entry is rounding residue
RESIDUE = 1e-9  # unresolvable entries are dropped when their total is below RESIDUE x the median |A_ij|
EXACT_GAP = 1e-9  # an LP result is exact when its gap <= EXACT_GAP * max|A_ij|
TIGHT = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def constraint_matrix(T: Treeplex) -> tuple[sp.csr_matrix, np.ndarray]:
    """(E, e) with E q = e: row 0 is q[0] = 1, row 1 + j is sum_{s in j} q[s] - q[p_j] = 0."""
    n_rows = 1 + T.n_infosets
    sizes = T.end - T.start
    rows = [np.zeros(1, dtype=np.int64)]
    cols = [np.zeros(1, dtype=np.int64)]
    vals = [np.ones(1)]
    rows.append(1 + np.repeat(np.arange(T.n_infosets), sizes))
    cols.append(np.arange(1, T.n_seqs))
    vals.append(np.ones(T.n_seqs - 1))
    rows.append(1 + np.arange(T.n_infosets))
    cols.append(T.parent.astype(np.int64))
    vals.append(-np.ones(T.n_infosets))
    E = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n_rows, T.n_seqs)
    )
    e = np.zeros(n_rows)
    e[0] = 1.0
    return E, e


@dataclass
class LPResult:
    x: np.ndarray
    y: np.ndarray
    value: float  # game value, player 0's payoff
    seconds: float
    simplex_iterations: int
    exact: bool = True  # gap <= EXACT_GAP * max|A_ij|


class LPError(RuntimeError):
    pass


def scaled_payoffs(problem: Problem) -> tuple[sp.csr_matrix, float]:
    """(A / s, s) with s = max |A_ij| (1 for an all-zero A). Entries below 1e-12 of the median
    |A_ij| that the LP could not see anyway (rounding residue such as 1e-15) are zeroed, and
    so are entries below max / LP_RANGE whose total is below RESIDUE x the median; any other
    entry range beyond LP_RANGE is refused."""
    A = problem.A.to_sparse().tocsr(copy=True)
    mags = np.abs(A.data)
    if not mags.any():
        return A, 1.0
    hi = float(mags.max())
    noise = (mags < NOISE * float(np.median(mags[mags > 0]))) & (mags < hi / LP_RANGE)
    if noise.any():
        A.data[noise] = 0.0
        A.eliminate_zeros()
        mags = np.abs(A.data)
    # Entries the LP cannot resolve but whose total is negligible next to a typical entry
    # (a leaf value computed as 4e-9 beside payoffs of 80): zeroing them moves any profile's
    # value by at most their total (plans are at most 1), far below EXACT_GAP * max|A_ij|.
    tiny = mags < hi / LP_RANGE
    if tiny.any() and mags[tiny].sum() <= RESIDUE * float(np.median(mags)):
        A.data[tiny] = 0.0
        A.eliminate_zeros()
        mags = np.abs(A.data)
    lo = float(mags[mags > 0].min())
    if hi / lo > LP_RANGE:
        raise InputError(f"the LP cannot resolve these payoffs: |payoff x chance| ranges from {lo:.3g} to {hi:.3g}, "
                         f"a ratio above {LP_RANGE:.0e}; use an iterative solver (--algorithm cfr+ --target GAP)")
    return (A / hi).tocsr(), hi


def _solve_side(M: sp.csr_matrix, E: sp.csr_matrix, e: np.ndarray, F: sp.csr_matrix, f: np.ndarray,
                options: dict | None = None):
    """max f^T v s.t. F^T v - M^T x <= 0, E x = e, x >= 0. Returns (x, value, iterations)."""
    nx, nv = E.shape[1], F.shape[0]
    c = np.concatenate([np.zeros(nx), -f])
    A_ub = sp.hstack([-M.T, F.T]).tocsr()
    A_eq = sp.hstack([E, sp.csr_matrix((E.shape[0], nv))]).tocsr()
    bounds = [(0, None)] * nx + [(None, None)] * nv
    for method in ("highs", "highs-ds", "highs-ipm"):  # HiGHS's default can fail on degenerate LPs (duplicate columns)
        res = linprog(c, A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), A_eq=A_eq, b_eq=e, bounds=bounds, method=method,
                      options=options)
        if res.status == 0:
            break
    if res.status != 0:
        raise LPError(f"HiGHS failed: {res.message}")
    x = np.clip(res.x[:nx], 0.0, None)
    return x, -res.fun, int(getattr(res, "nit", 0))


def solve_lp(problem: Problem) -> LPResult:
    """Both players' equilibrium realization plans and the value (see the module docstring on exactness)."""
    t0 = time.perf_counter()
    A, scale = scaled_payoffs(problem)
    E, e = constraint_matrix(problem.X)
    F, f = constraint_matrix(problem.Y)
    iterations = 0
    for options in (None, TIGHT):  # the second pass polishes a result whose gap is too large
        x, v0, it0 = _solve_side(A, E, e, F, f, options)
        y, v1, it1 = _solve_side(-A.T.tocsr(), F, f, E, e, options)
        iterations += it0 + it1
        exact = evaluate(problem, x, y).gap <= EXACT_GAP * scale
        if exact:
            break
    return LPResult(x=x, y=y, value=0.5 * (v0 - v1) * scale, seconds=time.perf_counter() - t0,
                    simplex_iterations=iterations, exact=exact)
