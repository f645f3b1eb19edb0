"""A suit-isomorphic hand indexer per street (Waugh, "A fast and optimal hand isomorphism
algorithm", 2013): a bijection between the classes of (hole cards, flop, turn, river) under the
24 suit permutations and ``0..size-1``.

Cards are ``4 * rank + suit`` (:mod:`treeplex.poker.cards`). A street's cards come in rounds
(hole cards, then the board as one set); the order inside a round does not matter and the
rounds stay apart (a hole card differs from the same card on the board). Per suit s the hand is the sequence of rank sets
``R_s = (R_s0, R_s1, ...)``; a suit permutation permutes the ``R_s``, so a class is the multiset
``{R_0, R_1, R_2, R_3}``. The index (Waugh §3):

* a suit's *shape* is its card counts per round ``(|R_s0|, |R_s1|, ...)``; the multiset of the
  four shapes, sorted in decreasing order, is the *configuration* (offsets by configuration);
* a suit's *suit index* ranks ``R_s`` among the sequences of its shape: ``R_s0`` by colex rank
  among 13 ranks, ``R_s1`` among the ranks left, ..., mixed radix (``prod C(13 - used, n_r)``);
* the suits of equal shape form a group whose suit indices are a multiset of ``m`` values out
  of ``S``: ranked by the combinatorial number system with repetition (``C(S + m - 1, m)``);
* the index is the configuration's offset plus the groups' ranks in mixed radix.

:func:`unindex` returns the canonical representative: the configuration's shapes on suits
0, 1, 2, 3 in order, with each group's suit indices in decreasing order.
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from math import comb

import numba as nb
import numpy as np

from ..errors import InputError

STREETS = ("preflop", "flop", "turn", "river")
# the board is one round (its cards as a set), as in the counts; (2, 3, 1, 1) would give
# Waugh's 55,190,538 turn and 2,428,287,420 river classes
ROUNDS = {"preflop": (2,), "flop": (2, 3), "turn": (2, 4), "river": (2, 5)}
N_RANKS = 13

_CHOOSE = np.zeros((64, 8), dtype=np.int64)
for _n in range(64):
    for _k in range(8):
        _CHOOSE[_n, _k] = comb(_n, _k)


class Indexer:
    """The indexer of one street: ``index(cards)`` and ``unindex(i)``, with ``size`` classes.

    ``cards`` is int array ``[..., n]`` (hole cards first, then the board in deal order)."""

    def __init__(self, street):
        """``street``: a name of :data:`ROUNDS` or a tuple of round sizes (``(3,)``: flops alone)."""
        if isinstance(street, tuple):
            if not street or any(n < 1 or n > 7 for n in street) or sum(street) > 13:
                raise InputError(f"indexer: bad rounds {street!r}")
            rounds = street
        elif street in ROUNDS:
            rounds = ROUNDS[street]
        else:
            raise InputError(f"indexer: unknown street {street!r}; expected one of {', '.join(STREETS)}")
        self.street = street
        self.rounds = np.array(rounds, dtype=np.int64)
        self.n_cards = int(self.rounds.sum())
        R = len(self.rounds)
        # shapes: count vectors per suit (n_r <= rounds[r]); key = sum n_r * 8**r
        shapes = [()]
        for r in range(R):
            shapes = [s + (n,) for s in shapes for n in range(int(self.rounds[r]) + 1)]
        shapes = [s for s in shapes if sum(s) <= N_RANKS]
        key = {s: sum(n << (3 * r) for r, n in enumerate(s)) for s in shapes}
        size_of = {}
        for s in shapes:
            used, size = 0, 1
            for n in s:
                size *= comb(N_RANKS - used, n)
                used += n
            size_of[s] = size
        configs = []
        for combo in combinations_with_replacement(sorted(shapes, key=lambda s: key[s], reverse=True), 4):
            if all(sum(c[r] for c in combo) == self.rounds[r] for r in range(R)):
                configs.append(combo)
        ckeys, offsets, sizes, shape_of = [], [], [], []
        total = 0
        for combo in configs:
            ks = sorted((key[s] for s in combo), reverse=True)
            ckeys.append(sum(k << (12 * j) for j, k in enumerate(ks)))
            n = 1
            for s in set(combo):
                m = combo.count(s)
                n *= comb(size_of[s] + m - 1, m)
            offsets.append(total)
            sizes.append(n)
            total += n
            shape_of.append([list(s) + [0] * (4 - R) for s in sorted(combo, key=lambda s: key[s], reverse=True)])
        order = np.argsort(ckeys)
        self.config_keys = np.array(ckeys, dtype=np.int64)[order]
        self.config_offsets = np.array(offsets, dtype=np.int64)[order]
        self.config_sizes = np.array(sizes, dtype=np.int64)[order]
        self.config_shapes = np.array(shape_of, dtype=np.int64)[order]  # [config, suit slot, round]
        self.by_offset = np.argsort(self.config_offsets)
        self.size = int(total)

    def index(self, cards) -> np.ndarray:
        """int64 index of each row of ``cards`` (``[..., n_cards]``)."""
        c = np.asarray(cards, dtype=np.int64)
        if c.shape[-1] != self.n_cards:
            raise InputError(f"indexer {self.street}: need {self.n_cards} cards per hand, got {c.shape[-1]}")
        flat = np.ascontiguousarray(c.reshape(-1, self.n_cards))
        if flat.size and (flat.min() < 0 or flat.max() >= 52):
            raise InputError(f"indexer {self.street}: card ids must be 0..51")
        out = _index_many(flat, self.rounds, self.config_keys, self.config_offsets, self.config_shapes)
        if (out < 0).any():
            raise InputError(f"indexer {self.street}: a hand repeats a card (row {int(np.argmax(out < 0))})")
        return out.reshape(c.shape[:-1])

    def unindex(self, idx) -> np.ndarray:
        """The canonical hand ``int64[..., n_cards]`` of each index."""
        i = np.asarray(idx, dtype=np.int64)
        if i.size and (i.min() < 0 or i.max() >= self.size):
            raise InputError(f"indexer {self.street}: index out of range 0..{self.size - 1}")
        flat = np.ascontiguousarray(i.reshape(-1))
        out = _unindex_many(flat, self.rounds, self.config_offsets[self.by_offset],
                            self.config_shapes[self.by_offset])
        return out.reshape(i.shape + (self.n_cards,))


@nb.njit(cache=True)
def _comb(n, k):
    """C(n, k) for the multiset ranks (n up to a suit's size, k <= 3: no overflow)."""
    if k < 0 or n < k:
        return 0
    r = 1
    for t in range(k):
        r = r * (n - t) // (t + 1)
    return r


@nb.njit(cache=True)
def _suit_size(shape, R):
    used, size = 0, 1
    for r in range(R):
        size *= _CHOOSE[N_RANKS - used, shape[r]]
        used += shape[r]
    return size


@nb.njit(cache=True)
def _popcount(x):
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@nb.njit(cache=True)
def _index_one(cards, rounds, config_keys, config_offsets, config_shapes):
    R = rounds.shape[0]
    sets = np.zeros((4, 4), dtype=np.int64)  # [suit, round] rank bitmask
    pos = 0
    for r in range(R):
        for _ in range(rounds[r]):
            c = cards[pos]
            pos += 1
            s, k = c & 3, c >> 2
            for rr in range(R):
                if sets[s, rr] >> k & 1:
                    return -1
            sets[s, r] |= 1 << k
    keys = np.zeros(4, dtype=np.int64)
    sidx = np.zeros(4, dtype=np.int64)
    for s in range(4):
        used = 0
        key = 0
        idx = 0
        for r in range(R):
            m = sets[s, r]
            n = _popcount(m)
            key |= n << (3 * r)
            # colex rank of m among ranks not in `used`, relabelled 0..12-|used|
            rank, j, x = 0, 1, m
            while x:
                b = x & -x
                k = _popcount(b - 1)
                kk = k - _popcount(used & (b - 1))
                rank += _CHOOSE[kk, j]
                j += 1
                x ^= b
            idx = idx * _CHOOSE[N_RANKS - _popcount(used), n] + rank
            used |= m
        keys[s] = key
        sidx[s] = idx
    # order suits by (shape key, suit index) decreasing
    order = np.argsort(-(keys * (1 << 40) + sidx))
    ck = 0
    for j in range(4):
        ck |= keys[order[j]] << (12 * j)
    ci = np.searchsorted(config_keys, ck)
    result = 0
    j = 0
    while j < 4:
        e = j
        while e + 1 < 4 and keys[order[e + 1]] == keys[order[j]]:
            e += 1
        m = e - j + 1
        S = _suit_size(config_shapes[ci, j], R)
        # multiset a_1 >= ... >= a_m -> strict b_t = a_t + (m - t); rank sum C(b_t, m - t + 1)
        g = 0
        for t in range(m):
            b = sidx[order[j + t]] + (m - 1 - t)
            g += _comb(b, m - t)
        result = result * _comb(S + m - 1, m) + g
        j = e + 1
    return config_offsets[ci] + result


@nb.njit(cache=True)
def _index_many(cards, rounds, config_keys, config_offsets, config_shapes):
    out = np.empty(cards.shape[0], dtype=np.int64)
    for i in range(cards.shape[0]):
        out[i] = _index_one(cards[i], rounds, config_keys, config_offsets, config_shapes)
    return out


@nb.njit(cache=True)
def _unindex_one(i, rounds, offsets, shapes, out):
    R = rounds.shape[0]
    ci = np.searchsorted(offsets, i, side="right") - 1
    rem = i - offsets[ci]
    # group boundaries (slots with equal shapes are consecutive)
    gstart = np.zeros(4, dtype=np.int64)
    gm = np.zeros(4, dtype=np.int64)
    ng = 0
    j = 0
    while j < 4:
        e = j
        while e + 1 < 4:
            same = True
            for r in range(R):
                if shapes[ci, e + 1, r] != shapes[ci, j, r]:
                    same = False
            if not same:
                break
            e += 1
        gstart[ng] = j
        gm[ng] = e - j + 1
        ng += 1
        j = e + 1
    sidx = np.zeros(4, dtype=np.int64)
    for g in range(ng - 1, -1, -1):
        j, m = gstart[g], gm[g]
        S = _suit_size(shapes[ci, j], R)
        radix = _comb(S + m - 1, m)
        gr = rem % radix
        rem //= radix
        for t in range(m):
            k = m - t
            lo, hi = k - 1, S + m - 1  # largest b with C(b, k) <= gr
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if _comb(mid, k) <= gr:
                    lo = mid
                else:
                    hi = mid - 1
            gr -= _comb(lo, k)
            sidx[j + t] = lo - (m - 1 - t)
    cnt = np.zeros(4, dtype=np.int64)
    base = np.zeros(4, dtype=np.int64)
    acc = 0
    for r in range(R):
        base[r] = acc
        acc += rounds[r]
    for s in range(4):
        shape = shapes[ci, s]
        # split the suit index into per-round colex ranks (last round is the least significant)
        ranks = np.zeros(4, dtype=np.int64)
        x = sidx[s]
        used_n = 0
        radices = np.zeros(4, dtype=np.int64)
        for r in range(R):
            radices[r] = _CHOOSE[N_RANKS - used_n, shape[r]]
            used_n += shape[r]
        for r in range(R - 1, -1, -1):
            ranks[r] = x % radices[r]
            x //= radices[r]
        used = 0
        for r in range(R):
            n = shape[r]
            rank = ranks[r]
            for t in range(n, 0, -1):  # colex unrank: largest element first
                v = t - 1
                while _CHOOSE[v + 1, t] <= rank:
                    v += 1
                rank -= _CHOOSE[v, t]
                # v-th free rank (0-based) among ranks not in `used`
                k, seen = 0, -1
                while True:
                    if not used >> k & 1:
                        seen += 1
                        if seen == v:
                            break
                    k += 1
                out[base[r] + cnt[r]] = 4 * k + s
                cnt[r] += 1
            for t in range(cnt[r] - n, cnt[r]):
                used |= 1 << (out[base[r] + t] >> 2)


@nb.njit(cache=True)
def _unindex_many(idx, rounds, offsets, shapes):
    n = 0
    for r in range(rounds.shape[0]):
        n += rounds[r]
    out = np.empty((idx.shape[0], n), dtype=np.int64)
    for i in range(idx.shape[0]):
        _unindex_one(idx[i], rounds, offsets, shapes, out[i])
    return out
