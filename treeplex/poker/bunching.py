"""The bunching effect: the hole cards of the players who folded before the flop.

**Model** (postflop-solver's ``BunchingData``, computed the same way: exactly, by
inclusion-exclusion over card sets). Before the flop k <= 4 players folded (a 6-max table
where the blinds play: UTG, HJ, CO, BTN) with folding ranges f_1..f_k (a weight per hand, range
syntax); the two players who saw the flop hold ``range0``/``range1`` (w0, w1) as usual. Every
hole card comes from one deck, so the joint probability of both hands, the folders' hands and
the board is proportional to

    w0[h0] w1[h1] prod_i f_i(g_i)     over pairwise card-disjoint (h0, h1, g_1, ..., g_k, board),

each board card (the starting board, then each turn or river card) uniform over the cards left.
Summed over the folders' hands, the deal (h0, h1) with the runout R dealt since the start
board has probability

    P(h0, h1, R) = w0[h0] w1[h1] N(h0 ∪ h1 ∪ R) / Zb * prod_{j < |R|} 1 / (L - j - 2k),

where N(D) = sum of prod f_i(g_i) over pairwise disjoint folder hands avoiding the start board
and the cards D, L = |deck| - |start board| - 4 (the cards a turn or river card is drawn from
without folders) and Zb = sum over card-disjoint (h0, h1) of w0 w1 N(h0 ∪ h1). Nothing is
approximated: the pair (h0, h1) gets a weight that is not a product w0[h0] w1[h1], and each
runout its own. With k = 0 the game is the unbunched one; with folding ranges of every hand at
one weight, N(D) depends only on |D|, N(D ∪ r) / N(D) = (L - |R| - 2k) / (L - |R|), and the
game is again exactly the unbunched one (the folded cards are then just unseen cards).

**Computation.** N(D) = sum_{S ⊆ D} (-1)^|S| M(S), M(S) = the weight of the disjoint folder
tuples whose cards include S (|S| <= 4 + cards still to come: 4, 5 or 6). The folders form two
groups A = (f_1, f_2), B = (f_3, f_4) (fewer folders, smaller groups; B may be empty). A group's
disjoint hands with union Q weigh T_G(Q), and U_G(X) = sum_{Q ⊇ X} T_G(Q). The groups must not
share a card R, which inclusion-exclusion over R removes:

    M(S) = sum_{X_A ∪ X_B = S} (-2)^|X_A ∩ X_B| sum_R (-1)^|R| U_A(X_A ⊔ R) U_B(X_B ⊔ R),

R over the card sets disjoint from S (a card of both X_A and X_B is a shared card that belongs
to S: two ways, sign -1). The inner sums are dot products of rows of
P_G[x, j][X, R] = U_G(X ∪ R) [X ∩ R = ∅] (:func:`_m_table`). The tables M and N are over
the cards of the deck off the start board (49 on a 52-card flop), by size; each hand pair's
factor on each board of the tree is then one look-up (:func:`_pair_weights`). Cost, four folders
on 52 cards, 2 threads of a shared 2-core machine: a turn start (5-card sets, 6.5e9 multiply-adds)
23 s, a flop start (6-card sets, 2.5e10) 124 s and 540 MB. The per-board weight matrices count
in the spot's memory estimate (:meth:`.postflop.PostflopGame.bunching_bytes`).

**On the engine.** The per-(pair, board) weights do not factor, so the O(n) terminal sweeps
of :mod:`.streets_operator` and the fused engine (:mod:`.fused`) do not apply: a bunched spot
runs on the sequence form with :class:`BunchedPayoff` (per board a dense hands x hands weight
matrix; the folds, or the showdowns, of a board are one matrix product over their input
sequences, O(n0 n1) per input sequence as postflop-solver's ``evaluate_internal_bunching``; the
boards run on a thread pool, BLAS releasing the GIL). With ``fused=true`` the fused walk keeps
the same matrices and evaluates each terminal as one dense product with the opponent's reach,
O(n0 n1) per terminal (:func:`.fused.bunched_values`; not with rake); ``fused=None`` keeps a
bunched spot on the sequence form.
"""

