"""The CFR family on the treeplex: one gradient and two passes per player per iteration.

Every variant is a :class:`RegretSolver` that states, for iteration t = 1, 2, ..., the
scalars of the backend's regret update (:mod:`treeplex.backends.numba_regret`):

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

import numpy as np

from ..backends import HostArrays, flat_state
from ..errors import InputError, nonnegative
from ..model.problem import Problem
from .base import Solver, average_plan, load_players, register

TINY = 1e-300  # floor for log(prior) in Hedge recentering




class RegretSolver(Solver):
    """Counterfactual regret minimization over the treeplexes of ``problem``: per iteration,
    the backend's ``cfr_iteration`` with this variant's scalars.

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
    - ``storage`` (default ``"float64"``, and ``"float32"`` on the fused path): ``"float32"``
      halves the solver state (regrets, strategies, the running average: 16 instead of 32
      bytes per sequence) for large games; gradients, the average handed to gap checks and
      the gaps stay in float64.
    - ``compression`` (default 0): 16 stores the fused engine's regrets in int16 and strategy
      sums in uint16 with a float64 scale per public node (postflop-solver's compression: 4
      instead of 8 bytes per hand-action; updates in float64; the convergence cost is in
      docs/benchmarks.md); needs the fused engine and a variant without predictions.
    - ``fused`` (default None: automatic): True runs a postflop spot on the fused engine
      (:mod:`treeplex.poker.fused`: one walk of the public tree per player and iteration,
      8 bytes per sequence in float32, checks by one best-response walk, the same iterates
      to rounding), which needs the numba backend, regret matching (no Hedge), no prior, no
      lower bounds and the class's own ``step``; node locks, weighted ones included, are
      played by its walks. None picks it for postflop
      spots of at least ``poker.postflop.FUSED_MIN_SEQS`` sequences where it applies (the
      sequence form otherwise); False never. Measured (ARCHITECTURE.md, docs/benchmarks.md): on TURN (4e6
      sequences) a fused iteration took about 1.6x the sequence form's; on FLOP-FAST (1e8)
      1.04x, with a third of the memory and checks a third as costly.
    - ``lower``: lower bounds of a xi-perturbed treeplex (:class:`~.base.Solver`): regret
      matching on Delta played through b = l + (1 - L) p (EFPE; regret-matching variants).

    Node locks (``problem.locks``): the backend plays the lock at locked infosets and keeps
    their regrets at 0 (:mod:`treeplex.core.locks`), for every variant, on the sequence form
    and on the fused engine (:meth:`treeplex.poker.fused.FusedTree.set_locks`).

    ``plain`` (class attribute): True for variants whose regrets are plain regret matching
    (pos = neg, kappa = 1, lam = 0), so that only that kernel is compiled
    (:func:`~treeplex.backends.numba_regret.kernel_args`).
    """

    plain = False
    supports_lower = True
    restartable = True

    @property
    def supports_general_sum(self) -> bool:
        """Each player's regrets are on its own utility (``-rmatvec`` is player 1's gradient,
        :class:`~treeplex.model.problem.GeneralSumPayoff`; the fused engine's terminal values
        are per player), as postflop-solver runs raked spots: every variant that steps
        through the regret update."""
        return type(self).step is RegretSolver.step

    @property
    def supports_locks(self) -> bool:
        """Node locks are applied in the backend's regret update (:mod:`treeplex.core.locks`),
        so every variant that steps through it respects them."""
        return type(self).step is RegretSolver.step

    def __init__(self, problem: Problem, alternating: bool = True, prior=None, prior_weight: float = 100.0,
                 restart_weight: float = 10.0, storage: str | None = None, lower=None, fused: bool | None = None,
                 compression: int = 0):
        super().__init__(problem, lower)
        if storage not in (None, "float64", "float32"):
            raise InputError(f"storage must be 'float64' or 'float32', got {storage!r}")
        if fused not in (None, True, False):
            raise InputError(f"fused must be true or false (or left out: chosen by size), got {fused!r}")
        if compression not in (0, 16):
            raise InputError(f"compression must be 16 (16-bit regrets and sums) or 0 (none), got {compression!r}")
        self.alternating = bool(alternating)
        self.prior_weight = nonnegative(prior_weight, "prior_weight")
        self.restart_weight = nonnegative(restart_weight, "restart_weight")
        self.epoch = 0  # iteration at the last (re)start: schedules count t from there
        if problem.locks is not None and prior is not None:
            raise InputError(f"{self.name}: node locks need the sequence form without a prior (no warm start)")
        auto = True if compression and fused is None else fused  # 16-bit storage is the fused engine's
        self.engine = self._fused_engine(auto, prior, storage or "float32", compression == 16)
        if compression and self.engine is None:
            raise InputError(f"{self.name}: compression=16 needs the fused engine (fused=true, a postflop spot)")
        if problem.locks is not None:
            self.restartable = False  # a restart is a warm start, which would overwrite the locks
        if self.engine is not None:
            self.players = self.engine.players
            self.restartable = False  # a restart is a warm start, which needs the sequence-form state
        else:
            self.players = tuple(self.backend.regret_state(p, np.dtype(storage or "float64"), self.bounds[p])
                                 for p in (0, 1))
        if prior is not None:
            self.warm_start(*prior, weight=self.prior_weight)

    def _fused_engine(self, fused, prior, storage, compressed):
        """The postflop fused engine (:mod:`treeplex.poker.fused`) with ``fused=True`` (an
        InputError where it does not apply), or with ``fused=None`` where it applies and
        ``game.fused_by_default()`` (from ``poker.postflop.FUSED_MIN_SEQS`` sequences); None otherwise."""
        if fused is False:
            return None
        game = getattr(self.problem, "game", None)
        why = None
        if not hasattr(game, "fused_tree"):
            why = "the problem is not a public-tree poker game (postflop, nlfh52)"
        elif self.problem.backend_name != "numba":
            why = f"the {self.problem.backend_name} backend is chosen"
        elif self.lower is not None and self.problem.locks is None:  # (weighted locks: fused)
            why = "lower bounds need the sequence form"
        elif prior is not None and not getattr(game, "fused_warm_start", False):
            why = "a prior needs the sequence form (the fused engine starts from one only on a flop re-solve)"
        elif self.regrets(1)[5] > 0.0:
            why = "Hedge is not regret matching"
        elif type(self).step is not RegretSolver.step:
            why = f"{self.name} has its own step"
        if fused is None:
            if why is not None or not game.fused_by_default():
                return None
        elif why is not None:
            raise InputError(f"{self.name}: fused=true does not apply here: {why}")
        from ..poker.fused import FusedEngine

        predictive = any(self.regrets(t)[3] != 1.0 or self.regrets(t)[4] != 0.0 for t in (1, 2, 3))
        if compressed and predictive:
            raise InputError(f"{self.name}: compression=16 is for regret matching without predictions "
                             "(cfr+, dcfr, dcfr-ps, lcfr, ...)")
        return FusedEngine(game, np.dtype(storage), predictive, compressed, self.problem.locks)

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
        if self.engine is not None:
            self.engine.iteration(self.players, self.regrets(t), self.averaging(t), self.alternating)
            self.problem.A.charge(2)  # a walk per player is the work of a product each
        else:
            self.backend.cfr_iteration(self.players, self.regrets(t), self.averaging(t), self.plain,
                                       self.alternating, self.bounds)
        self.iteration += 1

    def average(self) -> tuple[np.ndarray, np.ndarray]:
        """Weighted average of the played plans (the current iterate before any step)."""
        if self.engine is not None:
            return self.engine.plans(self.players, "average")
        return tuple(average_plan(self.backend, s.xsum, s.x, T) for s, T in zip(self.players, self.problem.treeplexes))

    def profile(self, which: str = "average"):
        """On the fused engine, the profile ``which`` kept as this solver's state
        (:class:`~treeplex.poker.fused.FusedProfile`: the plans when called, or read at the
        nodes a result saves); None on the sequence form."""
        if self.engine is None:
            return None
        from ..poker.fused import FusedProfile

        return FusedProfile(self.engine, self.players, which)

    def current(self) -> tuple[np.ndarray, np.ndarray]:
        """The plans the next iteration will play."""
        if self.engine is not None:
            return self.engine.plans(self.players, "current")
        return tuple(np.array(self.backend.to_numpy(s.x), dtype=np.float64) for s in self.players)

    @property
    def cheap_checks(self) -> bool:
        """Whether a gap check is one walk (the fused engine): the driver then spaces checks
        to at most ``run.schedule.CHECK_SHARE`` of the solver time."""
        return self.engine is not None

    def evaluate_profile(self, which: str, value: bool = False):
        """The :class:`~treeplex.metrics.Evaluation` of the ``"average"`` or ``"current"``
        profile by one best-response walk of the fused engine (no products; ``value`` by a
        second walk if asked, else NaN), or None on the sequence-form path."""
        if self.engine is None:
            return None
        from ..model.metrics import Evaluation

        br0, br1 = self.engine.best_response(self.players, which)
        if self.problem.general_sum:  # the Nash gap needs both players' own values (a second walk)
            v, v1 = self.engine.values(self.players, which)
            return Evaluation(value=v, br0=br0, br1=br1, value1=v1)
        v = self.engine.value(self.players, which) if value else math.nan
        return Evaluation(value=v, br0=br0, br1=br1)

    @property
    def _holder(self):
        """Where the players' arrays live: the backend, or the host for the fused engine
        (whose checkpoints must not make the sequence form's backend)."""
        return HostArrays if self.engine is not None else self.backend

    def state_dict(self) -> dict:
        return {**super().state_dict(), "epoch": self.epoch,
                **{k: self._holder.to_numpy(v) for k, v in flat_state(self.players).items()}}

    def set_state(self, state: dict) -> None:
        self.epoch = int(state["epoch"])
        load_players(self.players, state, self._holder)

    def check_state(self, state: dict) -> None:
        """:meth:`Solver.check_state`, and on the fused engine what its walks assume of a
        stored state: strategy sums and their root >= 0, and the 16-bit scales >= 0 (a value
        is its code times its node's scale: a negative scale flips the node's regrets)."""
        super().check_state(state)
        if self.engine is None:
            return
        for p in (0, 1):
            for k in (f"S{p}", f"root{p}", f"scale{p}"):
                a = state[k]
                if a.dtype.kind == "f" and (a < 0).any():
                    raise InputError(f"checkpoint array state/{k} has negative entries (at {int(np.argmax(a < 0))})")

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
        if self.lower is not None:
            raise InputError("efpe: warm starts are not supported on a perturbed treeplex")
        if self.problem.locks is not None:
            raise InputError(f"{self.name}: warm starts and restarts would overwrite the node locks")
        if self.engine is not None and not getattr(self.engine.tree, "fused_warm_start", False):
            raise InputError(f"{self.name}: warm starts and restarts need the sequence form (fused=false)")
        for p, (T, plan) in enumerate(zip(self.problem.treeplexes, (x, y))):
            err = T.check_plan(plan, tol=1e-6)
            if err is not None:
                raise InputError(f"warm start: player {p}'s prior is not a realization plan: {err}")
        if self.engine is not None:  # a flop re-solve's (:meth:`treeplex.poker.fused_lines.FusedLines.warm_start`)
            self.engine.tree.warm_start(self.players, (x, y), weight, clamp=self.regrets(1)[2] == 0.0)
            self.epoch = self.iteration - 1
            return
        A, bk = self.problem.A, self.backend
        hedge = self.regrets(1)[5] > 0.0
        ux, uy = self.problem.X.uniform(), self.problem.Y.uniform()
        grads = ((A.matvec(y, count=False), A.matvec(uy, count=False)),
                 (-A.rmatvec(x, count=False), -A.rmatvec(ux, count=False)))
        for p, (T, plan, (g, gu), s) in enumerate(zip(self.problem.treeplexes, (x, y), grads, self.players)):
            b = T.behavioral_from_plan(plan)
            v, vu = bk.counterfactual_values(p, g, b), bk.counterfactual_values(p, gu, b)
            R = np.zeros(T.n_seqs)
            if T.n_infosets:  # per infoset j (slices tile sequences 1..n-1): reduceat over them
                first, own = T.start - 1, T.seq_infoset[1:]
                r = v[1:] - np.add.reduceat((b * v)[1:], first)[own]
                if hedge:
                    R[1:] = weight * r
                else:
                    scale = np.maximum.reduceat(np.abs(v[1:]), first) + np.maximum.reduceat(np.abs(vu[1:]), first)
                    R[1:] = weight * (r + scale[own] * b[1:])
            if not hedge and self.regrets(1)[2] == 0.0:
                np.maximum(R, 0.0, out=R)
            dtype = s.b.dtype
            s.R, s.b = bk.asarray(R, dtype), bk.asarray(b, dtype)
            s.x, s.xsum = bk.asarray(T.plan_from_behavioral(b), dtype), bk.asarray(np.zeros(T.n_seqs), dtype)
            s.logprior = bk.asarray(np.log(np.maximum(b, TINY)) if hedge else np.zeros(0))
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


@register("dcfr-ps")
class PostflopSolverDCFR(RegretSolver):
    """DCFR as postflop-solver schedules it (b-inary/postflop-solver, src/solver.rs,
    ``DiscountParams``), with c = t - 1 its 0-based iteration: positive regrets discounted by
    (c-1)^1.5 / ((c-1)^1.5 + 1) (0 for c <= 1), negative ones by 0.5, and the average sum by
    ((c - p) / (c - p + 1))^3 with p the largest power of 4 <= c (0 for c = 0), so the
    average restarts when c is a power of 4 (1, 4, 16, 64, ...)."""

    def regrets(self, t):
        return _discount(max(t - 2, 0), 1.5), 0.5, -math.inf, 1.0, 0.0, 0.0

    def averaging(self, t):
        c = t - 1
        p = 4 ** ((c.bit_length() - 1) // 2) if c > 0 else 0
        return ((c - p) / (c - p + 1)) ** 3, 1.0


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


def _discount(n: int, power: float, c: float = 1.0) -> float:
    """n^power / (n^power + c), the DCFR discount applied after n iterations (0 at n = 0)."""
    if n == 0:
        return 0.0
    if math.isinf(power):
        return 1.0 if power > 0 else 0.0
    np_ = float(n) ** power
    return np_ / (np_ + c)
