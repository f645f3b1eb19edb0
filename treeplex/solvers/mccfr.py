"""Monte Carlo CFR: external, outcome and chance sampling over the history tree.

Lanctot, Waugh, Zinkevich & Bowling, NIPS 2009, "Monte Carlo sampling for regret
minimization in extensive games" (MCCFR): each iteration walks only a sampled part of the
history tree and updates the regrets of the infosets it reaches with *sampled*
counterfactual values, unbiased estimates of the full-width ones (their Lemma 1: with
q(z) > 0 for every terminal z, E[v~(I, a)] = v(I, a)). In the unified view of Waugh &
Bagnell (2015, section "Acceleration and Sampling"), this is the same step with a stochastic
gradient in place of A y or -A^T x: sampling the opponent's strategy makes the gradient a
column of A (external and outcome sampling), sampling nature's choice one term of A's sum
over chance outcomes (chance sampling); regret matching is unchanged, only the gradient is
sampled, which trades a cheaper iteration for more iterations.

The samplers (one traversal per player per iteration, alternating: player 0's traversal
updates its regrets, then player 1's traversal plays against player 0's new strategy, as in
OpenSpiel):

- ``mccfr-es``, external sampling: chance and the opponent sample one action at each node
  they reach (the opponent from its current strategy); the traverser enumerates all of its
  actions. The sampled counterfactual value of (I, a) is the sampled value below h a.
  Average strategy: "simple"/stochastically-weighted averaging as in OpenSpiel, the
  opponent's average gains its current local strategy at every node of its that the
  traversal reaches (its own reach is sampled, so the expected addition is proportional to it).
- ``mccfr-os``, outcome sampling: one terminal history per traversal; the traverser samples
  from epsilon-uniform + (1 - epsilon) times its strategy (``epsilon`` = 0.6 as in Lanctot
  2009 and OpenSpiel), the opponent and chance from theirs. Sampled counterfactual values
  are importance-corrected by the sample's reach q (zero baseline: the unsampled actions
  get 0), and the traverser's average gains (own reach) b / q, as in OpenSpiel.
  ``baseline="learned"`` is VR-MCCFR (Schmid, Burch, Lanctot, Moravcik, Kadlec & Bowling,
  AAAI 2019): at every decision node the values of (h, a') are base(h a') + [a' sampled]
  (u~(h a) - base(h a)) / xi(h, a), with base the exponentially-decaying average (weight
  ``decay`` = 0.5) of the sampled values at h a, per traverser, one number per history node;
  still unbiased (the baseline is updated after its use). Kuhn, seed 7, 20k iterations:
  exploitability 0.0042 with baselines, 0.0217 without.
- ``mccfr-cs``, chance sampling: chance samples one outcome per node, both players
  enumerate; counterfactual values are weighted by the opponent's reach, and an infoset's
  values are summed over its histories before its update. The traverser's average gains
  (own reach) b.

Regret pruning (Pluribus: Brown & Sandholm, Science 2019, supplementary "Monte Carlo CFR
with regret-based pruning"), external sampling only: ``prune`` = the share of iterations
(after ``prune_after``) whose traversals skip the traverser's actions with regret below
``prune_threshold`` (default -100 payoff units) that its strategy plays with probability 0;
a skipped action's sampled value is the node's value (instantaneous regret 0, regret kept),
and regrets are floored at ``regret_floor`` (default 1.1 x the threshold) so a pruned action
can come back. Pluribus prunes 95% of iterations (``prune=0.95``) with its threshold and floor
in chips; it also never prunes actions into terminals or on the last round, which this does
not reproduce. A pruned walk misses the opponent's nodes below a pruned action, so their
stochastically-weighted average gains less there while the action stays pruned (Pluribus
updates its average in separate walks that never prune); averaging only in the iterations
that do not prune removes that bias but was noisier (Leduc, 20k iterations, prune 0.95:
gap 0.60-0.73 against 0.36-0.41 with every iteration averaging, which is kept). Measured
on Leduc (seed 3, 20k iterations; vanilla CFR; gap 0.188 without pruning): ``prune=0.95``
with thresholds -20 and -50 after 2000 iterations walks 32-34% fewer nodes and ends at gap
0.41 and 0.36, ``prune=0.5`` at -300 walks 6% fewer, gap 0.24 (averaging unpruned only): at
this size pruning does not pay; it is for long runs where most actions have long been bad.
The decision is one uniform from the iteration's own generator (drawn only
when ``prune`` > 0, so runs without pruning are unchanged).

Regret updates go through the backend's kernel
(:func:`~treeplex.backends.numba_regret.regret_match_infoset`, regret matching written
once): after a traversal, every infoset it reached gets one update from the summed sampled
values. So the CFR variants apply: ``variant`` = ``cfr`` (default), ``cfr-rm+`` (floor 0),
``cfr+`` (RM+ with linear averaging), ``lcfr``, ``dcfr`` (``alpha``, ``beta``, ``gamma``) and
``pcfr+`` (prediction ``lam`` = 1, quadratic averaging), with the scalars of
:mod:`treeplex.solvers.cfr` at iteration t. Regret discounts act at the infosets an
iteration updates (lazily: an infoset not reached keeps its regrets); averaging weights
(rho, omega) are applied exactly, as the weight omega_t / prod rho of iteration t's additions
(the common factor cancels in the normalization per infoset).
The default stays ``cfr`` (plain regret matching, uniform averaging: OpenSpiel's MCCFR too):
with external sampling it reached a given exploitability soonest of the six on OpenSpiel's
Leduc and Liar's Dice (1 die, 6 sides), seed 0, 15 s each: Leduc after 3.4M iterations cfr
1.2e-2, cfr+ 1.9e-2, cfr-rm+ 2.4e-2, lcfr 6.2e-2 (dcfr 2.3e-2, pcfr+ 2.5e-2 after 2.2M);
Liar's Dice after 718k iterations cfr 8.4e-3, cfr+ 1.6e-2, cfr-rm+ 2.1e-2 (lcfr 1.9e-2 after
368k, dcfr 2.5e-2 and pcfr+ 2.8e-2 after 235k; cfr was at 1e-2 after 575k). Sampled values
are noisy: RM+ and the discounting variants forget and re-learn that noise.

Storage: the compiled Problem's :class:`~treeplex.core.tree.GameTree` (flat arrays in DFS
preorder) with a numba traversal; a problem without a tree (the structured poker games) is
refused. External sampling walks its own copy (:func:`_es_layout`, 36 bytes per history):
the nodes renumbered so that siblings are consecutive, one 16-byte row per node (kind and
number of actions, first child, first sequence, infoset), terminal payoffs and the chance
edges' running sums beside it; its walk (:func:`_walk_es`) pushes a frame only at the
traverser's nodes. Both give the same draws and arithmetic as the generic walk, bit for bit
(Leduc 4.1 -> 1.6 us an iteration, Liar's Dice 16 -> 6-7 us).
The rows of per-iteration scalars of ``cfr``, ``cfr-rm+``, ``cfr+`` and ``lcfr`` are built as
whole arrays (:meth:`MCCFR._rows`), the same IEEE operations as the per-iteration loop that
``dcfr`` and ``pcfr+`` keep (their averaging rescales).

Determinism: ``seed`` seeds ``self.rng`` (checkpointed); each iteration takes a 63-bit seed
from it for the traversal's own generator (splitmix64 in numba), so a resumed run repeats
the uninterrupted one bit for bit.

Accounting: sampling computes no full products, so ``gradients`` stays 0 (the driver's gap
checks use full products with count=False); ``trace_extra`` reports ``nodes_touched`` (history
nodes visited by the traversals) and ``samples`` (traversals).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba as nb
import numpy as np

from ..backends import flat_state
from ..backends.numba_regret import kernel_args, regret_match_infoset
from ..errors import InputError, nonnegative
from ..model.problem import Problem
from .base import Solver, load_players, register
from .cfr import _discount

ES, OS, CS = 0, 1, 2
VARIANTS = ("cfr", "cfr-rm+", "cfr+", "lcfr", "dcfr", "pcfr+")


def check_sampling_args(where: str, variant, seed, epsilon) -> None:
    """Raise :class:`InputError` (message starting ``where``) unless ``variant`` is one of
    :data:`VARIANTS`, ``seed`` a whole number >= 0 and ``epsilon`` in (0, 1]."""
    if variant not in VARIANTS:
        raise InputError(f"{where}: variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"{where}: seed must be a whole number >= 0, got {seed!r}")
    if not 0.0 < float(epsilon) <= 1.0:
        raise InputError(f"{where}: epsilon must be in (0, 1], got {epsilon!r}")

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


@dataclass
class SampleState:
    """One player's MCCFR state (flat arrays over its sequences)."""

    b: np.ndarray  # current local strategy
    R: np.ndarray  # cumulative regrets
    S: np.ndarray  # weighted sum of local strategies (the average, per infoset, once normalized)


