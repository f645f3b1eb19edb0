"""The poker operators' products as whole-array operations on any array namespace ``xp``
(NumPy on the CPU, CuPy on a device): the fold and showdown sums of
:class:`.streets_operator.StreetsPayoff` and :class:`.operator.RiverPayoff` as gathers,
sorted prefix sums per board and one matrix product, batched over groups of terminals, so
that on a device the iterates never leave it.

Math (see :mod:`.streets_operator`). A group g = (board B, input sequence (base, stride), kind)
gathers v_g[i] = w_in[i] x[base + i stride] over the input hands i the board leaves (0 for
the others; slot n_in is a zero). For an own hand h with cards c1, c2 and V_c = sum of v_g
over hands holding c (one (G, n_in) x (n_in, 52) matrix product):

    fold[g, h]     = coef[h] (sum v_g - V_c1 - V_c2 + v_g[same combo])
    showdown[g, h] = coef[h] (win - (compat - at_most))                   (river board B)

with, over B's input hands sorted weakest first, the prefix sums P and the per-card prefix
sums cum_c (52 running sums over the hands holding c, in strength order: one cumsum of a
gathered (G, K, 52) table, K = the most hands holding one card):

    compat  = P[end] - cum_c1[end] - cum_c2[end] + v[same]
    win     = P[lt_h] - cum_c1(< lt_h) - cum_c2(< lt_h)            (strictly weaker, compatible)
    at_most = P[le_h] - cum_c1(< le_h) - cum_c2(< le_h) + v[same]  (weaker or tied, compatible)

``lt_h``/``le_h`` and the per-card counts below them are found once per (board, own hand) at
setup (host, ``searchsorted`` over sorted keys). A terminal t of group g then adds value_t x
row g (x sign for a showdown: +1 when player 0 is the output player) into its own sequences
``base_t + h stride_t``: one scatter-add per chunk. Groups go in chunks of about
``CHUNK`` gathered numbers so memory stays bounded. The arithmetic equals the numba sweeps'
up to summation order (tests: 1e-12 of the largest entry, NumPy against ``matvec``/``rmatvec``).

A :class:`~.isomorphism.SymmetricPayoff` is the same with a gather before and a scatter-add
after (``red_of``).
"""

from __future__ import annotations

import numpy as np

CHUNK = 1 << 24  # gathered numbers (v_g and the per-card table) per chunk of groups


def _layout(A):
    """The operator as (cards, weight, coef, same, boards, order, kind, value, board, base,
    stride, reduction): a RiverPayoff is one board with nothing dead and its hands presorted."""
    # by what the operators hold (each one's on_device imports this module, so no import back):
    # StreetsPayoff has ``boards``, RiverPayoff ``strength``, SymmetricPayoff neither but an ``inner`` one
    red = None
    if not hasattr(A, "boards") and not hasattr(A, "strength") and hasattr(A, "inner"):
        A, red = A.inner, (A.red.red_of(0), A.red.red_of(1))
    if hasattr(A, "boards"):
        return (A.cards, A.weight, A.coef, A.same, A.boards, A.order, A.kind, A.value, A.board, A.base, A.stride,
                red)
    if hasattr(A, "strength"):
        same = [np.where(s >= 0, s, len(A.cards[1 - p])).astype(np.int64) for p, s in enumerate(A.same)]
        order = [(np.array([0, len(c)], np.int64), np.arange(len(c), dtype=np.int64), s)
                 for c, s in zip(A.cards, A.strength)]
        return (A.cards, A.weight, A.coef, same, np.full((1, 5), -1, np.int32), order, A.kind, A.value,
                np.zeros(A.n_terminals, np.int64), A.base, A.stride, red)
    return None


def supports(A) -> bool:
    """Whether :class:`PokerArrayOperator` can take this operator (river, streets, symmetric)."""
    return _layout(A) is not None


