"""Kuhn poker (Kuhn 1950), as in OpenSpiel's ``kuhn_poker``.

Three cards J < Q < K, ante 1, one card each. Player 0 passes or bets 1; facing a bet a
player folds (pass) or calls (bet). Showdown: higher card wins the pot.
Game value for player 0: -1/18 (Kuhn 1950).
"""

from __future__ import annotations

from ..model.game import Game, RulesState

CARDS = "JQK"


class KuhnState(RulesState):
    __slots__ = ("cards", "history")

    def __init__(self, cards: str = "", history: str = ""):
        self.cards = cards
        self.history = history

    def is_chance(self):
        return len(self.cards) < 2

    def chance_outcomes(self):
        left = [c for c in CARDS if c not in self.cards]
        return [(c, 1.0 / len(left)) for c in left]

    def is_terminal(self):
        h = self.history
        return h in ("pp", "bp", "bb", "pbp", "pbb")

    def player(self):
        return len(self.history) % 2

    def infoset_key(self):
        return f"{self.cards[self.player()]}:{self.history}"

    def legal_actions(self):
        return ["p", "b"]

    def apply(self, action):
        if self.is_chance():
            return KuhnState(self.cards + action, self.history)
        return KuhnState(self.cards, self.history + action)

    def payoff(self):
        h = self.history
        if h.endswith("bp"):  # the last player to act folded to a bet
            folder = (len(h) - 1) % 2
            return 1.0 if folder == 1 else -1.0
        stake = 2.0 if "b" in h else 1.0
        return stake if CARDS.index(self.cards[0]) > CARDS.index(self.cards[1]) else -stake


class Kuhn(Game):
    """3-card Kuhn poker. Payoffs in chips (ante 1)."""

    name = "kuhn"
    payoff_unit = "chips"

    def initial_state(self):
        return KuhnState()
