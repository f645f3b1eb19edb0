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

from ..model.lp import LPResult, _solve_side_bounded as _solve_side, constraint_matrix, lower_bound_matrix, scaled_payoffs
from ..model.problem import Problem


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