# ---------------------------------------------------------------------- numba traversal


@nb.njit(inline="always")
def _uniform(rng):
    """splitmix64: the next uniform in [0, 1) from the state rng[0]."""
    rng[0] += _GOLDEN
    z = rng[0]
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    z = z ^ (z >> _S31)
    return float(z >> _S11) * (1.0 / 9007199254740992.0)


@nb.njit(cache=True)
def _pick_chance(n, c0, c1, children, edge_prob, forced, rng):
    """Index (0-based among n's children) of the sampled chance outcome."""
    if len(forced) > 0 and forced[n] >= 0:
        return forced[n]
    u = _uniform(rng)
    acc = 0.0
    for c in range(c1 - c0):
        acc += edge_prob[children[c0 + c]]
        if u < acc:
            return c
    return c1 - c0 - 1


@nb.njit(cache=True)
def _pick(n, a, k, b, eps, forced, rng):
    """Index of the sampled action from eps-uniform + (1 - eps) b[a:a+k] (forced if set:
    ``forced`` empty for none)."""
    if len(forced) > 0 and forced[n] >= 0:
        return forced[n]
    u = _uniform(rng)
    acc = 0.0
    for c in range(k):
        acc += eps / k + (1.0 - eps) * b[a + c]
        if u < acc:
            return c
    return k - 1


