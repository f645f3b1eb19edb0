"""Exact equilibrium of the perturbed game Gamma_l by linear programming (an independent
check of the iterative EFPE solvers; Farina & Gatti 2017 compute EFPE by such LPs).

X^l = {x : E x = e, G_X x >= 0} with one row x_a - l_a x_{p_j} >= 0 per sequence a >= 1
(x >= 0 follows top-down). By LP duality on the inner minimum over Y^l,

    max_{x, v, w}  f^T v   s.t.  F^T v + G_Y^T w = A^T x,  w >= 0,  E x = e,  G_X x >= 0,

and player 1's problem is the mirror image. With l = 0 this is :mod:`treeplex.model.lp`'s LP.
"""

from __future__ import annotations

import time

import numpy as np

from ..model.lp import Coo, LPError, LPResult, constraint_matrix, highs, scaled_payoffs
from ..model.problem import Problem
from ..core.treeplex import Treeplex


def lower_bound_matrix(T: Treeplex, lower: np.ndarray) -> Coo:
    """G with (G q)_a = q_a - l_a q_{p(a)} for a = 1..n-1 (rows), columns = sequences."""
    n = T.n_seqs
    rows = np.arange(n - 1, dtype=np.int64)
    return Coo(np.concatenate((rows, rows)), np.concatenate((np.arange(1, n), T.seq_parent[1:].astype(np.int64))),
               np.concatenate((np.ones(n - 1), -np.asarray(lower[1:], dtype=np.float64))), (n - 1, n))


def _solve_side(M: Coo, E: Coo, e, Gx: Coo, F: Coo, f, Gy: Coo):
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


def solve_lp_perturbed(problem: Problem, lower_x: np.ndarray, lower_y: np.ndarray) -> LPResult:
    """Equilibrium plans of max_{x in X^l} min_{y in Y^l} x^T A y and its value (player 0's)."""
    t0 = time.perf_counter()
    A, scale = scaled_payoffs(problem)
    E, e = constraint_matrix(problem.X)
    F, f = constraint_matrix(problem.Y)
    Gx, Gy = lower_bound_matrix(problem.X, lower_x), lower_bound_matrix(problem.Y, lower_y)
    x, v0, it0 = _solve_side(A, E, e, Gx, F, f, Gy)
    y, v1, it1 = _solve_side(-A.T, F, f, Gy, E, e, Gx)
    return LPResult(x=x, y=y, value=0.5 * (v0 - v1) * scale, seconds=time.perf_counter() - t0, simplex_iterations=it0 + it1)
