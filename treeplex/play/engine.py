"""One real heads-up no-limit hand: cards, betting, payoff.

Betting is :class:`~treeplex.poker.nlfh.PublicNode`'s (the one place no-limit betting is
written) with no raise cap, over 4 rounds; showdowns use the blueprint's 7-card evaluator
(:func:`treeplex.blueprint.kernels.hand_rank7`, tested against phevaluator). Player 0 is the
small blind (first preflop, second after). Actions are ACPC tokens: ``f`` fold, ``c`` check or
call, ``r<T>`` raise so that the raiser has T chips in the hand in all (ACPC no-limit).
Cards: ``cards[0:2]`` player 0's hole cards, ``[2:4]`` player 1's, ``[4:9]`` the board; -1 for
a card a viewer does not see.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..model.game import GameError
from ..poker.cards import card_name
from ..poker.nlfh import PublicNode

BOARD_SEEN = (0, 3, 4, 5)  # board cards visible on each round


@dataclass(frozen=True)
class Table:
    """The real game's chips: equal stacks, blinds (the blueprint's defaults)."""

    stack: int = 20000
    small_blind: int = 50
    big_blind: int = 100


class _Rules:
    """What :class:`PublicNode` reads of its game: no raise cap, no abstraction."""

    def __init__(self, t: Table):
        self.nodes = []
        self.stack, self.small_blind, self.big_blind = t.stack, t.small_blind, t.big_blind
        self.bets = ((),) * 4
        self.max_raises = None
        self.rounds = 4
        self.off_tree = {}


class Hand:
    """A hand in progress (see the module doc). ``node`` is the betting node (a decision,
    fold or showdown), ``rounds`` the ACPC tokens of each round so far."""

    def __init__(self, cards, table: Table = Table()):
        self.table = table
        self.cards = [int(c) for c in cards]
        if len(self.cards) != 9:
            raise InputError(f"hand: need 9 cards (2 + 2 hole, 5 board), got {len(self.cards)}")
        g = _Rules(table)
        self.node = PublicNode(g, "decision", 0, (table.small_blind, table.big_blind), 0, last_inc=table.big_blind)
        self.rounds: list[list[str]] = [[]]
        self.actors: list[list[int]] = [[]]

    # ------------------------------------------------------------ state
    @property
    def done(self) -> bool:
        return self.node.kind != "decision"

    @property
    def to_act(self) -> int:
        return self.node.to_act

    @property
    def street(self) -> int:
        return self.node.rnd

    @property
    def pot(self) -> int:
        return self.node.pot

    def to_call(self) -> int:
        return self.node.to_call()

    def board(self) -> list[int]:
        """The board cards dealt so far (all 5 after a called all-in)."""
        return self.cards[4:4 + BOARD_SEEN[len(self.rounds) - 1]]

    def hole(self, p: int) -> list[int]:
        return self.cards[2 * p:2 * p + 2]

    def raise_range(self) -> tuple[int, int] | None:
        """(smallest, largest) legal raise-to totals, or None where no raise is legal."""
        n = self.node
        if self.done or not n.can_raise():
            return None
        return min(n.min_raise_to(), self.table.stack), self.table.stack

    def legal(self, token: str) -> bool:
        try:
            self._label(token)
            return True
        except GameError:
            return False

    def _label(self, token: str) -> str:
        n = self.node
        if self.done:
            raise GameError("the hand is over")
        if token == "f":
            if n.to_call() <= 0:
                raise GameError("fold is illegal when not facing a bet")
            return "f"
        if token == "c":
            return "c" if n.to_call() > 0 else "x"
        if token.startswith("r"):
            try:
                to = int(token[1:])
            except ValueError:
                raise GameError(f"bad raise {token!r}; expected r<total chips>") from None
            n.raise_to_of("a")  # raises GameError when no raise is allowed
            if to > self.table.stack or (to < n.min_raise_to() and to != self.table.stack) or to <= n.contrib[1 - n.to_act]:
                lo, hi = self.raise_range()
                raise GameError(f"raise to {to} is illegal here: raise to {lo}..{hi}")
            return "a" if to == self.table.stack else f"b{to - n.street0}"
        raise GameError(f"unknown action {token!r}; expected f, c or r<total chips>")

    def apply(self, token: str) -> "Hand":
        """Play ``token`` (GameError if illegal); deals the next round's cards by moving on."""
        label = self._label(token)
        self.actors[-1].append(self.node.to_act)
        self.rounds[-1].append(token)
        node = self.node.child(label)
        while node.kind == "deal":  # a round ends: the next round, or showdown after a called all-in
            node = node.after_deal()
            self.rounds.append([])
            self.actors.append([])
        if node.kind == "showdown":
            while len(self.rounds) < 4:
                self.rounds.append([])
                self.actors.append([])
        self.node = node
        return self

    # ------------------------------------------------------------ outcome
    def payoff(self) -> int:
        """Player 0's chips at the end (fold: what the folder put in; showdown: 7-card values)."""
        n = self.node
        if n.kind == "fold":
            return -n.contrib[0] if n.folder == 0 else n.contrib[1]
        if n.kind != "showdown":
            raise GameError("the hand is not over")
        a, b = (hand_value(self.hole(p) + self.cards[4:9]) for p in (0, 1))
        return n.contrib[0] * (1 if a > b else -1 if a < b else 0)

    def showdown(self) -> bool:
        return self.node.kind == "showdown"

    # ------------------------------------------------------------ text
    def betting(self) -> str:
        """ACPC betting string: rounds' tokens joined by '/' (``r300c/cr600f``)."""
        return "/".join("".join(r) for r in self.rounds)

    def view(self, seat: int) -> "Hand":
        """The hand as ``seat`` sees it: the other hole cards and undealt board cards are -1
        (the other's cards stay visible after a showdown)."""
        cards = list(self.cards)
        if not self.showdown():
            cards[2 * (1 - seat):2 * (1 - seat) + 2] = [-1, -1]
        for j in range(BOARD_SEEN[len(self.rounds) - 1], 5):
            cards[4 + j] = -1
        return replay(cards, self.betting(), self.table)