from __future__ import annotations

from math import comb

import numba as nb
import numpy as np

from ..errors import InputError
from ..model.problem import PayoffOperator
from .cards import HAND_CARDS
from .ranges import make_range

MAX_FOLDERS = 4  # postflop-solver's limit: a 6-max table (two groups of two folders)


def parse_bunching(spec, where: str = "bunching") -> list[np.ndarray]:
    """The folding ranges of ``spec``: ``{"folded": [range, ...]}``, ``{"open": [range, ...]}``
    (each player folds what it does not open: weight 1 - open weight) or a list of folding
    ranges (range syntax, 1326-arrays or dicts: :func:`.ranges.make_range`); None or [] for none."""
    if spec is None:
        return []
    complement = False
    if isinstance(spec, dict):
        bad = set(spec) - {"folded", "open"}
        if bad or len(spec) != 1:
            raise InputError(f"{where}: expected {{\"folded\": [range, ...]}} or {{\"open\": [range, ...]}}, "
                             f"got keys {sorted(spec)}")
        (key, spec), = spec.items()
        complement = key == "open"
        where = f"{where}.{key}"
    if isinstance(spec, str) or not isinstance(spec, (list, tuple)):
        raise InputError(f"{where}: expected a list of ranges (one per folded player), got {spec!r}")
    if len(spec) > MAX_FOLDERS:
        raise InputError(f"{where}: {len(spec)} folded players; at most {MAX_FOLDERS} (a 6-max table)")
    out = []
    for i, r in enumerate(spec):
        try:
            w = make_range(r, f"{where}[{i}]")
        except InputError as e:
            msg = str(e)
            raise InputError(msg if msg.startswith(where) else f"{where}[{i}]: {msg}") from None
        if complement:
            if w.max() > 1:
                raise InputError(f"{where}[{i}]: an opening range's weights must be at most 1")
            w = 1.0 - w
        if not (w > 0).any():
            raise InputError(f"{where}[{i}]: the folding range is empty")
        out.append(w)
    return out


