"""Exact equilibrium of the perturbed game Gamma_l by linear programming (an independent
check of the iterative EFPE solvers; Farina & Gatti 2017 compute EFPE by such LPs).

X^l = {x : E x = e, G_X x >= 0} with one row x_a - l_a x_{p_j} >= 0 per sequence a >= 1
(x >= 0 follows top-down). By LP duality on the inner minimum over Y^l,

    max_{x, v, w}  f^T v   s.t.  F^T v + G_Y^T w = A^T x,  w >= 0,  E x = e,  G_X x >= 0,

and player 1's problem is the mirror image. With l = 0 this is :mod:`treeplex.lp`'s LP.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from ..lp import LPError, LPResult, constraint_matrix, scaled_payoffs
from ..problem import Problem
from ..treeplex import Treeplex


def lower_bound_matrix(T: Treeplex, lower: np.ndarray) -> sp.csr_matrix:
    """G with (G q)_a = q_a - l_a q_{p(a)} for a = 1..n-1 (rows), columns = sequences."""
    n = T.n_seqs
    rows = np.arange(n - 1)
    G = sp.csr_matrix((np.ones(n - 1), (rows, np.arange(1, n))), shape=(n - 1, n))
    P = sp.csr_matrix((-lower[1:], (rows, T.seq_parent[1:].astype(np.int64))), shape=(n - 1, n))
    return (G + P).tocsr()


def _solve_side(M, E, e, Gx, F, f, Gy):
    """max f^T v s.t. F^T v + Gy^T w - M^T x = 0, w >= 0, E x = e, Gx x >= 0. (x, value)."""
    nx, nv, nw = E.shape[1], F.shape[0], Gy.shape[0]
    c = np.concatenate([np.zeros(nx), -f, np.zeros(nw)])
    A_eq = sp.vstack([
        sp.hstack([-M.T, F.T, Gy.T]),
        sp.hstack([E, sp.csr_matrix((E.shape[0], nv + nw))]),
    ]).tocsr()
    b_eq = np.concatenate([np.zeros(M.shape[1]), e])
    A_ub = sp.hstack([-Gx, sp.csr_matrix((Gx.shape[0], nv + nw))]).tocsr()
    bounds = [(None, None)] * (nx + nv) + [(0, None)] * nw
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(Gx.shape[0]), A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if res.status != 0:
        raise LPError(f"HiGHS failed on the perturbed LP: {res.message}")
    return res.x[:nx], -res.fun, int(getattr(res, "nit", 0))


def solve_lp_perturbed(problem: Problem, lower_x: np.ndarray, lower_y: np.ndarray) -> LPResult:
    """Equilibrium plans of max_{x in X^l} min_{y in Y^l} x^T A y and its value (player 0's)."""
    t0 = time.perf_counter()
    A, scale = scaled_payoffs(problem)
    E, e = constraint_matrix(problem.X)
    F, f = constraint_matrix(problem.Y)
    Gx, Gy = lower_bound_matrix(problem.X, lower_x), lower_bound_matrix(problem.Y, lower_y)
    x, v0, it0 = _solve_side(A, E, e, Gx, F, f, Gy)
    y, v1, it1 = _solve_side(-A.T.tocsr(), F, f, Gy, E, e, Gx)
    return LPResult(x=x, y=y, value=0.5 * (v0 - v1) * scale, seconds=time.perf_counter() - t0, simplex_iterations=it0 + it1)