@nb.njit(cache=True)
def _mark(j, mark, touched, stats):
    if mark[j] == 0:
        mark[j] = 1
        touched[stats[2]] = j
        stats[2] += 1


@nb.njit(cache=True)
def _chance_cdf(kind, child_ptr, children, edge_prob):
    """cdf[e] for every edge e (an index into ``children``) out of a chance node: the running
    sum of its outcomes' probabilities in listed order (the sums :func:`_pick_chance` adds)."""
    cdf = np.zeros(len(children))
    for n in range(len(kind)):
        if kind[n] == 2:
            acc = 0.0
            for e in range(child_ptr[n], child_ptr[n + 1]):
                acc += edge_prob[children[e]]
                cdf[e] = acc
    return cdf


@nb.njit(cache=True)
def _es_layout(kind, infoset, child_ptr, children, payoff, seq_at, cdf):
    """External sampling's copy of the tree, renumbered so that every node's children are
    consecutive (a node's block of children is numbered when the depth-first walk reaches the
    node): (rec, pay, cdf_in, new). rec[m] = (kind + 4 k, first child, first sequence, infoset)
    in one 16-byte row; pay[m] the terminal payoff; cdf_in[m] the running sum of the chance
    probabilities up to the edge into m; new[n] node n's number here. One row per node and
    siblings side by side: a node costs one cache line instead of five arrays' (Liar's Dice's
    295k histories do not fit in L2)."""
    n = len(kind)
    rec = np.zeros((n, 4), dtype=np.int32)
    pay = np.zeros(n)
    cdf_in = np.zeros(n)
    new = np.zeros(n, dtype=np.int32)
    stack = np.empty(n, dtype=np.int32)
    stack[0], top, nxt = 0, 0, 1
    while top >= 0:
        o = stack[top]
        top -= 1
        m = new[o]
        c0 = child_ptr[o]
        k = child_ptr[o + 1] - c0
        rec[m, 0], rec[m, 1], rec[m, 2], rec[m, 3] = kind[o] + 4 * k, nxt, seq_at[o], infoset[o]
        if kind[o] == 3:
            pay[m] = payoff[o]
        for c in range(k):
            new[children[c0 + c]] = nxt + c
            if kind[o] == 2:
                cdf_in[nxt + c] = cdf[c0 + c]
        nxt += k
        for c in range(k - 1, -1, -1):
            top += 1
            stack[top] = children[c0 + c]
    return rec, pay, cdf_in, new


@nb.njit(cache=True)
def _walk_es(i, esl, bs, S, v, w, mark, touched, forced, rng, stats, fint, fval, R, thr):
    """External sampling's traversal for traverser i: :func:`_walk` with ``mode`` ES, the
    same arithmetic and the same draws in the same order, specialized. Only the traverser's
    nodes push a frame (node and child in ``fint``, value so far in ``fval``): at chance and
    opponent nodes the walk goes down to the one sampled child and the value comes back up
    unchanged. It walks :func:`_es_layout`'s copy ``esl`` = (rec, pay, cdf_in): chance
    outcomes are drawn against the precomputed running sums, each decision node's first
    sequence is in its row. ``forced`` (tests) is in that copy's numbering."""
    rec, pay, cdf_in = esl
    stats[1] += 1
    sign = 1.0 if i == 0 else -1.0
    bi, bo, so = bs[i], bs[1 - i], S[1 - i]
    fn, fc = fint[0], fint[1]
    prune = thr > -np.inf
    nf = len(forced) > 0  # forced samples (tests): an empty array for none, so no load per node
    d = -1
    n = 0
    ret = 0.0
    visited = 0
    while True:
        while True:  # down to a terminal, pushing the traverser's nodes
            visited += 1
            kk = rec[n, 0]
            kd = kk & 3
            if kd == 3:
                ret = sign * pay[n]
                break
            k = kk >> 2
            first = rec[n, 1]
            if kd == 2:
                c = forced[n] if nf else -1
                if c < 0:
                    u = _uniform(rng)
                    c = 0
                    while c < k - 1 and u >= cdf_in[first + c]:
                        c += 1
                n = first + c
                continue
            a = rec[n, 2]
            if kd != i:  # the opponent: stochastically-weighted averaging, one sampled action
                for t in range(k):
                    so[a + t] += w * bo[a + t]
                c = forced[n] if nf else -1
                if c < 0:
                    u = _uniform(rng)
                    acc = 0.0
                    c = k - 1
                    for t in range(k):
                        acc += bo[a + t]
                        if u < acc:
                            c = t
                            break
                n = first + c
                continue
            c = 0
            if prune:  # regret pruning: skip negative-regret actions never played
                while c < k - 1 and R[a + c] < thr and bi[a + c] == 0.0:
                    c += 1
            d += 1
            fn[d], fc[d], fval[d] = n, c, 0.0
            n = first + c
        while True:  # up: ret is the value of the child fc[d] of the traverser's node fn[d]
            if d < 0:
                stats[0] += visited
                return ret
            n, c = fn[d], fc[d]
            kk, first, a = rec[n, 0], rec[n, 1], rec[n, 2]
            k = kk >> 2
            v[a + c] += ret
            fval[d] += bi[a + c] * ret
            c += 1
            if prune:
                while c < k and R[a + c] < thr and bi[a + c] == 0.0:
                    c += 1
            if c < k:
                fc[d] = c
                n = first + c
                break
            _mark(rec[n, 3], mark, touched, stats)
            if prune:
                for t in range(k):  # pruned: instantaneous regret 0
                    if R[a + t] < thr and bi[a + t] == 0.0:
                        v[a + t] += fval[d]
            ret = fval[d]
            d -= 1


