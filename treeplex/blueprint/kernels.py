"""Compiled kernels of the blueprint trainer: a random generator that checkpoints, a 7-card
hand evaluator, deals with their buckets, external-sampling MCCFR with Pluribus's pruning, and
exact play between two blueprints on one deal.

**MCCFR** (external sampling: Lanctot, Waugh, Zinkevich & Bowling 2009). One iteration is one
traversal per player, each on a freshly sampled deal: the traverser t enumerates its actions,
the opponent and chance sample one. At t's node with strategy s (regret matching on the
node's regrets for t's bucket), v = sum_a s(a) v(a) and R(I, a) += v(a) - v: the sampled
counterfactual regret, whose expectation is the full-width one (the deal and the opponent's
actions are sampled with exactly the probabilities that weight the counterfactual value).
The opponent's node adds its current strategy to its strategy sum S ("simple" averaging: the
node is reached with probability proportional to the opponent's own reach, so the expected
addition is reach-weighted).

**Storage.** R is int32 in chips (the unit of the payoffs; blinds 50/100): an increment is
rounded stochastically (floor(x + U), U uniform: unbiased, so small increments are not lost),
and the sum saturates at 2^31 - 1 and at ``floor`` (Pluribus's floor, -310,000,000, a little
below the pruning threshold so that a pruned action can come back). S is float32.

**Pruning** (Brown & Sandholm, "Superhuman AI for multiplayer poker", Science 2019, and its
supplementary pseudocode MCCFR-P): on a pruned traversal the traverser does not explore an
action whose regret is below ``threshold`` (Pluribus: -300,000,000 chips) except on the last
round and for actions that end the hand (fold, a call to showdown); an unexplored action's
regret is not updated. The trainer prunes a share (Pluribus: 95%) of traversals after a start.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..abstraction.indexer import _index_one
from .game import DECISION, FOLD, MAX_ACTIONS, MAX_DEPTH

INT32_MAX = 2147483647


# ------------------------------------------------------------------ random numbers


@nb.njit(inline="always")
def next_u64(state):
    """xorshift64* (Vigna 2016): the state is one uint64 in ``state[0]``, saved in checkpoints."""
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return x * np.uint64(2685821657736338717)


@nb.njit(inline="always")
def uniform(state):
    """A float in [0, 1) with 53 random bits."""
    return float(next_u64(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@nb.njit(inline="always")
def below(state, n):
    """An integer in 0..n-1."""
    return int(uniform(state) * n)


def seed_state(seed: int) -> np.ndarray:
    """A nonzero xorshift state from a seed (splitmix64 of it)."""
    z = (int(seed) + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z ^= z >> 31
    return np.array([z or 1], dtype=np.uint64)


# ------------------------------------------------------------------ hand values


@nb.njit(cache=True)
def _top_bits(m, k):
    """The ``k`` highest set bits of rank mask ``m`` as 4-bit ranks, high first, packed."""
    v = 0
    n = 0
    for r in range(12, -1, -1):
        if n == k:
            break
        if m >> r & 1:
            v = v << 4 | r
            n += 1
    return v << 4 * (k - n)


@nb.njit(cache=True)
def _straight(m):
    """Top rank of the best straight in rank mask ``m`` (the wheel's top is 3), or -1."""
    for top in range(12, 3, -1):
        if (m >> (top - 4)) & 0x1F == 0x1F:
            return top
    if m & 0x100F == 0x100F:  # A2345
        return 3
    return -1


@nb.njit(cache=True)
def hand_rank7(cards):
    """Strength of the best 5 of 7 cards (``4 * rank + suit``): larger is better, equal ties.
    ``category << 20 | ranks``, categories as :mod:`treeplex.poker.handeval` (8 straight
    flush ... 0 high card), ranks 4 bits each, the deciding ones first."""
    counts = np.zeros(13, dtype=np.int64)
    suits = np.zeros(4, dtype=np.int64)
    nsuit = np.zeros(4, dtype=np.int64)
    for i in range(7):
        r, s = cards[i] >> 2, cards[i] & 3
        counts[r] += 1
        suits[s] |= 1 << r
        nsuit[s] += 1
    flush = -1
    for s in range(4):
        if nsuit[s] >= 5:
            t = _straight(suits[s])
            if t >= 0:
                return 8 << 20 | t
            flush = 5 << 20 | _top_bits(suits[s], 5)
    quad, trip1, trip2, pair1, pair2 = -1, -1, -1, -1, -1
    mask = 0
    for r in range(12, -1, -1):
        c = counts[r]
        if c > 0:
            mask |= 1 << r
        if c == 4:
            quad = r
        elif c == 3:
            if trip1 < 0:
                trip1 = r
            elif trip2 < 0:
                trip2 = r
        elif c == 2:
            if pair1 < 0:
                pair1 = r
            elif pair2 < 0:
                pair2 = r
    if quad >= 0:
        return 7 << 20 | quad << 4 | _top_bits(mask & ~(1 << quad), 1)
    if trip1 >= 0 and (trip2 >= 0 or pair1 >= 0):
        return 6 << 20 | trip1 << 4 | max(trip2, pair1)
    if flush >= 0:
        return flush
    t = _straight(mask)
    if t >= 0:
        return 4 << 20 | t
    if trip1 >= 0:
        return 3 << 20 | trip1 << 8 | _top_bits(mask & ~(1 << trip1), 2)
    if pair2 >= 0:
        return 2 << 20 | pair1 << 8 | pair2 << 4 | _top_bits(mask & ~(1 << pair1) & ~(1 << pair2), 1)
    if pair1 >= 0:
        return 1 << 20 | pair1 << 12 | _top_bits(mask & ~(1 << pair1), 3)
    return _top_bits(mask, 5)


# ------------------------------------------------------------------ deals


@nb.njit(cache=True)
def _lookup(values, where, idx):
    """Bucket of class ``idx``: ``values[idx]`` for a full table, else by ``where`` (-1 if absent)."""
    if where.shape[0] == 0:
        return int(values[idx])
    p = np.searchsorted(where, idx)
    if p < where.shape[0] and where[p] == idx:
        return int(values[p])
    return -1


@nb.njit(cache=True)
def deal_cards(flops, rng, cards):
    """cards[0:2] player 0's hole cards, [2:4] player 1's, [4:9] the board: the flop uniform
    from ``flops`` (rows of 3 cards), then the rest uniform from the 49 left."""
    f = below(rng, flops.shape[0])
    used = np.zeros(52, dtype=np.bool_)
    for j in range(3):
        cards[4 + j] = flops[f, j]
        used[flops[f, j]] = True
    for j in (0, 1, 2, 3, 7, 8):
        while True:
            c = below(rng, 52)
            if not used[c]:
                break
        used[c] = True
        cards[j] = c


@nb.njit(cache=True)
def real_buckets(cards, ix_rounds, ix_keys, ix_offsets, ix_shapes, ix_lens, vals, wheres, bk):
    """bk[p, s]: player p's bucket on street s (preflop: its 169-class index); the indexer of
    street s is row s of the ix_* arrays (``ix_lens[s]`` configurations), its buckets
    ``vals[s]``/``wheres[s]``. Returns the showdown: +1 player 0 wins, -1 loses, 0 ties."""
    hand = np.empty(7, dtype=np.int64)
    for p in range(2):
        hand[0] = cards[2 * p]
        hand[1] = cards[2 * p + 1]
        for j in range(5):
            hand[2 + j] = cards[4 + j]
        for s in range(4):
            n = ix_lens[s]
            R = 1 if s == 0 else 2
            idx = _index_one(hand[:2 + (0 if s == 0 else s + 2)], ix_rounds[s, :R], ix_keys[s, :n],
                             ix_offsets[s, :n], ix_shapes[s, :n])
            bk[p, s] = idx if s == 0 else _lookup(vals[s], wheres[s], idx)
    a = np.empty(7, dtype=np.int64)
    b = np.empty(7, dtype=np.int64)
    for j in range(5):
        a[2 + j] = cards[4 + j]
        b[2 + j] = cards[4 + j]
    a[0], a[1], b[0], b[1] = cards[0], cards[1], cards[2], cards[3]
    ra, rb = hand_rank7(a), hand_rank7(b)
    return 1 if ra > rb else (-1 if ra < rb else 0)


@nb.njit(cache=True)
def table_deal(cdf, table_bk, table_sd, rng, bk):
    """A deal of a finite table (tests' small games): row with probability from ``cdf``."""
    u = uniform(rng)
    d = np.searchsorted(cdf, u, side="right")
    if d >= cdf.shape[0]:
        d = cdf.shape[0] - 1
    for p in range(2):
        for s in range(table_bk.shape[2]):
            bk[p, s] = table_bk[d, p, s]
    return table_sd[d]


@nb.njit(cache=True)
def sample_deal(mode, flops, rng, cards, ix_rounds, ix_keys, ix_offsets, ix_shapes, ix_lens, vals, wheres, cdf,
                table_bk, table_sd, bk):
    """One deal into ``bk`` (and ``cards``): ``mode`` 0 52-card hold'em (:func:`deal_cards`,
    :func:`real_buckets`), drawn again while a street's bucket is unknown (a class the
    abstraction did not reach: cannot happen with its own flops); 1 a table row
    (:func:`table_deal`). Returns (showdown, redraws)."""
    if mode != 0:
        return table_deal(cdf, table_bk, table_sd, rng, bk), 0
    redraws = 0
    while True:
        deal_cards(flops, rng, cards)
        sd = real_buckets(cards, ix_rounds, ix_keys, ix_offsets, ix_shapes, ix_lens, vals, wheres, bk)
        if bk[0, 1] >= 0 and bk[1, 1] >= 0 and bk[0, 2] >= 0 and bk[1, 2] >= 0 and bk[0, 3] >= 0 and bk[1, 3] >= 0:
            return sd, redraws
        redraws += 1


# ------------------------------------------------------------------ MCCFR


@nb.njit(inline="always")
def _strategy(R, base, k, out):
    tot = 0.0
    for a in range(k):
        r = R[base + a]
        out[a] = r if r > 0 else 0.0
        tot += out[a]
    if tot > 0:
        for a in range(k):
            out[a] /= tot
    else:
        for a in range(k):
            out[a] = 1.0 / k


@nb.njit(cache=True)
def traverse(t, bk, sd, kind, street, actor, n_act, first, payoff, children, offset, last_round,
             R, S, rng, prune, threshold, floor, sig, val, frame, stats):
    """Sampled value for traverser ``t`` from the root (chips), updating R at t's nodes and S
    at the opponent's. Iterative (numba's cache cannot hold recursive functions): the
    opponent's nodes pass through, each of t's nodes is a frame (``frame[d]``: node, next
    action, explored-action bits; ``sig[d]``, ``val[d]``: its strategy and action values)."""
    d = -1
    node = 0
    while True:
        # descend from ``node`` until a terminal gives ``ret``
        while True:
            k = kind[node]
            if k != DECISION:
                u = payoff[node] if k == FOLD else sd * payoff[node]
                ret = u if t == 0 else -u
                break
            stats[0] += 1
            p = actor[node]
            na = n_act[node]
            base = offset[node] + bk[p, street[node]] * na
            if p != t:
                _strategy(R, base, na, sig[d + 1])
                for a in range(na):
                    S[base + a] += sig[d + 1, a]
                u = uniform(rng)
                a = 0
                acc = sig[d + 1, 0]
                while a < na - 1 and u >= acc:
                    a += 1
                    acc += sig[d + 1, a]
                node = children[first[node] + a]
                continue
            d += 1
            _strategy(R, base, na, sig[d])
            explore = 0
            if prune and street[node] != last_round:
                for a in range(na):
                    if kind[children[first[node] + a]] != DECISION or R[base + a] >= threshold:
                        explore |= 1 << a
                    else:
                        stats[1] += 1
            if explore == 0:
                explore = (1 << na) - 1
            a = 0
            while not explore >> a & 1:
                a += 1
            frame[d, 0] = node
            frame[d, 1] = a
            frame[d, 2] = explore
            node = children[first[node] + a]
        # return ``ret`` up through the frames that have no action left to explore
        while True:
            if d < 0:
                return ret
            node = frame[d, 0]
            a = frame[d, 1]
            explore = frame[d, 2]
            val[d, a] = ret
            a += 1
            na = n_act[node]
            while a < na and not explore >> a & 1:
                a += 1
            if a < na:
                frame[d, 1] = a
                node = children[first[node] + a]
                break
            base = offset[node] + bk[t, street[node]] * na
            v = 0.0
            for a in range(na):
                if explore >> a & 1:
                    v += sig[d, a] * val[d, a]
            for a in range(na):
                if explore >> a & 1:
                    new = R[base + a] + np.floor(val[d, a] - v + uniform(rng))
                    if new > INT32_MAX:
                        new = INT32_MAX
                    elif new < floor:
                        new = floor
                    R[base + a] = np.int32(new)
            ret = v
            d -= 1


@nb.njit(cache=True)
def discount(R, S, d):
    """Linear CFR's discount (Brown & Sandholm 2019, "Solving imperfect-information games via
    discounted regret minimization"; Pluribus): R and S times d, R rounded to the nearest chip."""
    for i in range(R.shape[0]):
        R[i] = np.int32(np.rint(R[i] * d))
        S[i] = np.float32(S[i] * d)


@nb.njit(cache=True)
def run_iterations(n, start, kind, street, actor, n_act, first, payoff, children, offset, last_round,
                   R, S, rng, prune_after, prune_share, threshold, floor, discount_every, discount_until,
                   mode, flops, ix_rounds, ix_keys, ix_offsets, ix_shapes, ix_lens, vals, wheres,
                   cdf, table_bk, table_sd, stats):
    """Iterations start+1 .. start+n (one traversal per player each, on fresh deals); after
    iteration i, while i <= ``discount_until`` and i is a multiple of ``discount_every``,
    R and S are discounted by k/(k+1), k = i / discount_every. ``mode`` 0 deals 52-card
    hold'em (``flops``, indexers, buckets), 1 a table. Returns the sum of traverser values."""
    sig = np.zeros((MAX_DEPTH, MAX_ACTIONS))
    val = np.zeros((MAX_DEPTH, MAX_ACTIONS))
    frame = np.zeros((MAX_DEPTH, 3), dtype=np.int64)
    bk = np.zeros((2, 4), dtype=np.int64)
    cards = np.zeros(9, dtype=np.int64)
    total = 0.0
    for i in range(start + 1, start + n + 1):
        for t in range(2):
            sd, redrawn = sample_deal(mode, flops, rng, cards, ix_rounds, ix_keys, ix_offsets, ix_shapes, ix_lens,
                                      vals, wheres, cdf, table_bk, table_sd, bk)
            stats[2] += redrawn
            prune = i > prune_after and uniform(rng) < prune_share
            total += traverse(t, bk, sd, kind, street, actor, n_act, first, payoff, children, offset,
                              last_round, R, S, rng, prune, threshold, floor, sig, val, frame, stats)
        if discount_every > 0 and i <= discount_until and i % discount_every == 0:
            k = i // discount_every
            discount(R, S, k / (k + 1.0))
    return total


# ------------------------------------------------------------------ exact play on one deal


@nb.njit(inline="always")
def _next_played(P, base, a, na):
    """The first action from ``a`` on with probability > 0 (``na`` if none)."""
    while a < na and P[base + a] <= 0:
        a += 1
    return a


@nb.njit(cache=True)
def expected_value(bk, sd, kind, street, actor, n_act, first, payoff, children, offset, P0, P1, frame, acc, root):
    """Player 0's expected chips from node ``root`` when player p plays the probabilities ``Pp``
    (per infoset-action), on a deal with buckets bk; actions of probability 0 are skipped.
    Iterative: ``frame[d]`` = (node, action being valued), ``acc[d]`` its value so far."""
    d = -1
    node = root
    while True:
        while kind[node] == DECISION:
            d += 1
            na = n_act[node]
            base = offset[node] + bk[actor[node], street[node]] * na
            a = _next_played(P0 if actor[node] == 0 else P1, base, 0, na)
            frame[d, 0] = node
            frame[d, 1] = a
            acc[d] = 0.0
            node = children[first[node] + a]
        ret = payoff[node] if kind[node] == FOLD else sd * payoff[node]
        while True:
            if d < 0:
                return ret
            node = frame[d, 0]
            a = frame[d, 1]
            na = n_act[node]
            base = offset[node] + bk[actor[node], street[node]] * na
            P = P0 if actor[node] == 0 else P1
            acc[d] += P[base + a] * ret
            a = _next_played(P, base, a + 1, na)
            if a < na:
                frame[d, 1] = a
                node = children[first[node] + a]
                break
            ret = acc[d]
            d -= 1


@nb.njit(cache=True)
def head_to_head(n, kind, street, actor, n_act, first, payoff, children, offset, PA, PB, rng, mode, flops,
                 ix_rounds, ix_keys, ix_offsets, ix_shapes, ix_lens, vals, wheres, cdf, table_bk, table_sd):
    """Duplicate play of A against B (their probabilities per infoset-action) on ``n`` sampled
    deals: per deal, (A as player 0 against B) minus (B as player 0 against A), halved: A's
    chips per hand, exact over both players' actions. Returns the per-deal values."""
    out = np.empty(n)
    bk = np.zeros((2, 4), dtype=np.int64)
    cards = np.zeros(9, dtype=np.int64)
    frame = np.zeros((MAX_DEPTH, 2), dtype=np.int64)
    acc = np.zeros(MAX_DEPTH)
    for i in range(n):
        sd, _ = sample_deal(mode, flops, rng, cards, ix_rounds, ix_keys, ix_offsets, ix_shapes, ix_lens, vals, wheres,
                            cdf, table_bk, table_sd, bk)
        a = expected_value(bk, sd, kind, street, actor, n_act, first, payoff, children, offset, PA, PB, frame, acc, 0)
        b = expected_value(bk, sd, kind, street, actor, n_act, first, payoff, children, offset, PB, PA, frame, acc, 0)
        out[i] = 0.5 * (a - b)
    return out