def replay(cards, betting: str, table: Table = Table()) -> Hand:
    """A hand from its cards and ACPC betting string (InputError naming the bad token)."""
    h = Hand(cards, table)
    rounds = betting.split("/")
    if len(rounds) > 4:
        raise InputError(f"betting {betting!r}: more than 4 rounds")
    for r, text in enumerate(rounds):
        if r > 0 and len(h.rounds) <= r:
            raise InputError(f"betting {betting!r}: round {r + 1} starts before round {r} ends")
        i = 0
        while i < len(text):
            j = i + 1
            if text[i] == "r":
                while j < len(text) and text[j].isdigit():
                    j += 1
            tok = text[i:j]
            if h.done or len(h.rounds) - 1 != r:
                raise InputError(f"betting {betting!r}: {tok!r} after the round or the hand ended")
            try:
                h.apply(tok)
            except GameError as e:
                raise InputError(f"betting {betting!r}: {e}") from None
            i = j
    return h


def hand_value(cards7) -> int:
    """Value of the best 5 of 7 cards (larger is better; the blueprint's evaluator)."""
    from ..blueprint.kernels import hand_rank7

    return int(hand_rank7(np.asarray(cards7, dtype=np.int64)))


def cards_text(cards) -> str:
    return "".join(card_name(c) for c in cards if c >= 0)


def deal(rng: np.random.Generator, flops=None) -> list[int]:
    """9 distinct cards (see the module doc); the flop uniform from ``flops`` (rows of 3
    cards: the flops an abstraction reached) when given."""
    if flops is None:
        return [int(c) for c in rng.permutation(52)[:9]]
    f = [int(c) for c in flops[rng.integers(len(flops))]]
    rest = [int(c) for c in rng.permutation(np.setdiff1d(np.arange(52), f))[:6]]
    return rest[:4] + f + rest[4:]
