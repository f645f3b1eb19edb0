"""Simplified poker from Peña's slides (FoCM 2008, "Example (simplified poker)").

Deck J, J, Q, Q; each player antes 1 and gets one card. Player 0 checks (k) or raises (r)
by 1. After a check, player 1 checks (showdown) or raises; facing a raise a player folds (f)
or calls (c, showdown). Higher card wins; equal cards split. Deal probabilities are by rank:
P(J,J) = P(Q,Q) = 1/6, P(J,Q) = P(Q,J) = 1/3.
"""

from __future__ import annotations

from ..model.game import Game, RulesState


class SimplePokerState(RulesState):
    __slots__ = ("cards", "history")

    def __init__(self, cards: str = "", history: str = ""):
        self.cards = cards
        self.history = history

    def is_chance(self):
        return len(self.cards) < 2

    def chance_outcomes(self):
        if not self.cards:
            return [("J", 0.5), ("Q", 0.5)]
        same = 1.0 / 3.0  # one card of the dealt rank is left among three
        return [("J", same if self.cards == "J" else 2 * same), ("Q", same if self.cards == "Q" else 2 * same)]

    def is_terminal(self):
        return self.history in ("kk", "rf", "rc", "krf", "krc")

    def player(self):
        return len(self.history) % 2

    def infoset_key(self):
        return f"{self.cards[self.player()]}:{self.history}"

    def legal_actions(self):
        return ["f", "c"] if self.history.endswith("r") else ["k", "r"]

    def apply(self, action):
        if self.is_chance():
            return SimplePokerState(self.cards + action, self.history)
        return SimplePokerState(self.cards, self.history + action)

    def payoff(self):
        h = self.history
        if h.endswith("f"):
            return 1.0 if len(h) % 2 == 0 else -1.0  # h = "rf": player 1 folded
        stake = 2.0 if "r" in h else 1.0
        a, b = self.cards
        return 0.0 if a == b else (stake if a > b else -stake)  # "Q" > "J"


class SimplePoker(Game):
    name = "simple_poker"
    payoff_unit = "chips"

    def initial_state(self):
        return SimplePokerState()
