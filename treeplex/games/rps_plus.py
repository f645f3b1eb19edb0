"""Rock-Paper-Scissors+ (Brown, Sandholm & Amos 2018, "Depth-limited solving", section 2).

Player 0 picks R, P or S; player 1 picks without seeing it. A win or loss is worth 1, or 2
when Scissors is involved. The unique equilibrium is (R, P, S) = (0.4, 0.4, 0.2) for both
players, with value 0 (ibid.).
"""

from __future__ import annotations

from ..model.game import Game, RulesState

BEATS = {"R": "S", "P": "R", "S": "P"}


class RPSState(RulesState):
    __slots__ = ("moves",)

    def __init__(self, moves: str = ""):
        self.moves = moves

    def is_terminal(self):
        return len(self.moves) == 2

    def player(self):
        return len(self.moves)

    def infoset_key(self):
        return "move"  # player 1 does not see player 0's move

    def legal_actions(self):
        return ["R", "P", "S"]

    def apply(self, action):
        return RPSState(self.moves + action)

    def payoff(self):
        a, b = self.moves
        if a == b:
            return 0.0
        stake = 2.0 if "S" in self.moves else 1.0
        return stake if BEATS[a] == b else -stake


class RPSPlus(Game):
    name = "rps_plus"

    def initial_state(self):
        return RPSState()