@nb.njit(cache=True)
def _walk(mode, i, eps, tree, starts, bs, S, v, w, mark, touched, forced, rng, stats, frames, fint, base, decay, R,
          thr):
    """One traversal for traverser i from the root (``mode`` ES, OS or CS): sampled
    counterfactual values summed into ``v`` (i's sequences), the infosets reached listed in
    touched[:stats[2]], averages added to ``S``. Iterative depth-first walk (a recursive numba
    function cannot be cached): ``frames`` (float64[4, depth]: own reach, opponent reach
    (with chance's, outcome sampling only), sample reach q, value or sampling probability)
    and ``fint`` (int32[2, depth]: node, child being walked) are its stack. ``base``
    (float64[2, nodes], or [2, 0] for none): outcome sampling's baselines b_i(h a), stored at
    the child node h a, learned as the sampled values' exponential average (weight ``decay``).
    ``R``, ``thr``: regret pruning (external sampling): the traverser skips an action whose
    regret R < thr and whose probability is 0 (so the node's value is unchanged), and its
    sampled value is set to the node's value (instantaneous regret 0); thr = -inf: none."""
    kind, infoset, child_ptr, children, edge_prob, payoff, _, _ = tree
    stats[1] += 1
    sign = 1.0 if i == 0 else -1.0
    fown, fopp, fq, fval = frames[0], frames[1], frames[2], frames[3]
    fn, fc = fint[0], fint[1]
    d = -1
    n, own, opp, q = 0, 1.0, 1.0, 1.0
    ret = 0.0
    descend = True
    while True:
        if descend:
            stats[0] += 1
            kd = kind[n]
            if kd == 3:
                ret = sign * payoff[n]
                descend = False
                continue
            d += 1
            fn[d] = n
            fown[d], fopp[d], fq[d], fval[d] = own, opp, q, 0.0
            c0, c1 = child_ptr[n], child_ptr[n + 1]
            if kd == 2:
                c = _pick_chance(n, c0, c1, children, edge_prob, forced, rng)
                fc[d] = c
                n = children[c0 + c]
                if mode == 1:
                    opp *= edge_prob[n]
                    q *= edge_prob[n]
                continue
            j = infoset[n]
            a = starts[kd][j]
            b = bs[kd]
            k = c1 - c0
            if mode == 2 or (mode == 0 and kd == i):  # every action walked
                c = 0
                if mode == 0 and kd == i:  # regret pruning: skip negative-regret actions never played
                    while c < k - 1 and R[a + c] < thr and b[a + c] == 0.0:
                        c += 1
            else:
                e = eps if (mode == 1 and kd == i) else 0.0
                if mode == 0:  # stochastically-weighted averaging at the opponent's nodes
                    so = S[kd]
                    for t in range(k):
                        so[a + t] += w * b[a + t]
                c = _pick(n, a, k, b, e, forced, rng)
                sp = e / k + (1.0 - e) * b[a + c]
                fval[d] = sp
                q *= sp
            fc[d] = c
            if kd == i:
                own *= b[a + c]
            else:
                opp *= b[a + c]
            n = children[c0 + c]
        else:  # ret is the value of the child fc[d] of the node fn[d]
            if d < 0:
                return ret
            n = fn[d]
            kd = kind[n]
            if kd == 2:
                d -= 1
                continue
            c = fc[d]
            c0 = child_ptr[n]
            j = infoset[n]
            a = starts[kd][j]
            b = bs[kd]
            k = child_ptr[n + 1] - c0
            if mode == 2 or (mode == 0 and kd == i):
                if kd == i:
                    if mode == 2:
                        v[a + c] += fopp[d] * ret
                        S[kd][a + c] += w * fown[d] * b[a + c]
                    else:
                        v[a + c] += ret
                fval[d] += b[a + c] * ret
                c += 1
                if mode == 0 and kd == i:
                    while c < k and R[a + c] < thr and b[a + c] == 0.0:
                        c += 1
                if c < k:
                    fc[d] = c
                    own, opp, q = fown[d], fopp[d], fq[d]
                    if kd == i:
                        own *= b[a + c]
                    else:
                        opp *= b[a + c]
                    n = children[c0 + c]
                    descend = True
                    continue
                if kd == i:
                    _mark(j, mark, touched, stats)
                    if mode == 0 and thr > -np.inf:
                        for t in range(k):  # pruned: instantaneous regret 0
                            if R[a + t] < thr and b[a + t] == 0.0:
                                v[a + t] += fval[d]
                ret = fval[d]
            elif mode == 1:
                if base.shape[1] == 0:
                    u = ret / fval[d]  # the sampled action's importance-corrected value; the others' are 0
                    if kd == i:
                        v[a + c] += u * fopp[d] / fq[d]
                    ret = b[a + c] * u
                else:  # VR-MCCFR: u(h a') = base(h a') + [a' sampled] (u~(h a) - base(h a)) / xi(h, a)
                    bl = base[i]
                    est = 0.0
                    for t in range(k):
                        ch = children[c0 + t]
                        u = bl[ch] + (ret - bl[ch]) / fval[d] if t == c else bl[ch]
                        if kd == i:
                            v[a + t] += u * fopp[d] / fq[d]
                        est += b[a + t] * u
                    ch = children[c0 + c]
                    bl[ch] = (1.0 - decay) * bl[ch] + decay * ret  # learned after its use: still unbiased
                    ret = est
                if kd == i:
                    si = S[kd]
                    for t in range(k):
                        si[a + t] += w * fown[d] * b[a + t] / fq[d]
                    _mark(j, mark, touched, stats)
            d -= 1


