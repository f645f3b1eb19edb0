"""CFR variants whose scalars change with time or with the run: hyperparameter schedules
(HS-PCFR+, HS-DCFR) and adaptive asymmetry of step sizes (APCFR+).

HS-PCFR+ and HS-DCFR only restate :class:`~.cfr.RegretSolver`'s per-iteration hooks
``regrets(t)`` and ``averaging(t)``. APCFR+ needs one more hook, which the shared kernels do
not have yet: a per-infoset prediction weight computed from the iteration's instantaneous
regrets (:class:`PredictionWeightSolver`; see its docstring for the hook's exact form).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..backends import flat_state
from ..errors import InputError
from ..model.problem import Problem
from .base import load_players, register
from .cfr import RegretSolver, _discount


# ====================================================================== hyperparameter schedules


class _Schedule:
    """Progress p = (t - 1) / horizon of Zhang, McAleer & Sandholm's schedules, clipped to 1.

    The paper ("Faster Game Solving via Hyperparameter Schedules", AAAI 2026,
    arXiv:2404.09097, eq. 4) makes each hyperparameter linear in t / T, with t the 0-based
    iteration and T the number of iterations the run will make (1000 in its experiments).
    Iteration t here counts from 1, so its 0-based index is t - 1. After ``horizon``
    iterations the schedule stays at its end values (the paper defines none beyond T).
    """

    def _init_schedule(self, horizon, gamma0) -> None:
        if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
            raise InputError(f"{self.name}: horizon must be a whole number >= 1, got {horizon!r}")
        if not math.isfinite(float(gamma0)) or float(gamma0) < 5.0:
            raise InputError(f"{self.name}: gamma0 must be >= 5 (gamma falls by 5 over the horizon), got {gamma0!r}")
        self.horizon, self.gamma0 = int(horizon), float(gamma0)

    def progress(self, t: int) -> float:
        return min((t - 1) / self.horizon, 1.0)

    def gamma(self, t: int) -> float:
        """gamma_t = gamma0 - 5 p: HS's averaging exponent (30 -> 25, or 15 -> 10)."""
        return self.gamma0 - 5.0 * self.progress(t)

    def averaging(self, t):
        return ((t - 1) / t) ** self.gamma(t), 1.0


@register("hs-pcfr+")
class HSPredictiveCFRPlus(_Schedule, RegretSolver):
    """HS-PCFR+(gamma0) (Zhang, McAleer & Sandholm, AAAI 2026, arXiv:2404.09097): PCFR+
    (predictive regret matching+, prediction = last instantaneous regret) whose averaging
    exponent follows the schedule gamma_t = gamma0 - 5 t/T: before iteration t's plan is
    added, the running sum is multiplied by ((t-1)/t)^gamma_t. "gamma is the only adjustable
    hyperparameter in PCFR+" (their section 3.2), so the regrets are PCFR+'s. Defaults:
    gamma0 = 30 (HS-PCFR+(30)), horizon T = 1000; pass ``horizon`` = the iterations you run."""

    def __init__(self, problem: Problem, gamma0: float = 30.0, horizon: int = 1000, **kw):
        self._init_schedule(horizon, gamma0)
        super().__init__(problem, **kw)

    def regrets(self, t):
        return 1.0, 1.0, 0.0, 1.0, 1.0, 0.0


@register("hs-dcfr")
class HSDiscountedCFR(_Schedule, RegretSolver):
    """HS-DCFR(gamma0) (Zhang, McAleer & Sandholm, AAAI 2026, arXiv:2404.09097): DCFR whose
    three exponents follow linear schedules in p = t/T, alpha_t = 1 + 3p (positive regrets),
    beta_t = -1 - 2p (negative regrets) and gamma_t = gamma0 - 5p (averaging): before
    iteration t's regrets are added, positive cumulative regrets are multiplied by
    (t-1)^alpha_t / ((t-1)^alpha_t + 1), negative ones by (t-1)^beta_t / ((t-1)^beta_t + 1),
    and the average sum by ((t-1)/t)^gamma_t. Defaults: gamma0 = 30, horizon T = 1000."""

    def __init__(self, problem: Problem, gamma0: float = 30.0, horizon: int = 1000, **kw):
        self._init_schedule(horizon, gamma0)
        super().__init__(problem, **kw)

    def regrets(self, t):
        p = self.progress(t)
        return _discount(t - 1, 1.0 + 3.0 * p), _discount(t - 1, -1.0 - 2.0 * p), -math.inf, 1.0, 0.0, 0.0


