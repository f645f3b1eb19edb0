"""Approximate extensive-form perfect equilibrium: solve the xi-perturbed game Gamma_xi
(Kroer, Farina & Sandholm 2017).

An EFPE is a limit of Nash equilibria of Gamma_l as the perturbation l vanishes (Selten
1975; the paper's section 2.1). For a fixed small xi, a Nash equilibrium of
max_{x in X^xi} min_{y in Y^xi} x^T A y is the paper's approximate EFPE. Three routes:

- ``egt`` / ``egt-as``: EGT and EGT/as of :mod:`treeplex.solvers.egt` with the perturbed
  dilated entropy (:class:`~treeplex.core.perturbed.PerturbedDilatedEntropy`, section 3) as DGF;
- the regret-matching CFR family (``cfr+`` and its relatives): regret matching on the
  lower-bounded simplices, b = l + (1 - L) RM(R) (Farina, Kroer & Sandholm, ICML 2017,
  "Regret minimization in behaviorally-constrained zero-sum games"): a regret minimizer for
  Delta is mapped affinely onto Delta^l, and CFR's decomposition holds on Q^l because Q^l
  is again a product of (scaled) simplices;

both are the ordinary solvers given ``lower`` (the backend's passes take lower bounds as an
optional argument); :func:`efpe_algorithms` lists the solvers that declare ``supports_lower``;
- ``lp``: the exact equilibrium of Gamma_xi (:func:`~.lp.solve_lp_perturbed`).

All return plans in X^xi x Y^xi; :func:`~treeplex.model.metrics.perturbed_gap` is the saddle-point gap *inside*
Gamma_xi, while :func:`treeplex.model.metrics.evaluate` keeps measuring the unperturbed game.
Sign convention as everywhere: player 0 maximizes x^T A y.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..model.problem import Problem
from ..core.perturbed import lower_bounds
from ..solvers import ALGORITHMS, Solver


def perturbation(problem: Problem, xi) -> tuple[np.ndarray, np.ndarray]:
    """Per-sequence lower bounds (l_X, l_Y) from ``xi``: one specification for both players
    (a number, or a per-sequence array / infoset mapping as in :func:`~.perturbed.lower_bounds`
    when the players' infoset keys allow), or a pair (xi_0, xi_1)."""
    if isinstance(xi, tuple) and len(xi) == 2:
        xi0, xi1 = xi
    else:
        xi0 = xi1 = xi
    return lower_bounds(problem.X, xi0, player=0), lower_bounds(problem.Y, xi1, player=1)


def efpe_algorithms() -> list[str]:
    """Registered algorithms that can run on the perturbed polytopes (``supports_lower``)."""
    return sorted(n for n, c in ALGORITHMS.items() if c.supports_lower)


def make_efpe_solver(problem: Problem, algorithm: str, xi, **params) -> Solver:
    """A solver for Gamma_xi: ``algorithm`` is ``egt``, ``egt-as`` or a regret-matching CFR
    variant (``cfr+``, ...); ``xi`` as in :func:`perturbation`; ``params`` go to the solver."""
    from ..run.driver import check_solver_params, construct

    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {algorithm!r} for --refine efpe; choose from: lp, "
                         f"{', '.join(efpe_algorithms())}")
    if not ALGORITHMS[algorithm].supports_lower:
        raise InputError(f"--refine efpe supports lp, {', '.join(efpe_algorithms())}; not {algorithm!r}")
    check_solver_params(algorithm, params)
    return construct(algorithm, ALGORITHMS[algorithm], problem, lower=perturbation(problem, xi), **params)


def solve_efpe(problem: Problem, algorithm: str = "egt", xi=0.01, **kwargs):
    """Approximate EFPE: run ``algorithm`` on Gamma_xi with :func:`treeplex.run.driver.solve`.

    ``kwargs`` are the driver's stop rules (``target_gap``, ``max_iters``, ...) and solver
    parameters. The result's gap and trace are in the *unperturbed* game; the trace's
    ``gap_perturbed`` column is the gap inside Gamma_xi. ``algorithm="lp"`` solves Gamma_xi
    exactly.
    """
    from ..run.driver import Result, solve
    from ..model.metrics import evaluate
    from .lp import solve_lp_perturbed

    if algorithm == "lp":
        lx, ly = perturbation(problem, xi)
        lp = solve_lp_perturbed(problem, lx, ly)
        return Result("lp/efpe", (lp.x, lp.y), evaluate(problem, lp.x, lp.y), iterations=lp.simplex_iterations,
                      seconds=lp.seconds, stopped_by="exact")
    stop = {k: kwargs.pop(k) for k in ("target_gap", "max_iters", "time_limit", "check_every", "progress", "on_check")
            if k in kwargs}
    return solve(problem, make_efpe_solver(problem, algorithm, xi, **kwargs), **stop)
