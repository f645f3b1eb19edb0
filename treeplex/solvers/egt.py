"""First-order methods with the dilated entropy: EGT, EGT/as (EGT paper, Kroer, Farina,
Sandholm 2018, sections 2 and 5) and mirror prox (Nemirovski 2004).

Sign convention: player 0 (x) maximizes x^T A y, player 1 (y) minimizes it, so each player
*maximizes* <g, .> with its own gradient g_x = A y, g_y = -A^T x. In these terms

    phi(y) = max_x <A y, x> - mu_x d_X(x)        (smoothed best-response value of x)
    f(x)   = min_y <A^T x, y> + mu_y d_Y(y)      (smoothed best-response value of y)
    EGV(x, y) = f(x) - phi(y)                    (excessive gap; the condition is EGV >= 0)

and EGV >= 0 implies  gap(x, y) <= mu_x Omega_X + mu_y Omega_Y - EGV  (section 2).

Step (Algorithm 2) focused on x, with x_m = x_mu(y) the smoothed best response to y:

    x^ = (1-tau) x + tau x_m;   y^ = y_mu(x^);   y+ = (1-tau) y + tau y^
    x~ = argmax <tau/(1-tau) A y^, x'> - mu_x D(x' || x_m)     (the prox step of line 3)
    x+ = (1-tau) x + tau x~;    mu_x+ = (1-tau) mu_x

Line 3 is evaluated without grad d: x_m maximizes <A y, .> - mu_x d at an interior point, so
mu_x grad d(x_m) = A y + E^T lambda, and E^T lambda is constant on the treeplex. Hence
x~ = argmax <A y + tau/(1-tau) A y^, x'> - mu_x d(x') = argmax <A y+, x'> - mu_x+ d(x'),
the smoothed best response to the new y+ at the new mu_x+: no logarithms (nor their
underflow near the boundary), and its value is the phi(y+) the excessive gap check needs.
(:func:`treeplex.core.dilated_entropy.prox`, the shifted-gradient form of section 4, gives the
same point; the tests compare the two.)

Gradient computations (products A y or A^T x) per step: A^T x_m, A y^, A^T x~. Both
gradients g_x = A y and g_y = -A^T x of the current iterate are kept up to date by linearity
(y+ is a convex combination of y and y^, x+ of x and x~), so the step needs no other product
and the excessive gap of the new iterate costs none. EGT thus makes 3 products per iteration.
EGT/as makes 3 per iteration plus 2 per backtrack: a retry with a smaller tau reuses A^T x_m
but must recompute A y^ and A^T x~, which both depend nonlinearly on tau. (The paper counts
4 + about 1 per backtrack for its implementation; ours never makes a product it can avoid.)
Treeplex passes (smoothed best responses) per step: y^ and x~, plus x_m unless the previous
step left it, plus the check's y_mu(x+) for EGT/as. EGT/as always has x_m (the previous x~
or check), so it makes 3 passes per iteration; EGT makes 3 when the focus switches player.

The step is written once, over the operator's products and the backend's DGF passes
(``problem.backend.dilated_entropy``), so it serves any operator, any backend and the
perturbed entropy of the EFPE paper alike.

Initial point (Algorithm 1, line 1-2): y0 = y_mu(x_w), x0 = x_mu(y0), x_w = argmin d_X
(the uniform strategy); 3 products.

Initial mu. "theory": mu_x mu_y = ||A||^2 / (phi_X phi_Y) (Nesterov's condition, ||A|| =
max |A_ij| the l1 operator norm, phi the DGF moduli), split so that mu_x Omega_X = mu_y Omega_Y.
It is safe and very conservative (on Leduc, ~50 chips against useful values ~0.005).
"tune" (default): mu_x = mu_y = s ||A|| with the overall weight s among 1, 0.1, 0.05, 0.01,
0.005 whose first 20 iterations end with the smallest gap (EFPE paper, section 4, which tunes
this weight on each DGF). Measuring it in units of ||A|| makes the choice independent of the
payoff unit; on Leduc ||A|| = 0.87 chips, so the candidates are close to the paper's absolute
weights. Tuning products are not charged to the run (they are in ``tune_gradients``), as in
the papers' plots.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..backends import flat_state
from ..errors import InputError
from ..model.metrics import evaluate
from ..model.problem import Problem
from .base import Solver, load_players, register

TUNE_SCALES = (1.0, 0.1, 0.05, 0.01, 0.005)
TUNE_ITERS = 20


@dataclass
class FOMState:
    """One player's iterate in EGT and mirror prox."""

    plan: np.ndarray  # the iterate (x or y)
    grad: np.ndarray  # the other player's gradient it faces: A y for x, -A^T x for y (EGT)
    mu: float  # its smoothing weight


