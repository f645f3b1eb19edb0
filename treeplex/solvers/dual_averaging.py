"""Dual averaging, the unified view's picture of CFR (Waugh & Bagnell 2015): each player plays
a regularized best response to the sum of its gradients. With the entropy at every infoset
and counterfactual regrets as the sum, this is CFR with Hedge (:class:`HedgeCFR`); with the
dilated entropy over the whole treeplex, it is :class:`DualAveraging`, "fictitious play with
a smoothed best response". Both keep the dual weights (sums of gradients), so both take a
prior as a warm start (the unified view's "Initialization with a Prior").

Sign convention: player 0 maximizes x^T A y; each player maximizes its own gradient
(A y for player 0, -A^T x for player 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, nonnegative
from ..model.problem import Problem
from ..backends import flat_state
from .base import Solver, average_plan, load_players, register
from .cfr import RegretSolver


@register("hedge")
class HedgeCFR(RegretSolver):
    """CFR with Hedge at every infoset (unified view, Definition 2 and Algorithm 1): play
    b proportional to exp(eta_t R), R the cumulative counterfactual regret, uniform averaging.

    Step size: eta_t = eta / sqrt(t) (``schedule="sqrt"``, the anytime rate of Theorem 3) or
    eta_t = eta (``"constant"``); ``eta`` is in 1/payoff units. Default: eta = 5 / V, V the
    largest counterfactual action value of the uniform profile (:func:`value_scale`); 5 was
    the best round factor on Kuhn and Leduc at 2000 iterations.
    """

    supports_lower = False  # regret matching's affine map onto Delta^l has no Hedge analogue here

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


def value_scale(problem: Problem) -> float:
    """max |v[s]| over both players' counterfactual action values when both play uniformly:
    the payoff scale of a regret at one infoset (game payoff units; 1.0 if all are 0)."""
    Tx, Ty = problem.treeplexes
    ux, uy = Tx.uniform(), Ty.uniform()
    scale = 0.0
    for p, (T, g, u) in enumerate(((Tx, problem.A.matvec(uy, count=False), ux),
                                   (Ty, problem.A.rmatvec(ux, count=False), uy))):
        v = problem.backend.to_numpy(problem.backend.counterfactual_values(p, g, T.behavioral_from_plan(u)))
        scale = max(scale, float(np.abs(v[1:]).max(initial=0.0)))
    return scale or 1.0




@register("dual-averaging")
class DualAveraging(Solver):
    """Dual averaging with the dilated entropy (unified view, Definition 3 and "Dual
    Averaging"; Nesterov 2009): each player plays the smoothed best response to the sum of
    its gradients,

        x_{t+1} = argmax_{x in X} <sum_{tau <= t} A y_tau, x> - mu_t d(x),

    "fictitious play with a smoothed best response" (the unified view), computed bottom-up
    by log-sum-exp (:class:`~treeplex.core.dilated_entropy.DilatedEntropy`). The reported strategy
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
        super().__init__(problem)
        if schedule not in ("sqrt", "constant"):
            raise InputError(f"dual-averaging: schedule must be 'sqrt' or 'constant', got {schedule!r}")
        self.sqrt_schedule = schedule == "sqrt"
        self.alternating = bool(alternating)
        self.prior_weight = nonnegative(prior_weight, "prior_weight")
        self.restart_weight = nonnegative(restart_weight, "restart_weight")
        self.dgf = tuple(self.backend.dilated_entropy(p, weights) for p in (0, 1))
        if mu is None:
            top = max((float(d.beta.max()) for d in self.dgf if d.beta.shape[0]), default=1.0)  # 1: no infosets
            mu = 0.1 * value_scale(problem) / math.sqrt(top)
        self.mu = float(mu)
        if not self.mu > 0:
            raise InputError(f"dual-averaging: mu must be > 0, got {mu!r}")
        bk = self.backend  # the state lives where the backend keeps its arrays (a device for "gpu")
        self.players = tuple(DualState(theta=bk.asarray(np.zeros(T.n_seqs)), x=bk.asarray(T.uniform()),
                                       xsum=bk.asarray(np.zeros(T.n_seqs)), center=bk.asarray(np.zeros(0)))
                             for T in problem.treeplexes)
        if prior is not None:
            self.warm_start(*prior, weight=self.prior_weight)

    def _play(self, p: int, t: int) -> None:
        mu = self.mu * math.sqrt(t) if self.sqrt_schedule else self.mu
        s = self.players[p]
        s.xsum += s.x
        s.x = self.dgf[p].prox(s.center, s.theta, mu) if len(s.center) else self.dgf[p].sbr(s.theta, mu)[0]

    def step(self) -> None:
        t = self.iteration + 1
        A = self.problem.A
        s0, s1 = self.players
        s0.theta += A.matvec(s1.x)
        if self.alternating:
            self._play(0, t)
        s1.theta -= A.rmatvec(s0.x)
        if not self.alternating:
            self._play(0, t)
        self._play(1, t)
        self.iteration = t

    def average(self):
        return tuple(average_plan(self.backend, s.xsum, s.x) for s in self.players)

    def current(self):
        return tuple(s.x.copy() for s in self.players)

    def state_dict(self) -> dict:
        return {**super().state_dict(), **flat_state(self.players)}

    def set_state(self, state: dict) -> None:
        load_players(self.players, state, self.backend)

    def warm_start(self, x: np.ndarray, y: np.ndarray, weight: float = 1.0) -> None:
        """Dual weights theta = weight * (the prior opponent's gradient); d recentered at the
        prior; the next iterate is the prior; the running average is emptied."""
        for p, (T, plan) in enumerate(zip(self.problem.treeplexes, (x, y))):
            err = T.check_plan(plan, tol=1e-6)
            if err is not None:
                raise InputError(f"warm start: player {p}'s prior is not a realization plan: {err}")
        s0, s1 = self.players
        bk = self.backend
        s0.theta = bk.asarray(weight * self.problem.A.matvec(y, count=False))
        s1.theta = bk.asarray(-weight * self.problem.A.rmatvec(x, count=False))
        for T, plan, s in zip(self.problem.treeplexes, (x, y), self.players):
            s.center = bk.asarray(T.plan_from_behavioral(T.behavioral_from_plan(plan)))
            s.x, s.xsum = s.center.copy(), bk.asarray(np.zeros(T.n_seqs))

    def restart(self) -> None:
        self.warm_start(*self.average(), weight=self.restart_weight)


@dataclass
class DualState:
    """One player's dual-averaging state."""

    theta: np.ndarray  # sum of gradients (dual weights)
    x: np.ndarray  # the plan played next (argmin d at first)
    xsum: np.ndarray  # sum of the plans played
    center: np.ndarray  # the prior plan d is centered at (empty: the uniform argmin d)
