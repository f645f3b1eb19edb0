"""The numba kernels of the regret update, written once for the whole CFR family.

Unified view (Waugh & Bagnell 2015): a CFR step for one player is one gradient g (A y for
player 0, -A^T x for player 1: the player's own payoff per sequence, opponent and chance
reach folded in), then

1. the regret pass, bottom-up: counterfactual values, instantaneous regrets, cumulative
   regrets and the next local strategy at every infoset;
2. the plan pass, top-down: the next realization plan, and the weighted sum of plans that
   the average strategy is read from.

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

Lower bounds l (the xi-perturbed treeplex of the EFPE paper) are an optional argument:
regret matching then runs on Delta and is played through b = l + (1 - L_j) p (Farina, Kroer
& Sandholm, ICML 2017, "Regret minimization in behaviorally-constrained zero-sum games"),
with regrets r = v - <p, v>, <p, v> = (<b, v> - <l, v>) / (1 - L_j); the value passed up is
<b, v>, what was played. ``lower`` is None (no bounds) or the pair (l per sequence, L per
infoset); numba compiles one specialization per None-or-not pattern and prunes the rest.

The scalars reach the kernels as (pos, floor, general, eta) from :func:`kernel_args`:
``general`` is None for plain regret matching (pos = neg, kappa = 1, lam = 0: CFR, CFR+,
LCFR) or the tuple (neg, kappa, lam); ``eta`` is None for regret matching or Hedge's step.

Infosets are visited in *runs* of consecutive infosets (:func:`runs`); a long run of one
number of actions goes to a kernel compiled with that number a constant for 2-5 actions, so
its loops unroll (about 2x faster regret passes on the Endgame-2 river than a loop bound read
per infoset); short runs are merged and read each infoset's size. Regret matching is written
once, in :func:`_rm_run`; Hedge once, in :func:`_hedge_run`. The kernels are plain calls, not
numba's inline="always" (whose IR copies made most of a first river run's compile time), and
the parallel loops hold one call each: the first README river run compiles the regret update
once, for every thread count.

Sign convention: every player maximizes its own g here; the caller negates player 1's.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..core import threads  # noqa: F401  (before any parallel kernel runs)
from ..core.csr_kernels import csr_matvec as _csr_matvec
from ..core.locks import apply_locks


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
def update(start, end, parent, v, b, R, x, xsum, pos, floor, general, eta, logprior, lower, rho, omega):
    """The regret pass then the plan pass over every infoset, on one thread, as one run of
    mixed sizes (small games: one copy of the body compiles fastest).

    ``v`` holds the gradient g on entry and the counterfactual values on exit; ``b`` the
    local strategy played (in) and the next one (out); ``R`` the cumulative regrets; ``x``
    the plan played (in) and the next one (out); ``xsum`` the weighted sum of plans.
    ``logprior`` (log p per sequence, or empty for p = 1) is used by Hedge only. Returns
    v[0] = sum_s g[s] x[s], the player's payoff of the profile played.
    """
    v[0] += _regret_mixed(0, len(start), start, end, parent, v, b, R, pos, floor, general, eta, logprior, lower)
    xsum[0] = rho * xsum[0] + omega * x[0]
    x[0] = 1.0
    _plan_mixed(0, len(start), start, end, parent, b, x, xsum, rho, omega)
    return v[0]


@nb.njit(cache=True, parallel=True)
def update_parts(parts, start, end, parent, v, b, R, x, xsum, pos, floor, general, eta, logprior, lower, rho,
                 omega, locked=None):
    """:func:`update` over ``parts`` = (lo, hi, size, ptr) from :func:`runs`, one part per
    thread (one part: the serial pass, through the same kernel, so that a first run compiles
    one).

    Part k is whole subtrees below the empty sequence, so parts write disjoint sequences
    except sequence 0, which gets the parts' sums in part order. The loop's index is cast to
    int64: numba types it uint64 when lowering the loop, a second copy of the callee to compile.
    """
    n = len(parts[3]) - 1
    tops = np.empty(n)
    xsum[0] = rho * xsum[0] + omega * x[0]
    x[0] = 1.0
    for k in nb.prange(n):
        tops[k] = _update_part(np.int64(k), parts, start, end, parent, v, b, R, x, xsum, pos, floor, general, eta,
                               logprior, lower, rho, omega, locked)
    for k in range(n):
        v[0] += tops[k]
    return v[0]


@nb.njit
def _update_part(k, parts, start, end, parent, v, b, R, x, xsum, pos, floor, general, eta, logprior, lower, rho,
                 omega, locked):
    """The regret pass then the plan pass over part k of :func:`update_parts`; returns the
    summed values of its infosets below the empty sequence."""
    lo, hi, size, ptr = parts
    top = _regret_runs(lo, hi, size, ptr[k], ptr[k + 1], start, end, parent, v, b, R, pos, floor, general, eta,
                       logprior, lower)
    if locked is not None:
        apply_locks(locked[2][k], locked[2][k + 1], locked[0], locked[1], b, R)
    _plan_runs(lo, hi, size, ptr[k], ptr[k + 1], start, end, parent, b, x, xsum, rho, omega)
    return top


@nb.njit(cache=True)
def _regret_runs(lo, hi, size, q0, q1, start, end, parent, v, b, R, pos, floor, general, eta, logprior, lower):
    """The regret update at every infoset of the runs q1-1, ..., q0, each [lo[q], hi[q])
    walked backwards, adding its value to its parent sequence; the values of the infosets
    below the empty sequence are summed and returned instead of added to v[0]."""
    root = 0.0
    for q in range(q1 - 1, q0 - 1, -1):
        j0, j1, k = lo[q], hi[q], size[q]
        if eta is not None:
            root += _hedge_run(j0, j1, start, end, parent, v, b, R, pos, floor, general, eta, logprior)
        elif k == 2:
            root += _rm_run2(j0, j1, start, end, parent, v, b, R, pos, floor, general, lower)
        elif k == 3:
            root += _rm_run3(j0, j1, start, end, parent, v, b, R, pos, floor, general, lower)
        elif k == 4:
            root += _rm_run4(j0, j1, start, end, parent, v, b, R, pos, floor, general, lower)
        elif k == 5:
            root += _rm_run5(j0, j1, start, end, parent, v, b, R, pos, floor, general, lower)
        else:
            root += _rm_mixed(j0, j1, start, end, parent, v, b, R, pos, floor, general, lower)
    return root


@nb.njit(cache=True)
def regret_match_infoset(j, start, end, noparent, v, b, R, pos, floor, general):
    """The regret update at the single infoset j (:func:`_rm_run` with j0 = j, j1 = j + 1),
    for samplers (:mod:`treeplex.solvers.mccfr`) that update only the infosets a sampled
    traversal reached. ``v`` holds the (sampled) counterfactual values of j's sequences,
    already including everything below them, so nothing is passed up: ``noparent`` is an
    all-zero int32 array over the infosets, which sends the value into the returned sum.
    Returns the infoset's value sum_s b[s] v[s] under the strategy played."""
    return _rm_mixed(j, j + 1, start, end, noparent, v, b, R, pos, floor, general, None)