@nb.njit(cache=True)
def _apply(start, end, noparent, v, b, R, pos, floor, general, mark, touched, stats):
    """The backend's regret update at every infoset a traversal reached; clears the scratch."""
    for t in range(stats[2]):
        j = touched[t]
        regret_match_infoset(j, start, end, noparent, v, b, R, pos, floor, general)
        for s in range(start[j], end[j]):
            v[s] = 0.0
        mark[j] = 0
    stats[2] = 0


@nb.njit(cache=True)
def _iterations(mode, eps, seeds, coefs, tree, esl, starts, ends, noparents, bs, Rs, S, vs, marks, toucheds, forced,
                stats, frames, fint, base, decay):
    """MCCFR iterations, one per row of ``coefs`` = (average weight, pos, neg, floor, kappa,
    lam, pruning threshold, pruning probability) and entry of ``seeds``: player 0's traversal
    and update, then player 1's. An iteration prunes with the given probability (one uniform
    drawn from its own generator, only where the probability is > 0)."""
    rng = np.empty(1, dtype=np.uint64)
    for it in range(len(seeds)):
        rng[0] = seeds[it]
        w, pos, neg, floor, kappa, lam, thr = (coefs[it, 0], coefs[it, 1], coefs[it, 2], coefs[it, 3],
                                               coefs[it, 4], coefs[it, 5], coefs[it, 6])
        if coefs[it, 7] > 0.0 and _uniform(rng) >= coefs[it, 7]:  # this iteration does not prune
            thr = -np.inf
        for i in range(2):
            if mode == 0:
                _walk_es(i, esl, bs, S, vs[i], w, marks[i], toucheds[i], forced, rng, stats, fint, frames[3], Rs[i],
                         thr)
            else:
                _walk(mode, i, eps, tree, starts, bs, S, vs[i], w, marks[i], toucheds[i], forced, rng, stats, frames,
                      fint, base, decay, Rs[i], thr)
            _apply(starts[i], ends[i], noparents[i], vs[i], bs[i], Rs[i], pos, floor, (neg, kappa, lam), marks[i],
                   toucheds[i], stats)


# ---------------------------------------------------------------------- the solver


