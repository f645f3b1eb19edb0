"""The structured payoff operator of a river endgame: A @ y and A.T @ x without A.

Layout (see :mod:`.river`): player p's sequences are grouped by p's betting node v; within v,
hand h's infoset owns sequences ``base_v + h * k_v + a`` for its k_v actions. A terminal
betting sequence t is reached after player 0's last sequence ``ob0[t] + h0 * os0[t]`` and
player 1's ``ob1[t] + h1 * os1[t]`` (stride 0 and base 0 when the player never acted: the
empty sequence). The deal (h0, h1) has probability ``w0[h0] w1[h1] / Z`` when the hands share
no card (and 0 otherwise), so

    A[seq0(t, h0), seq1(t, h1)] = w0[h0] w1[h1] / Z * u0(t, h0, h1)      for compatible hands,

with u0 = ``value[t]`` at a fold (player 0's chips, the same for every deal) and
u0 = ``value[t] * sign(s0 - s1)`` at a showdown (``value[t]`` = what each player has in,
s = hand strength).

Per terminal, a product needs sum_{h' compatible with h} v[h'] (folds) and the same split by
strength (showdowns), for v = input weights x reach. Card removal is inclusion-exclusion over
the two hole cards c1, c2 of h:

    sum_{h' disjoint from h} v[h'] = V - V_c1 - V_c2 + v[h itself],

where V_c sums v over hands holding card c (52 numbers). Showdowns split the same sums by
strength with prefix sums over the other's hands (laid out weakest first) and per-card
prefix sums: O(n0 + n1 + 52) per group of terminals sharing an input sequence instead of
O(n0 n1) ("sweep"). The alternative ("dense") precomputes the
n0 x n1 matrices F = compatible * w0 w1 / Z and S = F * sign(s0 - s1) and does one matrix
product per kind of terminal (BLAS); it costs 16 n0 n1 bytes. The sweep is faster on
Libratus-sized games (see benchmarks/river.py); ``showdown="auto"`` (:class:`.river.RiverGame`)
takes the dense products up to ``DENSE_PAIRS`` hand pairs, where they cost nothing and need
no numba (start-up: a small spot then solves without importing it).
"""

from __future__ import annotations

import numpy as np

from ..model.problem import PayoffOperator
from ..core.threads import PARALLEL_SEQS

DENSE_PAIRS = 4096  # showdown="auto": the dense products up to this many n0 x n1 hand pairs (NumPy, no numba)

FOLD, SHOWDOWN = 0, 1