def theory_mu(problem: Problem, dx, dy) -> tuple[float, float]:
    """mu_x, mu_y with mu_x mu_y = ||A||^2 / (phi_X phi_Y) and mu_x Omega_X = mu_y Omega_Y."""
    a = max(problem.A.max_abs_entry(), 1e-300)
    prod = a * a / (dx.modulus * dy.modulus)
    ratio = math.sqrt(dy.omega / dx.omega) if dx.omega > 0 and dy.omega > 0 else 1.0
    return math.sqrt(prod) * ratio, math.sqrt(prod) / ratio


class _DilatedFOM(Solver):
    """Shared setup: one dilated entropy per player (perturbed on Q^l when ``lower`` is
    given) and the initial mu (tuned or given).

    ``mu="tune"`` on a perturbed treeplex tunes at xi = 0 as the EFPE paper does (section 4):
    the run starts from the mu that the same solver and weights tune to without perturbation.
    """

    supports_lower = True

    def __init__(self, problem: Problem, mu="tune", weights: str = "egt", lower=None, **params):
        super().__init__(problem, lower)
        self.dgf = tuple(self.backend.dilated_entropy(p, weights, self.bounds[p]) for p in (0, 1))
        self._params = dict(weights=weights, lower=lower, **params)  # of the tuning trials
        self.tune_gradients = 0
        self.mu_scale = 1.0  # the tuned weight s (mu = s ||A||), 1 when mu is not tuned
        if lower is not None and isinstance(mu, str) and mu == "tune" and any(np.any(l) for l in lower):
            zero = tuple(np.zeros(T.n_seqs) for T in problem.treeplexes)  # the same DGF at xi = 0
            plain = type(self)(problem, mu="tune", **{**self._params, "lower": zero})
            mu = (plain.mu_x, plain.mu_y)
        self.players = tuple(FOMState(plan=d.center, grad=np.zeros(0), mu=m)
                             for d, m in zip(self.dgf, self._initial_mu(mu)))
        self._grad_offset = -problem.A.gradients  # tuning is not charged to this run

    @property
    def mu_x(self) -> float:
        return self.players[0].mu

    @property
    def mu_y(self) -> float:
        return self.players[1].mu

    def _initial_mu(self, mu) -> tuple[float, float]:
        if isinstance(mu, str):
            if mu not in ("tune", "theory"):
                raise InputError(f"mu must be 'tune', 'theory', a number or a pair, got {mu!r}")
            if mu == "theory":
                return theory_mu(self.problem, *self.dgf)
            a = max(self.problem.A.max_abs_entry(), 1e-300)
            self.mu_scale = self._tune((a, a))
            return a * self.mu_scale, a * self.mu_scale
        pair = (mu, mu) if np.isscalar(mu) else tuple(mu)
        if len(pair) != 2 or not all(float(m) > 0 for m in pair):
            raise InputError(f"mu must be > 0 (one number or a pair), got {mu!r}")
        return float(pair[0]), float(pair[1])

    def _tune(self, base: tuple[float, float]) -> float:
        """The scale of ``base`` whose first TUNE_ITERS iterations end with the smallest gap."""
        start = self.problem.A.gradients
        best, best_gap = TUNE_SCALES[0], math.inf
        for s in TUNE_SCALES:
            trial = type(self)(self.problem, mu=(base[0] * s, base[1] * s), **self._params)
            for _ in range(TUNE_ITERS):
                trial.step()
            gap = evaluate(self.problem, *trial.average()).gap
            if gap < best_gap:
                best, best_gap = s, gap
        self.tune_gradients = self.problem.A.gradients - start
        return best

    def _grad_for(self, player: int, plan: np.ndarray) -> np.ndarray:
        """The *other* player's gradient induced by ``player``'s plan (one product):
        x -> g_y = -A^T x, y -> g_x = A y."""
        return -self.problem.A.rmatvec(plan) if player == 0 else self.problem.A.matvec(plan)

    def state_dict(self) -> dict:
        return {**super().state_dict(), **flat_state(self.players)}

    def set_state(self, state: dict) -> None:
        load_players(self.players, state, self.backend)

    def trace_extra(self) -> dict:
        return {"mu_x": self.mu_x, "mu_y": self.mu_y, **super().trace_extra()}


