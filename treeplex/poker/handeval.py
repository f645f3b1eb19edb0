"""Poker hand values for decks of any size: the best hand among 1 to 7 cards.

Cards are given as ranks (0 = lowest rank of the deck) and, where flushes are possible, suits.
The value is a tuple that compares like poker hands (larger is better, equal splits):

    (category, tiebreak ranks...)   category: 8 straight flush, 7 quads, 6 full house,
                                    5 flush, 4 straight, 3 trips, 2 two pair, 1 pair, 0 high card

Straights and flushes need five cards. With more than five cards the best five count. A
straight is five consecutive ranks of the deck; the wheel (A-2-3-4-5) counts only in the
full 13-rank deck. For fewer than five cards the categories that fit are used (a 2-card
hand is a pair or a high card, with the kickers compared in order), as in Leduc-style games.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations


def hand_value(ranks: tuple[int, ...], suits: tuple[int, ...] | None = None, n_ranks: int = 13) -> tuple:
    """Value of the best hand in ``ranks`` (with ``suits`` or None when flushes cannot occur)."""
    if len(ranks) > 5:
        idx = range(len(ranks))
        return max(
            hand_value(tuple(ranks[i] for i in c), None if suits is None else tuple(suits[i] for i in c), n_ranks)
            for c in combinations(idx, 5)
        )
    counts = Counter(ranks)
    groups = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    shape = [c for _, c in groups]
    order = tuple(r for r, _ in groups)
    flush = len(ranks) == 5 and suits is not None and len(set(suits)) == 1
    top = _straight_top(ranks, n_ranks)
    if top is not None and flush:
        return (8, top)
    if shape[0] == 4:
        return (7,) + order
    if shape[:2] == [3, 2]:
        return (6,) + order
    if flush:
        return (5,) + tuple(sorted(ranks, reverse=True))
    if top is not None:
        return (4, top)
    if shape[0] == 3:
        return (3,) + order
    if shape[:2] == [2, 2]:
        return (2,) + order
    if shape[0] == 2:
        return (1,) + order
    return (0,) + order


def _straight_top(ranks, n_ranks: int) -> int | None:
    """Top rank of a 5-card straight, or None (the wheel's top is rank 3, the five)."""
    if len(ranks) != 5 or len(set(ranks)) != 5:
        return None
    hi, lo = max(ranks), min(ranks)
    if hi - lo == 4:
        return hi
    if n_ranks == 13 and set(ranks) == {12, 0, 1, 2, 3}:
        return 3
    return None