@nb.njit
def _regret_mixed(j0, j1, start, end, parent, v, b, R, pos, floor, general, eta, logprior, lower):
    """Infosets j1-1, ..., j0 of any sizes with one copy of the body (small games: a first
    Leduc run compiled 7.5 s with the unrolled copies of :func:`_rm_run`)."""
    if eta is not None:
        return _hedge_run(j0, j1, start, end, parent, v, b, R, pos, floor, general, eta, logprior)
    return _rm_mixed(j0, j1, start, end, parent, v, b, R, pos, floor, general, lower)


@nb.njit
def _scalars(pos, general):
    """(neg, kappa, lam) from the kernel scalars of :func:`kernel_args`."""
    if general is None:
        return pos, 1.0, 0.0
    return general


def _rm_run(k: int):
    """Regret matching (every variant but Hedge) at infosets j1-1, ..., j0, each of k
    actions (k = 0: each its own number), as in the module docstring (``general`` None:
    pos = neg, kappa = 1, lam = 0 folded in; ``lower``: None or (l, L)). Returns the summed
    values of those below sequence 0. The one regret-matching body of the package: a kernel
    per k, where k is a compile-time constant, so the loops over actions unroll. Separate
    kernels rather than numba's inline="always", whose IR copies made most of the river's
    first-run compile time."""

    @nb.njit
    def rm_run(j0, j1, start, end, parent, v, b, R, pos, floor, general, lower):
        neg, kappa, lam = _scalars(pos, general)
        root = 0.0
        for j in range(j1 - 1, j0 - 1, -1):
            a = start[j]
            n = k if k > 0 else end[j] - a
            played = 0.0
            for i in range(n):
                played += b[a + i] * v[a + i]
            value = played
            if lower is not None:
                c = 1.0 - lower[1][j]
                lv = 0.0
                for i in range(n):
                    lv += lower[0][a + i] * v[a + i]
                value = (played - lv) / c
            total = 0.0
            for i in range(n):
                s = a + i
                inst = v[s] - value
                if general is None:
                    acc = max(R[s] * pos + inst, floor)
                    q = max(acc, 0.0)
                else:  # branch-free sign choice would not help: the signs are unpredictable
                    acc = max(R[s] * (pos if R[s] > 0.0 else neg) + inst, floor)
                    q = max(kappa * acc + lam * inst, 0.0)
                R[s] = acc
                total += q
                b[s] = q
            if total > 0.0:
                inv = 1.0 / total  # one division per infoset (2-3% faster CFR+ steps on the river)
                for i in range(n):
                    b[a + i] = b[a + i] * inv
            else:
                for i in range(n):
                    b[a + i] = 1.0 / n
            if lower is not None:
                for i in range(n):
                    b[a + i] = lower[0][a + i] + c * b[a + i]
            p = parent[j]
            if p == 0:
                root += played
            else:
                v[p] += played
        return root

    return rm_run