@register("egt")
class EGT(_DilatedFOM):
    """Excessive gap technique with the dilated entropy (EGT paper, Algorithms 1-4).

    Parameters: ``mu`` ("tune", "theory", a number or a pair (mu_x, mu_y)); ``weights``
    ("egt" or "kroer2017", see :mod:`treeplex.core.dilated_entropy`); ``balance``: step on the
    player with the larger mu (section 5, default) instead of alternating (Algorithm 1).
    ``average()`` and ``current()`` both return the EGT iterate (x^t, y^t).
    """

    aggressive = False

    def __init__(self, problem: Problem, mu="tune", weights: str = "egt", balance: bool = True, lower=None):
        self.balance = bool(balance)
        super().__init__(problem, mu=mu, weights=weights, balance=balance, lower=lower)
        self.t = 0
        self.tau = 0.5 if self.aggressive else 2.0 / 3.0
        self.backtracks = 0
        self._sbr_cache = [None, None]  # x_mu(y), y_mu(x) of the current iterate where known
        self._init_point()
        if self.aggressive:  # Decr needs EGV >= 0 to start from: raise mu until it holds
            while self.excessive_gap() < 0:
                for s in self.players:
                    s.mu *= 2
                self._init_point()

    @property
    def x(self) -> np.ndarray:
        return self.players[0].plan

    @property
    def y(self) -> np.ndarray:
        return self.players[1].plan

    def _init_point(self):
        """Algorithm 1, lines 1-2: y0 = y_mu(x_w), x0 = x_mu(y0); keeps g_x = A y, g_y = -A^T x."""
        sx, sy = self.players
        sy.plan = self.dgf[1].sbr(self._grad_for(0, self.dgf[0].center), sy.mu)[0]
        sx.grad = self._grad_for(1, sy.plan)
        sx.plan = self.dgf[0].sbr(sx.grad, sx.mu)[0]
        sy.grad = self._grad_for(0, sx.plan)

    def excessive_gap(self) -> float:
        """EGV = f(x) - phi(y) = -(SBR value of x at g_x + SBR value of y at g_y); no products."""
        return -sum(d.sbr(s.grad, s.mu)[1] for d, s in zip(self.dgf, self.players))

    def step(self) -> None:
        """Algorithm 2 (EGT) or 4 (EGT/as) focused on player i (Algorithm 3, line 6: the
        larger mu, or Algorithm 1: x on even t): the step of the module docstring, retried
        with tau halved while EGV(x+, y+) < 0 for EGT/as."""
        if self.balance:
            i = 0 if self.mu_x > self.mu_y else 1
        else:
            i = self.t % 2
        if not self.aggressive:
            self.tau = 2.0 / (self.t + 3)
        P, O = self.players[i], self.players[1 - i]
        pm = self._sbr_cache[i]
        if pm is None:
            pm = self.dgf[i].sbr(P.grad, P.mu)[0]  # p_m = p_mu(o)
        go_m = self._grad_for(i, pm)
        tau = self.tau
        while True:
            oh = self.dgf[1 - i].sbr(self.backend.lerp(O.grad, go_m, tau), O.mu)[0]  # o^ = o_mu(p^)
            gp_new = self.backend.lerp(P.grad, self._grad_for(1 - i, oh), tau)
            mu_new = (1 - tau) * P.mu
            pt, p_value = self.dgf[i].sbr(gp_new, mu_new)  # p~ (line 3, see the module docstring)
            go_new = self.backend.lerp(O.grad, self._grad_for(i, pt), tau)
            ot = None
            if not self.aggressive:
                break
            ot, o_value = self.dgf[1 - i].sbr(go_new, O.mu)
            if -(p_value + o_value) >= 0:  # EGV(x+, y+) >= 0
                break
            tau *= 0.5  # Algorithm 4: halve tau and retry
            self.backtracks += 1
            if tau < 1e-12:
                raise RuntimeError("EGT/as: no step size keeps the excessive gap condition (tau < 1e-12)")
        P.plan, P.grad, P.mu = self.backend.lerp(P.plan, pt, tau), gp_new, mu_new
        O.plan, O.grad = self.backend.lerp(O.plan, oh, tau), go_new
        self.tau = tau
        self._sbr_cache = [pt, ot] if i == 0 else [ot, pt]
        self.t += 1
        self.iteration += 1

    def state_dict(self) -> dict:
        return {**super().state_dict(), "t": self.t, "tau": self.tau, "backtracks": self.backtracks}

    def set_state(self, state: dict) -> None:
        super().set_state(state)
        self.t, self.tau, self.backtracks = int(state["t"]), float(state["tau"]), int(state["backtracks"])
        self._sbr_cache = [None, None]

    def average(self):
        return self.current()

    def current(self):
        """(x, y) as NumPy arrays (copied back from a device backend)."""
        return tuple(np.array(self.backend.to_numpy(a), dtype=np.float64) for a in (self.x, self.y))

    def gap_bound(self) -> float:
        """mu_x Omega_X + mu_y Omega_Y: bounds the gap whenever EGV >= 0."""
        return self.mu_x * self.dgf[0].omega + self.mu_y * self.dgf[1].omega

    def trace_extra(self) -> dict:
        return {**super().trace_extra(), "tau": self.tau, "excessive_gap": self.excessive_gap(),
                "gap_bound": self.gap_bound(), "backtracks": self.backtracks}


