"""Exact equilibrium by the sequence-form linear program (von Stengel 1996), solved by HiGHS.

With the treeplex constraints written E x = e (X) and F y = f (Y), player 0's problem
max_x min_y x^T A y is, by LP duality on the inner minimum,

    max_{x, v}  f^T v   s.t.  F^T v <= A^T x,   E x = e,   x >= 0,   v free,

and player 1's is the mirror image  min_{y, u} e^T u  s.t.  E^T u >= A y,  F y = f,  y >= 0.
Both optimal values equal the game value (player 0's). Node locks (``problem.locks``) add
equality rows to E or F (:func:`constraint_matrix`): the LP of the locked game; weighted locks
rows q_s - l_s q_parent >= 0 (:func:`lower_bound_matrix`, the lower-bounded LP of
:mod:`treeplex.refine.lp`). We solve the two LPs, which is
simpler to trust than reading one LP's duals, and report both plans.

Exactness: A is divided by its largest |entry| before HiGHS sees it (and the value scaled
back), and a game whose entries span more than ``LP_RANGE`` (HiGHS drops matrix entries below
1e-9 of the largest) is refused, after zeroing rounding residue (see :func:`scaled_payoffs`). The gap of the returned profile is computed; above
``EXACT_GAP`` x max |A_ij| HiGHS is rerun with tight tolerances, and a result still above it
is reported as not exact (``LPResult.exact``).

HiGHS is called through ``highspy`` (the HiGHS project's own bindings; scipy's ``linprog``
wraps the same solver but importing ``scipy.optimize`` costs ~0.6 s, four times the rest of
``treeplex solve kuhn``). Matrices are COO triples (:class:`Coo`), so no scipy either.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import highspy
import numpy as np
from highspy._core import _Highs  # the bindings' core class: highspy.Highs prints a banner

from ..errors import InputError
from .metrics import evaluate
from .problem import Problem, _csr
from ..core.treeplex import Treeplex

LP_RANGE = 1e9  # largest max|A_ij| / min|A_ij| (nonzero) the LP resolves
NOISE = 1e-12  # relative to the median |A_ij|: below it (and unresolvable), an entry is rounding residue
RESIDUE = 1e-9  # unresolvable entries are dropped when their total is below RESIDUE x the median |A_ij|
EXACT_GAP = 1e-9  # an LP result is exact when its gap <= EXACT_GAP * max|A_ij|
TIGHT = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
METHODS = ("choose", "simplex", "ipm")  # HiGHS's default can fail on degenerate LPs (duplicate columns)


@dataclass
class Coo:
    """A sparse matrix as COO entries (duplicates are summed when HiGHS gets it)."""

    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    shape: tuple[int, int]

    @property
    def T(self) -> Coo:
        return Coo(self.cols, self.rows, self.vals, self.shape[::-1])

    def __neg__(self) -> Coo:
        return Coo(self.rows, self.cols, -self.vals, self.shape)

    @staticmethod
    def blocks(grid: list[list[Coo | int]]) -> Coo:
        """The block matrix of ``grid`` (like ``scipy.sparse.bmat``); an int is a zero block of
        that many columns (its rows come from the row's other blocks)."""
        rows, cols, vals = [], [], []
        r0 = 0
        for line in grid:
            height = next(b.shape[0] for b in line if isinstance(b, Coo))
            c0 = 0
            for b in line:
                if isinstance(b, Coo):
                    rows.append(b.rows + r0), cols.append(b.cols + c0), vals.append(b.vals)
                    c0 += b.shape[1]
                else:
                    c0 += b
            r0 += height
        return Coo(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), (r0, c0))


def constraint_matrix(T: Treeplex, locks=None) -> tuple[Coo, np.ndarray]:
    """(E, e) with E q = e: row 0 is q[0] = 1, row 1 + j is sum_{s in j} q[s] - q[p_j] = 0;
    with ``locks`` (:class:`~treeplex.core.locks.Locks`) one more row q[s] - p_s q[p_j] = 0
    per fully locked sequence s (the locked treeplex; the dual variables of equality rows are
    free, so the LPs below need nothing else; weighted locks add inequality rows in
    :func:`solve_lp`)."""
    sizes = T.end - T.start
    rows = np.concatenate(([0], 1 + np.repeat(np.arange(T.n_infosets), sizes), 1 + np.arange(T.n_infosets)))
    cols = np.concatenate(([0], np.arange(1, T.n_seqs), T.parent.astype(np.int64)))
    vals = np.concatenate(([1.0], np.ones(T.n_seqs - 1), -np.ones(T.n_infosets)))
    n_rows = 1 + T.n_infosets
    if locks is not None:
        own = n_rows + np.arange(len(locks.seqs))
        rows = np.concatenate((rows, own, own))
        cols = np.concatenate((cols, locks.seqs, T.seq_parent[locks.seqs].astype(np.int64)))
        vals = np.concatenate((vals, np.ones(len(own)), -locks.probs))
        n_rows += len(own)
    e = np.zeros(n_rows)
    e[0] = 1.0
    return Coo(rows.astype(np.int64), cols.astype(np.int64), vals, (n_rows, T.n_seqs)), e


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