# ====================================================================== per-infoset prediction weights


class PredictionWeightSolver(RegretSolver):
    """Regret matching+ with a per-infoset prediction weight chosen after each update.

    This is the extra hook a variant like APCFR+ needs, in the smallest form found: for
    player p, after the usual regret pass R_new = max(R_old + r, 0) (r the instantaneous
    counterfactual regrets of the plan just played), the variant's
    :meth:`prediction_weights` gets (p, r, R_old, R_new) per sequence and returns one weight
    lam_j per infoset; the next local strategy is then

        b = max(R_new + lam_j r, 0) normalized at each infoset j (uniform if all are 0),

    and the plan and the running average follow as usual (``averaging(t)``). PCFR+ is
    lam_j = 1, SAPCFR+ lam_j = 1/3, CFR+ lam_j = 0. The shared kernels compute r inside the
    regret pass and keep only a scalar lam; a backend would need to (1) hand r (or write it
    to an array) to this hook and (2) take lam per infoset instead of a scalar. Here it runs
    as three steps per player: the backend's plain RM+ update (which also adds the plan played
    to the average), the hook in numpy, then the predicted strategy and its plan (a second,
    vectorized regret-matching step: the backend takes lam as one scalar per iteration);
    updates alternate unless ``alternating=False``.
    """

    def regrets(self, t):
        return 1.0, 1.0, 0.0, 1.0, 0.0, 0.0  # the regret pass: plain RM+; the prediction comes after

    def prediction_weights(self, p: int, inst: np.ndarray, R_old: np.ndarray, R_new: np.ndarray) -> np.ndarray:
        """lam_j per infoset of player p (arrays per sequence, entry 0 unused)."""
        raise NotImplementedError

    def step(self) -> None:
        t = self.iteration + 1 - self.epoch
        coef, avg = self.regrets(t), self.averaging(t)
        A = self.problem.A
        s0, s1 = self.players
        g0 = A.matvec(s1.x)
        if not self.alternating:
            g1 = A.rmatvec(s0.x)
        self._predictive_update(0, g0, coef, avg)
        if self.alternating:
            g1 = A.rmatvec(s0.x)
        self._predictive_update(1, -g1, coef, avg)
        self.iteration += 1

    def _predictive_update(self, p: int, g: np.ndarray, coef, avg) -> None:
        """The backend's RM+ update (regrets, the played plan into the average), then the
        predicted strategy max(R + lam_j r, 0) normalized and its plan."""
        T, s = self.problem.treeplexes[p], self.players[p]
        played, R_old = s.b.astype(np.float64), s.R.astype(np.float64)
        self.backend.regret_update(p, g, s, coef, avg, self.plain)  # g: counterfactual values now
        if T.n_infosets:
            first, own = T.start - 1, T.seq_infoset[1:]
            inst = np.zeros(T.n_seqs)
            inst[1:] = g[1:] - np.add.reduceat((played * g)[1:], first)[own]
            R_new = s.R.astype(np.float64)
            lam = self.prediction_weights(p, inst, R_old, R_new)
            q = np.maximum(R_new[1:] + lam[own] * inst[1:], 0.0)
            total = np.add.reduceat(q, first)
            size = (T.end - T.start).astype(np.float64)
            s.b[1:] = np.where(total[own] > 0.0, q / np.where(total > 0.0, total, 1.0)[own], 1.0 / size[own])
            s.x[:] = T.plan_from_behavioral(s.b)