class Bunching:
    """Exact bunching factors of a spot: ``folded`` (float[1326] per folded player), the start
    ``board``, the ``deck``, both players' ``hands`` and range ``weight``; ``cards`` are the deck's
    cards off the board (numbered 0.. in the tables). See the module docstring for the model.
    :meth:`board_weights` gives a board's (h0, h1) weights."""

    def __init__(self, folded: list[np.ndarray], board, deck, hands, weight):
        self.k = len(folded)
        self.cards = np.array([c for c in deck if c not in board], dtype=np.int64)
        n = len(self.cards)
        self.local = np.full(52, -1, dtype=np.int64)
        self.local[self.cards] = np.arange(n)
        self.L = n - 4
        if self.L - 2 * self.k < 5 - len(board):
            raise InputError(f"bunching: {self.k} folded players hold {2 * self.k} cards; the deck has {n} cards "
                             f"off the board, too few for two hands, the folders' and the {5 - len(board)} "
                             "cards still to come")
        ranges = []
        for i, f in enumerate(folded):
            m = np.zeros((n, n))
            hc = HAND_CARDS
            a, b = self.local[hc[:, 0]], self.local[hc[:, 1]]
            ok = (a >= 0) & (b >= 0) & (f > 0)
            if not ok.any():
                raise InputError(f"bunching: folded player {i}: no hand of the folding range is left once the "
                                 "board is removed")
            m[a[ok], b[ok]] = f[ok]
            m[b[ok], a[ok]] = f[ok]
            ranges.append(m)
        self.size = 4 + 5 - len(board)  # the largest set D: two hands and the cards to come
        self.groups = [ranges[:2], ranges[2:]]
        self.caps = [2 * len(g) for g in self.groups]
        self.binom = np.array([[comb(i, j) for j in range(9)] for i in range(n + 1)], dtype=np.int64)
        self.hand_local = [self.local[HAND_CARDS[h]].astype(np.int64) for h in hands]
        self.weight = [np.asarray(w, dtype=np.float64) for w in weight]
        self.N = None  # the tables, built on first use (:meth:`tables`)
        self.Zb = None

    def tables(self) -> None:
        """Build N(D) for the sets D of 4 up to ``size`` cards (:func:`_m_table`, :func:`_n_table`)
        and Zb; refuse spots where no deal is possible."""
        if self.N is not None:
            return
        n = len(self.cards)
        U = [_group_table(n, g, self.binom) for g in self.groups]
        M = _m_table(n, self.size, U, self.caps, self.binom)
        self.N = {d: _n_table(n, d, M, self.binom) for d in range(4, self.size + 1)}
        self.Zb = float(self.pair_weights(()).sum())
        if not self.Zb > 0:
            raise InputError("bunching: no deal is possible: the two ranges and the folding ranges leave no "
                             "card-disjoint hands")

    def pair_weights(self, extra) -> np.ndarray:
        """float[n0, n1]: w0[h0] w1[h1] N(h0 ∪ h1 ∪ extra) for card-disjoint hands avoiding the
        cards ``extra`` dealt since the start board (0 elsewhere), unnormalized."""
        self.tables()
        mask = 0
        for c in extra:
            mask |= 1 << int(self.local[c])
        table = self.N[4 + len(extra)]
        return _pair_weights(self.hand_local[0], self.hand_local[1], self.weight[0], self.weight[1], np.int64(mask),
                             table, self.binom)

    def board_weights(self, extra) -> np.ndarray:
        """float[n0, n1]: the weight of the deal (h0, h1) at a node or terminal on the start board
        plus ``extra``, relative to the tree's chance there: :meth:`pair_weights` / Zb x
        :meth:`chance_ratio` (the unbunched game's is w0 w1 / Z on compatible pairs)."""
        K = self.pair_weights(extra)
        return K * (self.chance_ratio(len(extra)) / self.Zb)

    def chance_ratio(self, dealt: int) -> float:
        """prod_{j < dealt} (L - j) / (L - j - 2k): a runout's chance with the folders' cards out
        over its chance without them (the tree's ``chance``)."""
        r = 1.0
        for j in range(dealt):
            r *= (self.L - j) / (self.L - j - 2 * self.k)
        return r


# ----------------------------------------------------------------- kernels (sets as bit masks)


_DEBRUIJN = 0x03F79D71B4CB0A89
_CTZ = np.zeros(64, dtype=np.int64)  # lowest set bit's index from a de Bruijn product (no bit scan)
for _i in range(64):
    _CTZ[((1 << _i) * _DEBRUIJN % (1 << 64)) >> 58] = _i


@nb.njit(cache=True)
def _ctz(low):
    return _CTZ[(np.uint64(low) * np.uint64(_DEBRUIJN)) >> np.uint64(58)]


@nb.njit(cache=True)
def _rank(mask, binom):
    """Colex rank of a card set among the sets of its size (the order Gosper's hack walks)."""
    r, i = 0, 0
    while mask:
        low = mask & -mask
        i += 1
        r += binom[_ctz(low), i]
        mask ^= low
    return r


@nb.njit(cache=True)
def _unrank(r, s, n, binom):
    mask = np.int64(0)
    c = n
    for i in range(s, 0, -1):
        c -= 1
        while binom[c, i] > r:
            c -= 1
        r -= binom[c, i]
        mask |= np.int64(1) << c
    return mask


@nb.njit(cache=True)
def _popcount(m):
    c = 0
    while m:
        m &= m - 1
        c += 1
    return c