def payoff_entries(problem: Problem) -> Coo:
    """A's nonzero entries (from its CSR arrays when it has them, else from ``to_sparse``)."""
    A = problem.A
    if A.csr is not None:
        indptr, indices, data = A.csr[0]
        rows = np.repeat(np.arange(A.shape[0], dtype=np.int64), np.diff(indptr))
        return Coo(rows, indices.astype(np.int64), np.array(data, dtype=np.float64), A.shape)
    coo = A.to_sparse().tocoo()
    return Coo(coo.row.astype(np.int64), coo.col.astype(np.int64), np.array(coo.data, dtype=np.float64), A.shape)


def scaled_payoffs(problem: Problem) -> tuple[Coo, float]:
    """(A / s, s) with s = max |A_ij| (1 for an all-zero A). Entries below 1e-12 of the median
    |A_ij| that the LP could not see anyway (rounding residue such as 1e-15) are zeroed, and
    so are entries below max / LP_RANGE whose total is below RESIDUE x the median; any other
    entry range beyond LP_RANGE is refused."""
    A = payoff_entries(problem)
    keep = A.vals != 0.0
    A = Coo(A.rows[keep], A.cols[keep], A.vals[keep], A.shape)
    mags = np.abs(A.vals)
    if not len(mags):
        return A, 1.0
    hi = float(mags.max())
    drop = (mags < NOISE * _median(mags)) & (mags < hi / LP_RANGE)
    # Entries the LP cannot resolve but whose total is negligible next to a typical entry
    # (a leaf value computed as 4e-9 beside payoffs of 80): zeroing them moves any profile's
    # value by at most their total (plans are at most 1), far below EXACT_GAP * max|A_ij|.
    tiny = ~drop & (mags < hi / LP_RANGE)
    if tiny.any() and mags[tiny].sum() <= RESIDUE * _median(mags[~drop]):
        drop |= tiny
    A = Coo(A.rows[~drop], A.cols[~drop], A.vals[~drop], A.shape)
    mags = mags[~drop]
    lo = float(mags.min())
    if hi / lo > LP_RANGE:
        raise InputError(f"the LP cannot resolve these payoffs: |payoff x chance| ranges from {lo:.3g} to {hi:.3g}, "
                         f"a ratio above {LP_RANGE:.0e}; use an iterative solver (--algorithm cfr+ --target GAP)")
    return Coo(A.rows, A.cols, A.vals / hi, A.shape), hi


def _median(a: np.ndarray) -> float:
    """np.median's value, without its first-call import of numpy.ma (start-up)."""
    lo, hi = (len(a) - 1) // 2, len(a) // 2
    part = np.partition(a, [lo, hi])
    return float(0.5 * (part[lo] + part[hi]))


def highs(c: np.ndarray, M: Coo, row_lo, row_hi, col_lo, col_hi, options: dict | None = None):
    """min c^T z s.t. row_lo <= M z <= row_hi, col_lo <= z <= col_hi (inf for no bound), by
    HiGHS, trying its methods in turn; (z, objective, iterations) or an :class:`LPError`."""
    indptr, indices, data = _csr(M.cols, M.rows, M.vals, M.shape[::-1])  # CSC of M = CSR of M^T
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = M.shape[1], M.shape[0]
    inf = highspy.kHighsInf
    lp.col_cost_ = np.asarray(c, dtype=np.float64)
    lp.col_lower_, lp.col_upper_ = (np.clip(np.asarray(b, np.float64), -inf, inf) for b in (col_lo, col_hi))
    lp.row_lower_, lp.row_upper_ = (np.clip(np.asarray(b, np.float64), -inf, inf) for b in (row_lo, row_hi))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = indptr.astype(np.int32), indices, data
    message = ""
    for method in METHODS:
        h = _Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("solver", method)
        for k, v in (options or {}).items():
            h.setOptionValue(k, v)
        h.passModel(lp)
        h.run()
        status = h.getModelStatus()
        if status == highspy.HighsModelStatus.kOptimal:
            info = h.getInfo()
            z = np.array(h.getSolution().col_value)
            return z, info.objective_function_value, int(info.simplex_iteration_count + info.ipm_iteration_count)
        message = h.modelStatusToString(status)
    raise LPError(f"HiGHS failed: {message}")


