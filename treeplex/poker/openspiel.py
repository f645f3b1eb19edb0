"""The same river endgame in OpenSpiel's ``universal_poker``, for cross-checks (optional peer).

``universal_poker_params(game)`` gives the subgame parameters ``potSize``, ``boardCards`` and
``handReaches`` (2 x 1326 reach weights in OpenSpiel's hand order) with the ``fcpa`` betting
abstraction. OpenSpiel 2.0 sets the players' spent chips from ``potSize`` but leaves the
round's "max spent" at the big blind, so with ordinary blinds its check and bet amounts
refer to the blind, not the pot (checked: a check-check showdown then pays the blind). We
therefore also set both blinds to pot / 2, which makes the two agree; the pot must be an even
number of chips.

:class:`treeplex.io.openspiel.OpenSpielGame` wraps the pyspiel game in treeplex's rules interface
(zero-probability deals dropped), so :func:`treeplex.compile_game` and the LP give OpenSpiel's
game value from OpenSpiel's own rules, payoffs and infosets.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..io.openspiel import pyspiel
from .cards import HAND_CARDS, N_HANDS


def reach_index(hand: int) -> int:
    """OpenSpiel's ``handReaches`` index of our hand (``GetHoleCardsReachIndex``).

    OpenSpiel orders cards by rank, then by suit in the order s, h, d, c, and numbers the pairs
    i < j of that order row by row: k = i (2n - i - 3) / 2 + j - 1 with n = 52.
    """
    a, b = (int(c) for c in HAND_CARDS[hand])
    i, j = sorted(4 * (c // 4) + 3 - c % 4 for c in (a, b))
    return i * (2 * 52 - i - 3) // 2 + j - 1


def universal_poker_params(game) -> dict:
    """Parameters of ``universal_poker`` for a :class:`~.river.RiverGame` with the fcpa abstraction."""
    if game.abstraction.name != "fcpa":
        raise InputError("OpenSpiel's universal_poker only has the fcpa abstraction among ours")
    if game.pot % 2 or not float(game.pot).is_integer():
        raise InputError("the OpenSpiel cross-check needs an even pot (blinds are set to pot / 2)")
    reach = np.zeros(2 * N_HANDS)
    for p in (0, 1):
        for h, w in zip(game.hands[p], game.weight[p]):
            reach[p * N_HANDS + reach_index(h)] = w
    half = int(game.pot) // 2
    first_player_round4 = game.first + 1  # ACPC numbers players from 1
    return {
        "betting": "nolimit",
        "numPlayers": 2,
        "numRounds": 4,
        "blind": f"{half} {half}",
        "firstPlayer": f"1 1 1 {first_player_round4}",
        "numSuits": 4,
        "numRanks": 13,
        "numHoleCards": 2,
        "numBoardCards": "0 3 1 1",
        "stack": f"{int(game.stack)} {int(game.stack)}",
        "bettingAbstraction": "fcpa",
        "potSize": int(game.pot),
        "boardCards": game.board_text,
        "handReaches": " ".join(f"{v:.17g}" for v in reach),
    }


def postflop_universal_poker_params(game) -> dict:
    """``universal_poker`` parameters for a :class:`~.postflop.PostflopGame` whose sizes are
    OpenSpiel's fcpa (bet and raise 100%, all-in; no add/force-all-in thresholds): the board
    (3, 4 or 5 cards) starts the matching round, OOP (our player 0) acts first on every street,
    blinds are pot / 2 each and the stack is what each player has in total (stack + pot / 2)."""
    if game.pot % 2:
        raise InputError("the OpenSpiel cross-check needs an even pot (blinds are set to pot / 2)")
    reach = np.zeros(2 * N_HANDS)
    for p in (0, 1):
        for h, w in zip(game.hands[p], game.weight[p]):
            reach[p * N_HANDS + reach_index(h)] = w
    half, total = int(game.pot) // 2, int(game.stack + game.pot / 2)
    return {"betting": "nolimit", "numPlayers": 2, "numRounds": 4, "blind": f"{half} {half}",
            "firstPlayer": "1 1 1 1", "numSuits": 4, "numRanks": 13, "numHoleCards": 2,
            "numBoardCards": "0 3 1 1", "stack": f"{total} {total}", "bettingAbstraction": "fcpa",
            "potSize": int(game.pot), "boardCards": game.board_text,
            "handReaches": " ".join(f"{v:.17g}" for v in reach)}


def load_universal_poker(game):
    """The pyspiel ``universal_poker`` game of a :class:`~.river.RiverGame` or a
    :class:`~.postflop.PostflopGame`."""
    from .postflop import PostflopGame

    params = postflop_universal_poker_params(game) if isinstance(game, PostflopGame) else universal_poker_params(game)
    return pyspiel().load_game("universal_poker", params)