class _Side:
    """Setup for products into player ``own``'s sequences (input player oth = 1 - own)."""

    def __init__(self, xp, L, own: int, n_out: int):
        cards, weight, coef, same, boards, order, kind, value, board, base, stride, _ = L
        oth = 1 - own
        self.xp, self.n_out, self.sign = xp, n_out, 1.0 if own == 0 else -1.0
        n_in, n_own = len(cards[oth]), len(cards[own])
        self.n_in = n_in
        nb_ = len(boards)
        dead = np.zeros((nb_, 52), dtype=bool)
        for k in range(boards.shape[1]):
            ok = boards[:, k] >= 0
            dead[np.flatnonzero(ok), boards[ok, k]] = True
        alive_in = ~(dead[:, cards[oth][:, 0]] | dead[:, cards[oth][:, 1]])  # (boards, n_in)
        alive_own = ~(dead[:, cards[own][:, 0]] | dead[:, cards[own][:, 1]])
        # input weights per board (0 where the board blocks the hand), slot n_in = 0
        self.w_in = np.zeros((nb_, n_in + 1))
        self.w_in[:, :n_in] = weight[oth][None, :] * alive_in
        self.fold_coef = coef[own][None, :] * alive_own
        onehot = np.zeros((n_in + 1, 52))
        onehot[np.arange(n_in), cards[oth][:, 0]] = 1.0
        onehot[np.arange(n_in), cards[oth][:, 1]] = 1.0
        self.onehot = xp.asarray(onehot[:n_in])
        self.c1, self.c2 = (xp.asarray(cards[own][:, k].astype(np.int64)) for k in (0, 1))
        self.same = xp.asarray(np.asarray(same[own], np.int64))
        self.coef = coef[own]
        self.own_cards = cards[own]
        self.kind, self.value, self.board = kind, value, board
        self.obase, self.ostride = base[own], stride[own]
        self.ibase, self.istride = base[oth], stride[oth]
        self._showdown_tables(xp, order[oth], order[own], cards[oth], n_in, n_own, nb_)
        self.w_river = xp.asarray(self.w_in[self.rivers])
        self.w_in = xp.asarray(self.w_in)
        self.fold_coef = xp.asarray(self.fold_coef)
        self.batches = [self._batches(xp, k) for k in (0, 1)]

    def _showdown_tables(self, xp, oin, oown, cards_in, n_in, n_own, nb_):
        """Per river board (compact id r): ``sorted_in`` (r, n_in) input hands weakest first
        (padded with n_in), ``table`` (r, K, 52) the hands holding each card in that order
        (padded), ``pos`` (r, n_own, 6) indices lt, le into P and the per-card counts below
        them as flat indices k * 52 + c into the cumsum table, ``show_coef`` (r, n_own)."""
        iptr, iidx, istr = oin
        optr, oidx, ostr = oown
        rivers = np.flatnonzero(np.diff(iptr) > 0)
        self.river_of = np.full(nb_, -1, np.int64)
        self.river_of[rivers] = np.arange(len(rivers))
        self.rivers = rivers
        R = len(rivers)
        sorted_in = np.full((R, n_in), n_in, np.int64)
        # entries (river r, card c, rank j in strength order, hand i, strength s), both cards
        ent_r, ent_c, ent_j, ent_s, ent_i = [], [], [], [], []
        for r, b in enumerate(rivers):
            hi, st = iidx[iptr[b]:iptr[b + 1]], istr[iptr[b]:iptr[b + 1]]
            sorted_in[r, :len(hi)] = hi
            for k in (0, 1):
                ent_r.append(np.full(len(hi), r))
                ent_c.append(cards_in[hi, k])
                ent_j.append(np.arange(len(hi)))
                ent_s.append(st)
                ent_i.append(hi)
        cat = (lambda a: np.concatenate(a).astype(np.int64)) if R else (lambda a: np.zeros(0, np.int64))
        er, ec, ej, es, ei = cat(ent_r), cat(ent_c), cat(ent_j), cat(ent_s), cat(ent_i)
        key = (er * 52 + ec) * (n_in + 1) + ej  # per (river, card), in strength order
        o = np.argsort(key, kind="stable")
        er, ec, es, ei = er[o], ec[o], es[o], ei[o]
        grp = er * 52 + ec
        start = np.searchsorted(grp, np.arange(R * 52 + 1))
        rank = np.arange(len(grp)) - start[grp]
        K = int(rank.max()) + 1 if len(rank) else 1
        table = np.full((R, K, 52), n_in, np.int64)
        table[er, rank, ec] = ei
        self.K = K
        # own hands on each river board: lt/le into the sorted input strengths, per card counts
        lo = min(int(istr.min()) if len(istr) else 0, int(ostr.min()) if len(ostr) else 0)
        istr, ostr, es = istr.astype(np.int64) - lo, ostr.astype(np.int64) - lo, es - lo  # keys need s >= 0
        SMAX = int(max(istr.max() if len(istr) else 0, ostr.max() if len(ostr) else 0)) + 2
        in_key = np.concatenate([r * SMAX + istr[iptr[b]:iptr[b + 1]].astype(np.int64) for r, b in enumerate(rivers)]
                                ) if R else np.zeros(0, np.int64)
        in_start = np.searchsorted(in_key, np.arange(R) * SMAX)
        card_key = grp * SMAX + es  # sorted: by (river, card), then strength
        pos = np.zeros((R, n_own, 6), np.int64)
        show_coef = np.zeros((R, n_own))
        for r, b in enumerate(rivers):
            h, s = oidx[optr[b]:optr[b + 1]], ostr[optr[b]:optr[b + 1]].astype(np.int64)
            show_coef[r, h] = self.coef[h]
            for col, side in ((0, "left"), (1, "right")):
                pos[r, h, col] = np.searchsorted(in_key, r * SMAX + s, side) - in_start[r]
                for k in (0, 1):
                    g = r * 52 + self.own_cards[h, k].astype(np.int64)
                    pos[r, h, 2 + 2 * col + k] = (np.searchsorted(card_key, g * SMAX + s, side) - start[g]) * 52 \
                        + self.own_cards[h, k]
        self.sorted_in = xp.asarray(sorted_in)
        self.table = xp.asarray(table.reshape(R, K * 52))
        self.pos = xp.asarray(pos)
        self.show_coef = xp.asarray(show_coef)

    def _batches(self, xp, kind: int):
        """Chunks of groups of one kind: per chunk (board or river id, base, stride) per group,
        and per terminal (group in chunk, value, own base, own stride)."""
        ts = np.flatnonzero(self.kind == kind)
        if len(ts) == 0:
            return []
        bkey = self.board[ts] if kind == 0 else self.river_of[self.board[ts]]
        if kind == 1 and np.any(bkey < 0):
            raise ValueError("a showdown terminal on a board with no river order")
        o = np.lexsort((self.istride[ts], self.ibase[ts], bkey))
        ts, bkey = ts[o], bkey[o]
        b, s = self.ibase[ts], self.istride[ts]
        new = np.ones(len(ts), bool)
        new[1:] = (b[1:] != b[:-1]) | (s[1:] != s[:-1]) | (bkey[1:] != bkey[:-1])
        gid = np.cumsum(new) - 1
        first = np.flatnonzero(new)
        per_group = (self.n_in + 1) + (self.K * 52 if kind == 1 else 52)
        step = max(1, CHUNK // per_group)
        out = []
        val = self.value[ts] * (self.sign if kind == 1 else 1.0)
        for g0 in range(0, len(first), step):
            g1 = min(g0 + step, len(first))
            t0, t1 = first[g0], (first[g1] if g1 < len(first) else len(ts))
            sl = first[g0:g1]
            out.append(tuple(xp.asarray(a) for a in (bkey[sl], b[sl], s[sl], gid[t0:t1] - g0, val[t0:t1],
                                                      self.obase[ts[t0:t1]], self.ostride[ts[t0:t1]])))
        return out

    def apply(self, vec):
        """out[own seqs] = the product's sums for input ``vec`` (an xp float64 array)."""
        xp = self.xp
        out = xp.zeros(self.n_out, dtype=xp.float64)
        vz = xp.concatenate((vec, xp.zeros(1, dtype=xp.float64)))
        zero = vz.shape[0] - 1
        ar = xp.arange(self.n_in + 1, dtype=xp.int64)
        n_own = self.c1.shape[0]
        har = xp.arange(n_own, dtype=xp.int64)
        for kind in (0, 1):
            for bk, gb, gs, tg, tv, tb, ts in self.batches[kind]:
                idx = gb[:, None] + ar[None, :] * gs[:, None]
                idx[:, -1] = zero
                wb = self.w_in[bk] if kind == 0 else self.w_river[bk]
                V = wb * vz[idx]  # (G, n_in + 1), column n_in = 0
                if kind == 0:
                    C = V[:, :-1] @ self.onehot  # (G, 52) mass per card
                    M = (xp.sum(V, axis=1)[:, None] - C[:, self.c1] - C[:, self.c2] + V[:, self.same])
                    M *= self.fold_coef[bk]
                else:
                    M = self._showdown(xp, V, bk)
                rows = M[tg] * tv[:, None]
                dst = tb[:, None] + har[None, :] * ts[:, None]
                _add_at(xp, out, dst.ravel(), rows.ravel())
        return out

    def _showdown(self, xp, V, r):
        G = V.shape[0]
        n_in, K = self.n_in, self.K
        Vs = xp.take_along_axis(V, self.sorted_in[r], axis=1)
        P = xp.concatenate((xp.zeros((G, 1), dtype=xp.float64), xp.cumsum(Vs, axis=1)), axis=1)
        T = xp.take_along_axis(V, self.table[r], axis=1).reshape(G, K, 52)
        cum = xp.concatenate((xp.zeros((G, 1, 52), dtype=xp.float64), xp.cumsum(T, axis=1)), axis=1)
        cum = cum.reshape(G, (K + 1) * 52)
        pos = self.pos[r]  # (G, n_own, 6)
        vs = V[:, self.same]
        tot_k = K * 52
        compat = P[:, n_in][:, None] - cum[:, tot_k + self.c1] - cum[:, tot_k + self.c2] + vs
        win = (xp.take_along_axis(P, pos[:, :, 0], axis=1) - xp.take_along_axis(cum, pos[:, :, 2], axis=1)
               - xp.take_along_axis(cum, pos[:, :, 3], axis=1))
        at_most = (xp.take_along_axis(P, pos[:, :, 1], axis=1) - xp.take_along_axis(cum, pos[:, :, 4], axis=1)
                   - xp.take_along_axis(cum, pos[:, :, 5], axis=1) + vs)
        return self.show_coef[r] * (win - (compat - at_most))


def _add_at(xp, out, idx, vals) -> None:
    """out[idx] += vals with repeated indices: a bincount on NumPy (faster than ``add.at``),
    atomics in place on a device (no output-sized temporary per chunk)."""
    if xp is np:
        out += np.bincount(idx, weights=vals, minlength=len(out))
    else:
        import cupyx

        cupyx.scatter_add(out, idx, vals)


class PokerArrayOperator:
    """Products of a River/Streets/SymmetricPayoff on ``xp`` arrays; ``matvec(y)`` = A y and
    ``rmatvec(x)`` = A^T x take and return ``xp`` arrays (no host copies). Counting is the
    caller's (see :class:`treeplex.backends.array_backend.DeviceOperator`)."""

    def __init__(self, A, xp=np):
        L = _layout(A)
        if L is None:
            raise TypeError(f"no array products for {type(A).__name__}")
        self.xp = xp
        self.red = None if L[-1] is None else tuple(xp.asarray(r) for r in L[-1])
        self.shape = A.shape
        inner = A.inner if self.red is not None else A
        self.sides = tuple(_Side(xp, L, own, inner.shape[own]) for own in (0, 1))

    def _apply(self, own, v):
        xp = self.xp
        v = xp.asarray(v, dtype=xp.float64)
        if self.red is not None:
            v = v[self.red[1 - own]]
        r = self.sides[own].apply(v)
        if self.red is not None:
            red = xp.zeros(self.shape[own], dtype=xp.float64)
            _add_at(xp, red, self.red[own], r)
            r = red
        return r

    def matvec(self, y):
        return self._apply(0, y)

    def rmatvec(self, x):
        return self._apply(1, x)