@register("apcfr+")
class AsymmetricPCFRPlus(PredictionWeightSolver):
    """Asymmetric PCFR+, APCFR+ (Meng, Yang, Zhang, Ge & Gao, AAAI 2026, "Faster game
    solving via asymmetry of step sizes", arXiv:2503.12770, section 4.1): at infoset I,

        R^{t+1} = max(R^t + r^t, 0),   Rhat^t = max(R^t + r^{t-1} / (1 + alpha_I^t), 0),

    the strategy played at t is Rhat^t normalized, and the asymmetry adapts per infoset
    (their eq. 3):

        alpha_I^t = min( sqrt( sum_{tau<t} ||r^tau - r^{tau-1}||^2
                               / sum_{tau<t} ||R^{tau+1} - R^tau||^2 ), alpha_max ),

    with R^1 = 0, r^0 = 0 and alpha_max = 5 (the paper's). A ratio 0/0 gives alpha = 0
    (PCFR+'s step), x/0 gives alpha_max. Quadratic averaging (weight t^2) and alternating
    updates, as in the paper's experiments. SAPCFR+ (``sapcfr+``) fixes alpha = 2.
    """

    supports_lower = False

    def __init__(self, problem: Problem, alpha_max: float = 5.0, gamma: float = 2.0, **kw):
        if not (math.isfinite(float(alpha_max)) and float(alpha_max) >= 0.0):
            raise InputError(f"apcfr+: alpha_max must be a finite number >= 0, got {alpha_max!r}")
        if not (math.isfinite(float(gamma)) and float(gamma) >= 0.0):
            raise InputError(f"apcfr+: gamma must be a finite number >= 0, got {gamma!r}")
        self.alpha_max, self.gamma = float(alpha_max), float(gamma)
        self.history = tuple(AsymmetryState(prev_inst=np.zeros(T.n_seqs), dr2=np.zeros(T.n_infosets),
                                            dR2=np.zeros(T.n_infosets)) for T in problem.treeplexes)
        super().__init__(problem, **kw)

    def averaging(self, t):
        return ((t - 1) / t) ** self.gamma, 1.0

    def prediction_weights(self, p, inst, R_old, R_new):
        T = self.problem.treeplexes[p]
        first = T.start - 1
        h = self.history[p]
        h.dr2 += np.add.reduceat((inst[1:] - h.prev_inst[1:]) ** 2, first)
        h.dR2 += np.add.reduceat((R_new[1:] - R_old[1:]) ** 2, first)
        h.prev_inst[:] = inst
        alpha = self.alphas(p)
        return 1.0 / (1.0 + alpha)

    def alphas(self, p: int) -> np.ndarray:
        """alpha_I for the next strategy of player p, per infoset (eq. 3)."""
        dr2, dR2 = self.history[p].dr2, self.history[p].dR2
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(dR2 > 0.0, dr2 / np.where(dR2 > 0.0, dR2, 1.0), np.where(dr2 > 0.0, np.inf, 0.0))
        return np.minimum(np.sqrt(ratio), self.alpha_max)

    def warm_start(self, x, y, weight: float = 1.0) -> None:
        super().warm_start(x, y, weight=weight)
        for h in self.history:  # the prior counts as iteration 1: no prediction or history yet
            for a in (h.prev_inst, h.dr2, h.dR2):
                a[:] = 0.0

    def state_dict(self) -> dict:
        return {**super().state_dict(), **{f"h_{k}": v for k, v in flat_state(self.history).items()}}

    def set_state(self, state: dict) -> None:
        super().set_state(state)
        load_players(self.history, {k[2:]: v for k, v in state.items() if k.startswith("h_")}, self.backend)


@dataclass
class AsymmetryState:
    """One player's APCFR+ history (eq. 3's sums)."""

    prev_inst: np.ndarray  # r^{t-1} per sequence
    dr2: np.ndarray  # sum ||r^tau - r^{tau-1}||^2 per infoset
    dR2: np.ndarray  # sum ||R^{tau+1} - R^tau||^2 per infoset