_rm_mixed, _rm_run2, _rm_run3, _rm_run4, _rm_run5 = (_rm_run(k) for k in (0, 2, 3, 4, 5))


@nb.njit(cache=True)
def rm_block(R, P, off, m, k, v, rows, b, pos, floor, general, value):
    """:func:`_rm_run`'s update at the m infosets of one node stored action-major (action i
    of infoset o at ``off + i * m + o``; the fused postflop engine, :mod:`treeplex.poker.fused`):
    ``v[rows[i], o]`` the counterfactual values (read in place from the walk's value rows),
    ``b[i, o]`` the strategy played, ``general`` = (neg, kappa, lam). The same arithmetic per
    infoset, in loops over o that vectorize (one call per infoset cost 3x the rest of the
    fused pass, measured on the TURN spot). R gets the new regrets; P (if not empty) the next
    strategy max(kappa R + lam r, 0) normalized, as ``_rm_run`` writes b (uniform where all are
    0). ``value[o]`` (scratch) gets the values played."""
    neg, kappa, lam = general
    v0, b0 = v[rows[0]], b[0]
    for o in range(m):
        value[o] = b0[o] * v0[o]
    for i in range(1, k):
        bi, vi = b[i], v[rows[i]]
        for o in range(m):
            value[o] += bi[o] * vi[o]
    pred = len(P) > 0
    for i in range(k):  # slices indexed by the loop counter vectorize (see fused._strategy)
        Ri, vi, bi = R[off + i * m:off + (i + 1) * m], v[rows[i]], b[i]
        if pred:
            for o in range(m):
                r = np.float64(Ri[o])
                inst = vi[o] - value[o]
                acc = max(r * (pos if r > 0.0 else neg) + inst, floor)
                Ri[o] = acc
                bi[o] = max(kappa * acc + lam * inst, 0.0)  # b is free once the values are played
        else:
            for o in range(m):
                r = np.float64(Ri[o])
                Ri[o] = max(r * (pos if r > 0.0 else neg) + (vi[o] - value[o]), floor)
    if pred:
        for o in range(m):
            total = 0.0
            for i in range(k):
                total += b[i, o]
            if total > 0.0:
                inv = 1.0 / total
                for i in range(k):
                    P[off + i * m + o] = b[i, o] * inv
            else:
                for i in range(k):
                    P[off + i * m + o] = 1.0 / k


@nb.njit
def _hedge_run(j0, j1, start, end, parent, v, b, R, pos, floor, general, eta, logprior):
    """Hedge (eta > 0) at infosets j1-1, ..., j0: b proportional to
    p exp(eta (kappa R + lam r)), computed with the exponent's maximum subtracted."""
    neg, kappa, lam = _scalars(pos, general)
    centered = len(logprior) > 0
    root = 0.0
    for j in range(j1 - 1, j0 - 1, -1):
        a = start[j]
        k = end[j] - a
        value = 0.0
        for i in range(k):
            value += b[a + i] * v[a + i]
        top = -np.inf
        for i in range(k):
            s = a + i
            inst = v[s] - value
            acc = max(R[s] * (pos if R[s] > 0.0 else neg) + inst, floor)
            R[s] = acc
            q = eta * (kappa * acc + lam * inst) + (logprior[s] if centered else 0.0)
            top = max(top, q)
            b[s] = q
        total = 0.0
        for i in range(k):
            b[a + i] = np.exp(b[a + i] - top)
            total += b[a + i]
        for i in range(k):
            b[a + i] /= total
        p = parent[j]
        if p == 0:
            root += value
        else:
            v[p] += value
    return root


@nb.njit(cache=True)
def _plan_runs(lo, hi, size, q0, q1, start, end, parent, b, x, xsum, rho, omega):
    """xsum <- rho * xsum + omega * x, then x <- plan of b, over the runs q0, ..., q1-1
    (top-down: a parent sequence precedes its infoset), sequence 0 excepted."""
    for q in range(q0, q1):
        j0, j1, k = lo[q], hi[q], size[q]
        if k == 2:
            _plan_run2(j0, j1, start, end, parent, b, x, xsum, rho, omega)
        elif k == 3:
            _plan_run3(j0, j1, start, end, parent, b, x, xsum, rho, omega)
        elif k == 4:
            _plan_run4(j0, j1, start, end, parent, b, x, xsum, rho, omega)
        elif k == 5:
            _plan_run5(j0, j1, start, end, parent, b, x, xsum, rho, omega)
        else:
            _plan_mixed(j0, j1, start, end, parent, b, x, xsum, rho, omega)


