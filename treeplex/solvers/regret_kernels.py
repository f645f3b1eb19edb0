"""The two treeplex passes of one CFR step, shared by the whole CFR family.

Unified view (Waugh & Bagnell 2015): a CFR step for one player is one gradient g (A y for
player 0, -A^T x for player 1: the player's own payoff per sequence, opponent and chance
reach folded in), then

1. :func:`regret_pass`, bottom-up: counterfactual values, instantaneous regrets, cumulative
   regrets and the next local strategy at every infoset;
2. :func:`plan_pass`, top-down: the next realization plan, and the weighted sum of plans
   that the average strategy is read from.

At infoset j with local strategy b (sequences s in [start_j, end_j)), counterfactual values
are v[s] = g[s] + (values of the infosets below s), the infoset's value is
V_j = sum_s b[s] v[s], and the instantaneous regret is r[s] = v[s] - V_j (Zinkevich et al.
2007; no reach division is needed: g already carries the opponent's and chance's reach).

The variants differ only in scalars, passed per iteration t:

    R[s] <- max(R[s] * (pos if R[s] > 0 else neg) + r[s], floor)     (discounted regrets)
    q[s] <- kappa * R[s] + lam * r[s]                                 (optimistic prediction)
    b[s] <- q[s]^+ / sum q^+  (uniform if all q <= 0)                 (regret matching)
    b[s] <- p[s] exp(eta q[s]) / sum p exp(eta q)   when eta > 0      (Hedge; p = prior, or 1)

    xsum <- rho * xsum + omega * x,  then  x <- plan of b             (weighted averaging)

The kernels take these scalars as (pos, floor, general, eta) from :func:`kernel_args`:
``general`` is None for plain regret matching (pos = neg, kappa = 1, lam = 0: CFR, CFR+,
LCFR) or the tuple (neg, kappa, lam); ``eta`` is None for regret matching or Hedge's step.
numba compiles one specialization per None-or-not pattern and prunes the other branches, so
a process compiles only the update it runs (the first CFR+ run on the README's river also
compiled the Hedge and discounted bodies before: most of its JIT time).

Sign convention: every player maximizes its own g here; the caller negates player 1's.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .. import threads  # noqa: F401  (before any parallel kernel runs)
from ..problem import _csr_matvec


def kernel_args(coef, plain: bool = False) -> tuple:
    """(pos, floor, general, eta) for the kernels from coef = (pos, neg, floor, kappa, lam, eta).

    ``plain=True`` (a variant whose every iteration is plain regret matching) passes
    general = None whenever pos = neg, kappa = 1 and lam = 0; otherwise (neg, kappa, lam) is
    always passed, so that a variant compiles one kernel even where its first iteration is
    plain (DCFR's discounts are both 0 at t = 1).
    """
    pos, neg, floor, kappa, lam, eta = coef
    general = None if plain and pos == neg and kappa == 1.0 and lam == 0.0 else (neg, kappa, lam)
    return pos, floor, general, (eta if eta > 0.0 else None)


@nb.njit(cache=True)
def regret_pass(start, end, parent, v, b, R, pos, floor, general, eta, logprior):
    """One bottom-up regret update; returns sum_s g[s] x[s] (the player's payoff of b).

    ``v`` holds the gradient g on entry and the counterfactual values on exit; ``b`` the
    local strategy played (in) and the next one (out); ``R`` the cumulative regrets (in/out).
    Scalars as in the module docstring (:func:`kernel_args`); ``logprior`` (log p per
    sequence, or an empty array for p = 1) is used by Hedge only.
    """
    centered = len(logprior) > 0
    for j in range(len(start) - 1, -1, -1):
        a, e = start[j], end[j]
        value = 0.0
        for s in range(a, e):
            value += b[s] * v[s]
        total = 0.0
        top = -np.inf
        for s in range(a, e):
            inst = v[s] - value
            if general is None:
                acc = max(R[s] * pos + inst, floor)
                q = acc
            else:
                neg, kappa, lam = general
                acc = max(R[s] * (pos if R[s] > 0.0 else neg) + inst, floor)
                q = kappa * acc + lam * inst
            R[s] = acc
            if eta is not None:  # Hedge: keep the exponent, subtract its max below
                q = eta * q + (logprior[s] if centered else 0.0)
                top = max(top, q)
            else:  # regret matching: keep q^+ (branch-free; the signs are unpredictable)
                q = max(q, 0.0)
                total += q
            b[s] = q
        if eta is not None:
            for s in range(a, e):
                b[s] = np.exp(b[s] - top)
                total += b[s]
            for s in range(a, e):
                b[s] /= total
        elif total > 0.0:
            inv = 1.0 / total  # one division per infoset (2-3% faster CFR+ steps on the river)
            for s in range(a, e):
                b[s] = b[s] * inv
        else:
            for s in range(a, e):
                b[s] = 1.0 / (e - a)
        v[parent[j]] += value
    return v[0]


@nb.njit(cache=True)
def plan_pass(start, end, parent, b, x, xsum, rho, omega):
    """xsum <- rho * xsum + omega * x (the plan just played), then x <- plan of ``b``.

    Sequences are visited in index order, which is top-down (a parent sequence precedes its
    infoset), so x[parent] is already the new plan when x[s] is overwritten.
    """
    xsum[0] = rho * xsum[0] + omega * x[0]
    x[0] = 1.0
    for j in range(len(start)):
        px = x[parent[j]]
        for s in range(start[j], end[j]):
            xsum[s] = rho * xsum[s] + omega * x[s]
            x[s] = px * b[s]


@nb.njit(cache=True, parallel=True)
def update_parts(parts, start, end, parent, v, b, R, x, xsum, pos, floor, general, eta, logprior, rho, omega):
    """:func:`regret_pass` then :func:`plan_pass`, one part of independent subtrees at a time,
    parts on parallel threads; returns the player's payoff of b as :func:`regret_pass` does.

    ``parts`` = (lo, hi, ptr) from :meth:`~treeplex.treeplex.Treeplex.subtree_parts`: part k
    is the runs of infosets of equal size [lo[q], hi[q]) for q in [ptr[k], ptr[k+1]), whole
    subtrees below the empty sequence, so parts write disjoint sequences except sequence 0,
    which gets the parts' sums in part order. Every other output equals the serial passes'
    bit for bit (the same arithmetic in the same order).
    """
    lo, hi, ptr = parts
    n = len(ptr) - 1
    tops = np.empty(n)
    xsum[0] = rho * xsum[0] + omega * x[0]
    x[0] = 1.0
    for k in nb.prange(n):
        tops[k] = _regret_runs(lo, hi, ptr[k], ptr[k + 1], start, end, parent, v, b, R,
                               pos, floor, general, eta, logprior)
        _plan_runs(lo, hi, ptr[k], ptr[k + 1], start, end, parent, b, x, xsum, rho, omega)
    for k in range(n):
        v[0] += tops[k]
    return v[0]


# Runs of infosets of one size k: the dispatchers below call the inline run bodies with k a
# literal for the common sizes, so that their loops over actions unroll (the regret pass of the
# Endgame-2 river measured about 2x faster than with a loop bound read per infoset).


@nb.njit(cache=True)
def _regret_runs(lo, hi, q0, q1, start, end, parent, v, b, R, pos, floor, general, eta, logprior):
    """The regret update at every infoset of the runs q1-1, ..., q0, each [lo[q], hi[q])
    walked backwards, adding its value to its parent sequence; the values of the infosets
    below the empty sequence are summed and returned instead of added to v[0].

    Plain regret matching (general = None: CFR, CFR+, LCFR) compiles without the
    sign-dependent discount and the prediction (about 20% faster on the river)."""
    if eta is not None:
        return _hedge_runs(lo, hi, q0, q1, start, end, parent, v, b, R, pos, floor, general, eta, logprior)
    if general is None:
        plain, neg, kappa, lam = True, pos, 1.0, 0.0
    else:
        plain, (neg, kappa, lam) = False, general
    root = 0.0
    for q in range(q1 - 1, q0 - 1, -1):
        j0, j1 = lo[q], hi[q]
        k = end[j0] - start[j0]
        root += _rm_sized(j0, j1, k, plain, start, parent, v, b, R, pos, neg, floor, kappa, lam)
    return root


@nb.njit(inline="always")
def _rm_sized(j0, j1, k, plain, start, parent, v, b, R, pos, neg, floor, kappa, lam):
    """:func:`_rm_run` with k a literal for the common sizes."""
    if k == 2:
        return _rm_run(j0, j1, 2, plain, start, parent, v, b, R, pos, neg, floor, kappa, lam)
    if k == 3:
        return _rm_run(j0, j1, 3, plain, start, parent, v, b, R, pos, neg, floor, kappa, lam)
    if k == 4:
        return _rm_run(j0, j1, 4, plain, start, parent, v, b, R, pos, neg, floor, kappa, lam)
    if k == 5:
        return _rm_run(j0, j1, 5, plain, start, parent, v, b, R, pos, neg, floor, kappa, lam)
    return _rm_run(j0, j1, k, plain, start, parent, v, b, R, pos, neg, floor, kappa, lam)


@nb.njit(inline="always")
def _rm_run(j0, j1, k, plain, start, parent, v, b, R, pos, neg, floor, kappa, lam):
    """Regret matching (every variant but Hedge) at infosets j1-1, ..., j0, each of k actions:
    :func:`regret_pass`'s arithmetic (``plain``: with pos = neg, kappa = 1, lam = 0 folded
    in). Returns the summed values of those below sequence 0."""
    root = 0.0
    for j in range(j1 - 1, j0 - 1, -1):
        a = start[j]
        value = 0.0
        for i in range(k):
            value += b[a + i] * v[a + i]
        total = 0.0
        for i in range(k):
            s = a + i
            inst = v[s] - value
            if plain:
                acc = max(R[s] * pos + inst, floor)
                q = max(acc, 0.0)
            else:
                acc = max(R[s] * (pos if R[s] > 0.0 else neg) + inst, floor)
                q = max(kappa * acc + lam * inst, 0.0)
            R[s] = acc
            total += q
            b[s] = q
        if total > 0.0:
            inv = 1.0 / total
            for i in range(k):
                b[a + i] = b[a + i] * inv
        else:
            for i in range(k):
                b[a + i] = 1.0 / k
        p = parent[j]
        if p == 0:
            root += value
        else:
            v[p] += value
    return root


@nb.njit(cache=True)
def _hedge_runs(lo, hi, q0, q1, start, end, parent, v, b, R, pos, floor, general, eta, logprior):
    """:func:`_regret_runs` for Hedge (eta > 0): :func:`regret_pass`'s arithmetic."""
    centered = len(logprior) > 0
    neg, kappa, lam = (pos, 1.0, 0.0) if general is None else general
    root = 0.0
    for q in range(q1 - 1, q0 - 1, -1):
        for j in range(hi[q] - 1, lo[q] - 1, -1):
            a, e = start[j], end[j]
            value = 0.0
            for s in range(a, e):
                value += b[s] * v[s]
            top = -np.inf
            for s in range(a, e):
                inst = v[s] - value
                acc = max(R[s] * (pos if R[s] > 0.0 else neg) + inst, floor)
                R[s] = acc
                q_s = eta * (kappa * acc + lam * inst) + (logprior[s] if centered else 0.0)
                top = max(top, q_s)
                b[s] = q_s
            total = 0.0
            for s in range(a, e):
                b[s] = np.exp(b[s] - top)
                total += b[s]
            for s in range(a, e):
                b[s] /= total
            p = parent[j]
            if p == 0:
                root += value
            else:
                v[p] += value
    return root


@nb.njit(cache=True)
def _plan_runs(lo, hi, q0, q1, start, end, parent, b, x, xsum, rho, omega):
    """:func:`plan_pass` over the runs [lo[q], hi[q]), q = q0, ..., q1-1, except sequence 0."""
    for q in range(q0, q1):
        j0, j1 = lo[q], hi[q]
        k = end[j0] - start[j0]
        if k == 2:
            _plan_run(j0, j1, 2, start, parent, b, x, xsum, rho, omega)
        elif k == 3:
            _plan_run(j0, j1, 3, start, parent, b, x, xsum, rho, omega)
        elif k == 4:
            _plan_run(j0, j1, 4, start, parent, b, x, xsum, rho, omega)
        elif k == 5:
            _plan_run(j0, j1, 5, start, parent, b, x, xsum, rho, omega)
        else:
            _plan_run(j0, j1, k, start, parent, b, x, xsum, rho, omega)


@nb.njit(inline="always")
def _plan_run(j0, j1, k, start, parent, b, x, xsum, rho, omega):
    """:func:`plan_pass`'s arithmetic at infosets j0, ..., j1-1, each of k actions."""
    for j in range(j0, j1):
        a = start[j]
        px = x[parent[j]]
        for i in range(k):
            xsum[a + i] = rho * xsum[a + i] + omega * x[a + i]
            x[a + i] = px * b[a + i]


@nb.njit(cache=True)
def cfr_iteration(X, Y, a, at, sx, sy, coef, avg, alternating):
    """One whole iteration on a CSR payoff matrix in a single numba call.

    The same operations as the generic path (gradient, :func:`regret_pass`, :func:`plan_pass`
    for player 0 then player 1), without the Python overhead that dominates small games.
    ``X``, ``Y`` are (start, end, parent); ``a``, ``at`` the CSR triples of A and A^T; ``sx``,
    ``sy`` the players' (b, R, x, xsum, logprior); ``coef`` = (pos, floor, general, eta) from
    :func:`kernel_args` and ``avg`` = (rho, omega) as in the module docstring.
    """
    pos, floor, general, eta = coef
    rho, omega = avg
    g0 = _csr_matvec(a[0], a[1], a[2], sy[2])
    if not alternating:
        g1 = _csr_matvec(at[0], at[1], at[2], sx[2])
    regret_pass(X[0], X[1], X[2], g0, sx[0], sx[1], pos, floor, general, eta, sx[4])
    plan_pass(X[0], X[1], X[2], sx[0], sx[2], sx[3], rho, omega)
    if alternating:
        g1 = _csr_matvec(at[0], at[1], at[2], sx[2])
    for i in range(len(g1)):
        g1[i] = -g1[i]
    regret_pass(Y[0], Y[1], Y[2], g1, sy[0], sy[1], pos, floor, general, eta, sy[4])
    plan_pass(Y[0], Y[1], Y[2], sy[0], sy[2], sy[3], rho, omega)


@nb.njit(cache=True)
def counterfactual_values(start, end, parent, v, b):
    """Bottom-up only: ``v`` (gradient in) becomes the counterfactual values under ``b``."""
    for j in range(len(start) - 1, -1, -1):
        value = 0.0
        for s in range(start[j], end[j]):
            value += b[s] * v[s]
        v[parent[j]] += value


def average_plan(xsum: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """The weighted average realization plan xsum / xsum[0] (``fallback`` while empty), in float64."""
    return xsum / np.float64(xsum[0]) if xsum[0] > 0.0 else fallback.astype(np.float64)
