"""Public-chance sampling CFR (``mccfr-pcs``) for the poker engine's postflop spots.

Johanson, Bard, Lanctot, Gibson & Bowling, AAMAS 2012, "Efficient Nash equilibrium
approximation through Monte Carlo counterfactual regret minimization" (PCS): each iteration
samples the public chance events only, here one board runout (the turn and/or river card),
and walks the public tree with *full hand vectors*, every hand of both ranges, so each
player's gradient is one term of A's sum over runouts. In the unified view (Waugh & Bagnell
2015) this is CFR with a stochastic gradient in place of A y and -A^T x.

Sampling. A runout is drawn card by card with the public tree's chance weights, normalized:
at a chance node on board B the public tree deals one card per suit orbit k with weight
|orbit(k)| / (cards left), so k is drawn with q(k) = |orbit(k)| / |left(B)| (every chance node
on B deals the same cards, so one card per board is drawn and every line of betting that
reaches B sees it). The runout's boards are B_0 (the starting board: the trunk), B_1 = B_0 + k_1
and, on a flop spot, B_2 = B_1 + k_2, with q(B_0) = 1, q(B_1) = q(k_1), q(B_2) = q(k_1) q(k_2|B_1).

Gradient. The operator (:class:`~treeplex.poker.streets_operator.StreetsPayoff`) sums over
groups of terminals that share a board. The sampled gradient runs the same kernel
(``_apply_groups``) over the groups of B_0, B_1, B_2 only, each terminal's value multiplied by
1 / q(its board). A terminal t on board B is in the sample with probability q(B), so
E[g~] = sum_t q(B_t) g_t / q(B_t) = A y exactly (and -A^T x alike): the estimate is
unbiased, and ``tests/test_pcs.py`` checks it by enumerating every runout with its
probability. With suit isomorphism (the reduced game A_red = E0^T M E1) the gather E y and the
scatter E^T are done over the sampled boards' sequences only.

Regret update. Only the infosets of the public nodes on B_0, B_1, B_2 see a nonzero gradient;
elsewhere the sampled counterfactual values are 0. Their regrets go through the backend's
kernel (:meth:`~treeplex.backends.numba_backend.NumbaBackend.regret_update_runs`: the regret
pass then the plan pass of :func:`~treeplex.backends.numba_regret.update` over those infosets'
runs, bottom-up then top-down), so the CFR variants apply: ``variant`` = ``dcfr`` (default;
``alpha``, ``beta``, ``gamma``), ``cfr``, ``cfr+``, ``cfr-rm+``, ``lcfr``, ``pcfr+``, with the
scalars of :mod:`treeplex.solvers.cfr` at iteration t. Which is best depends on the noise: on
the README's TURN spot (44 river cards, wide ranges), after 4000 iterations exploitability is
0.61% of the pot with ``dcfr``, 0.77% ``cfr+``, 0.98% ``pcfr+``, 1.9% ``lcfr``, 2.2% ``cfr``
(hence the default); on the tiny turn spot of ``tests/test_pcs.py``, where one runout swings
the values more, it is the other way round (20k iterations: gap 0.028 ``cfr``, 0.049 ``lcfr``,
0.23 ``dcfr``, 0.29 ``cfr+``), as RM+'s floor and heavier recent weights follow noisy
iterates. An infoset not sampled keeps its regrets and strategy (for CFR/CFR+ that is what a
zero instantaneous regret would give; discounts of DCFR/LCFR act lazily, at the iterations
that update the infoset, as in :mod:`.mccfr`). Before the update both players' plans are
refreshed top-down on the sampled boards
(:meth:`~treeplex.backends.numba_backend.NumbaBackend.plan_runs`: the trunk moved since a
subtree was last sampled), so the opponent's gradient and the average read the plan played.

Average strategy. The running sum of plans gains, at iteration t, omega_t x_t / q(B) on the
sequences of the nodes on each sampled board B (omega_t the variant's averaging weight; rho
discounts applied exactly through a common scale, as in :mod:`.mccfr`). Given the past, a
sequence on board B is in the sample with probability q(B), so the sum is an unbiased estimate
of full-width CFR's sum of played plans, sum_t omega_t x_t. The estimate is not exactly a
plan (a subtree's sum need not add up to its parent sequence's), so the average is read per
infoset: its local strategy is the sum normalized over the infoset's sequences (uniform where
nothing was added), then made a plan top-down. Per infoset the factor 1/q(B) is a constant,
so this equals the "chance-sampled" average (plans of the sampled subtrees only, unweighted;
Zinkevich et al. 2007) and is consistent: both numerator and denominator are sums whose
ratio converges to full-width CFR's average over the same iterates.

Determinism: ``seed`` seeds ``self.rng`` (checkpointed by :class:`~.base.Solver`); one uniform
per dealt card, so a resumed run repeats the uninterrupted one bit for bit.

Accounting: sampled products are counted 0 in ``gradients`` (an int); ``trace_extra`` reports
``samples`` (runouts), ``terminals_touched`` and ``groups_touched`` (terminal groups evaluated,
both players' gradients), and ``products`` = the fraction of the full products' work
(per group: both ranges' hands plus 4 per terminal, the operator's own split) summed over the
sampled gradients, i.e. the full-product equivalents.

Refused: problems that are not postflop spots with a card to deal (river spots and the river
endgame have no public chance: use ``cfr+``), and backends other than numba.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..backends import flat_state
from ..errors import InputError, nonnegative
from ..poker.public_tree import permute_card
from ..poker.streets_operator import _apply_groups, scratch
from .base import Solver, load_players, register
from .mccfr import MCCFR, VARIANTS, _normalize

PLAIN = ("cfr", "cfr-rm+", "cfr+", "lcfr")


def _refuse(problem) -> str | None:
    from ..poker.postflop import PostflopGame

    game = getattr(problem, "game", None)
    if not isinstance(game, PostflopGame):
        return "mccfr-pcs: public-chance sampling is for postflop spots (game=postflop) with a turn or river to deal"
    if len(game.board) == 5 or game.tree.n_chance == 0:
        return f"mccfr-pcs: {game.name} deals no card (a river spot): nothing to sample, use cfr+"
    if game.bunching is not None:
        return "mccfr-pcs: a bunched spot's deal weights are not products of two ranges (its sweeps need them); use dcfr"
    return None


@register("mccfr-pcs")
class PublicChanceSampling(Solver):
    """Public-chance sampling CFR on a postflop spot (module docstring). Parameters: ``seed``
    (default 0), ``variant`` (``dcfr`` default, ``cfr``, ``cfr+``, ``cfr-rm+``, ``lcfr``, ``dcfr``,
    ``pcfr+``), ``alpha``/``beta``/``gamma`` (DCFR's; ``gamma`` for pcfr+)."""

    regrets = MCCFR.regrets
    averaging = MCCFR.averaging

    def __init__(self, problem, seed: int = 0, variant: str = "dcfr", alpha: float = 1.5, beta: float = 0.0,
                 gamma: float = 2.0, lower=None):
        super().__init__(problem, lower)
        why = _refuse(problem)
        if why is not None:
            raise InputError(why)
        if self.backend.name != "numba":
            raise InputError(f"mccfr-pcs: needs the numba backend, not {self.backend.name!r}")
        if variant not in VARIANTS:
            raise InputError(f"mccfr-pcs: variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise InputError(f"mccfr-pcs: seed must be a whole number >= 0, got {seed!r}")
        self.variant, self.seed = variant, int(seed)
        self.alpha, self.gamma = nonnegative(alpha, "alpha"), nonnegative(gamma, "gamma")
        self.beta = float(beta)
        self.plain = variant in PLAIN
        self.rng = np.random.default_rng(self.seed)
        self.samples = self.terminals_touched = self.groups_touched = 0
        self.products = 0.0
        self.avg_scale = 1.0
        game = self.game = problem.game
        A = problem.A
        self.red, self.inner = A.red, A.inner  # the suit reduction (None without isomorphism), the full operator
        Ts = problem.treeplexes
        self.players = tuple(self.backend.regret_state(p, np.dtype("float64"), None) for p in (0, 1))
        self._v = tuple(np.zeros(T.n_seqs) for T in Ts)  # sampled gradients (scratch, zero between uses)
        full = tuple(game.n_seqs(p) for p in (0, 1))
        self._full_in = tuple(np.zeros(n) for n in full) if self.red is not None else None
        self._full_out = tuple(np.zeros(n) for n in full) if self.red is not None else None
        self._red_of = (self.red.red_of(0), self.red.red_of(1)) if self.red is not None else None
        self._vals = self.inner.value.copy()  # terminal values x 1/q, set on the sampled boards
        self._deals = self._chance_table()
        self._boards: dict = {}
        t = game.tree
        self._nodes_on = [{}, {}]  # per player: board id -> its decision nodes there, in order
        for v in range(t.n_nodes):
            self._nodes_on[t.actor[v]].setdefault(t.board[v], []).append(v)
        self._terms_on: dict = {}
        for i, b in enumerate(t.term_board):
            self._terms_on.setdefault(b, []).append(i)
        self._runouts: dict = {}
        self._work = []  # per input player: cumulative work of its groups (the operator's measure)
        for q in (0, 1):
            ptr = self.inner._groups[q][0]
            w = len(self.inner.cards[0]) + len(self.inner.cards[1]) + 4.0 * np.diff(ptr)
            self._work.append(np.concatenate(([0.0], np.cumsum(w))))

    # ------------------------------------------------------------------ runouts

    def _chance_table(self) -> dict:
        """board id -> (cards dealt there, their probabilities q(k), child board ids)."""
        t = self.game.tree
        out = {}
        for c in range(t.n_chance):
            b = t.chance_board[c]
            if b in out:
                continue
            board = t.boards[b]
            left = [k for k in t.deck if k not in board]
            stab = t.stabilizer(b)
            orbit = {k: min(permute_card(k, s) for s in stab) for k in left}
            cards = list(t.chance_cards[c])
            size = np.array([sum(1 for j in left if orbit[j] == k) for k in cards], dtype=np.float64)
            out[b] = (cards, size / len(left), [t._board_ids[board + (k,)] for k in cards])
        return out

    def runouts(self) -> list[tuple[tuple[int, ...], float]]:
        """Every runout (the card indices drawn, one per deal) with its probability."""
        out = []

        def walk(b, path, prob):
            if b not in self._deals:
                out.append((tuple(path), prob))
                return
            _, q, kids = self._deals[b]
            for i in range(len(q)):
                walk(kids[i], path + [i], prob * q[i])

        walk(0, [], 1.0)
        return out

    def _sample(self) -> tuple[int, ...]:
        path, b = [], 0
        while b in self._deals:
            _, q, kids = self._deals[b]
            u = self.rng.random()
            i = min(int(np.searchsorted(np.cumsum(q), u, side="right")), len(q) - 1)
            path.append(i)
            b = kids[i]
        return tuple(path)

    def _board(self, b: int) -> dict:
        """What board b touches: per player the infoset runs and sequence ranges of its nodes
        (solver layout, and the full hand layout under isomorphism); its terminals; per input
        player its group range."""
        got = self._boards.get(b)
        if got is not None:
            return got
        game, t, inner = self.game, self.game.tree, self.inner
        d = {"terms": np.array(self._terms_on.get(b, []), dtype=np.int64)}
        d["groups"] = [tuple(int(i) for i in np.searchsorted(inner._groups[q][2], [b, b + 1])) for q in (0, 1)]
        for p, T in enumerate(self.problem.treeplexes):
            lo, hi, k, s0, s1, f0, f1 = [], [], [], [], [], [], []
            for v in self._nodes_on[p].get(b, []):
                kv = len(t.actions[v])
                base = self.red.rbase[p][v] if self.red is not None else game.bases[p][v]
                j0 = int(np.searchsorted(T.start, base))
                cnt = self.red.width(p, v) if self.red is not None else len(game.hands[p])
                lo.append(j0)
                hi.append(j0 + cnt)
                k.append(kv)
                s0.append(base)
                s1.append(base + cnt * kv)
                f0.append(game.bases[p][v])
                f1.append(game.bases[p][v] + len(game.hands[p]) * kv)
            d[p] = tuple(np.array(a, dtype=np.int64) for a in (lo, hi, k, s0, s1, f0, f1))
        self._boards[b] = d
        return d

    def _runout(self, path: tuple[int, ...]) -> dict:
        """The sampled boards of ``path`` merged: per player the infoset runs (one part,
        increasing), sequence ranges with their 1/q, full-layout ranges; terminals with 1/q;
        per input player the group ranges with 1/q."""
        got = self._runouts.get(path)
        if got is not None:
            return got
        boards, b, q = [(0, 1.0)], 0, 1.0
        for i in path:
            _, qs, kids = self._deals[b]
            q *= qs[i]
            b = kids[i]
            boards.append((b, q))
        ds = [(self._board(b), 1.0 / q) for b, q in boards]
        R = {"terms": np.concatenate([d["terms"] for d, _ in ds]),
             "term_w": np.concatenate([np.full(len(d["terms"]), w) for d, w in ds]),
             "groups": [[(d["groups"][p][0], d["groups"][p][1], w) for d, w in ds if d["groups"][p][1] > d["groups"][p][0]]
                        for p in (0, 1)]}
        for p in (0, 1):
            cols = [np.concatenate([d[p][i] for d, _ in ds]) for i in range(7)]
            w = np.concatenate([np.full(len(d[p][0]), w) for d, w in ds])
            order = np.argsort(cols[0], kind="stable")
            lo, hi, k, s0, s1, f0, f1 = (c[order] for c in cols)
            part = (lo.astype(np.int32), hi.astype(np.int32), k.astype(np.int64), np.array([0, len(lo)], dtype=np.int64))
            R[p] = {"part": part, "seq": (s0, s1, w[order]), "full": (f0, f1)}
        self._runouts[path] = R
        return R

    # ------------------------------------------------------------------ gradients

    def _gradient(self, p: int, R: dict, plan_other: np.ndarray) -> None:
        """The sampled gradient of player p (A y for 0, -A^T x for 1) into ``self._v[p]`` on
        the runout's sequences (entry 0 included); zero elsewhere."""
        q, inner = 1 - p, self.inner
        vals = self._vals
        vals[R["terms"]] = inner.value[R["terms"]] * R["term_w"]
        if self.red is not None:
            f0, f1 = R[q]["full"]
            vec = self._full_in[q]
            _gather_ranges(plan_other, self._red_of[q], vec, f0, f1)
            out = self._full_out[p]
        else:
            vec, out = plan_other, self._v[p]
        args = (*inner._groups[q], inner.kind, vals, 1.0 if p == 0 else -1.0, vec, inner.weight[q], inner.cards[q],
                *inner.order[q], inner.coef[p], inner.cards[p], inner.same[p], *inner.order[p], inner.boards,
                inner.base[p], inner.stride[p], out, scratch(len(inner.cards[q]), len(inner.cards[p])))
        for g0, g1, _ in R["groups"][q]:
            _apply_groups(g0, g1, *args)
            self.groups_touched += g1 - g0
            self.products += (self._work[q][g1] - self._work[q][g0]) / self._work[q][-1]
        self.terminals_touched += len(R["terms"])
        s0, s1, _ = R[p]["seq"]
        sign = 1.0 if p == 0 else -1.0
        if self.red is not None:
            f0, f1 = R[p]["full"]
            _scatter_ranges(out, self._red_of[p], self._v[p], f0, f1, sign)
        else:
            _scale_ranges(self._v[p], s0, s1, sign)

    def sampled_gradient(self, p: int, plan_other: np.ndarray, path: tuple[int, ...]) -> np.ndarray:
        """Player p's sampled gradient (A y for 0, -A^T x for 1) against ``plan_other`` on the
        runout ``path`` (card indices, as :meth:`runouts`), as a new array; for tests."""
        R = self._runout(tuple(path))
        self._gradient(p, R, np.asarray(plan_other, dtype=np.float64))
        g = self._v[p].copy()
        s0, s1, _ = R[p]["seq"]
        _zero_ranges(self._v[p], s0, s1)
        return g

    # ------------------------------------------------------------------ iteration

    def step(self) -> None:
        t = self.iteration + 1
        rho, omega = self.averaging(t)
        if rho == 0.0 or self.avg_scale * rho < 1e-200:
            for s in self.players:  # forget the sum (rho = 0) or renormalize it before the weights overflow
                s.xsum *= rho * self.avg_scale
            self.avg_scale = 1.0
        else:
            self.avg_scale *= rho
        w = omega / self.avg_scale
        coef = self.regrets(t)
        R = self._runout(self._sample())
        bk = self.backend
        for p, s in enumerate(self.players):
            bk.plan_runs(p, s, R[p]["part"])  # the plans played now on the sampled boards
        for p, s in enumerate(self.players):  # alternating: player 1 against player 0's new plan
            s0, s1, qinv = R[p]["seq"]
            _accumulate(s.xsum, s.x, s0, s1, qinv, w)
            self._gradient(p, R, self.players[1 - p].x)
            v = self._v[p]
            bk.regret_update_runs(p, v, s, coef, self.plain, R[p]["part"])
            _zero_ranges(v, s0, s1)
        self.samples += 1
        self.iteration += 1

    def average(self) -> tuple[np.ndarray, np.ndarray]:
        """Plans of the per-infoset normalized sums (module docstring)."""
        return tuple(T.plan_from_behavioral(_normalize(T, s.xsum)) for T, s in zip(self.problem.treeplexes, self.players))

    def current(self) -> tuple[np.ndarray, np.ndarray]:
        return tuple(T.plan_from_behavioral(s.b) for T, s in zip(self.problem.treeplexes, self.players))

    def trace_extra(self) -> dict:
        return {"samples": self.samples, "terminals_touched": self.terminals_touched,
                "groups_touched": self.groups_touched, "products": round(self.products, 6), **super().trace_extra()}

    def state_dict(self) -> dict:
        return {**super().state_dict(), "samples": self.samples, "terminals_touched": self.terminals_touched,
                "groups_touched": self.groups_touched, "products": float(self.products), "avg_scale": self.avg_scale,
                **{k: v.copy() for k, v in flat_state(self.players).items()}}

    def set_state(self, state: dict) -> None:
        self.samples = int(state["samples"])
        self.terminals_touched = int(state["terminals_touched"])
        self.groups_touched = int(state["groups_touched"])
        self.products = float(state["products"])
        self.avg_scale = float(state["avg_scale"])
        load_players(self.players, state, self.backend)


# ---------------------------------------------------------------------- range kernels


@nb.njit(cache=True)
def _accumulate(xsum, x, s0, s1, w, scale):
    """xsum[0] += scale x[0]; xsum[s] += scale w[r] x[s] over the ranges [s0[r], s1[r])."""
    xsum[0] += scale * x[0]
    for r in range(len(s0)):
        c = scale * w[r]
        for s in range(s0[r], s1[r]):
            xsum[s] += c * x[s]


@nb.njit(cache=True)
def _gather_ranges(src, red_of, dst, f0, f1):
    """dst[i] = src[red_of[i]] over index 0 and the ranges [f0[r], f1[r])."""
    dst[0] = src[red_of[0]]
    for r in range(len(f0)):
        for i in range(f0[r], f1[r]):
            dst[i] = src[red_of[i]]


@nb.njit(cache=True)
def _scatter_ranges(src, red_of, dst, f0, f1, sign):
    """dst[red_of[i]] += sign src[i] over index 0 and the ranges; src cleared there."""
    dst[red_of[0]] += sign * src[0]
    src[0] = 0.0
    for r in range(len(f0)):
        for i in range(f0[r], f1[r]):
            dst[red_of[i]] += sign * src[i]
            src[i] = 0.0


@nb.njit(cache=True)
def _scale_ranges(v, s0, s1, sign):
    v[0] *= sign
    for r in range(len(s0)):
        for s in range(s0[r], s1[r]):
            v[s] *= sign


@nb.njit(cache=True)
def _zero_ranges(v, s0, s1):
    v[0] = 0.0
    for r in range(len(s0)):
        for s in range(s0[r], s1[r]):
            v[s] = 0.0
