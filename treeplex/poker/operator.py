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

where V_c sums v over hands holding card c (52 numbers). Showdowns sweep both hand lists in
strength order with running totals V_<, V_<= and per-card running totals: O(n0 + n1 + 52)
per terminal instead of O(n0 n1) ("sweep"); the hands are laid out weakest first, so the
sweep reads both lists in order. The alternative ("dense") precomputes the
n0 x n1 matrices F = compatible * w0 w1 / Z and S = F * sign(s0 - s1) and does one matrix
product per kind of terminal (BLAS); it costs 16 n0 n1 bytes. ``showdown="auto"`` picks the
sweep (measured faster on Libratus-sized games, see benchmarks/river.py).
"""

from __future__ import annotations

import numba as nb
import numpy as np
import scipy.sparse as sp

from ..problem import PayoffOperator

FOLD, SHOWDOWN = 0, 1


class RiverPayoff(PayoffOperator):
    """A of a river endgame, applied in O(n log n) per terminal betting sequence.

    ``hands`` are per player: ``cards[p]`` int32[n_p, 2], ``weight[p]`` float64[n_p] (> 0),
    ``strength[p]`` int32[n_p]. ``terminals`` are arrays over terminal betting sequences:
    ``kind`` (0 fold, 1 showdown), ``value`` (chips), ``base[p]``, ``stride[p]``.
    """

    def __init__(self, n_seqs, cards, weight, strength, kind, value, base, stride, method: str = "sweep"):
        if method not in ("sweep", "dense"):
            raise ValueError(f"showdown method must be 'sweep' or 'dense', got {method!r}")
        self.shape = (int(n_seqs[0]), int(n_seqs[1]))
        self.gradients = 0
        self.method = method
        self.cards = [np.ascontiguousarray(c, dtype=np.int32) for c in cards]
        self.strength = [np.ascontiguousarray(s, dtype=np.int64) for s in strength]
        w = [np.ascontiguousarray(x, dtype=np.float64) for x in weight]
        self.Z = _normalizer(self.cards, w)
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
        self._dense = self._dense_blocks() if method == "dense" else None
        self._groups = [_input_groups(self.base[p], self.stride[p]) for p in (0, 1)]  # by input player

    # ------------------------------------------------------------ products

    def _matvec(self, y):
        return self._apply(np.asarray(y, dtype=np.float64), own=0)

    def _rmatvec(self, x):
        return self._apply(np.asarray(x, dtype=np.float64), own=1)

    def _apply(self, vec, own: int) -> np.ndarray:
        oth = 1 - own
        if self.method == "dense":
            out = np.zeros(self.shape[own])
            self._apply_dense(vec, own, out)
            return out
        return _sweep(
            *self._groups[oth], self.kind, self.value, 1.0 if own == 0 else -1.0,
            vec, self.weight[oth], self.cards[oth],
            self.base[own], self.stride[own], self.shape[own], self.coef[own], self.cards[own],
            self.lt_end[own], self.le_end[own], self.same[own],
        )

    def _apply_dense(self, vec, own, out):
        oth = 1 - own
        n_oth, n_own = len(self.weight[oth]), len(self.weight[own])
        for k, M in enumerate(self._dense):
            ts = np.flatnonzero(self.kind == k)
            if len(ts) == 0:
                continue
            # gather the input: (n_oth, T), then one matrix product
            idx_in = self.base[oth][ts][None, :] + np.arange(n_oth)[:, None] * self.stride[oth][ts][None, :]
            R = (M if own == 0 else M.T) @ vec[idx_in]
            R *= self.value[ts][None, :]  # F and S hold player 0's signs already
            idx_out = self.base[own][ts][None, :] + np.arange(n_own)[:, None] * self.stride[own][ts][None, :]
            out += np.bincount(idx_out.ravel(), weights=R.ravel(), minlength=len(out))

    def _dense_blocks(self):
        F = self.compatible() * np.outer(self.coef[0], self.weight[1])
        S = F * np.sign(self.strength[0][:, None] - self.strength[1][None, :])
        return [F, S]

    def max_abs_entry(self) -> float:
        """max_ij |A_ij| (EGT's mu scale), from the n0 x n1 deal probabilities, without A.

        Where a player never acted (stride 0), all its hands share the empty sequence and the
        entries are sums over its hands.
        """
        F = self.compatible() * np.outer(self.coef[0], self.weight[1])
        blocks = (F, F * np.sign(self.strength[0][:, None] - self.strength[1][None, :]))
        # per kind: max |entry| when both acted, when only player 1 / only player 0 acted
        m = [(np.abs(M).max(), np.abs(M.sum(axis=0)).max(), np.abs(M.sum(axis=1)).max()) for M in blocks]
        best = 0.0
        for t in range(self.n_terminals):
            which = 1 if self.stride[0][t] == 0 else 2 if self.stride[1][t] == 0 else 0
            best = max(best, abs(self.value[t]) * float(m[self.kind[t]][which]))
        return best

    def compatible(self) -> np.ndarray:
        """bool[n0, n1]: the two hands share no card."""
        c0, c1 = self.cards
        clash = np.zeros((len(c0), len(c1)), dtype=bool)
        for i in range(2):
            for j in range(2):
                clash |= c0[:, i][:, None] == c1[:, j][None, :]
        return ~clash

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
                  *self.coef, *self.lt_end, *self.le_end, *self.same, *(a for g in self._groups for a in g)]
        n = sum(a.nbytes for a in arrays)
        if self._dense is not None:
            n += sum(M.nbytes for M in self._dense)
        return n

    def to_sparse(self) -> sp.csr_matrix:
        """The explicit A (CSR), built block by block: for small games and cross-checks only."""
        F = self.compatible() * np.outer(self.coef[0], self.weight[1])
        S = F * np.sign(self.strength[0][:, None] - self.strength[1][None, :])
        n0, n1 = F.shape
        rows, cols, vals = [], [], []
        for t in range(self.n_terminals):
            M = (F if self.kind[t] == FOLD else S) * self.value[t]
            i, j = np.nonzero(M)
            rows.append(self.base[0][t] + i * self.stride[0][t])
            cols.append(self.base[1][t] + j * self.stride[1][t])
            vals.append(M[i, j])
        A = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=self.shape)
        return A.tocsr()


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


@nb.njit(cache=True)
def _sweep(ptr, terms, gbase, gstride, kind, value, sign,
           vec, w_in, cards_in,
           ob, ostr, n_out, coef, cards_own, lt_end, le_end, same_own):
    """sum_t out[own seq of t] += sum over compatible other hands of payoff * prob * vec[other seq].

    Terminals are visited by groups that share an input sequence, gathered (and swept) once.
    ``sign`` is +1 when the output player is player 0 and -1 for player 1 (showdown payoffs
    are player 0's: sign(s0 - s1) * stake).
    """
    out = np.zeros(n_out)
    n_in = len(w_in)
    n_own = len(coef)
    v = np.empty(n_in)
    compat = np.empty(n_own)
    diff = np.empty(n_own)
    card_all = np.empty(52)
    for g in range(len(ptr) - 1):
        b, s = gbase[g], gstride[g]
        total = 0.0
        card_all[:] = 0.0
        for i in range(n_in):
            vi = w_in[i] * vec[b + i * s]
            v[i] = vi
            total += vi
            card_all[cards_in[i, 0]] += vi
            card_all[cards_in[i, 1]] += vi
        # mass of compatible other hands, by inclusion-exclusion over the two hole cards
        for h in range(n_own):
            acc = total - card_all[cards_own[h, 0]] - card_all[cards_own[h, 1]]
            if same_own[h] >= 0:
                acc += v[same_own[h]]
            compat[h] = acc
        swept = False
        for k in range(ptr[g], ptr[g + 1]):
            t = terms[k]
            if kind[t] == 1 and not swept:
                _showdown(v, cards_in, cards_own, lt_end, le_end, same_own, compat, diff)
                swept = True
            ob_t, os_t = ob[t], ostr[t]
            if kind[t] == 0:  # fold: the same payoff for every deal
                val = value[t]
                for h in range(n_own):
                    out[ob_t + h * os_t] += coef[h] * val * compat[h]
            else:
                val = value[t] * sign
                for h in range(n_own):
                    out[ob_t + h * os_t] += coef[h] * val * diff[h]
    return out


@nb.njit(cache=True)
def _showdown(v, cards_in, cards_own, lt_end, le_end, same_own, compat, diff):
    """diff[h] = (mass of compatible other hands weaker than h) - (mass of stronger ones).

    Both hand lists are sorted by strength, so the other's hands weaker than own hand h are
    a prefix [0, lt_end[h]) and those at most as strong a prefix [0, le_end[h]); running
    totals and per-card running totals (for card removal) advance monotonically.
    """
    card_lt = np.zeros(52)
    card_le = np.zeros(52)
    lt = 0.0
    le = 0.0
    j_lt = 0
    j_le = 0
    for h in range(len(lt_end)):
        while j_lt < lt_end[h]:
            lt += v[j_lt]
            card_lt[cards_in[j_lt, 0]] += v[j_lt]
            card_lt[cards_in[j_lt, 1]] += v[j_lt]
            j_lt += 1
        while j_le < le_end[h]:
            le += v[j_le]
            card_le[cards_in[j_le, 0]] += v[j_le]
            card_le[cards_in[j_le, 1]] += v[j_le]
            j_le += 1
        c1, c2 = cards_own[h, 0], cards_own[h, 1]
        win = lt - card_lt[c1] - card_lt[c2]  # the same combo is never strictly weaker
        at_most = le - card_le[c1] - card_le[c2]
        if same_own[h] >= 0:  # the same combo is at most as strong and was subtracted twice
            at_most += v[same_own[h]]
        diff[h] = win - (compat[h] - at_most)  # compat - at_most = compatible stronger hands