class RiverPayoff(PayoffOperator):
    """A of a river endgame, applied in O(n log n) per terminal betting sequence.

    ``hands`` are per player: ``cards[p]`` int32[n_p, 2], ``weight[p]`` float64[n_p] (> 0),
    ``strength[p]`` int32[n_p]. ``terminals`` are arrays over terminal betting sequences:
    ``kind`` (0 fold, 1 showdown), ``value`` (chips), ``base[p]``, ``stride[p]``.
    Products share scratch arrays: one call at a time per operator (numba's threads run
    inside a call). ``threads``: how many threads a product uses (default: numba's, or 1 when
    both players have at most ``PARALLEL_SEQS`` sequences). ``normalizer``: the Z that divides
    w0 w1 (default: the total weight of card-disjoint pairs, so that deal probabilities sum to 1).
    """

    def __init__(self, n_seqs, cards, weight, strength, kind, value, base, stride, method: str = "sweep",
                 threads: int | None = None, normalizer: float | None = None):
        if method not in ("sweep", "dense"):
            raise ValueError(f"showdown method must be 'sweep' or 'dense', got {method!r}")
        self.shape = (int(n_seqs[0]), int(n_seqs[1]))
        self.gradients = 0
        self.method = method
        self.cards = [np.ascontiguousarray(c, dtype=np.int32) for c in cards]
        self.strength = [np.ascontiguousarray(s, dtype=np.int64) for s in strength]
        w = [np.ascontiguousarray(x, dtype=np.float64) for x in weight]
        # Z: the total weight of compatible deals (conditional ranges), or a given constant
        # (reach-weighted ranges: the number of compatible deals, see RiverGame's ``weights``)
        self.Z = _normalizer(self.cards, w) if normalizer is None else float(normalizer)
        self.weight = w
        self.coef = [w[0] / self.Z, w[1] / self.Z]  # own weight / Z
        for p in (0, 1):
            if np.any(np.diff(self.strength[p]) < 0):
                raise ValueError(f"player {p}'s hands must be sorted by strength, weakest first")
        # own hand h beats the other's hands [0, lt_end[h]) and ties [lt_end[h], le_end[h])
        self.lt_end = [np.searchsorted(self.strength[1 - p], self.strength[p], "left") for p in (0, 1)]
        self.le_end = [np.searchsorted(self.strength[1 - p], self.strength[p], "right") for p in (0, 1)]
        self.same = _same_combo(self.cards)  # same[p][h]: index of the same combo in the other list
        self.kind = np.ascontiguousarray(kind, dtype=np.int8)
        self.value = np.ascontiguousarray(value, dtype=np.float64)
        self.base = [np.ascontiguousarray(b, dtype=np.int64) for b in base]
        self.stride = [np.ascontiguousarray(s, dtype=np.int64) for s in stride]
        self._dense = self._dense_products() if method == "dense" else None
        self._groups = [_input_groups(self.base[p], self.stride[p]) for p in (0, 1)]  # by input player
        self._parts, self._tables = [], []  # the sweep's (none for dense products)
        self._partials = Partials([[], []], self.shape)
        if method == "sweep":
            if threads is None:
                threads = 1
                if max(self.shape) > PARALLEL_SEQS:
                    import numba

                    threads = numba.get_num_threads()
            self._parts = [_split_groups(g[0], g[1], self.kind, threads) for g in self._groups]
            # card-removal tables by output player (own hands against the other's)
            self._tables = [_card_tables(self.cards[1 - p], self.cards[p], self.lt_end[p], self.le_end[p],
                                         self.same[p]) for p in (0, 1)]
            self._partials = Partials(self._parts, self.shape)

    # ------------------------------------------------------------ products

    def _product(self, own, v, out):
        return self._apply(np.asarray(v, dtype=np.float64), own, out)

    def _apply(self, vec, own: int, out=None) -> np.ndarray:
        oth = 1 - own
        if out is None:
            out = np.empty(self.shape[own])
        if self.method == "dense":
            out[:] = 0.0
            self._apply_dense(vec, own, out)
            return out
        args = (*self._groups[oth], self.kind, self.value, 1.0 if own == 0 else -1.0, vec, self.weight[oth],
                self.base[own], self.stride[own], self.coef[own], self.lt_end[own], self.le_end[own],
                *self._tables[own])
        from .sweep_kernels import sweep, sweep_parts

        if len(self._parts[oth]) == 2:  # one thread: the serial kernel (measured 2x faster than one part)
            out[:] = 0.0
            return sweep(*args, out)
        sweep_parts(self._parts[oth], *args, self._partials[own], out)
        self._partials.done(own)
        return out

    def keep_scratch(self, keep: bool) -> None:
        self._partials.keep = keep

    def _apply_dense(self, vec, own, out):
        """out = sum over terminals t of value_t M_t^(own) vec[t's input sequences], scattered into
        t's own sequences; M = F (folds) or S (showdowns), one matrix product per kind."""
        for M, idx_in, value, idx_out in self._dense[own]:
            R = M @ vec[idx_in]  # (n_own, T_k): F and S hold player 0's signs already
            R *= value
            out += np.bincount(idx_out, weights=R.ravel(), minlength=len(out))

    def _dense_products(self):
        """Per output player, per kind with terminals: (M, input gathers (n_oth, T_k), values
        (1, T_k), output scatter (n_own T_k,)) for :meth:`_apply_dense`; M = F or S for player
        0's outputs and their transposes for player 1's."""
        out = ([], [])
        for k, M in enumerate(self.blocks()):
            ts = np.flatnonzero(self.kind == k)
            if len(ts) == 0:
                continue
            for own in (0, 1):
                out[own].append((M if own == 0 else M.T, self._hand_sequences(1 - own, ts), self.value[ts][None, :],
                                 self._hand_sequences(own, ts).ravel()))
        return out

    def _hand_sequences(self, p: int, ts: np.ndarray) -> np.ndarray:
        """(n_p, len(ts)): player p's sequence of each of its hands at each terminal of ``ts``."""
        return self.base[p][ts][None, :] + np.arange(len(self.weight[p]))[:, None] * self.stride[p][ts][None, :]

    def blocks(self) -> tuple[np.ndarray, np.ndarray]:
        """(F, S), n0 x n1: the deal probabilities of card-disjoint hands (F, folds), and times
        sign(s0 - s1) (S, showdowns), so a terminal's block is F or S times its value."""
        F = self.compatible() * np.outer(self.coef[0], self.weight[1])
        return F, F * np.sign(self.strength[0][:, None] - self.strength[1][None, :])

    @property
    def numpy_products(self) -> bool:
        """The dense products are NumPy (matrix products); the sweep is numba."""
        return self.method == "dense"

    def max_abs_entry(self) -> float:
        """max_ij |A_ij| (EGT's mu scale), from the n0 x n1 deal probabilities, without A.

        Where a player never acted (stride 0), all its hands share the empty sequence and the
        entries are sums over its hands.
        """
        blocks = self.blocks()
        # per kind: max |entry| when both acted, when only player 1 / only player 0 acted
        m = [(np.abs(M).max(), np.abs(M.sum(axis=0)).max(), np.abs(M.sum(axis=1)).max()) for M in blocks]
        best = 0.0
        for t in range(self.n_terminals):
            which = 1 if self.stride[0][t] == 0 else 2 if self.stride[1][t] == 0 else 0
            best = max(best, abs(self.value[t]) * float(m[self.kind[t]][which]))
        return best

    def compatible(self) -> np.ndarray:
        """bool[n0, n1]: the two hands share no card."""
        return compatible(*self.cards)

    # ------------------------------------------------------------ sizes

    @property
    def n_terminals(self) -> int:
        return len(self.kind)

    @property
    def leaves(self) -> int:
        """Leaves of the game tree: terminal betting sequences x compatible deals."""
        return self.n_terminals * self.n_deals

    @property
    def n_deals(self) -> int:
        """Compatible (h0, h1) pairs, by inclusion-exclusion (no n0 x n1 matrix)."""
        ones = [np.ones(len(w)) for w in self.weight]
        return int(round(_normalizer(self.cards, ones)))

    @property
    def nnz(self) -> int:
        """Entries an explicit A would hold: one per leaf (showdown ties are zeros among them)."""
        return self.leaves

    @property
    def nbytes(self) -> int:
        arrays = [self.kind, self.value, *self.base, *self.stride, *self.cards, *self.strength, *self.weight,
                  *self.coef, *self.lt_end, *self.le_end, *self.same, *(a for g in self._groups for a in g), *self._parts,
                  *(a for t in self._tables for a in t), self._partials]
        n = sum(a.nbytes for a in arrays)
        if self._dense is not None:  # F and S once (the transposes are views), and the gathers
            n += sum(d[0].nbytes for d in self._dense[0]) + sum(a.nbytes for side in self._dense for d in side
                                                                 for a in d[1:])
        return n

    def to_sparse(self):
        """The explicit A (``scipy.sparse.csr_matrix``), built block by block: for small games
        and cross-checks only."""
        F, S = self.blocks()
        return _scatter_csr(self, ((F if self.kind[t] == FOLD else S) * self.value[t] for t in range(self.n_terminals)))

    def on_device(self, xp):
        """Products on ``xp`` arrays as prefix sums per board (:mod:`treeplex.poker.device_operator`)."""
        from .device_operator import PokerArrayOperator, supports

        return PokerArrayOperator(self, xp) if supports(self) else None


