"""Cards, boards, the 1326 two-card hands, and hand strength on a board.

A card is an int ``4 * rank + suit`` with ranks ``23456789TJQKA`` (0..12) and suits ``cdhs``
(0..3): the encoding of ACPC, OpenSpiel's universal_poker and phevaluator. A *hand* is an
index 0..1325 into :data:`HAND_CARDS`, the pairs ``(hi, lo)`` of distinct cards with
``hi > lo``, in lexicographic order of ``(hi, lo)``.

Hand strength on a 5-card board comes from phevaluator (perfect-hash 7-card evaluator),
computed once per board; :func:`hand_strength` returns larger = better, equal = split pot.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import InputError

RANKS = "23456789TJQKA"
SUITS = "cdhs"
N_CARDS = 52
N_HANDS = 1326

# hand index -> (hi card, lo card), and the inverse table HAND_INDEX[a, b] (either order)
HAND_CARDS = np.array([(hi, lo) for hi in range(N_CARDS) for lo in range(hi)], dtype=np.int32)
HAND_INDEX = np.full((N_CARDS, N_CARDS), -1, dtype=np.int32)
HAND_INDEX[HAND_CARDS[:, 0], HAND_CARDS[:, 1]] = np.arange(N_HANDS)
HAND_INDEX[HAND_CARDS[:, 1], HAND_CARDS[:, 0]] = np.arange(N_HANDS)


def card_name(c: int) -> str:
    return RANKS[c // 4] + SUITS[c % 4]


def hand_name(h: int) -> str:
    """``"AsKd"``: the higher card first."""
    hi, lo = HAND_CARDS[h]
    return card_name(hi) + card_name(lo)


def parse_card(text: str, where: str = "card") -> int:
    """``"As"`` -> 51. Rank letters are case-insensitive; suits are ``c d h s``."""
    if len(text) != 2 or text[0].upper() not in RANKS or text[1].lower() not in SUITS:
        raise InputError(f"{where}: bad card {text!r}; expected rank {RANKS} + suit {SUITS}, e.g. 'As'")
    return 4 * RANKS.index(text[0].upper()) + SUITS.index(text[1].lower())


def parse_cards(text: str, where: str = "cards") -> list[int]:
    """``"AsKd7h"`` (spaces and commas allowed) -> card ids; repeated cards are an error."""
    s = "".join(ch for ch in str(text) if ch not in " ,")
    if len(s) % 2:
        raise InputError(f"{where}: {text!r} has an odd number of characters; cards are 2 characters each")
    cards = [parse_card(s[i : i + 2], where) for i in range(0, len(s), 2)]
    seen = set()
    for c in cards:
        if c in seen:
            raise InputError(f"{where}: card {card_name(c)} appears twice in {text!r}")
        seen.add(c)
    return cards


def parse_board(board, n: int = 5) -> list[int]:
    """A board as a string (``"AsKd7h2c3s"``) or a sequence of cards; must have ``n`` cards."""
    if isinstance(board, str):
        cards = parse_cards(board, "board")
    elif hasattr(board, "__iter__") and all(isinstance(c, (str, numbers.Integral)) and not isinstance(c, bool)
                                            for c in board):
        cards = [parse_card(c, "board") if isinstance(c, str) else int(c) for c in board]
        if any(not 0 <= c < N_CARDS for c in cards) or len(set(cards)) != len(cards):
            raise InputError(f"board: bad or repeated card ids in {list(board)!r}")
    else:
        raise InputError(f"board: expected cards like 'AsKd7h2c3s' or a list of card ids, got {board!r}")
    if len(cards) != n:
        raise InputError(f"board: need {n} cards, got {len(cards)} in {board!r}")
    return cards


def flop_texture(flop) -> str:
    """A flop's texture class (card ids), first rule that applies: ``paired`` (two or three
    cards of one rank), ``monotone`` (one suit), ``two-tone`` (exactly two of one suit),
    ``rainbow`` (three suits)."""
    if len({c // 4 for c in flop}) < 3:
        return "paired"
    return {1: "monotone", 2: "two-tone", 3: "rainbow"}[len({c % 4 for c in flop})]


def board_mask(board: list[int]) -> np.ndarray:
    """bool[1326]: hands that share no card with the board."""
    dead = np.zeros(N_CARDS, dtype=bool)
    dead[list(board)] = True
    return ~(dead[HAND_CARDS[:, 0]] | dead[HAND_CARDS[:, 1]])


def hand_strength(board: list[int], hands=None) -> np.ndarray:
    """int32[1326]: strength of the best 5 of 7 cards of each hand in ``hands`` (hand indices;
    default: every hand the board does not block) on a 5-card ``board``.

    Larger is better; equal strengths split the pot. Other hands get -1: those blocked by the
    board, and those not asked for (a river spot evaluates its ranges' hands only: 8 ms for
    all 1,081 was 2-3% of a small spot's run).
    The value is ``7463 - phevaluator rank`` (phevaluator ranks 1 = royal flush ... 7462).
    """
    from phevaluator import evaluate_cards

    board = parse_board(board)
    out = np.full(N_HANDS, -1, dtype=np.int32)
    b = [int(c) for c in board]
    alive = board_mask(board)
    for h in np.flatnonzero(alive) if hands is None else np.asarray(hands)[alive[hands]]:
        hi, lo = HAND_CARDS[h]
        out[h] = 7463 - evaluate_cards(int(hi), int(lo), *b)
    return out
