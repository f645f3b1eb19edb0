"""The payoff operator of a multi-street postflop subgame: A @ y and A.T @ x without A.

Layout (see :mod:`.postflop`): player p's sequences are grouped by p's decision node v; within
v, hand h's infoset owns ``base_v + h * k_v + a``. Terminal t ends on board B_t, after player
p's last sequence ``base_p[t] + h * stride_p[t]`` (stride 0: the empty sequence). A deal of
compatible hands (h0, h1), neither holding a card of B_t, reaches t with chance probability
``w0[h0] w1[h1] / Z * chance_t`` (:mod:`.public_tree`), so

    A[seq0(t, h0), seq1(t, h1)] = w0[h0] w1[h1] / Z * chance_t * u0(t, h0, h1),

u0 = the fold payoff, or stake * sign(s0 - s1) with strengths s on the river board B_t.

Per group of terminals that share a board and an input sequence, the input v (weights x
reach, zero for hands the board blocks) is gathered once. Folds need, for each own hand h
with cards c1, c2, the compatible mass V - V_c1 - V_c2 + v[h itself] (inclusion-exclusion,
V_c = mass of hands holding c). Showdowns need the compatible mass of weaker hands minus that
of stronger ones: one pass up and one down the board's strength order (own and input hands
merged), keeping the running total and its 52 per-card parts, as postflop-solver and
DeepStack do. O(n0 + n1 + 52) per group; the river endgame operator (:mod:`.operator`) is the
one-board case with its hands presorted.

Groups are split into one run per thread, each writing its own partial output (terminals of
different runs may share an output sequence, e.g. after an all-in); the runs are summed.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..core.threads import PARALLEL_SEQS, pool
from ..model.problem import PayoffOperator
from .operator import Partials, _normalizer, _same_combo, _scatter_csr, compatible

FOLD, SHOWDOWN = 0, 1


class StreetsPayoff(PayoffOperator):
    """A of a postflop subgame over many boards; see the module docstring.

    ``cards[p]`` int32[n_p, 2], ``weight[p]`` float64[n_p]; ``boards`` int32[n_boards, 5]
    (-1 padded); ``order[p]`` = (ptr, idx, strength): for river board b, player p's hands the
    board leaves, weakest first, are ``idx[ptr[b]:ptr[b+1]]`` with ``strength`` alongside.
    Terminals: ``kind``, ``value`` (player 0's chips x chance_t: the fold payoff or the
    showdown stake), ``board``, ``base[p]``, ``stride[p]``. ``red`` (no suit reduction) and
    ``inner`` (itself) match :class:`~treeplex.poker.isomorphism.SymmetricPayoff`'s, so a
    sampler reads either operator alike.
    """

    red = None

    @property
    def inner(self) -> "StreetsPayoff":
        return self

    def __init__(self, n_seqs, cards, weight, boards, order, kind, value, board, base, stride):
        self.shape = (int(n_seqs[0]), int(n_seqs[1]))
        self.gradients = 0
        self.cards = [np.ascontiguousarray(c, dtype=np.int32) for c in cards]
        self.weight = [np.ascontiguousarray(w, dtype=np.float64) for w in weight]
        self.Z = _normalizer(self.cards, self.weight)
        self.coef = [w / self.Z for w in self.weight]
        self.same = [np.where(s >= 0, s, len(self.cards[1 - p])).astype(np.int64)
                     for p, s in enumerate(_same_combo(self.cards))]
        self.boards = np.ascontiguousarray(boards, dtype=np.int32)
        self.order = [tuple(np.ascontiguousarray(a) for a in o) for o in order]
        self.kind = np.ascontiguousarray(kind, dtype=np.int8)
        self.value = np.ascontiguousarray(value, dtype=np.float64)
        self.board = np.ascontiguousarray(board, dtype=np.int64)
        self.base = [np.ascontiguousarray(b, dtype=np.int64) for b in base]
        self.stride = [np.ascontiguousarray(s, dtype=np.int64) for s in stride]
        self._groups = [_groups(self.board, self.base[p], self.stride[p]) for p in (0, 1)]  # by input player
        n_threads = nb.get_num_threads() if max(self.shape) > PARALLEL_SEQS else 1  # as the river operator
        self._parts = [_split(g[0], len(self.cards[p]) + len(self.cards[1 - p]), n_threads)
                       for p, g in enumerate(self._groups)]
        self._partials = Partials(self._parts, self.shape)

    def _product(self, own, v, out):
        return self._apply(np.asarray(v, dtype=np.float64), own, out)

    def _apply(self, vec, own: int, out=None) -> np.ndarray:
        oth = 1 - own
        args = (*self._groups[oth], self.kind, self.value, 1.0 if own == 0 else -1.0, vec,
                self.weight[oth], self.cards[oth], *self.order[oth], self.coef[own], self.cards[own], self.same[own],
                *self.order[own], self.boards, self.base[own], self.stride[own])
        parts = self._parts[oth]
        if out is None:
            out = np.empty(self.shape[own])
        n_in, n_own = len(self.cards[oth]), len(self.cards[own])
        if len(parts) == 2:
            out[:] = 0.0
            _apply_groups(0, len(self._groups[oth][0]) - 1, *args, out, scratch(n_in, n_own))
            return out
        outs = self._partials[own]
        for f in [pool().submit(_run, parts[r], parts[r + 1], args, outs[r], scratch(n_in, n_own))
                  for r in range(len(parts) - 1)]:
            f.result()
        np.copyto(out, outs[0])
        for r in range(1, len(parts) - 1):
            out += outs[r]
        self._partials.done(own)
        return out

    def keep_scratch(self, keep: bool) -> None:
        self._partials.keep = keep

    def max_abs_entry(self) -> float:
        """An upper bound on max |A_ij| (EGT's mu scale): |value_t| x max coef0 x max w1 x
        (hands of a player that share its sequence: all of them where it never acted)."""
        m = float(np.abs(self.value).max()) if len(self.value) else 0.0
        return m * float(self.coef[0].max()) * float(self.weight[1].max()) * max(len(self.cards[0]), len(self.cards[1]))

    def to_sparse(self):
        """The explicit A, terminal by terminal over all hand pairs: small games and cross-checks."""
        base = np.outer(self.coef[0], self.weight[1]) * compatible(*self.cards)

        def blocks():
            for t in range(self.n_terminals):
                bd = self.board[t]
                dead = self.boards[bd][self.boards[bd] >= 0]
                alive = [~np.isin(c, dead).any(axis=1) for c in self.cards]
                M = base * alive[0][:, None] * alive[1][None, :] * self.value[t]
                if self.kind[t] == SHOWDOWN:
                    st = []
                    for p in (0, 1):
                        ptr, idx, strength = self.order[p]
                        s_p = np.full(len(self.cards[p]), -1)
                        s_p[idx[ptr[bd]:ptr[bd + 1]]] = strength[ptr[bd]:ptr[bd + 1]]
                        st.append(s_p)
                    M = M * np.sign(st[0][:, None] - st[1][None, :])
                yield M

        return _scatter_csr(self, blocks())

    @property
    def n_terminals(self) -> int:
        return len(self.kind)

    @property
    def nnz(self) -> int:
        """Entries an explicit A would hold: compatible deals per terminal (an upper bound:
        deals blocked by a terminal's board are counted)."""
        ones = [np.ones(len(w)) for w in self.weight]
        return int(round(_normalizer(self.cards, ones))) * self.n_terminals

    @property
    def nbytes(self) -> int:
        arrays = [self.kind, self.value, self.board, *self.base, *self.stride, *self.cards, *self.weight, *self.coef,
                  *self.same, self.boards, *(a for o in self.order for a in o), *(a for g in self._groups for a in g),
                  *self._parts, self._partials]
        return sum(a.nbytes for a in arrays)

    def on_device(self, xp):
        """Products on ``xp`` arrays as prefix sums per board (:mod:`treeplex.poker.device_operator`)."""
        from .device_operator import PokerArrayOperator, supports

        return PokerArrayOperator(self, xp) if supports(self) else None


def _groups(board, base, stride):
    """Terminals grouped by (board, input sequence): (ptr, terminals, board, base, stride)."""
    keys = np.lexsort((stride, base, board))
    b, s, d = base[keys], stride[keys], board[keys]
    new = np.ones(len(keys), dtype=bool)
    new[1:] = (b[1:] != b[:-1]) | (s[1:] != s[:-1]) | (d[1:] != d[:-1])
    first = np.flatnonzero(new)
    ptr = np.append(first, len(keys)).astype(np.int64)
    return ptr, keys.astype(np.int64), d[first].astype(np.int64), b[first].astype(np.int64), s[first].astype(np.int64)


def _split(ptr, work_per_group: int, parts: int) -> np.ndarray:
    """Group boundaries cutting the groups into ``parts`` runs of about equal work."""
    n = len(ptr) - 1
    work = np.cumsum(work_per_group + 4.0 * np.diff(ptr))
    if n == 0:
        return np.array([0, 0], dtype=np.int64)
    cuts = np.searchsorted(work, work[-1] * np.arange(1, parts) / parts)
    return np.unique(np.concatenate([[0], cuts, [n]])).astype(np.int64)


def _run(lo, hi, args, out, work):
    """One thread's run of a product: groups [lo, hi) into its zeroed partial output ``out``."""
    out[:] = 0.0
    _apply_groups(lo, hi, *args, out, work)


LANES = 8  # groups of one board processed side by side, one per SIMD lane


def scratch(n_in: int, n_own: int) -> tuple:
    """:func:`_apply_groups`'s work arrays for ``n_in`` input and ``n_own`` own hands (made
    here, so that the kernel allocates nothing: a fifth less to compile). A call leaves them
    as it found them where it matters (row ``n_in`` of ``v`` and ``dead`` all zero), so one
    thread may pass the same ones to consecutive calls."""
    return (np.zeros((n_in + 1, LANES)), np.zeros((52, LANES)), np.zeros((n_own, LANES)), np.zeros((n_own, LANES)),
            np.zeros(LANES), np.zeros(LANES), np.zeros(LANES, dtype=np.int64), np.zeros(52, dtype=np.bool_))


@nb.njit(cache=True, nogil=True)
def _apply_groups(lo, hi, ptr, terms, gboard, gbase, gstride, kind, value, sign, vec, w_in, cards_in, iptr, iidx,
                  istr, coef, cards_own, same, optr, oidx, ostr_, boards, ob, ostr, out, work):
    """out[own seq of t] += value_t * coef[h] * (compatible input mass, or weaker minus stronger)
    for the groups [lo, hi); see the module docstring. Up to ``LANES`` consecutive groups on
    the same board go through each pass together, one per lane (the strength walk and the
    card bookkeeping are shared; the per-lane arithmetic vectorizes). Groups whose input is
    all zero (lines the other player's plan never takes) are skipped. Without the GIL: a
    product's runs are one call each on :func:`~treeplex.core.threads.pool`'s threads."""
    n_in, n_own = len(w_in), len(coef)
    v, card, fw, sw, run, total, lane_g, dead = work  # scratch(): row n_in of v stays 0 ("no identical combo")
    g = lo
    while g < hi:
        bd = gboard[g]
        for k in range(5):
            if boards[bd, k] >= 0:
                dead[boards[bd, k]] = True
        m = 0  # gather up to LANES live groups of this board
        has_fold, has_show = False, False
        while g < hi and gboard[g] == bd and m < LANES:
            b, s = gbase[g], gstride[g]
            tot = 0.0
            for i in range(n_in):
                c1, c2 = cards_in[i, 0], cards_in[i, 1]
                x = 0.0 if (dead[c1] or dead[c2]) else w_in[i] * vec[b + i * s]
                v[i, m] = x
                tot += x
            if tot != 0.0:
                total[m] = tot
                lane_g[m] = g
                for k in range(ptr[g], ptr[g + 1]):
                    if kind[terms[k]] == 0:
                        has_fold = True
                    else:
                        has_show = True
                m += 1
            g += 1
        if m > 0:
            for lane in range(m, LANES):
                total[lane] = 0.0
                for i in range(n_in):
                    v[i, lane] = 0.0
            if has_fold:
                card[:, :] = 0.0
                for i in range(n_in):
                    c1, c2 = cards_in[i, 0], cards_in[i, 1]
                    for lane in range(LANES):
                        card[c1, lane] += v[i, lane]
                        card[c2, lane] += v[i, lane]
                for h in range(n_own):
                    c1, c2 = cards_own[h, 0], cards_own[h, 1]
                    sm = same[h]
                    if dead[c1] or dead[c2]:
                        for lane in range(LANES):
                            fw[h, lane] = 0.0
                    else:
                        ch = coef[h]
                        for lane in range(LANES):
                            fw[h, lane] = ch * (total[lane] - card[c1, lane] - card[c2, lane] + v[sm, lane])
            if has_show:
                sw[:, :] = 0.0
                i0, i1, o0, o1 = iptr[bd], iptr[bd + 1], optr[bd], optr[bd + 1]
                # up: compatible input mass strictly weaker than each own hand
                card[:, :] = 0.0
                run[:] = 0.0
                j = i0
                for q in range(o0, o1):
                    h = oidx[q]
                    while j < i1 and istr[j] < ostr_[q]:
                        i = iidx[j]
                        c1, c2 = cards_in[i, 0], cards_in[i, 1]
                        for lane in range(LANES):
                            run[lane] += v[i, lane]
                            card[c1, lane] += v[i, lane]
                            card[c2, lane] += v[i, lane]
                        j += 1
                    c1, c2, ch = cards_own[h, 0], cards_own[h, 1], coef[h]
                    for lane in range(LANES):
                        sw[h, lane] = ch * (run[lane] - card[c1, lane] - card[c2, lane])
                # down: minus the compatible mass strictly stronger
                card[:, :] = 0.0
                run[:] = 0.0
                j = i1 - 1
                for q in range(o1 - 1, o0 - 1, -1):
                    h = oidx[q]
                    while j >= i0 and istr[j] > ostr_[q]:
                        i = iidx[j]
                        c1, c2 = cards_in[i, 0], cards_in[i, 1]
                        for lane in range(LANES):
                            run[lane] += v[i, lane]
                            card[c1, lane] += v[i, lane]
                            card[c2, lane] += v[i, lane]
                        j -= 1
                    c1, c2, ch = cards_own[h, 0], cards_own[h, 1], coef[h]
                    for lane in range(LANES):
                        sw[h, lane] -= ch * (run[lane] - card[c1, lane] - card[c2, lane])
            for lane in range(m):
                gg = lane_g[lane]
                for k in range(ptr[gg], ptr[gg + 1]):
                    t = terms[k]
                    ob_t, os_t = ob[t], ostr[t]
                    if kind[t] == 0:
                        val = value[t]
                        for h in range(n_own):
                            out[ob_t + h * os_t] += val * fw[h, lane]
                    else:
                        val = value[t] * sign
                        for h in range(n_own):
                            out[ob_t + h * os_t] += val * sw[h, lane]
        for k in range(5):
            if boards[bd, k] >= 0:
                dead[boards[bd, k]] = False
    return out