def compatible(cards_a: np.ndarray, cards_b: np.ndarray) -> np.ndarray:
    """bool[len(a), len(b)]: hand a and hand b (rows of two card ids) share no card."""
    clash = np.zeros((len(cards_a), len(cards_b)), dtype=bool)
    for i in range(2):
        for j in range(2):
            clash |= cards_a[:, i][:, None] == cards_b[:, j][None, :]
    return ~clash


def _normalizer(cards, w) -> float:
    """Z = sum over card-disjoint (h0, h1) of w0[h0] w1[h1], by inclusion-exclusion."""
    per_card = []
    for p in (0, 1):
        v = np.zeros(52)
        np.add.at(v, cards[p][:, 0], w[p])
        np.add.at(v, cards[p][:, 1], w[p])
        per_card.append(v)
    same = _same_combo(cards)[0]
    both = same >= 0
    return float(w[0].sum() * w[1].sum() - per_card[0] @ per_card[1] + (w[0][both] * w[1][same[both]]).sum())


def _same_combo(cards) -> list[np.ndarray]:
    """For each player's hands, the index of the identical combo in the other's list (or -1)."""
    out = []
    for p in (0, 1):
        q = 1 - p
        key_q = {(int(a), int(b)): i for i, (a, b) in enumerate(cards[q])}
        out.append(np.array([key_q.get((int(a), int(b)), -1) for a, b in cards[p]], dtype=np.int64))
    return out


