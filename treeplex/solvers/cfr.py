"""The CFR family on the treeplex: one gradient and two passes per player per iteration.

Every variant is a :class:`RegretSolver` that states, for iteration t = 1, 2, ..., the
scalars of the shared passes (:mod:`.regret_kernels`):

- ``regrets(t)`` -> (pos, neg, floor, kappa, lam, eta): discounts of positive / negative
  cumulative regrets, their lower clip, the prediction weights, and the Hedge step (0 for
  regret matching);
- ``averaging(t)`` -> (rho, omega): the running sum of played plans becomes
  rho * sum + omega * x_t; the average strategy is that sum normalized.

Conventions (those of OpenSpiel and of the DDCFR/PDCFR+ reference code, which reproduce the
published numbers): the first iterate is uniform; updates alternate by default (player 0
against y_t, then player 1 against the new x_{t+1}); the average accumulates the plan each
player played in iteration t, with iteration weights counted from t = 1. A step costs two
gradient computations either way, as in the EGT paper's section 7 (footnote 1: "All variants
use the alternating updates scheme").

Sign convention: player 0 maximizes x^T A y, player 1 minimizes it; internally each player
maximizes its own payoff, so player 1's gradient is -A^T x.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..errors import InputError, nonnegative
from ..problem import Problem, SparsePayoff
from ..threads import PARALLEL_SEQS  # treeplexes larger than this run update_parts: one part of subtrees per thread
from .base import Solver, register
from .regret_kernels import (average_plan, cfr_iteration, counterfactual_values, kernel_args, plan_pass, regret_pass,
                             update_parts)

TINY = 1e-300  # floor for log(prior) in Hedge recentering


class RegretSolver(Solver):
    """Counterfactual regret minimization over the treeplexes of ``problem``.

    Parameters shared by every variant:

    - ``alternating`` (default True): alternating updates; False gives simultaneous ones.
    - ``prior=(x, y)``: warm start from realization plans (unified view, "Initialization
      with a Prior"): the dual weights (cumulative regrets) start as ``prior_weight`` times
      the counterfactual regrets of the prior profile, recentered at the prior so that the
      first iterate *is* the prior (see :meth:`warm_start`). The weight counts iterations:
      with 100 (default) the iterates stay at an equilibrium prior to rounding for 1000
      iterations on Leduc; with 1 or 10 rounding noise grows (measured).
    - ``restart_weight`` (default 10): the weight of the average when the driver restarts
      from it (the best of 1, 10, 100 on Kuhn and Leduc, measured).
    - ``storage`` (default ``"float64"``): ``"float32"`` halves the solver state (regrets,
      strategies, the running average: 16 instead of 32 bytes per sequence) for large games;
      gradients, the average handed to gap checks and the gaps stay in float64.

    ``plain`` (class attribute): True for variants whose regrets are plain regret matching
    (pos = neg, kappa = 1, lam = 0), so that only that kernel is compiled
    (:func:`~.regret_kernels.kernel_args`).
    """

    plain = False
    restartable = True

    def __init__(self, problem: Problem, alternating: bool = True, prior=None, prior_weight: float = 100.0,
                 restart_weight: float = 10.0, storage: str = "float64"):
        super().__init__(problem)
        if storage not in ("float64", "float32"):
            raise InputError(f"storage must be 'float64' or 'float32', got {storage!r}")
        dtype = np.dtype(storage)
        self.alternating = bool(alternating)
        self.prior_weight = nonnegative(prior_weight, "prior_weight")
        self.restart_weight = nonnegative(restart_weight, "restart_weight")
        self.epoch = 0  # iteration at the last (re)start: schedules count t from there
        self._parts = tuple(T.subtree_parts(nb.get_num_threads()) if T.n_seqs > PARALLEL_SEQS else None
                            for T in problem.treeplexes)  # independent subtrees per thread, or serial
        for p, T in enumerate(problem.treeplexes):
            n = T.n_seqs
            sizes = T.end - T.start
            b = np.ones(n, dtype=dtype)
            b[1:] = 1.0 / np.repeat(sizes, sizes)  # local (behavioral) strategy to play next: uniform
            setattr(self, f"b{p}", b)
            setattr(self, f"x{p}", T.plan_from_behavioral(b).astype(dtype))  # its plan
            setattr(self, f"xsum{p}", np.zeros(n, dtype=dtype))  # weighted sum of played plans
            setattr(self, f"R{p}", np.zeros(n, dtype=dtype))  # cumulative (discounted) regrets
            setattr(self, f"logprior{p}", np.zeros(0))  # Hedge recentering, set by a warm start
        if prior is not None:
            self.warm_start(*prior, weight=self.prior_weight)

    # ------------------------------------------------------------------ variant hooks

    def regrets(self, t: int) -> tuple[float, float, float, float, float, float]:
        """(pos, neg, floor, kappa, lam, eta) for iteration t; default: vanilla CFR."""
        return 1.0, 1.0, -math.inf, 1.0, 0.0, 0.0

    def averaging(self, t: int) -> tuple[float, float]:
        """(rho, omega) for iteration t; default: uniform averaging."""
        return 1.0, 1.0

    # ------------------------------------------------------------------ iteration

    def step(self) -> None:
        t = self.iteration + 1 - self.epoch
        coef = kernel_args(self.regrets(t), self.plain)
        avg = self.averaging(t)
        A = self.problem.A
        if isinstance(A, SparsePayoff):  # the same step, fused into one numba call
            X, Y = self.problem.treeplexes
            cfr_iteration((X.start, X.end, X.parent), (Y.start, Y.end, Y.parent), *A.csr,
                          (self.b0, self.R0, self.x0, self.xsum0, self.logprior0),
                          (self.b1, self.R1, self.x1, self.xsum1, self.logprior1),
                          coef, avg, self.alternating)
            A.gradients += 2
        elif self.alternating:
            self._update(0, A.matvec(self.x1), coef, avg)
            g1 = A.rmatvec(self.x0)
            np.negative(g1, out=g1)
            self._update(1, g1, coef, avg)
        else:
            g0 = A.matvec(self.x1)
            g1 = A.rmatvec(self.x0)
            np.negative(g1, out=g1)
            self._update(0, g0, coef, avg)
            self._update(1, g1, coef, avg)
        self.iteration += 1

    def _update(self, p: int, g: np.ndarray, coef, avg) -> None:
        T = self.problem.treeplexes[p]
        b, x, R, xsum, logprior = (getattr(self, f"{k}{p}") for k in ("b", "x", "R", "xsum", "logprior"))
        parts = self._parts[p]
        if parts is None:
            regret_pass(T.start, T.end, T.parent, g, b, R, *coef, logprior)
            plan_pass(T.start, T.end, T.parent, b, x, xsum, *avg)
        else:  # the same numbers (sequence 0's value summed in another order)
            update_parts(parts, T.start, T.end, T.parent, g, b, R, x, xsum, *coef, logprior, *avg)

    def average(self) -> tuple[np.ndarray, np.ndarray]:
        """Weighted average of the played plans (the current iterate before any step)."""
        return average_plan(self.xsum0, self.x0), average_plan(self.xsum1, self.x1)

    def current(self) -> tuple[np.ndarray, np.ndarray]:
        """The plans the next iteration will play."""
        return self.x0.copy(), self.x1.copy()

    # ------------------------------------------------------------------ warm start

    def warm_start(self, x: np.ndarray, y: np.ndarray, weight: float = 1.0) -> None:
        """Start from the profile (x, y); the running average is emptied.

        Dual weights (unified view, "Initialization with a Prior"): the cumulative regrets
        become ``weight`` times the counterfactual regrets r of the prior against the prior
        opponent, as if ``weight`` iterations had been played at the prior. Recentering
        (same section) makes the next iterate the prior itself:

        - regret matching: R_j <- weight * (r_j + c_j b_j), with c_j the counterfactual
          value scale at j: max_s |v_j[s]| against the prior opponent plus the same against
          the uniform one (so that c_j > 0 where the prior opponent never goes). At an
          equilibrium r_j <= 0 with r = 0 on b's support, so RM(R_j) = b_j exactly;
        - Hedge: R_j <- weight * r_j and play p exp(eta R) with p = b, the KL-centered
          Hedge, again equal to b while R is 0 on its support.

        ``x``, ``y`` are realization plans; infosets a plan never reaches get uniform play.
        """
        for p, (T, plan) in enumerate(zip(self.problem.treeplexes, (x, y))):
            err = T.check_plan(plan, tol=1e-6)
            if err is not None:
                raise InputError(f"warm start: player {p}'s prior is not a realization plan: {err}")
        gx = self.problem.A.matvec(y, count=False)
        gy = -self.problem.A.rmatvec(x, count=False)
        hedge = self.regrets(1)[5] > 0.0
        ux, uy = self.problem.X.uniform(), self.problem.Y.uniform()
        gux, guy = self.problem.A.matvec(uy, count=False), -self.problem.A.rmatvec(ux, count=False)
        for p, (T, plan, g, gu) in enumerate(zip(self.problem.treeplexes, (x, y), (gx, gy), (gux, guy))):
            b = T.behavioral_from_plan(plan)
            v = g.copy()
            counterfactual_values(T.start, T.end, T.parent, v, b)
            counterfactual_values(T.start, T.end, T.parent, gu, b)
            R = getattr(self, f"R{p}")
            if T.n_infosets:  # per infoset j (slices tile sequences 1..n-1): reduceat over them
                first, own = T.start - 1, T.seq_infoset[1:]
                r = v[1:] - np.add.reduceat((b * v)[1:], first)[own]
                if hedge:
                    R[1:] = weight * r
                else:
                    scale = np.maximum.reduceat(np.abs(v[1:]), first) + np.maximum.reduceat(np.abs(gu[1:]), first)
                    R[1:] = weight * (r + scale[own] * b[1:])
            if not hedge and self.regrets(1)[2] == 0.0:
                np.maximum(R, 0.0, out=R)
            if hedge:
                setattr(self, f"logprior{p}", np.log(np.maximum(b, TINY)))
            getattr(self, f"b{p}")[:] = b
            getattr(self, f"x{p}")[:] = T.plan_from_behavioral(b)
            getattr(self, f"xsum{p}")[:] = 0.0
        self.epoch = self.iteration - 1  # the prior counts as iteration 1 of the new epoch

    def restart(self) -> None:
        """Warm-start from the current average (driver option ``restart``)."""
        self.warm_start(*self.average(), weight=self.restart_weight)


# ====================================================================== the variants


@register("cfr", "cfr-rm")
class CFR(RegretSolver):
    """CFR with regret matching, uniform averaging (Zinkevich, Johanson, Bowling & Piccione,
    NIPS 2007): R += r; b = R^+ / sum R^+. The EGT paper's CFR(RM)."""

    plain = True


@register("cfr-rm+")
class CFRRMPlus(RegretSolver):
    """CFR with regret matching+ and uniform averaging (Tammelin 2014; EGT paper section 7's
    CFR(RM+)): R <- max(R + r, 0)."""

    plain = True

    def regrets(self, t):
        return 1.0, 1.0, 0.0, 1.0, 0.0, 0.0


@register("cfr+")
class CFRPlus(RegretSolver):
    """CFR+ (Tammelin, Burch, Johanson & Bowling, IJCAI 2015): regret matching+ with linear
    averaging, weight t for iteration t, alternating updates."""

    plain = True

    def regrets(self, t):
        return 1.0, 1.0, 0.0, 1.0, 0.0, 0.0

    def averaging(self, t):
        return 1.0, float(t)


@register("lcfr")
class LinearCFR(RegretSolver):
    """Linear CFR (Brown & Sandholm, AAAI 2019, section 3): iteration t's regrets and its
    share of the average are weighted by t, i.e. R <- R (t-1)/t + r, averaging weight t."""

    plain = True

    def regrets(self, t):
        d = (t - 1) / t
        return d, d, -math.inf, 1.0, 0.0, 0.0

    def averaging(self, t):
        return 1.0, float(t)


@register("dcfr")
class DiscountedCFR(RegretSolver):
    """Discounted CFR, DCFR(alpha, beta, gamma) (Brown & Sandholm, AAAI 2019, section 3):
    before adding iteration t's regrets, positive cumulative regrets are multiplied by
    (t-1)^alpha / ((t-1)^alpha + 1) and negative ones by (t-1)^beta / ((t-1)^beta + 1); the
    average sum by ((t-1)/t)^gamma. Defaults (1.5, 0, 2) are the paper's recommendation."""

    def __init__(self, problem, alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0, **kw):
        self.alpha, self.gamma = nonnegative(alpha, "dcfr: alpha"), nonnegative(gamma, "dcfr: gamma")
        self.beta = float(beta)
        super().__init__(problem, **kw)

    def regrets(self, t):
        return _discount(t - 1, self.alpha), _discount(t - 1, self.beta), -math.inf, 1.0, 0.0, 0.0

    def averaging(self, t):
        return ((t - 1) / t) ** self.gamma, 1.0


@register("pcfr+")
class PredictiveCFRPlus(RegretSolver):
    """Predictive CFR+ (Farina, Kroer & Sandholm, AAAI 2021): predictive regret matching+ at
    every infoset with the last instantaneous regret as prediction, R <- max(R + r, 0) and
    b = max(R + r, 0) normalized; quadratic averaging (weight t^gamma, gamma = 2)."""

    def __init__(self, problem, gamma: float = 2.0, **kw):
        self.gamma = nonnegative(gamma, f"{self.name}: gamma")
        super().__init__(problem, **kw)

    def regrets(self, t):
        return 1.0, 1.0, 0.0, 1.0, 1.0, 0.0

    def averaging(self, t):
        return ((t - 1) / t) ** self.gamma, 1.0


@register("pdcfr+")
class PredictiveDiscountedCFRPlus(RegretSolver):
    """PDCFR+(alpha, gamma) (Xu, Li, Fu, Fu, Xing & Cheng, IJCAI 2024, "Minimizing weighted
    counterfactual regret with optimistic online mirror descent"): discounted regret
    matching+ with prediction. With d(t) = (t-1)^alpha / ((t-1)^alpha + 1),
    R <- max(R d(t) + r, 0), b = max(R d(t+1) + r, 0) normalized, and the average sum is
    multiplied by ((t-1)/t)^gamma. Defaults (2.3, 5) are the paper's."""

    def __init__(self, problem, alpha: float = 2.3, gamma: float = 5.0, **kw):
        self.alpha, self.gamma = nonnegative(alpha, "pdcfr+: alpha"), nonnegative(gamma, "pdcfr+: gamma")
        super().__init__(problem, **kw)

    def regrets(self, t):
        d = _discount(t - 1, self.alpha)
        return d, d, 0.0, _discount(t, self.alpha), 1.0, 0.0

    def averaging(self, t):
        return ((t - 1) / t) ** self.gamma, 1.0


@register("dcfr+")
class DiscountedCFRPlus(RegretSolver):
    """DCFR+(alpha, gamma) (Xu et al., IJCAI 2024, the PDCFR+ paper's variant without
    prediction): R <- max(R d(t) + r, 0) with d(t) = (t-1)^alpha / ((t-1)^alpha + 1.5) (the
    authors' code, github.com/rpSebastian/PDCFRPlus, cfr/dcfr_plus.py: 1.5, not DCFR's 1),
    and the average sum multiplied by ((t-1)/t)^gamma. Defaults (1.5, 4) are the paper's."""

    plain = True  # pos = neg = d(t), floor 0, no prediction

    def __init__(self, problem, alpha: float = 1.5, gamma: float = 4.0, **kw):
        self.alpha, self.gamma = float(alpha), float(gamma)
        super().__init__(problem, **kw)

    def regrets(self, t):
        d = _discount(t - 1, self.alpha, 1.5)
        return d, d, 0.0, 1.0, 0.0, 0.0

    def averaging(self, t):
        return ((t - 1) / t) ** self.gamma, 1.0


@register("sapcfr+")
class SimpleAsymmetricPCFRPlus(PredictiveCFRPlus):
    """Simple asymmetric PCFR+, SAPCFR+ (Meng, Yang, Zhang, Ge & Gao, AAAI 2026, "Faster game
    solving via asymmetry of step sizes"): PCFR+ whose prediction enters the played strategy
    with step 1/(1 + alpha), b = max(R + r / (1 + alpha), 0) normalized, while the cumulative
    regrets R <- max(R + r, 0) take the full step; alpha = 2 (the paper's fixed asymmetry)."""

    def __init__(self, problem, alpha: float = 2.0, **kw):
        if not float(alpha) >= 0.0:
            raise InputError(f"sapcfr+: alpha must be >= 0, got {alpha!r}")
        self.alpha = float(alpha)
        super().__init__(problem, **kw)

    def regrets(self, t):
        return 1.0, 1.0, 0.0, 1.0, 1.0 / (1.0 + self.alpha), 0.0


@register("hedge")
class HedgeCFR(RegretSolver):
    """CFR with Hedge at every infoset (unified view, Definition 2 and Algorithm 1): play
    b proportional to exp(eta_t R), R the cumulative counterfactual regret, uniform averaging.

    Step size: eta_t = eta / sqrt(t) (``schedule="sqrt"``, the anytime rate of Theorem 3) or
    eta_t = eta (``"constant"``); ``eta`` is in 1/payoff units. Default: eta = 5 / V, V the
    largest counterfactual action value of the uniform profile (:func:`value_scale`); 5 was
    the best round factor on Kuhn and Leduc at 2000 iterations.
    """

    def __init__(self, problem, eta: float | None = None, schedule: str = "sqrt", **kw):
        if schedule not in ("sqrt", "constant"):
            raise InputError(f"hedge: schedule must be 'sqrt' or 'constant', got {schedule!r}")
        self.eta = float(eta) if eta is not None else 5.0 / value_scale(problem)
        if not self.eta > 0:
            raise InputError(f"hedge: eta must be > 0, got {eta!r}")
        self.sqrt_schedule = schedule == "sqrt"
        super().__init__(problem, **kw)

    def regrets(self, t):
        eta = self.eta / math.sqrt(t) if self.sqrt_schedule else self.eta
        return 1.0, 1.0, -math.inf, 1.0, 0.0, eta


def _discount(n: int, power: float, c: float = 1.0) -> float:
    """n^power / (n^power + c), the DCFR discount applied after n iterations (0 at n = 0)."""
    if n == 0:
        return 0.0
    if math.isinf(power):
        return 1.0 if power > 0 else 0.0
    np_ = float(n) ** power
    return np_ / (np_ + c)


def value_scale(problem: Problem) -> float:
    """max |v[s]| over both players' counterfactual action values when both play uniformly:
    the payoff scale of a regret at one infoset (game payoff units; 1.0 if all are 0)."""
    Tx, Ty = problem.treeplexes
    ux, uy = Tx.uniform(), Ty.uniform()
    scale = 0.0
    for T, g, u in ((Tx, problem.A.matvec(uy, count=False), ux), (Ty, problem.A.rmatvec(ux, count=False), uy)):
        counterfactual_values(T.start, T.end, T.parent, g, T.behavioral_from_plan(u))
        scale = max(scale, float(np.abs(g[1:]).max(initial=0.0)))
    return scale or 1.0


@register("dual-averaging")
class DualAveraging(Solver):
    """Dual averaging with the dilated entropy (unified view, Definition 3 and "Dual
    Averaging"; Nesterov 2009): each player plays the smoothed best response to the sum of
    its gradients,

        x_{t+1} = argmax_{x in X} <sum_{tau <= t} A y_tau, x> - mu_t d(x),

    "fictitious play with a smoothed best response" (the unified view), computed bottom-up
    by log-sum-exp (:class:`~treeplex.dilated_entropy.DilatedEntropy`). The reported strategy
    is the uniform average of the played plans. Step size 1/mu_t with mu_t = mu sqrt(t)
    (``schedule="sqrt"``) or mu (``"constant"``); ``mu`` is in payoff units, default
    0.1 V / sqrt(max weight) with V as in :func:`value_scale`.

    ``prior=(x, y)``: the dual weights start at ``prior_weight`` times the prior opponent's
    gradient, and d is recentered at the prior (the Bregman divergence D(x || prior) replaces
    d), so the first iterate is the prior (unified view, "Initialization with a Prior").
    """

    restartable = True

    def __init__(self, problem: Problem, mu: float | None = None, schedule: str = "sqrt", weights: str = "egt",
                 alternating: bool = True, prior=None, prior_weight: float = 100.0,
                 restart_weight: float = 10.0):
        from ..dilated_entropy import DilatedEntropy

        super().__init__(problem)
        if schedule not in ("sqrt", "constant"):
            raise InputError(f"dual-averaging: schedule must be 'sqrt' or 'constant', got {schedule!r}")
        self.sqrt_schedule = schedule == "sqrt"
        self.alternating = bool(alternating)
        self.prior_weight = nonnegative(prior_weight, "prior_weight")
        self.restart_weight = nonnegative(restart_weight, "restart_weight")
        self.dgf = tuple(DilatedEntropy(T, weights) for T in problem.treeplexes)
        if mu is None:
            mu = 0.1 * value_scale(problem) / math.sqrt(max(d.beta.max() for d in self.dgf))
        self.mu = float(mu)
        if not self.mu > 0:
            raise InputError(f"dual-averaging: mu must be > 0, got {mu!r}")
        for p, T in enumerate(problem.treeplexes):
            setattr(self, f"theta{p}", np.zeros(T.n_seqs))  # sum of gradients (dual weights)
            setattr(self, f"x{p}", T.uniform())  # argmin d: the first iterate
            setattr(self, f"xsum{p}", np.zeros(T.n_seqs))
            setattr(self, f"center{p}", np.zeros(0))  # prior plan, when warm-started
        if prior is not None:
            self.warm_start(*prior, weight=self.prior_weight)

    def _play(self, p: int, t: int) -> None:
        mu = self.mu * math.sqrt(t) if self.sqrt_schedule else self.mu
        theta, center = getattr(self, f"theta{p}"), getattr(self, f"center{p}")
        x = getattr(self, f"x{p}")
        getattr(self, f"xsum{p}")[:] += x
        x[:] = self.dgf[p].prox(center, theta, mu) if len(center) else self.dgf[p].sbr(theta, mu)[0]

    def step(self) -> None:
        t = self.iteration + 1
        A = self.problem.A
        if self.alternating:
            self.theta0 += A.matvec(self.x1)
            self._play(0, t)
            self.theta1 -= A.rmatvec(self.x0)
        else:
            self.theta0 += A.matvec(self.x1)
            self.theta1 -= A.rmatvec(self.x0)
            self._play(0, t)
        self._play(1, t)
        self.iteration = t

    def average(self):
        return average_plan(self.xsum0, self.x0), average_plan(self.xsum1, self.x1)

    def current(self):
        return self.x0.copy(), self.x1.copy()

    def warm_start(self, x: np.ndarray, y: np.ndarray, weight: float = 1.0) -> None:
        """Dual weights theta = weight * (the prior opponent's gradient); d recentered at the
        prior; the next iterate is the prior; the running average is emptied."""
        for p, (T, plan) in enumerate(zip(self.problem.treeplexes, (x, y))):
            err = T.check_plan(plan, tol=1e-6)
            if err is not None:
                raise InputError(f"warm start: player {p}'s prior is not a realization plan: {err}")
        self.theta0[:] = weight * self.problem.A.matvec(y, count=False)
        self.theta1[:] = -weight * self.problem.A.rmatvec(x, count=False)
        for p, (T, plan) in enumerate(zip(self.problem.treeplexes, (x, y))):
            clean = T.plan_from_behavioral(T.behavioral_from_plan(plan))
            setattr(self, f"center{p}", clean)
            getattr(self, f"x{p}")[:] = clean
            getattr(self, f"xsum{p}")[:] = 0.0

    def restart(self) -> None:
        self.warm_start(*self.average(), weight=self.restart_weight)