def _group_table(n: int, group: list[np.ndarray], binom) -> tuple:
    """(U flat, offsets by set size, cap): U_G(X) = sum over the group's disjoint hands whose
    cards include X, for |X| <= 2 |group| (the empty group: U(∅) = 1)."""
    cap = 2 * len(group)
    off = np.zeros(cap + 2, dtype=np.int64)
    for s in range(cap + 1):
        off[s + 1] = off[s] + comb(n, s)
    U = np.zeros(off[-1])
    if cap == 0:
        U[0] = 1.0
    elif cap == 2:
        _single(group[0], U, off, binom)
    else:
        _pair(group[0], group[1], U, off, binom)
    return U, off, cap


@nb.njit(cache=True)
def _single(f, U, off, binom):
    n = f.shape[0]
    for a in range(n):
        for b in range(a + 1, n):
            w = f[a, b]
            if w != 0.0:
                U[off[0]] += w
                U[off[1] + a] += w
                U[off[1] + b] += w
                U[off[2] + _rank((np.int64(1) << a) | (np.int64(1) << b), binom)] += w


@nb.njit(cache=True)
def _pair(f1, f2, U, off, binom):
    n = f1.shape[0]
    T = np.zeros(off[5] - off[4])
    for a in range(n):
        for b in range(a + 1, n):
            w1 = f1[a, b]
            if w1 == 0.0:
                continue
            for c in range(n):
                if c == a or c == b:
                    continue
                for d in range(c + 1, n):
                    if d == a or d == b:
                        continue
                    w2 = f2[c, d]
                    if w2 != 0.0:
                        m = (np.int64(1) << a) | (np.int64(1) << b) | (np.int64(1) << c) | (np.int64(1) << d)
                        T[_rank(m, binom)] += w1 * w2
    for r in range(len(T)):  # every subset X of each 4-set Q gets T(Q)
        t = T[r]
        if t == 0.0:
            continue
        q = _unrank(r, 4, n, binom)
        sub = q
        while True:
            U[off[_popcount(sub)] + _rank(sub, binom)] += t
            if sub == 0:
                break
            sub = (sub - 1) & q


@nb.njit(cache=True)
def _p_table(n, U, off, cap, binom):
    """P[x, j][X, R] = U(X ∪ R) [X ∩ R = ∅] for x + j <= cap, flat: (values, offsets[x, j])."""
    poff = np.zeros((cap + 1, cap + 1), dtype=np.int64)
    tot = 0
    for x in range(cap + 1):
        for j in range(cap + 1 - x):
            poff[x, j] = tot
            tot += binom[n, x] * binom[n, j]
    P = np.zeros(tot)
    for x in range(cap + 1):
        for j in range(cap + 1 - x):
            nj = binom[n, j]
            for rx in range(binom[n, x]):
                X = _unrank(rx, x, n, binom)
                for rr in range(nj):
                    R = _unrank(rr, j, n, binom)
                    if X & R == 0:
                        P[poff[x, j] + rx * nj + rr] = U[off[x + j] + _rank(X | R, binom)]
    return P, poff


def _m_table(n: int, size: int, U, caps, binom) -> list[np.ndarray]:
    """M(S) for every card set S of at most ``size`` cards, by size (module docstring)."""
    (Ua, offa, ca), (Ub, offb, cb) = U
    Pa, pa = _p_table(n, Ua, offa, ca, binom)
    Pb, pb = _p_table(n, Ub, offb, cb, binom)
    return [_m_size(n, s, Pa, pa, ca, Pb, pb, cb, binom) for s in range(size + 1)]


@nb.njit(cache=True)
def _subsets(S, binom):
    """Per submask u of S (bit i of u: S's i-th lowest card): (size, colex rank) of that subset."""
    s = _popcount(S)
    cards = np.empty(s, dtype=np.int64)
    i, m = 0, S
    while m:
        low = m & -m
        cards[i] = _ctz(low)
        i += 1
        m ^= low
    size = np.zeros(1 << s, dtype=np.int64)
    rank = np.zeros(1 << s, dtype=np.int64)
    for u in range(1, 1 << s):
        k, r = 0, 0
        for i in range(s):
            if (u >> i) & 1:
                k += 1
                r += binom[cards[i], k]
        size[u], rank[u] = k, r
    return size, rank


