"""Equity of a hand against a weighted range over the board's runouts (numba), for LBR's
decisions and the all-in adjustment of matches; the blueprint's 7-card evaluator."""

from __future__ import annotations

import numba as nb
import numpy as np

from ..blueprint.kernels import hand_rank7, uniform
from ..poker.cards import HAND_CARDS

HOLES = HAND_CARDS.astype(np.int64)  # row h: the cards of hand h


@nb.njit(cache=True)
def equity(hole, board, w, holes, rollouts, rng):
    """Equity (win + tie/2) of ``hole`` against range ``w`` (per row of ``holes``) over the
    runouts of the board: all of them when there are at most ``rollouts``, else ``rollouts``
    sampled uniformly. Hands sharing a card with a runout are left out of that runout."""
    num, den = equity_sums(hole, board, w, holes, rollouts, rng)
    return num / den if den > 0 else 0.5


@nb.njit(cache=True)
def equity_sums(hole, board, w, holes, rollouts, rng):
    """(sum of w x (win + tie/2), sum of w) over the runouts and hands of :func:`equity`."""
    used = np.zeros(52, dtype=np.bool_)
    used[hole[0]] = True
    used[hole[1]] = True
    nb_ = board.shape[0]
    for j in range(nb_):
        used[board[j]] = True
    deck = np.empty(52, dtype=np.int64)
    nd = 0
    for c in range(52):
        if not used[c]:
            deck[nd] = c
            nd += 1
    rest = 5 - nb_
    full = np.empty(5, dtype=np.int64)
    for j in range(nb_):
        full[j] = board[j]
    a7 = np.empty(7, dtype=np.int64)
    b7 = np.empty(7, dtype=np.int64)
    total = 0
    if rest == 0:
        total = 1
    elif rest == 1:
        total = nd
    elif rest == 2:
        total = nd * (nd - 1) // 2
    exhaustive = rest <= 2 and total <= rollouts
    n = total if exhaustive else rollouts
    num = 0.0
    den = 0.0
    i1, i2 = 0, 1
    for k in range(n):
        if exhaustive:
            if rest == 1:
                full[4] = deck[k]
            elif rest == 2:
                full[3] = deck[i1]
                full[4] = deck[i2]
                i2 += 1
                if i2 == nd:
                    i1 += 1
                    i2 = i1 + 1
        else:  # rest cards drawn without replacement
            for j in range(rest):
                while True:
                    c = deck[int(uniform(rng) * nd)]
                    dup = False
                    for q in range(nb_, nb_ + j):
                        if full[q] == c:
                            dup = True
                    if not dup:
                        break
                full[nb_ + j] = c
        a7[0] = hole[0]
        a7[1] = hole[1]
        for j in range(5):
            a7[2 + j] = full[j]
            b7[2 + j] = full[j]
        mine = hand_rank7(a7)
        for h in range(holes.shape[0]):
            if w[h] <= 0:
                continue
            x, y = holes[h, 0], holes[h, 1]
            clash = False
            for j in range(nb_, 5):
                if full[j] == x or full[j] == y:
                    clash = True
            if clash:
                continue
            b7[0] = x
            b7[1] = y
            r = hand_rank7(b7)
            den += w[h]
            if mine > r:
                num += w[h]
            elif mine == r:
                num += 0.5 * w[h]
    return num, den
