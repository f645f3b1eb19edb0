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
(:func:`treeplex.dilated_entropy.prox`, the shifted-gradient form of section 4, gives the
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

On a CSR payoff matrix with dilated-entropy DGFs the whole step runs in one numba call
(:func:`_fused_step`), the same operations in the same order as the generic path, which
serves any operator and any DGF with :class:`~treeplex.dilated_entropy.DilatedEntropy`'s
interface (tested bit for bit).

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

import numba as nb
import numpy as np

from ..dilated_entropy import DilatedEntropy, _sbr
from ..errors import InputError
from ..metrics import evaluate
from ..problem import Problem, SparsePayoff, _csr_matvec
from .base import Solver, register

TUNE_SCALES = (1.0, 0.1, 0.05, 0.01, 0.005)
TUNE_ITERS = 20


@nb.njit(cache=True)
def _lerp(a, b, tau):
    """(1 - tau) a + tau b."""
    out = np.empty_like(a)
    for i in range(len(a)):
        out[i] = (1.0 - tau) * a[i] + tau * b[i]
    return out


_EMPTY = np.zeros(0)


@nb.njit(cache=True)
def _gradient_from(csr, sign, plan):
    """The other player's gradient from ``plan``: sign * M @ plan, M = A^T (sign -1) or A."""
    g = _csr_matvec(csr[0], csr[1], csr[2], plan)
    if sign < 0:
        for k in range(len(g)):
            g[k] = -g[k]
    return g


@nb.njit(cache=True)
def _fused_step(TP, TO, DP, DO, mP, sP, mO, sO, p, o, gp, go, mu_p, mu_o, pm, have_pm, tau, aggressive):
    """the generic path of EGT.step (EGT._trial and the EGT/as loop) in one call; see there.
    T* = (start, end, parent), D* = (beta, log n), m*/s* = CSR matrix and sign giving the
    other player's gradient. Returns (p+, g_p+, mu_p+, o+, g_o+, p~, o_mu(p+) or empty,
    tau (-1 if it underflowed), backtracks, products)."""
    products = 0
    if not have_pm:
        pm = np.empty(len(p))
        _sbr(TP[0], TP[1], TP[2], DP[0], mu_p, DP[1], gp, pm)
    go_m = _gradient_from(mP, sP, pm)
    products += 1
    backtracks = 0
    ot = np.empty(0)
    while True:
        oh = np.empty(len(o))
        _sbr(TO[0], TO[1], TO[2], DO[0], mu_o, DO[1], _lerp(go, go_m, tau), oh)
        gp_new = _lerp(gp, _gradient_from(mO, sO, oh), tau)
        mu_new = (1.0 - tau) * mu_p
        pt = np.empty(len(p))
        p_value = _sbr(TP[0], TP[1], TP[2], DP[0], mu_new, DP[1], gp_new, pt)
        go_new = _lerp(go, _gradient_from(mP, sP, pt), tau)
        products += 2
        if not aggressive:
            break
        ot = np.empty(len(o))
        o_value = _sbr(TO[0], TO[1], TO[2], DO[0], mu_o, DO[1], go_new, ot)
        if -(p_value + o_value) >= 0.0:
            break
        tau *= 0.5
        backtracks += 1
        if tau < 1e-12:
            return p, gp, mu_p, o, go, pt, ot, -1.0, backtracks, products
    return _lerp(p, pt, tau), gp_new, mu_new, _lerp(o, oh, tau), go_new, pt, ot, tau, backtracks, products


def max_abs_entry(problem: Problem) -> float:
    """||A|| = max_ij |A_ij|, the operator norm from l1 to l_inf (EFPE paper, Theorem 4)."""
    op = problem.A
    if hasattr(op, "max_abs_entry"):
        return float(op.max_abs_entry())
    if hasattr(op, "to_sparse"):
        A = op.to_sparse()
        return float(abs(A).max()) if A.nnz else 0.0
    raise InputError(f"{type(op).__name__} cannot give max |A_ij|: pass mu=(mu_x, mu_y) explicitly")


def theory_mu(problem: Problem, dx: DilatedEntropy, dy: DilatedEntropy) -> tuple[float, float]:
    """mu_x, mu_y with mu_x mu_y = ||A||^2 / (phi_X phi_Y) and mu_x Omega_X = mu_y Omega_Y."""
    a = max(max_abs_entry(problem), 1e-300)
    prod = a * a / (dx.modulus * dy.modulus)
    ratio = math.sqrt(dy.omega / dx.omega) if dx.omega > 0 and dy.omega > 0 else 1.0
    return math.sqrt(prod) * ratio, math.sqrt(prod) / ratio


class _DilatedFOM(Solver):
    """Shared setup: one dilated entropy per player and the initial mu (tuned or given)."""

    def __init__(self, problem: Problem, mu="tune", weights: str = "egt", **params):
        super().__init__(problem)
        self.dgf = self._make_dgfs(problem, weights)
        self._params = dict(weights=weights, **params)
        self.tune_gradients = 0
        self.mu_scale = 1.0  # the tuned weight s (mu = s ||A||), 1 when mu is not tuned
        self.mu_x, self.mu_y = self._initial_mu(mu)
        self._grad_offset = -problem.A.gradients  # tuning is not charged to this run

    def _make_dgfs(self, problem: Problem, weights: str):
        """One DGF per player. A subclass may return any object with DilatedEntropy's
        interface (e.g. the perturbed entropy of :mod:`treeplex.refine.perturbed`)."""
        return DilatedEntropy(problem.X, weights), DilatedEntropy(problem.Y, weights)

    def _initial_mu(self, mu) -> tuple[float, float]:
        if isinstance(mu, str):
            if mu not in ("tune", "theory"):
                raise InputError(f"mu must be 'tune', 'theory', a number or a pair, got {mu!r}")
            if mu == "theory":
                return theory_mu(self.problem, *self.dgf)
            a = max(max_abs_entry(self.problem), 1e-300)
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


@register("egt")
class EGT(_DilatedFOM):
    """Excessive gap technique with the dilated entropy (EGT paper, Algorithms 1-4).

    Parameters: ``mu`` ("tune", "theory", a number or a pair (mu_x, mu_y)); ``weights``
    ("egt" or "kroer2017", see :mod:`treeplex.dilated_entropy`); ``balance``: step on the
    player with the larger mu (section 5, default) instead of alternating (Algorithm 1).
    ``average()`` and ``current()`` both return the EGT iterate (x^t, y^t).
    """

    aggressive = False

    def __init__(self, problem: Problem, mu="tune", weights: str = "egt", balance: bool = True):
        self.balance = bool(balance)
        super().__init__(problem, mu=mu, weights=weights, balance=balance)
        self.t = 0
        self.tau = 0.5 if self.aggressive else 2.0 / 3.0
        self.backtracks = 0
        self._sbr_cache = None  # [x_mu(y), y_mu(x)] of the current iterate, None where unknown
        self._fused = self._fused_sides()
        self._init_point()
        if self.aggressive:  # Decr needs EGV >= 0 to start from: raise mu until it holds
            while self.excessive_gap() < 0:
                self.mu_x, self.mu_y = 2 * self.mu_x, 2 * self.mu_y
                self._init_point()

    def _fused_sides(self):
        """Per player: treeplex arrays, (beta, log n), the CSR matrix giving the other player's
        gradient from this player's plan and its sign; None unless the fused step applies."""
        A = self.problem.A
        if not (isinstance(A, SparsePayoff) and all(type(d) is DilatedEntropy for d in self.dgf)):
            return None
        a, at = A.csr
        return tuple(((T.start, T.end, T.parent), (d.beta, d._logn), m, sign)
                     for T, d, m, sign in zip(self.problem.treeplexes, self.dgf, (at, a), (-1.0, 1.0)))

    def _init_point(self):
        """Algorithm 1, lines 1-2: y0 = y_mu(x_w), x0 = x_mu(y0); keeps g_x = A y, g_y = -A^T x."""
        dx, dy = self.dgf
        self.y = dy.sbr(self._grad_for(0, dx.center), self.mu_y)[0]
        self.gx = self._grad_for(1, self.y)
        self.x = dx.sbr(self.gx, self.mu_x)[0]
        self.gy = self._grad_for(0, self.x)

    def excessive_gap(self) -> float:
        """EGV = f(x) - phi(y) = -(SBR value of x at g_x + SBR value of y at g_y); no products."""
        return -(self.dgf[0].sbr(self.gx, self.mu_x)[1] + self.dgf[1].sbr(self.gy, self.mu_y)[1])

    def _state(self, i):
        return (self.x, self.gx, self.mu_x) if i == 0 else (self.y, self.gy, self.mu_y)

    def _trial(self, i: int, tau: float, pm: np.ndarray, go_m: np.ndarray):
        """Algorithm 2 focused on player i, from p_m = p_mu(o) and the gradient go_m it induces
        on the other player; two products. Returns the new (p, g_p, mu_p, o, g_o) and
        p~ = p_{mu+}(o+) with its SBR value."""
        (p, gp, mp), (o, go, mo) = self._state(i), self._state(1 - i)
        oh = self.dgf[1 - i].sbr(_lerp(go, go_m, tau), mo)[0]  # o^ = o_mu(p^), p^ = (1-tau) p + tau p_m
        gp_new = _lerp(gp, self._grad_for(1 - i, oh), tau)
        mp_new = (1 - tau) * mp
        pt, value = self.dgf[i].sbr(gp_new, mp_new)  # p~ (line 3, see the module docstring)
        go_new = _lerp(go, self._grad_for(i, pt), tau)
        return (_lerp(p, pt, tau), gp_new, mp_new, _lerp(o, oh, tau), go_new), (pt, value)

    def step(self) -> None:
        if self.balance:
            i = 0 if self.mu_x > self.mu_y else 1  # Algorithm 3, line 6
        else:
            i = self.t % 2  # Algorithm 1, line 6: x on even t
        if not self.aggressive:
            self.tau = 2.0 / (self.t + 3)
        pm = self._sbr_cache[i] if self._sbr_cache is not None else None
        new, pt, ot, self.tau, backtracks = (self._step_fused if self._fused else self._step_generic)(i, pm)
        self.backtracks += backtracks
        self._sbr_cache = [pt, ot] if i == 0 else [ot, pt]
        p1, gp1, mp1, o1, go1 = new
        if i == 0:
            self.x, self.gx, self.mu_x, self.y, self.gy = p1, gp1, mp1, o1, go1
        else:
            self.y, self.gy, self.mu_y, self.x, self.gx = p1, gp1, mp1, o1, go1
        self.t += 1
        self.iteration += 1

    def _step_generic(self, i: int, pm):
        """Algorithm 2 (EGT) or 4 (EGT/as) focused on player i through the DGF and operator
        interfaces. Returns the new state, the new p~ = p_mu(o) and (EGT/as) o_mu(p), tau and
        the number of backtracks."""
        _, gp, mp = self._state(i)
        if pm is None:
            pm = self.dgf[i].sbr(gp, mp)[0]
        go_m = self._grad_for(i, pm)
        tau, backtracks = self.tau, 0
        while True:
            new, (pt, p_value) = self._trial(i, tau, pm, go_m)
            if not self.aggressive:
                return new, pt, None, tau, 0
            ot, o_value = self.dgf[1 - i].sbr(new[4], self._state(1 - i)[2])
            if -(p_value + o_value) >= 0:  # EGV(x+, y+) >= 0
                return new, pt, ot, tau, backtracks
            tau *= 0.5  # Algorithm 4: halve tau and retry
            backtracks += 1
            if tau < 1e-12:
                raise RuntimeError("EGT/as: no step size keeps the excessive gap condition (tau < 1e-12)")

    def _step_fused(self, i: int, pm):
        """:meth:`_step_generic` in one numba call (:func:`_fused_step`): CSR payoff matrix and
        dilated entropies only. Same operations in the same order, so the same iterates."""
        (TP, DP, mP, sP), (TO, DO, mO, sO) = self._fused[i], self._fused[1 - i]
        (p, gp, mp), (o, go, mo) = self._state(i), self._state(1 - i)
        have = pm is not None
        *new, pt, ot, tau, backtracks, products = _fused_step(
            TP, TO, DP, DO, mP, sP, mO, sO, p, o, gp, go, mp, mo, pm if have else _EMPTY, have, self.tau,
            self.aggressive)
        self.problem.A.gradients += products
        if tau < 0:
            raise RuntimeError("EGT/as: no step size keeps the excessive gap condition (tau < 1e-12)")
        return tuple(new), pt, (ot if self.aggressive else None), tau, backtracks

    def load_state_dict(self, state: dict) -> None:
        super().load_state_dict(state)
        self._sbr_cache = None

    def average(self):
        return self.x.copy(), self.y.copy()

    def current(self):
        return self.x.copy(), self.y.copy()

    def gap_bound(self) -> float:
        """mu_x Omega_X + mu_y Omega_Y: bounds the gap whenever EGV >= 0."""
        return self.mu_x * self.dgf[0].omega + self.mu_y * self.dgf[1].omega

    def trace_extra(self) -> dict:
        return {"mu_x": self.mu_x, "mu_y": self.mu_y, "tau": self.tau, "excessive_gap": self.excessive_gap(),
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

    def __init__(self, problem: Problem, mu="tune", weights: str = "egt"):
        self.x, self.y = problem.X.uniform(), problem.Y.uniform()
        self.sum_x, self.sum_y = np.zeros_like(self.x), np.zeros_like(self.y)
        super().__init__(problem, mu=mu, weights=weights)

    def step(self) -> None:
        dx, dy = self.dgf
        xw = dx.prox(self.x, self._grad_for(1, self.y), self.mu_x)
        yw = dy.prox(self.y, self._grad_for(0, self.x), self.mu_y)
        self.x = dx.prox(self.x, self._grad_for(1, yw), self.mu_x)
        self.y = dy.prox(self.y, self._grad_for(0, xw), self.mu_y)
        self.sum_x += xw
        self.sum_y += yw
        self.iteration += 1

    def average(self):
        if self.iteration == 0:
            return self.x.copy(), self.y.copy()
        return self.sum_x / self.iteration, self.sum_y / self.iteration

    def current(self):
        return self.x.copy(), self.y.copy()

    def trace_extra(self) -> dict:
        return {"mu_x": self.mu_x, "mu_y": self.mu_y}