@nb.njit(cache=True, parallel=True)
def _m_size(n, s, Pa, pa, ca, Pb, pb, cb, binom):
    out = np.zeros(binom[n, s])
    full = (1 << s) - 1
    for r in nb.prange(binom[n, s]):
        size, rank = _subsets(_unrank(r, s, n, binom), binom)
        acc = 0.0
        for u in range(full + 1):  # X_A; then X_B = (S minus X_A) plus a part of X_A (the shared cards)
            xa = size[u]
            if xa > ca:
                continue
            ra, rest = rank[u], full ^ u
            w = u
            while True:
                v = rest | w
                xb = size[v]
                if xb <= cb:
                    rb = rank[v]
                    val = 0.0
                    for j in range(min(ca - xa, cb - xb) + 1):
                        nj = binom[n, j]
                        ia, ib = pa[xa, j] + ra * nj, pb[xb, j] + rb * nj
                        dot = 0.0
                        for q in range(nj):
                            dot += Pa[ia + q] * Pb[ib + q]
                        val += dot if j % 2 == 0 else -dot
                    acc += val * (-2.0) ** size[w]
                if w == 0:
                    break
                w = (w - 1) & u
        out[r] = acc
    return out


@nb.njit(cache=True, parallel=True)
def _n_sets(n, d, Mflat, moff, binom):
    out = np.zeros(binom[n, d])
    for r in nb.prange(binom[n, d]):
        size, rank = _subsets(_unrank(r, d, n, binom), binom)
        acc = 0.0
        for u in range(1 << d):
            k = size[u]
            v = Mflat[moff[k] + rank[u]]
            acc += -v if k % 2 else v
        out[r] = acc
    return out


def _n_table(n: int, d: int, M: list[np.ndarray], binom) -> np.ndarray:
    """N(D) for every set D of ``d`` cards: sum_{S ⊆ D} (-1)^|S| M(S)."""
    moff = np.concatenate(([0], np.cumsum([len(m) for m in M]))).astype(np.int64)
    return _n_sets(n, d, np.concatenate(M), moff, binom)


@nb.njit(cache=True, parallel=True)
def _pair_weights(c0, c1, w0, w1, extra, table, binom):
    n0, n1 = len(w0), len(w1)
    out = np.zeros((n0, n1))
    for i in nb.prange(n0):
        m0 = (np.int64(1) << c0[i, 0]) | (np.int64(1) << c0[i, 1])
        if m0 & extra:
            continue
        for j in range(n1):
            m1 = (np.int64(1) << c1[j, 0]) | (np.int64(1) << c1[j, 1])
            if (m1 & extra) or (m1 & m0):
                continue
            out[i, j] = w0[i] * w1[j] * table[_rank(m0 | m1 | extra, binom)]
    return out


# ----------------------------------------------------------------- the payoff operator


_POOLS: dict = {}


def _pool(threads: int):
    """One thread pool per thread count for every bunched operator of the process."""
    if threads not in _POOLS:
        from concurrent.futures import ThreadPoolExecutor

        _POOLS[threads] = ThreadPoolExecutor(threads, thread_name_prefix="bunching")
    return _POOLS[threads]


