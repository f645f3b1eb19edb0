"""River equity of every hand on a 5-card board, exactly, against a uniformly random opponent
hand (card removal exact), and its compact 16-bit code.

eq(h) = (#{o : s(o) < s(h)} + #{o : s(o) = s(h)} / 2) / #{o}, over the opponent hands o that
share no card with h or the board (990 of them on a river); s is
:func:`treeplex.poker.cards.hand_strength` (phevaluator).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..poker.cards import HAND_CARDS, hand_strength

EQ_SCALE = 65534  # code = 1 + round(eq * 65534): 1..65535; 0 marks "not computed"


def board_equities(board) -> np.ndarray:
    """float32[1326]: each hand's river equity on the 5-card ``board`` (NaN for blocked hands)."""
    return _equities(hand_strength(list(board)), HAND_CARDS)


@nb.njit(cache=True)
def _equities(strength, hand_cards):
    n = strength.shape[0]
    out = np.full(n, np.nan, dtype=np.float32)
    for h in range(n):
        if strength[h] < 0:
            continue
        a, b = hand_cards[h, 0], hand_cards[h, 1]
        win, tie, tot = 0.0, 0.0, 0.0
        for o in range(n):
            if strength[o] < 0:
                continue
            c, d = hand_cards[o, 0], hand_cards[o, 1]
            if c == a or c == b or d == a or d == b:
                continue
            tot += 1.0
            if strength[o] < strength[h]:
                win += 1.0
            elif strength[o] == strength[h]:
                tie += 1.0
        out[h] = (win + 0.5 * tie) / tot
    return out


def encode(eq) -> np.ndarray:
    """uint16 code of an equity in [0, 1] (resolution 1/65534)."""
    return (1 + np.rint(np.asarray(eq, dtype=np.float64) * EQ_SCALE)).astype(np.uint16)


def decode(code) -> np.ndarray:
    """Equity of a code (NaN for 0, not computed)."""
    c = np.asarray(code, dtype=np.float64)
    return np.where(c > 0, (c - 1) / EQ_SCALE, np.nan)