class MCCFR(Solver):
    """Monte Carlo CFR over ``problem.tree`` (module docstring). Parameters: ``seed``
    (default 0), ``variant`` (``cfr``, ``cfr-rm+``, ``cfr+``, ``lcfr``, ``dcfr``, ``pcfr+``),
    ``alpha``/``beta``/``gamma`` (DCFR's, and ``gamma`` for pcfr+), ``epsilon`` (outcome
    sampling's exploration), ``baseline`` (``none`` or ``learned``: VR-MCCFR, outcome
    sampling) and its ``decay``; ``prune``, ``prune_threshold``, ``regret_floor``,
    ``prune_after`` (regret pruning, external sampling; module docstring). ``gradients`` stays
    0: sampling makes no full products."""

    mode = ES
    batch_steps = True  # run(n) = n steps bit for bit; the driver batches (a step() costs ~30 us of Python)

    def __init__(self, problem: Problem, seed: int = 0, variant: str = "cfr", alpha: float = 1.5,
                 beta: float = 0.0, gamma: float = 2.0, epsilon: float = 0.6, baseline: str = "none",
                 decay: float = 0.5, prune: float = 0.0, prune_threshold: float = -100.0, regret_floor=None,
                 prune_after: int = 0, lower=None):
        super().__init__(problem, lower)
        tree = problem.tree
        if tree is None:
            raise InputError(f"{self.name}: sampling needs a history tree, and {problem.name!r} has none "
                             "(structured poker problems are not walked)")
        check_sampling_args(self.name, variant, seed, epsilon)
        if baseline not in ("none", "learned"):
            raise InputError(f"{self.name}: baseline must be 'none' or 'learned', got {baseline!r}")
        if baseline != "none" and self.mode != OS:
            raise InputError(f"{self.name}: baselines (VR-MCCFR) are for outcome sampling (mccfr-os)")
        if not 0.0 < float(decay) <= 1.0:
            raise InputError(f"{self.name}: decay must be in (0, 1], got {decay!r}")
        if not 0.0 <= float(prune) <= 1.0:
            raise InputError(f"{self.name}: prune (the share of iterations that prune) must be in [0, 1], got {prune!r}")
        if float(prune) > 0.0 and self.mode != ES:
            raise InputError(f"{self.name}: regret pruning is for external sampling (mccfr-es)")
        if not float(prune_threshold) < 0.0:
            raise InputError(f"{self.name}: prune_threshold must be < 0, got {prune_threshold!r}")
        self.prune, self.prune_threshold = float(prune), float(prune_threshold)
        self.regret_floor = 1.1 * self.prune_threshold if regret_floor is None else float(regret_floor)
        if not self.regret_floor <= self.prune_threshold:
            raise InputError(f"{self.name}: regret_floor must be <= prune_threshold, got {regret_floor!r}")
        self.prune_after = int(nonnegative(prune_after, "prune_after"))
        self.variant, self.seed, self.epsilon = variant, int(seed), float(epsilon)
        self.baseline, self.decay = baseline, float(decay)
        self.base = np.zeros((2, tree.n_nodes if baseline == "learned" else 0))  # VR-MCCFR baselines
        self.alpha, self.gamma = nonnegative(alpha, "alpha"), nonnegative(gamma, "gamma")
        self.beta = float(beta)
        self.rng = np.random.default_rng(self.seed)
        self.nodes_touched = 0
        self.samples = 0
        self.avg_scale = 1.0  # prod of rho so far: iteration t adds with weight omega_t / avg_scale
        Ts = problem.treeplexes
        seq_at = np.zeros(tree.n_nodes, dtype=np.int32)  # each decision node's first sequence
        for p in (0, 1):
            at = tree.kind == p
            seq_at[at] = Ts[p].start[tree.infoset[at]]
        cdf = _chance_cdf(tree.kind, tree.child_ptr, tree.children, tree.edge_prob)
        self._tree = (tree.kind, tree.infoset, tree.child_ptr, tree.children, tree.edge_prob, tree.payoff, seq_at, cdf)
        if self.mode == ES:  # external sampling walks its own compact copy (_es_layout)
            rec, pay, cdf_in, self._new = _es_layout(tree.kind, tree.infoset, tree.child_ptr, tree.children,
                                                     tree.payoff, seq_at, cdf)
            self._esl = (rec, pay, cdf_in)
        else:
            self._new, self._esl = None, (np.zeros((0, 4), dtype=np.int32), np.zeros(0), np.zeros(0))
        self._starts = tuple(T.start for T in Ts)
        self._ends = tuple(T.end for T in Ts)
        self._noparents = tuple(np.zeros(T.n_infosets, dtype=np.int32) for T in Ts)
        self._vs = tuple(np.zeros(T.n_seqs) for T in Ts)
        self._marks = tuple(np.zeros(T.n_infosets, dtype=np.uint8) for T in Ts)
        self._toucheds = tuple(np.zeros(T.n_infosets, dtype=np.int32) for T in Ts)
        self._free = np.zeros(0, dtype=np.int32)  # forced samples: none (see force_samples)
        self._stats = np.zeros(3, dtype=np.int64)  # nodes touched, traversals, touched count (scratch)
        depth = _depth(tree)
        self._frames, self._fint = np.zeros((4, depth)), np.zeros((2, depth), dtype=np.int32)  # traversal stack
        self.players = tuple(SampleState(b=self._uniform_b(T), R=np.zeros(T.n_seqs), S=np.zeros(T.n_seqs))
                             for T in Ts)
        self._bind()

    def _bind(self) -> None:
        """The traversal's array arguments, built once (again after :meth:`set_state`)."""
        P = self.players
        self._args = (self._tree, self._esl, self._starts, self._ends, self._noparents, (P[0].b, P[1].b),
                      (P[0].R, P[1].R), (P[0].S, P[1].S), self._vs, self._marks, self._toucheds, self._free,
                      self._stats, self._frames, self._fint, self.base, self.decay)

    @staticmethod
    def _uniform_b(T):
        sizes = T.end - T.start
        return np.concatenate(([1.0], np.repeat(1.0 / sizes, sizes)))

    # ------------------------------------------------------------------ variant scalars

    def regrets(self, t: int) -> tuple:
        """(pos, neg, floor, kappa, lam, eta) of iteration t, as :mod:`treeplex.solvers.cfr`'s variants."""
        v = self.variant
        if v == "cfr":
            return 1.0, 1.0, -math.inf, 1.0, 0.0, 0.0
        if v in ("cfr-rm+", "cfr+"):
            return 1.0, 1.0, 0.0, 1.0, 0.0, 0.0
        if v == "lcfr":
            d = (t - 1) / t
            return d, d, -math.inf, 1.0, 0.0, 0.0
        if v == "dcfr":
            return _discount(t - 1, self.alpha), _discount(t - 1, self.beta), -math.inf, 1.0, 0.0, 0.0
        return 1.0, 1.0, 0.0, 1.0, 1.0, 0.0  # pcfr+

    def averaging(self, t: int) -> tuple[float, float]:
        """(rho, omega) of iteration t."""
        if self.variant in ("cfr+", "lcfr"):
            return 1.0, float(t)
        if self.variant in ("dcfr", "pcfr+"):
            return ((t - 1) / t) ** self.gamma, 1.0
        return 1.0, 1.0

    def step(self) -> None:
        self.run(1)

    def run(self, n: int) -> None:
        """``n`` iterations in one numba call, bit for bit the same as ``n`` calls of
        :meth:`step` (the per-call overhead is most of an outcome-sampling iteration). The
        variants whose averaging never rescales (rho = 1: ``cfr``, ``cfr-rm+``, ``cfr+``,
        ``lcfr``) get their rows of scalars as whole arrays (the same IEEE operations as
        :meth:`regrets` and :meth:`averaging`: a Python loop cost about 4 us an iteration,
        as much as a Leduc iteration's traversals)."""
        if n <= 0:
            return
        if self.variant in ("cfr", "cfr-rm+", "cfr+", "lcfr"):
            self._flush(self._rows(n))
            return
        rows = []
        for _ in range(n):
            t = self.iteration + len(rows) + 1
            rho, omega = self.averaging(t)
            if rho == 0.0 or self.avg_scale * rho < 1e-200:
                self._flush(rows)  # the iterations before t add with the old scale
                for s in self.players:  # forget the sum (rho = 0) or renormalize it before the weights overflow
                    s.S *= rho * self.avg_scale
                self.avg_scale = 1.0
            else:
                self.avg_scale *= rho
            pos, floor, (neg, kappa, lam), _ = kernel_args(self.regrets(t), plain=False)
            if self.prune > 0.0:
                floor = max(floor, self.regret_floor)
                thr, prob = (self.prune_threshold, self.prune) if t > self.prune_after else (-math.inf, 0.0)
            else:
                thr, prob = -math.inf, 0.0
            rows.append((omega / self.avg_scale, pos, neg, floor, kappa, lam, thr, prob))
        self._flush(rows)

    def _rows(self, n: int) -> np.ndarray:
        """The rows of scalars of the next ``n`` iterations of a variant with rho = 1."""
        t = np.arange(self.iteration + 1, self.iteration + n + 1, dtype=np.float64)
        rows = np.empty((n, 8))
        v = self.variant
        rows[:, 0] = (t if v in ("cfr+", "lcfr") else 1.0) / self.avg_scale  # omega / avg_scale
        rows[:, 1] = rows[:, 2] = (t - 1.0) / t if v == "lcfr" else 1.0  # pos, neg
        rows[:, 3] = 0.0 if v in ("cfr-rm+", "cfr+") else -math.inf  # floor
        rows[:, 4], rows[:, 5] = 1.0, 0.0  # kappa, lam
        rows[:, 6], rows[:, 7] = -math.inf, 0.0  # no pruning
        if self.prune > 0.0:
            rows[:, 3] = np.maximum(rows[:, 3], self.regret_floor)
            on = t > self.prune_after
            rows[on, 6], rows[on, 7] = self.prune_threshold, self.prune
        return rows

    def _flush(self, rows) -> None:
        if len(rows) == 0:
            return
        seeds = self.rng.bit_generator.random_raw(len(rows)) >> np.uint64(1)  # from the checkpointed generator
        st = self._stats
        st[0] = st[1] = 0
        _iterations(self.mode, self.epsilon, seeds, np.asarray(rows, dtype=np.float64), *self._args)
        self.nodes_touched += int(st[0])
        self.samples += int(st[1])
        self.iteration += len(rows)
        if isinstance(rows, list):
            rows.clear()

    def force_samples(self, forced) -> None:
        """Every later traversal takes child ``forced[node]`` at each node it samples (-1: draw
        as usual); None: back to drawing everywhere. For tests that check one known sample."""
        self._free = np.zeros(0, dtype=np.int32) if forced is None else self._numbered(forced)
        self._bind()

    def _numbered(self, forced) -> np.ndarray:
        """``forced`` (per node of ``problem.tree``) in the numbering the traversal walks."""
        forced = np.asarray(forced, dtype=np.int32)
        if self._new is None:
            return forced.copy()
        out = np.empty_like(forced)
        out[self._new] = forced
        return out

    def sampled_values(self, player: int, forced: np.ndarray) -> np.ndarray:
        """The sampled counterfactual values of ``player``'s sequences from one traversal whose
        every sampled choice is ``forced[node]`` (the child index), without updating anything
        but a copy of the averages; for tests that enumerate the samples."""
        S = tuple(s.S.copy() for s in self.players)
        v = np.zeros_like(self._vs[player])
        mark = np.zeros_like(self._marks[player])
        touched = np.zeros_like(self._toucheds[player])
        st = np.zeros(3, dtype=np.int64)
        rng = np.zeros(1, dtype=np.uint64)
        bs, forced = (self.players[0].b, self.players[1].b), self._numbered(forced)
        if self.mode == ES:
            _walk_es(player, self._esl, bs, S, v, 1.0, mark, touched, forced, rng, st, self._fint, self._frames[3],
                     self.players[player].R, -math.inf)
        else:
            _walk(self.mode, player, self.epsilon, self._tree, self._starts, bs, S, v, 1.0, mark, touched, forced,
                  rng, st, self._frames, self._fint, self.base.copy(), self.decay, self.players[player].R, -math.inf)
        return v

    def average(self) -> tuple[np.ndarray, np.ndarray]:
        """Realization plans of the averaged local strategies (uniform where nothing was added)."""
        return tuple(T.plan_from_behavioral(_normalize(T, s.S)) for T, s in zip(self.problem.treeplexes, self.players))

    def current(self) -> tuple[np.ndarray, np.ndarray]:
        return tuple(T.plan_from_behavioral(s.b) for T, s in zip(self.problem.treeplexes, self.players))

    def trace_extra(self) -> dict:
        return {"nodes_touched": self.nodes_touched, "samples": self.samples, **super().trace_extra()}

    def state_dict(self) -> dict:
        return {**super().state_dict(), "nodes_touched": self.nodes_touched, "samples": self.samples,
                "avg_scale": self.avg_scale, "baselines": self.base.copy(),
                **{k: v.copy() for k, v in flat_state(self.players).items()}}

    def set_state(self, state: dict) -> None:
        self.nodes_touched = int(state["nodes_touched"])
        self.samples = int(state["samples"])
        self.avg_scale = float(state["avg_scale"])
        self.base[...] = state["baselines"]
        load_players(self.players, state, self.backend)
        self._bind()