class BunchedPayoff(PayoffOperator):
    """A of a bunched postflop spot: terminal t on board b weighs the deal (h0, h1) by
    ``K[b][h0, h1]`` (:meth:`Bunching.pair_weights` / Zb x the runout's chance ratio) times
    ``value[t]`` (the fold payoff or showdown stake times the tree's chance), times
    sign(s0 - s1) at a showdown. Per board, the terminals' input vectors are gathered into one
    matrix and multiplied by K (or K o sign) at once; the outputs are scattered by one bincount.
    ``sign[b]`` (a river board): int8[n0, n1], sign(s0 - s1)
    (:meth:`.postflop.PostflopGame.showdown_signs`)."""

    red = None

    @property
    def inner(self) -> "BunchedPayoff":
        return self

    def __init__(self, n_seqs, K: dict, sign: dict, kind, value, board, base, stride):
        self.shape = (int(n_seqs[0]), int(n_seqs[1]))
        self.gradients = 0
        self.K = K
        self.kind, self.value = np.asarray(kind, dtype=np.int8), np.asarray(value, dtype=np.float64)
        self.board = np.asarray(board, dtype=np.int64)
        self.base = [np.asarray(b, dtype=np.int64) for b in base]
        self.stride = [np.asarray(s, dtype=np.int64) for s in stride]
        n = [next(iter(K.values())).shape[p] for p in (0, 1)]
        self.sign = sign
        self.plan = []  # per (board, kind): (terminals, per input player (index matrix, column of each terminal))
        for b in np.unique(self.board):
            for kd in (0, 1):
                terms = np.flatnonzero((self.board == b) & (self.kind == kd))
                if len(terms) == 0:
                    continue
                per = []
                for p in (0, 1):
                    key = np.stack([self.base[p][terms], self.stride[p][terms]], axis=1)
                    uniq, col = np.unique(key, axis=0, return_inverse=True)
                    per.append((uniq[:, :1] + np.arange(n[p])[None, :] * uniq[:, 1:], col.ravel()))
                self.plan.append((int(b), kd, terms, per))
        self.out_idx = [self.base[p][:, None] + np.arange(n[p])[None, :] * self.stride[p][:, None] for p in (0, 1)]
        threads = nb.get_num_threads() if len(self.plan) > 1 else 1
        self._pool = _pool(threads) if threads > 1 else None

    def _product(self, own, v, out):
        v = np.asarray(v, dtype=np.float64)
        q = 1 - own
        vals = np.zeros(self.out_idx[own].shape)

        def board(item):  # the terminals of one (board, kind): rows of vals no other item writes
            b, kd, terms, per = item
            idx, col = per[q]
            K = self.K[b] if kd == 0 else self.K[b] * self.sign[b]
            U = v[idx] @ (K.T if own == 0 else K)  # groups x own hands
            vals[terms] = self.value[terms, None] * U[col]

        if self._pool is None:
            for item in self.plan:
                board(item)
        else:  # BLAS releases the GIL: one (board, kind) per thread at a time
            list(self._pool.map(board, self.plan))
        res = np.bincount(self.out_idx[own].ravel(), vals.ravel(), minlength=self.shape[own])
        if out is None:
            return res
        out[...] = res
        return out

    def max_abs_entry(self) -> float:
        """max |A_ij| bound: max |value| x max K x (hands sharing a sequence: all where a player never acted)."""
        m = float(np.abs(self.value).max()) if len(self.value) else 0.0
        return m * max(float(K.max()) for K in self.K.values()) * max(self.out_idx[0].shape[1], self.out_idx[1].shape[1])

    @property
    def n_terminals(self) -> int:
        return len(self.kind)

    @property
    def nnz(self) -> int:
        return int(sum(np.count_nonzero(self.K[b]) for b in self.board))

    @property
    def nbytes(self) -> int:
        arrays = [*self.K.values(), *self.sign.values(), *self.out_idx, self.kind, self.value, self.board,
                  *self.base, *self.stride]
        arrays += [a for _, _, _, per in self.plan for idx, col in per for a in (idx, col)]
        return sum(a.nbytes for a in arrays)

    def to_sparse(self):
        """The explicit A, terminal by terminal (small games and cross-checks)."""
        from .operator import _scatter_csr

        def blocks():
            for t in range(self.n_terminals):
                b = int(self.board[t])
                M = self.K[b] * self.value[t]
                yield M * self.sign[b] if self.kind[t] == 1 else M

        return _scatter_csr(self, blocks())