def _solve_side(M: Coo, E: Coo, e: np.ndarray, F: Coo, f: np.ndarray, options: dict | None = None):
    """max f^T v s.t. F^T v - M^T x <= 0, E x = e, x >= 0. Returns (x, value, iterations)."""
    nx, nv = E.shape[1], F.shape[0]
    rows = Coo.blocks([[-M.T, F.T], [E, nv]])
    ny = M.shape[1]
    z, obj, it = highs(np.concatenate([np.zeros(nx), -f]), rows,
                       np.concatenate([np.full(ny, -np.inf), e]), np.concatenate([np.zeros(ny), e]),
                       np.concatenate([np.zeros(nx), np.full(nv, -np.inf)]), np.full(nx + nv, np.inf), options)
    return np.clip(z[:nx], 0.0, None), -obj, it


def lower_bound_matrix(T: Treeplex, lower: np.ndarray) -> Coo:
    """G with (G q)_a = q_a - l_a q_{p(a)} for a = 1..n-1 (rows), columns = sequences."""
    n = T.n_seqs
    rows = np.arange(n - 1, dtype=np.int64)
    return Coo(np.concatenate((rows, rows)), np.concatenate((np.arange(1, n), T.seq_parent[1:].astype(np.int64))),
               np.concatenate((np.ones(n - 1), -np.asarray(lower[1:], dtype=np.float64))), (n - 1, n))


def _solve_side_bounded(M: Coo, E: Coo, e, Gx: Coo, F: Coo, f, Gy: Coo):
    """max f^T v s.t. F^T v + Gy^T w - M^T x = 0, w >= 0, E x = e, Gx x >= 0. (x, value)."""
    nx, nv, nw = E.shape[1], F.shape[0], Gy.shape[0]
    rows = Coo.blocks([[-M.T, F.T, Gy.T], [E, nv + nw], [Gx, nv + nw]])
    b_eq = np.concatenate([np.zeros(M.shape[1]), e])
    ng = Gx.shape[0]
    try:
        z, obj, it = highs(np.concatenate([np.zeros(nx), -f, np.zeros(nw)]), rows,
                           np.concatenate([b_eq, np.zeros(ng)]), np.concatenate([b_eq, np.full(ng, np.inf)]),
                           np.concatenate([np.full(nx + nv, -np.inf), np.zeros(nw)]), np.full(nx + nv + nw, np.inf))
    except LPError as err:
        raise LPError(f"on the perturbed LP: {err}") from None
    return z[:nx], -obj, it


def solve_lp(problem: Problem) -> LPResult:
    """Both players' equilibrium realization plans and the value (see the module docstring on exactness)."""
    if problem.general_sum:
        raise InputError("lp solves zero-sum games and this one is general-sum (a raked spot: u0 + u1 = -rake); "
                         "use a CFR-family solver (cfr+, dcfr, dcfr-ps, lcfr, pcfr+, pdcfr+)")
    t0 = time.perf_counter()
    A, scale = scaled_payoffs(problem)
    locks = problem.locks or (None, None)
    E, e = constraint_matrix(problem.X, locks[0])
    F, f = constraint_matrix(problem.Y, locks[1])
    iterations = 0
    partial = [None if lk is None else lk.partial for lk in locks]
    if any(l is not None for l in partial):  # weighted locks: rows q_s - w p_s q_parent >= 0
        Gx, Gy = (lower_bound_matrix(T, np.zeros(T.n_seqs) if l is None else l)
                  for T, l in zip(problem.treeplexes, partial))
        x, v0, it0 = _solve_side_bounded(A, E, e, Gx, F, f, Gy)
        y, v1, it1 = _solve_side_bounded(-A.T, F, f, Gy, E, e, Gx)
        return LPResult(x=x, y=y, value=0.5 * (v0 - v1) * scale, seconds=time.perf_counter() - t0,
                        simplex_iterations=it0 + it1, exact=evaluate(problem, x, y).gap <= EXACT_GAP * scale)
    for options in (None, TIGHT):  # the second pass polishes a result whose gap is too large
        x, v0, it0 = _solve_side(A, E, e, F, f, options)
        y, v1, it1 = _solve_side(-A.T, F, f, E, e, options)
        iterations += it0 + it1
        exact = evaluate(problem, x, y).gap <= EXACT_GAP * scale
        if exact:
            break
    return LPResult(x=x, y=y, value=0.5 * (v0 - v1) * scale, seconds=time.perf_counter() - t0,
                    simplex_iterations=iterations, exact=exact)