def _depth(tree) -> int:
    """The number of non-terminal nodes on the longest root-to-leaf path (at least 1)."""
    depth = np.zeros(tree.n_nodes, dtype=np.int32)
    inner = tree.kind != 3
    for n in range(1, tree.n_nodes):  # preorder: parents first
        depth[n] = depth[tree.parent[n]] + inner[tree.parent[n]]
    return max(int(depth.max()), 1)


def _normalize(T, S: np.ndarray) -> np.ndarray:
    """Local strategies S / (sum over each infoset), uniform at infosets with nothing summed."""
    b = np.ones(T.n_seqs)
    if T.n_infosets:
        sizes = T.end - T.start
        tot = np.add.reduceat(S[1:], T.start - 1)
        own = T.seq_infoset[1:]
        ok = (tot > 0.0)[own]
        b[1:] = np.where(ok, S[1:] / np.where(ok, tot[own], 1.0), 1.0 / sizes[own])
    return b


@register("mccfr-es")
class ExternalSamplingMCCFR(MCCFR):
    """External-sampling MCCFR (Lanctot et al. 2009): chance and the opponent sampled, the
    traverser's actions enumerated; stochastically-weighted averaging at the opponent's nodes."""

    mode = ES


@register("mccfr-os")
class OutcomeSamplingMCCFR(MCCFR):
    """Outcome-sampling MCCFR (Lanctot et al. 2009): one terminal history per traversal, the
    traverser exploring with ``epsilon`` (0.6); importance-corrected values, zero baseline."""

    mode = OS


@register("mccfr-cs")
class ChanceSamplingMCCFR(MCCFR):
    """Chance-sampling CFR (Zinkevich et al. 2007; Lanctot et al. 2009): one chance outcome per
    chance node, both players' actions enumerated."""

    mode = CS
