"""Leduc hold'em (Southey et al. 2005), as in OpenSpiel's ``leduc_poker``; ``ranks`` generalizes it.

Deck: ``ranks`` ranks x 2 suits (standard: J, Q, K; ``ranks=5`` is Leduc 5 of Kroer, Farina
& Sandholm 2017, section 4). Each player antes 1 and gets one private card. Two betting
rounds; a public card is dealt between them. In each round a player may fold (only when
facing a bet), call/check, or raise by 2 (round 1) or 4 (round 2), at most two raises per
round. Player 0 acts first in both rounds. At showdown a player whose card pairs the public
card wins, otherwise the higher card wins; equal ranks split the pot.

By default the deal is by rank (suits never matter), which gives the same game value with a
third of the infosets. ``suited=True`` deals explicit cards as OpenSpiel does (936 infosets
for standard Leduc). Game value for player 0 (standard Leduc): -0.0856064 chips.
"""

from __future__ import annotations

from ..model.game import Game, RulesState

RAISE = (2, 4)
MAX_RAISES = 2


class LeducState(RulesState):
    __slots__ = ("game", "cards", "rounds", "contrib")

    def __init__(self, game, cards=(), rounds=("",), contrib=(1, 1)):
        self.game = game
        self.cards = cards  # (private 0, private 1, public): card ids
        self.rounds = rounds  # betting history per round, letters f/c/r
        self.contrib = contrib  # chips each player has put in

    # -- structure
    def _round_over(self, h: str) -> bool:
        return h in ("cc",) or (len(h) >= 2 and h.endswith("rc"))

    def is_chance(self):
        return len(self.cards) < 2 or (len(self.cards) == 2 and len(self.rounds) == 2)

    def is_terminal(self):
        h = self.rounds[-1]
        return h.endswith("f") or (len(self.rounds) == 2 and len(self.cards) == 3 and self._round_over(h))

    def chance_outcomes(self):
        return self.game.deal_outcomes(self.cards)

    def player(self):
        return len(self.rounds[-1]) % 2

    def infoset_key(self):
        g = self.game
        own = g.card_name(self.cards[self.player()])
        public = g.card_name(self.cards[2]) if len(self.cards) == 3 else ""
        return f"{own}{public}:{'/'.join(self.rounds)}"

    def legal_actions(self):
        h = self.rounds[-1]
        facing = self.contrib[0] != self.contrib[1]
        acts = ["f", "c"] if facing else ["c"]
        if h.count("r") < MAX_RAISES:
            acts.append("r")
        return acts

    def apply(self, action):
        if self.is_chance():
            return LeducState(self.game, self.cards + (int(action),), self.rounds, self.contrib)
        p = self.player()
        contrib = list(self.contrib)
        if action == "c":
            contrib[p] = contrib[1 - p]
        elif action == "r":
            contrib[p] = contrib[1 - p] + RAISE[len(self.rounds) - 1]
        h = self.rounds[-1] + action
        rounds = self.rounds[:-1] + (h,)
        if len(rounds) == 1 and self._round_over(h):
            rounds = rounds + ("",)  # the public card is dealt next
        return LeducState(self.game, self.cards, rounds, tuple(contrib))

    def payoff(self):
        h = self.rounds[-1]
        if h.endswith("f"):
            folder = (len(h) - 1) % 2
            return float(self.contrib[1]) if folder == 1 else -float(self.contrib[0])
        r0, r1, rp = (self.game.rank(c) for c in self.cards)
        s0 = (100 if r0 == rp else 0) + r0
        s1 = (100 if r1 == rp else 0) + r1
        pot_share = float(self.contrib[0])  # equal at showdown
        return 0.0 if s0 == s1 else (pot_share if s0 > s1 else -pot_share)


class Leduc(Game):
    """Leduc hold'em with ``ranks`` ranks of 2 suits. Payoffs in chips (ante 1)."""

    payoff_unit = "chips"

    def __init__(self, ranks: int = 3, suited: bool = False):
        if not isinstance(ranks, int) or ranks < 2:
            raise ValueError(f"leduc: ranks must be an integer >= 2, got {ranks!r}")
        self.ranks = ranks
        self.suited = bool(suited)
        self.name = "leduc" if (ranks, suited) == (3, False) else f"leduc(ranks={ranks}" + (
            ", suited=True)" if suited else ")"
        )

    def initial_state(self):
        return LeducState(self)

    def rank(self, card: int) -> int:
        return card // 2 if self.suited else card

    def card_name(self, card: int) -> str:
        names = "JQKA" if self.ranks <= 4 else "23456789TJQKA"[-self.ranks :]
        if self.ranks > 13:
            return f"[{self.rank(card)}]"  # unambiguous when concatenated
        return names[self.rank(card)] + ("sh"[card % 2] if self.suited else "")

    def deal_outcomes(self, dealt):
        """Next card uniformly from what is left (by rank: weight = copies left)."""
        if self.suited:
            left = [c for c in range(2 * self.ranks) if c not in dealt]
            return [(str(c), 1.0 / len(left)) for c in left]
        n_left = 2 * self.ranks - len(dealt)
        out = []
        for r in range(self.ranks):
            copies = 2 - sum(1 for c in dealt if c == r)
            if copies:
                out.append((str(r), copies / n_left))
        return out
