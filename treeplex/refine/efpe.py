"""Approximate extensive-form perfect equilibrium: solve the xi-perturbed game Gamma_xi
(Kroer, Farina & Sandholm 2017).

An EFPE is a limit of Nash equilibria of Gamma_l as the perturbation l vanishes (Selten
1975; the paper's section 2.1). For a fixed small xi, a Nash equilibrium of
max_{x in X^xi} min_{y in Y^xi} x^T A y is the paper's approximate EFPE. Three routes:

- ``egt`` / ``egt-as``: EGT and EGT/as of :mod:`treeplex.solvers.egt` with the perturbed
  dilated entropy (:class:`~.perturbed.PerturbedDilatedEntropy`, section 3) as DGF;
- the regret-matching CFR family (``cfr+`` and its relatives): regret matching on the
  lower-bounded simplices, b = l + (1 - L) RM(R) (Farina, Kroer & Sandholm, ICML 2017,
  "Regret minimization in behaviorally-constrained zero-sum games"): a regret minimizer for
  Delta is mapped affinely onto Delta^l, and CFR's decomposition holds on Q^l because Q^l
  is again a product of (scaled) simplices;
- ``lp``: the exact equilibrium of Gamma_xi (:func:`~.lp.solve_lp_perturbed`).

All return plans in X^xi x Y^xi; :func:`perturbed_gap` is the saddle-point gap *inside*
Gamma_xi, while :func:`treeplex.metrics.evaluate` keeps measuring the unperturbed game.
Sign convention as everywhere: player 0 maximizes x^T A y.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..errors import InputError
from ..metrics import Evaluation, dot
from ..problem import Problem
from ..solvers import ALGORITHMS, Solver
from ..solvers.cfr import RegretSolver
from .perturbed import PerturbedDilatedEntropy, PerturbedTreeplex, lower_bounds

FOM_ALGORITHMS = ("egt", "egt-as")


def perturbation(problem: Problem, xi) -> tuple[np.ndarray, np.ndarray]:
    """Per-sequence lower bounds (l_X, l_Y) from ``xi``: one specification for both players
    (a number, or a per-sequence array / infoset mapping as in :func:`~.perturbed.lower_bounds`
    when the players' infoset keys allow), or a pair (xi_0, xi_1)."""
    if isinstance(xi, tuple) and len(xi) == 2:
        xi0, xi1 = xi
    else:
        xi0 = xi1 = xi
    return lower_bounds(problem.X, xi0, player=0), lower_bounds(problem.Y, xi1, player=1)


def perturbed_evaluation(problem: Problem, lower: tuple[np.ndarray, np.ndarray], x, y) -> Evaluation:
    """Value and best-response values of (x, y) inside Gamma_l (player 0's payoff units)."""
    Ay = problem.A.matvec(y, count=False)
    ATx = problem.A.rmatvec(x, count=False)
    br0, _ = PerturbedTreeplex(problem.X, lower[0]).best_response(Ay)
    neg, _ = PerturbedTreeplex(problem.Y, lower[1]).best_response(-ATx)
    return Evaluation(value=dot(x, Ay), br0=float(br0), br1=float(-neg))


def perturbed_gap(problem: Problem, lower: tuple[np.ndarray, np.ndarray], x, y) -> float:
    """Saddle-point gap of (x, y) in the perturbed game Gamma_l (zero at its equilibria)."""
    return perturbed_evaluation(problem, lower, x, y).gap


# ------------------------------------------------------------------ FOM route


class _PerturbedFOM:
    """Mixin for EGT / EGT-as: the perturbed dilated entropy on X^l, Y^l as DGFs.

    ``mu="tune"`` tunes at xi = 0 as the paper does (section 4): the perturbed run starts
    from the mu that the same solver and DGF weights start from, after tuning, with no
    perturbation (``lower=None``; the tuning trials are built that way too).
    """

    def __init__(self, problem: Problem, lower=None, mu="tune", weights: str = "egt", **kw):
        if lower is None:
            self.lower = tuple(np.zeros(T.n_seqs) for T in problem.treeplexes)
        else:
            self.lower = tuple(np.asarray(l, dtype=np.float64) for l in lower)
            if isinstance(mu, str) and mu == "tune":
                plain = type(self)(problem, None, mu="tune", weights=weights, **kw)
                mu = (plain.mu_x, plain.mu_y)
        super().__init__(problem, mu=mu, weights=weights, **kw)

    def _make_dgfs(self, problem, weights):
        w = "thm3" if weights == "kroer2017" else weights
        return tuple(PerturbedDilatedEntropy(T, l, w) for T, l in zip(problem.treeplexes, self.lower))

    def trace_extra(self) -> dict:
        return {**super().trace_extra(), "gap_perturbed": perturbed_gap(self.problem, self.lower, *self.average())}


# ------------------------------------------------------------------ CFR route


class _PerturbedRegret:
    """Mixin for the regret-matching CFR family: RM on Delta, played through
    b = l + (1 - L) p on Delta^l; regrets r = v - <p, v> (scale-free in 1 - L)."""

    def __init__(self, problem: Problem, lower, **kw):
        self.lower = tuple(np.asarray(l, dtype=np.float64) for l in lower)
        self._lsum = tuple(np.add.reduceat(l, T.start) if T.n_infosets else np.zeros(0)
                           for T, l in zip(problem.treeplexes, self.lower))
        super().__init__(problem, **kw)
        if self.regrets(1)[5] > 0:
            raise InputError("efpe: the perturbed CFR route supports the regret-matching variants, not hedge")
        for p, T in enumerate(problem.treeplexes):  # start at l + (1 - L) uniform
            b = getattr(self, f"b{p}")
            sizes = (T.end - T.start).astype(np.float64)
            b[1:] = self.lower[p][1:] + np.repeat((1.0 - self._lsum[p]) / sizes, T.end - T.start)
            getattr(self, f"x{p}")[:] = T.plan_from_behavioral(b)

    def step(self) -> None:
        """One CFR iteration (alternating or simultaneous) through :meth:`_update` only,
        never a fused unperturbed kernel; two gradient computations."""
        t = self.iteration + 1 - self.epoch
        coef, avg = self.regrets(t), self.averaging(t)
        A = self.problem.A
        if self.alternating:
            self._update(0, A.matvec(self.x1), coef, avg)
            self._update(1, -A.rmatvec(self.x0), coef, avg)
        else:
            g0, g1 = A.matvec(self.x1), -A.rmatvec(self.x0)
            self._update(0, g0, coef, avg)
            self._update(1, g1, coef, avg)
        self.iteration += 1

    def _update(self, p: int, g: np.ndarray, coef, avg) -> None:
        from ..solvers.regret_kernels import plan_pass

        T = self.problem.treeplexes[p]
        pos, neg, floor, kappa, lam, _ = coef
        b = getattr(self, f"b{p}")
        _perturbed_regret_pass(T.start, T.end, T.parent, g, b, getattr(self, f"R{p}"), pos, neg, floor, kappa, lam, self.lower[p], self._lsum[p])
        plan_pass(T.start, T.end, T.parent, b, getattr(self, f"x{p}"), getattr(self, f"xsum{p}"), *avg)

    def warm_start(self, x, y, weight: float = 1.0) -> None:
        raise InputError("efpe: warm starts are not supported on a perturbed treeplex")

    def trace_extra(self) -> dict:
        return {**super().trace_extra(), "gap_perturbed": perturbed_gap(self.problem, self.lower, *self.average())}


@nb.njit(cache=True)
def _perturbed_regret_pass(start, end, parent, v, b, R, pos, neg, floor, kappa, lam, lower, lsum):
    """:func:`treeplex.solvers.regret_kernels.regret_pass` (regret matching) on Delta^l.

    ``b`` is the played local strategy l + (1 - L) p (in) and the next one (out); the
    regrets are those of p on Delta: r = v - <p, v> with <p, v> = (<b, v> - <l, v>) / (1 - L).
    The value passed up is <b, v>, what was actually played.
    """
    for j in range(len(start) - 1, -1, -1):
        a, e = start[j], end[j]
        c = 1.0 - lsum[j]
        played = 0.0
        lv = 0.0
        for s in range(a, e):
            played += b[s] * v[s]
            lv += lower[s] * v[s]
        value = (played - lv) / c
        total = 0.0
        for s in range(a, e):
            inst = v[s] - value
            acc = R[s] * (pos if R[s] > 0.0 else neg) + inst
            if acc < floor:
                acc = floor
            R[s] = acc
            q = kappa * acc + lam * inst
            if q > 0.0:
                total += q
            b[s] = q
        for s in range(a, e):
            p = (b[s] / total if b[s] > 0.0 else 0.0) if total > 0.0 else 1.0 / (e - a)
            b[s] = lower[s] + c * p
        v[parent[j]] += played


# ------------------------------------------------------------------ factory

_CLASSES: dict[str, type] = {}


def _perturbed_class(name: str) -> type:
    if name not in _CLASSES:
        base = ALGORITHMS[name]
        if name in FOM_ALGORITHMS:
            mixin = _PerturbedFOM
        elif issubclass(base, RegretSolver):
            mixin = _PerturbedRegret
        else:
            raise InputError(f"--refine efpe supports lp, {', '.join(efpe_algorithms())}; not {name!r}")
        cls = type(f"EFPE{base.__name__}", (mixin, base), {"name": f"{name}/efpe"})
        _CLASSES[name] = cls
    return _CLASSES[name]


def efpe_algorithms() -> list[str]:
    """Registered algorithms that can run on the perturbed polytopes."""
    out = [n for n in FOM_ALGORITHMS if n in ALGORITHMS]
    out += sorted(n for n, c in ALGORITHMS.items() if issubclass(c, RegretSolver) and n != "hedge")
    return out


def make_efpe_solver(problem: Problem, algorithm: str, xi, **params) -> Solver:
    """A solver for Gamma_xi: ``algorithm`` is ``egt``, ``egt-as`` or a regret-matching CFR
    variant (``cfr+``, ...); ``xi`` as in :func:`perturbation`; ``params`` go to the solver."""
    from ..driver import check_solver_params, construct

    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {algorithm!r} for --refine efpe; choose from: lp, "
                         f"{', '.join(efpe_algorithms())}")
    check_solver_params(algorithm, params)
    return construct(algorithm, _perturbed_class(algorithm), problem, perturbation(problem, xi), **params)


def solve_efpe(problem: Problem, algorithm: str = "egt", xi=0.01, **kwargs):
    """Approximate EFPE: run ``algorithm`` on Gamma_xi with :func:`treeplex.driver.solve`.

    ``kwargs`` are the driver's stop rules (``target_gap``, ``max_iters``, ...) and solver
    parameters. The result's gap and trace are in the *unperturbed* game; the trace's
    ``gap_perturbed`` column is the gap inside Gamma_xi. ``algorithm="lp"`` solves Gamma_xi
    exactly.
    """
    from ..driver import Result, solve
    from ..metrics import evaluate
    from .lp import solve_lp_perturbed

    if algorithm == "lp":
        lx, ly = perturbation(problem, xi)
        lp = solve_lp_perturbed(problem, lx, ly)
        return Result("lp/efpe", lp.x, lp.y, evaluate(problem, lp.x, lp.y), iterations=lp.simplex_iterations,
                      seconds=lp.seconds, stopped_by="exact")
    stop = {k: kwargs.pop(k) for k in ("target_gap", "max_iters", "time_limit", "check_every", "progress", "on_check")
            if k in kwargs}
    return solve(problem, make_efpe_solver(problem, algorithm, xi, **kwargs), **stop)