class Partials:
    """Per output player, the per-thread partial products of a sweep split into ``parts`` (by
    input player): 8 B per sequence and run, none on one thread; zeroed by their threads on
    every call (8% faster products than fresh zeros). Made by the first product that needs
    them: a spot solved on the fused engine never does (1.8 GB of FLOP-FAST's address space).
    ``keep`` False (:meth:`~treeplex.model.problem.PayoffOperator.keep_scratch`): freed after
    each product (:meth:`done`), for an operator of occasional products."""

    def __init__(self, parts, shape):
        runs = [len(parts[1 - p]) - 1 for p in (0, 1)]
        self.rows = [r if r > 1 else 0 for r in runs]
        self.shape = shape
        self.keep = True
        self._arrays = [None, None]

    def __getitem__(self, own: int) -> np.ndarray:
        if self._arrays[own] is None:
            self._arrays[own] = np.zeros((self.rows[own], self.shape[own]))
        return self._arrays[own]

    def done(self, own: int) -> None:
        """A product into ``own`` is summed: free its rows unless they are kept."""
        if not self.keep:
            self._arrays[own] = None

    @property
    def nbytes(self) -> int:
        return sum(8 * r * n for r, n in zip(self.rows, self.shape))


def _scatter_csr(op, blocks):
    """The explicit A (``scipy.sparse.csr_matrix``) of operator ``op`` from ``blocks``, one
    hands-by-hands matrix per terminal t in order: entry (i, j) at row ``base[0][t] + i
    stride[0][t]`` and column ``base[1][t] + j stride[1][t]``."""
    import scipy.sparse as sp

    rows, cols, vals = [], [], []
    for t, M in enumerate(blocks):
        i, j = np.nonzero(M)
        rows.append(op.base[0][t] + i * op.stride[0][t])
        cols.append(op.base[1][t] + j * op.stride[1][t])
        vals.append(M[i, j])
    A = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=op.shape)
    return A.tocsr()


def _input_groups(base: np.ndarray, stride: np.ndarray):
    """Terminals grouped by their input sequence (base, stride): (ptr, terminals, base, stride).

    A fold and a call facing the same bet read the same input vector; the kernel gathers it,
    and sweeps it, once per group.
    """
    keys = base * (int(stride.max()) + 1) + stride
    order = np.argsort(keys, kind="stable")
    uniq, first = np.unique(keys[order], return_index=True)
    ptr = np.append(first, len(order)).astype(np.int64)
    return ptr, order.astype(np.int64), base[order[first]], stride[order[first]]


def _split_groups(ptr, terms, kind, parts: int) -> np.ndarray:
    """Group boundaries cutting the groups into ``parts`` runs of about equal work (a showdown
    group costs about twice a fold-only one), one per thread of :func:`.sweep_kernels.sweep_parts`."""
    show = np.array([kind[terms[ptr[g]:ptr[g + 1]]].max() for g in range(len(ptr) - 1)])
    work = np.cumsum(1.0 + show)
    cuts = np.searchsorted(work, work[-1] * np.arange(1, parts) / parts)
    return np.unique(np.concatenate([[0], cuts, [len(ptr) - 1]])).astype(np.int64)


def _card_tables(cards_in, cards_own, lt_end, le_end, same_own):
    """Tables for :func:`.sweep_kernels.sweep`'s card removal by per-card prefix sums.

    ``lists[k, c]``: the k-th (in strength order) input hand holding card c, padded with
    n_in (a zero slot of v). For own hand h and its cards c1, c2, ``idx[h]`` holds rows
    k * 52 + c of the per-card cumulative table, row k * 52 + c = sum of v over lists[:k, c]:
    the totals (k = K) and the prefixes below ``lt_end[h]`` and ``le_end[h]``. ``same`` is the
    identical combo's input index, n_in when there is none.
    """
    n_in = len(cards_in)
    lists = [[] for _ in range(52)]
    for i, (c1, c2) in enumerate(cards_in):
        lists[c1].append(i)
        lists[c2].append(i)
    K = max(len(hands) for hands in lists)
    table = np.full((K, 52), n_in, dtype=np.int64)
    for c, hands in enumerate(lists):
        table[:len(hands), c] = hands
    idx = np.empty((len(cards_own), 6), dtype=np.int64)  # (total, < lt_end, < le_end) x (c1, c2)
    for k in (0, 1):
        c = cards_own[:, k].astype(np.int64)
        below_lt = np.array([np.searchsorted(lists[ci], b) for ci, b in zip(c, lt_end)], dtype=np.int64)
        below_le = np.array([np.searchsorted(lists[ci], b) for ci, b in zip(c, le_end)], dtype=np.int64)
        idx[:, k] = K * 52 + c
        idx[:, 2 + k] = below_lt * 52 + c
        idx[:, 4 + k] = below_le * 52 + c
    same = np.where(same_own >= 0, same_own, n_in).astype(np.int64)
    return table, idx, same