@register("egt-as")
class EGTAS(EGT):
    """EGT/as: EGT with aggressive mu reduction (Algorithms 3-4): tau starts at 0.5 and is
    halved, with the step retried, whenever the excessive gap condition fails; mu balancing.
    If the initial point violates the condition, both mu are doubled until it holds."""

    aggressive = True


@register("mirror-prox")
class MirrorProx(_DilatedFOM):
    """Mirror prox (Nemirovski 2004) with the dilated entropy, constant prox weights mu_x, mu_y:

        w = (argmax <A y, .> - mu_x D(. || x),  argmax <-A^T x, .> - mu_y D(. || y))
        z+ = (argmax <A y_w, .> - mu_x D(. || x),  argmax <-A^T x_w, .> - mu_y D(. || y))

    and the reported strategy is the average of the w's. mu_x mu_y >= ||A||^2/(phi_X phi_Y)
    guarantees gap <= (mu_x Omega_X + mu_y Omega_Y) / T. Four products per iteration.
    """

    supports_lower = False

    def __init__(self, problem: Problem, mu="tune", weights: str = "egt", lower=None):
        super().__init__(problem, mu=mu, weights=weights, lower=lower)
        self.sums = tuple(np.zeros_like(s.plan) for s in self.players)

    def step(self) -> None:
        (dx, dy), (sx, sy) = self.dgf, self.players
        xw = dx.prox(sx.plan, self._grad_for(1, sy.plan), sx.mu)
        yw = dy.prox(sy.plan, self._grad_for(0, sx.plan), sy.mu)
        sx.plan = dx.prox(sx.plan, self._grad_for(1, yw), sx.mu)
        sy.plan = dy.prox(sy.plan, self._grad_for(0, xw), sy.mu)
        self.sums[0][:] += xw
        self.sums[1][:] += yw
        self.iteration += 1

    def average(self):
        if self.iteration == 0:
            return self.current()
        return tuple(self.backend.to_numpy(s / self.iteration) for s in self.sums)

    def current(self):
        return tuple(np.array(self.backend.to_numpy(s.plan), dtype=np.float64) for s in self.players)

    def state_dict(self) -> dict:
        return {**super().state_dict(), "sum0": self.sums[0], "sum1": self.sums[1]}

    def set_state(self, state: dict) -> None:
        super().set_state(state)
        self.sums = (np.array(state["sum0"], dtype=np.float64), np.array(state["sum1"], dtype=np.float64))