def _plan_run(k: int):
    """The plan pass at infosets j0, ..., j1-1, each of k actions (k = 0: its own number),
    a kernel per k as :func:`_rm_run`."""

    @nb.njit
    def plan_run(j0, j1, start, end, parent, b, x, xsum, rho, omega):
        for j in range(j0, j1):
            a = start[j]
            n = k if k > 0 else end[j] - a
            px = x[parent[j]]
            for i in range(n):
                xsum[a + i] = rho * xsum[a + i] + omega * x[a + i]
                x[a + i] = px * b[a + i]

    return plan_run


_plan_mixed, _plan_run2, _plan_run3, _plan_run4, _plan_run5 = (_plan_run(k) for k in (0, 2, 3, 4, 5))


def runs(T, parts: int, min_run: int = 8) -> tuple:
    """(lo, hi, size, ptr): :meth:`~treeplex.core.treeplex.Treeplex.subtree_parts` with each run's
    number of actions, where consecutive runs shorter than ``min_run`` infosets are merged
    into one of size 0 (each infoset's own number of actions). Long runs of one size get
    loops unrolled for that size; short ones are not worth a dispatch each (Leduc's 144
    infosets form 97 runs: the serial update measured 6.3 µs with plain loops, 11.4 µs run by
    run)."""
    lo, hi, ptr = T.subtree_parts(parts)
    size = (T.end[lo] - T.start[lo]).astype(np.int64) if len(lo) else np.zeros(0, dtype=np.int64)
    out_lo, out_hi, out_size, out_ptr = [], [], [], [0]
    for k in range(len(ptr) - 1):
        for q in range(ptr[k], ptr[k + 1]):
            short = hi[q] - lo[q] < min_run
            if (short and out_ptr[-1] < len(out_lo) and out_size[-1] == 0 and out_hi[-1] == lo[q]):
                out_hi[-1] = hi[q]
                continue
            out_lo.append(lo[q])
            out_hi.append(hi[q])
            out_size.append(0 if short else int(size[q]))
        out_ptr.append(len(out_lo))
    return (np.array(out_lo, dtype=np.int32), np.array(out_hi, dtype=np.int32), np.array(out_size, dtype=np.int64),
            np.array(out_ptr, dtype=np.int64))


@nb.njit(cache=True)
def csr_iteration(X, Y, a, at, sx, sy, coef, avg, alternating, lower):
    """One whole CFR iteration on a CSR payoff matrix in a single numba call: player 0's
    gradient A y, :func:`update`, player 1's gradient -A^T x (from the new x when
    alternating), :func:`update`; the same arithmetic as two products and two updates
    without the Python overhead that dominates small games.

    ``X``, ``Y`` are (start, end, parent); each treeplex is one run of mixed sizes (small
    games: nothing to unroll, and fewer arguments, whose dispatch costs about 0.1 µs each);
    ``a``, ``at`` the CSR triples of A and A^T; ``sx``, ``sy`` the players' (b, R, x, xsum,
    logprior); ``coef`` = (pos, floor, general, eta), ``avg`` = (rho, omega); ``lower`` =
    (lower_x, lower_y), each None or (l, L).
    """
    pos, floor, general, eta = coef
    rho, omega = avg
    g0 = _csr_matvec(a[0], a[1], a[2], sy[2])
    if not alternating:
        g1 = _csr_matvec(at[0], at[1], at[2], sx[2])
    update(X[0], X[1], X[2], g0, sx[0], sx[1], sx[2], sx[3], pos, floor, general, eta, sx[4],
           lower[0], rho, omega)
    if alternating:
        g1 = _csr_matvec(at[0], at[1], at[2], sx[2])
    for i in range(len(g1)):
        g1[i] = -g1[i]
    update(Y[0], Y[1], Y[2], g1, sy[0], sy[1], sy[2], sy[3], pos, floor, general, eta, sy[4],
           lower[1], rho, omega)


@nb.njit(cache=True)
def counterfactual_values(start, end, parent, v, b):
    """Bottom-up only: ``v`` (gradient in) becomes the counterfactual values under ``b``."""
    for j in range(len(start) - 1, -1, -1):
        value = 0.0
        for s in range(start[j], end[j]):
            value += b[s] * v[s]
        v[parent[j]] += value
