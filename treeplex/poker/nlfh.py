"""No-limit flop hold'em (NLFH; Brown, Sandholm & Amos 2018, appendix B) as a parametrized family.

Two players, two betting rounds. Player 0 is the small blind (P1 in the paper): it posts
``small_blind``, acts first before the flop and second after it. Player 1 posts ``big_blind``.
Each player gets ``hole`` private cards from a deck of ``ranks`` x ``suits`` cards (the top
``ranks`` ranks of 23456789TJQKA); after the first round ``flop`` public cards are dealt. Both
start with ``stack`` chips. Payoffs are player 0's net chips; ``big_blind`` gives mbb/g.

Betting is no-limit: a raise puts in at least the big blind and at least the last raise on the
round; a round ends when a player calls (or checks) and both have acted; a called all-in goes
to showdown. The compiled game offers the **action abstraction** ``bets`` (a spec string,
pot fractions per round, ``"0.5,1,allin"`` or ``"0.5,1,allin/1,allin"``): a bet of fraction
x raises to ``c_opp + floor(x * (pot + to_call) + 1/2)`` chips, x times the pot after calling
(:func:`.sizes.raise_to`, as in :mod:`.betting`); sizes under the minimum raise are raised to it, sizes at or above the
stack are the all-in (offered when the spec lists ``allin``). Any
other legal size can be applied to a state (``p0.75``, or ``b250``): an **off-tree action**. ``off_tree={"": (0.75,)}`` also lists it, at the decisions whose
history is the key, so that the game where the off-tree action is available compiles.

Labels: ``f`` fold, ``x`` check, ``c`` call, ``p<x>`` raise by x pot, ``a`` all-in, and for any
other size ``b<n>``: raise so that n chips are in this round (the river module's labels).
Infoset keys are ``"<own cards>|<board>|<history>"``, the history being the rounds' labels
joined by ``,`` and rounds by ``/`` (``"Kc|Qd|p0.5,c/x,p1"``).

When no flush is possible (``hole + flop < 5``) suits never matter, and cards are dealt by
rank with card-removal weights (as Leduc is): same values, far fewer histories.

The real NLFH of the paper is :func:`nlfh_real` (52 cards, 2 hole cards, 3-card flop,
stacks 20,000, blinds 50/100); it is for subgames, not for compiling whole.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import combinations

from ..errors import InputError
from ..model.game import Game, GameError, RulesState
from .betting import ALL_IN
from .sizes import raise_to
from .handeval import hand_value

RANKS = "23456789TJQKA"
SUITS = "cdhs"


def parse_bets(spec, rounds: int = 2) -> tuple[tuple[float, ...], ...]:
    """``"0.5,1,allin"`` (every round) or ``"0.5,1/1,allin"`` (one per round) -> sizes per round.

    A size is a pot fraction > 0 or :data:`ALL_IN` (written ``allin``), sorted ascending.
    """
    if isinstance(spec, str):
        parts = spec.split("/")
        if len(parts) not in (1, rounds):
            raise InputError(f"bets {spec!r}: give one spec for all rounds or one per round ({rounds}), '/'-separated")
        per = []
        for part in parts:
            sizes = []
            for tok in filter(None, (t.strip().lower() for t in part.split(","))):
                if tok.replace("-", "").replace("_", "") == "allin":
                    sizes.append(ALL_IN)
                    continue
                try:
                    sizes.append(float(tok))
                except ValueError:
                    raise InputError(f"bets {spec!r}: {tok!r} is not a pot fraction or 'allin'") from None
            per.append(sizes)
    else:
        per = [list(r) for r in spec]
    if len(per) == 1:
        per = per * rounds
    if len(per) != rounds:
        raise InputError(f"bets {spec!r}: expected sizes for {rounds} rounds")
    for r in per:
        for x in r:
            if not (x > 0):
                raise InputError(f"bets {spec!r}: pot fraction {x!r} must be a positive number")
    return tuple(tuple(sorted(set(float(x) for x in r))) for r in per)


def frac_label(x: float) -> str:
    """Label of a raise by ``x`` pot: ``p0.5``; the all-in is ``a``."""
    return "a" if x == ALL_IN else f"p{x:g}"


class PublicNode:
    """A node of the public betting tree, shared by every deal.

    ``kind``: "decision" (``to_act`` moves), "deal" (a round other than the game's last,
    ``game.rounds``, is over: the next cards come; NLFH has 2 rounds, the blueprint's HUNL 4), "fold" (``folder`` gave up) or "showdown". ``contrib`` = chips each player has put
    in this hand; ``street0`` = what each had in when this round began. ``parent`` and
    ``label`` give the path; ``leaf`` is the "deal" node at the end of the first round above a
    second-round node (the node itself for a "deal" node, None in the first round).
    """

    __slots__ = ("game", "id", "kind", "rnd", "contrib", "to_act", "hist", "hist_str", "last_inc", "n_raises",
                 "acted", "folder", "depth", "street0", "parent", "label", "leaf", "_children", "_actions", "_sizes")

    def __init__(self, game, kind, rnd, contrib, to_act=None, *, parent=None, label=None, last_inc=0, n_raises=0,
                 acted=(False, False), folder=None, street0=0):
        self.game, self.kind, self.rnd, self.contrib, self.to_act = game, kind, rnd, contrib, to_act
        self.id = len(game.nodes)
        game.nodes.append(self)
        self.parent, self.label = parent, label
        if parent is None:
            self.hist, self.depth, self.leaf = ((),), 0, None
        elif label == "":  # the flop
            self.hist, self.depth, self.leaf = parent.hist + ((),), parent.depth + 1, parent
        else:
            self.hist = parent.hist[:-1] + (parent.hist[-1] + (label,),)
            self.depth, self.leaf = parent.depth + 1, parent.leaf
        if kind == "deal":
            self.leaf = self
        self.hist_str = "/".join(",".join(r) for r in self.hist)
        self.last_inc, self.n_raises, self.acted, self.folder, self.street0 = last_inc, n_raises, acted, folder, street0
        self._children: dict[str, PublicNode] = {}
        self._actions = None
        self._sizes = None

    # ---------------------------------------------------------------- betting
    @property
    def pot(self) -> int:
        return self.contrib[0] + self.contrib[1]

    @property
    def allin(self) -> bool:
        return max(self.contrib) >= self.game.stack

    def to_call(self) -> int:
        p = self.to_act
        return self.contrib[1 - p] - self.contrib[p]

    def can_raise(self) -> bool:
        g = self.game
        if self.kind != "decision" or self.contrib[1 - self.to_act] >= g.stack:
            return False
        return g.max_raises is None or self.n_raises < g.max_raises

    def min_raise_to(self) -> int:
        return self.contrib[1 - self.to_act] + max(self.last_inc, self.game.big_blind)

    def frac_raise_to(self, x: float) -> int:
        """Chips raised to by a raise of x times the pot after calling: at least the minimum
        raise, at most the stack (:data:`ALL_IN` is the stack)."""
        g = self.game
        if x == ALL_IN:
            return g.stack
        return raise_to(x, self.pot + self.to_call(), self.contrib[1 - self.to_act], self.min_raise_to(), g.stack)

    def fraction_of(self, raise_to: int) -> float:
        """Pot fraction x of a raise to ``raise_to`` chips (inverse of :meth:`frac_raise_to`)."""
        return (raise_to - self.contrib[1 - self.to_act]) / (self.pot + self.to_call())

    @property
    def actions(self) -> list[str]:
        """The abstraction's labels here: f and c when facing a bet (else x), raises ascending."""
        if self._actions is None:
            self._actions, self._sizes = self._abstract_actions()
        return self._actions

    def raise_sizes(self) -> dict[str, int]:
        """{raise label: chips raised to} of the abstraction's raises here."""
        self.actions
        return self._sizes

    def _abstract_actions(self):
        g = self.game
        acts = ["f", "c"] if self.to_call() > 0 else ["x"]
        sizes: dict[str, int] = {}
        if self.can_raise():
            for x in sorted(set(g.bets[self.rnd]) | set(g.off_tree.get(self.hist_str, ()))):
                to = self.frac_raise_to(x)
                if to not in sizes.values():
                    sizes["a" if to == g.stack else frac_label(x)] = to
        return acts + list(sizes), sizes

    def raise_to_of(self, label: str) -> int:
        """Chips raised to by a raise label (``p<x>``, ``b<n>``, ``a``); GameError if illegal here."""
        g = self.game
        if not self.can_raise():
            raise GameError(f"no raise is allowed at history {self.hist_str!r}")
        try:
            if label == "a":
                return g.stack
            if label[0] == "p":
                return self.frac_raise_to(float(label[1:]))
            if label[0] != "b":
                raise ValueError
            to = self.street0 + int(label[1:])
        except (ValueError, IndexError):
            raise GameError(f"unknown action {label!r} at history {self.hist_str!r}") from None
        if to > g.stack or (to < self.min_raise_to() and to < g.stack):
            raise GameError(
                f"{label!r} (raise to {to} chips) is illegal at history {self.hist_str!r}: "
                f"the minimum is {min(self.min_raise_to(), g.stack)}, the stack {g.stack}"
            )
        return to

    def child(self, label: str) -> "PublicNode":
        """The node after ``label``; any legal size is accepted, not only the abstraction's."""
        node = self._children.get(label)
        if node is None:
            node = self._make_child(label)
            self._children[label] = node
        return node

    def _make_child(self, label: str) -> "PublicNode":
        if self.kind != "decision":
            raise GameError(f"no action at a {self.kind} node (history {self.hist_str!r})")
        g, p = self.game, self.to_act
        acted = (True, self.acted[1]) if p == 0 else (self.acted[0], True)
        kw = dict(parent=self, label=label, street0=self.street0)
        facing = self.to_call() > 0
        if label == "f":
            if not facing:
                raise GameError(f"fold is illegal when not facing a bet (history {self.hist_str!r})")
            return PublicNode(g, "fold", self.rnd, self.contrib, folder=p, **kw)
        if label in ("x", "c"):
            if (label == "c") != facing:
                raise GameError(f"{label!r} is illegal at history {self.hist_str!r}: use "
                                f"{'c (call)' if facing else 'x (check)'}")
            contrib = (self.contrib[1], self.contrib[1]) if p == 0 else (self.contrib[0], self.contrib[0])
            if self.acted[1 - p]:  # both have acted: the round is over
                return PublicNode(g, "deal" if self.rnd < g.rounds - 1 else "showdown", self.rnd, contrib, **kw)
            return PublicNode(g, "decision", self.rnd, contrib, 1 - p, last_inc=self.last_inc,
                              n_raises=self.n_raises, acted=acted, **kw)
        to = self.raise_to_of(label)
        c_opp = self.contrib[1 - p]
        contrib = (to, c_opp) if p == 0 else (c_opp, to)
        return PublicNode(g, "decision", self.rnd, contrib, 1 - p, last_inc=max(self.last_inc, to - c_opp),
                          n_raises=self.n_raises + 1, acted=acted, **kw)

    def after_deal(self) -> "PublicNode":
        """The node after the flop of a "deal" node: second-round betting, or showdown if all-in."""
        node = self._children.get("")
        if node is None:
            g = self.game
            kw = dict(parent=self, label="", street0=self.contrib[0])
            if self.allin:
                node = PublicNode(g, "showdown", self.rnd + 1, self.contrib, **kw)
            else:
                node = PublicNode(g, "decision", self.rnd + 1, self.contrib, 1, **kw)
            self._children[""] = node
        return node

    def path(self) -> list[tuple["PublicNode", str]]:
        """[(node, label taken there), ...] from the root to this node ('' = the flop)."""
        out = []
        node = self
        while node.parent is not None:
            out.append((node.parent, node.label))
            node = node.parent
        return out[::-1]

    def walk(self):
        """This node and every descendant reachable through the abstraction's actions."""
        stack = [self]
        while stack:
            n = stack.pop()
            yield n
            if n.kind == "decision":
                stack.extend(n.child(a) for a in reversed(n.actions))
            elif n.kind == "deal":
                stack.append(n.after_deal())

    def __repr__(self):
        return f"PublicNode({self.kind}, {self.hist_str!r}, contrib={self.contrib})"


class NLFH(Game):
    """No-limit flop hold'em with the deck, cards, stacks, blinds and abstraction as parameters."""

    payoff_unit = "chips"

    def __init__(self, ranks: int = 13, suits: int = 4, hole: int = 2, flop: int = 3, stack: int = 20000,
                 small_blind: int = 50, big_blind: int = 100, bets="0.5,1,allin", max_raises: int | None = None,
                 off_tree: dict | None = None, name: str | None = None):
        if not (isinstance(ranks, int) and 2 <= ranks <= 13):
            raise InputError(f"nlfh: ranks must be an integer in 2..13, got {ranks!r}")
        if not (isinstance(suits, int) and 1 <= suits <= 4):
            raise InputError(f"nlfh: suits must be an integer in 1..4, got {suits!r}")
        if hole < 1 or flop < 1 or 2 * hole + flop > ranks * suits:
            raise InputError(f"nlfh: {ranks}x{suits} cards cannot deal {hole} hole cards each and a {flop}-card flop")
        if not (0 < small_blind <= big_blind < stack):
            raise InputError(f"nlfh: need 0 < small_blind <= big_blind < stack, got {small_blind}, {big_blind}, {stack}")
        if max_raises is not None and (not isinstance(max_raises, int) or isinstance(max_raises, bool)
                                       or max_raises < 1):
            raise InputError(f"nlfh: max_raises must be a whole number >= 1 or None, got {max_raises!r}")
        self.ranks, self.suits, self.hole, self.flop = ranks, suits, hole, flop
        self.stack, self.small_blind, self.big_blind = int(stack), int(small_blind), int(big_blind)
        self.pot = self.small_blind + self.big_blind  # the starting pot (chips), for %pot units
        self.bets_spec = bets
        self.bets = parse_bets(bets)
        self.rounds = 2  # PublicNode: "deal" ends every round but the last
        self.max_raises = max_raises
        self.off_tree = {str(k): tuple(float(x) for x in v) for k, v in (off_tree or {}).items()}
        self.by_rank = hole + flop < 5  # no flush possible: suits never matter
        self.name = name or (
            f"nlfh(ranks={ranks}, suits={suits}, hole={hole}, flop={flop}, stack={stack}, "
            f"blinds={small_blind}/{big_blind}, bets={bets!r}"
            + (f", max_raises={max_raises}" if max_raises else "")
            + (f", off_tree={self.off_tree}" if self.off_tree else "") + ")"
        )
        self.nodes: list[PublicNode] = []
        self.root = PublicNode(self, "decision", 0, (self.small_blind, self.big_blind), 0, last_inc=self.big_blind)
        self._values: dict = {}

    # -------------------------------------------------------------- cards
    def card_name(self, c: int) -> str:
        if self.by_rank:
            return RANKS[13 - self.ranks + c]
        return RANKS[13 - self.ranks + c // self.suits] + SUITS[c % self.suits]

    def cards_name(self, cards) -> str:
        return "".join(self.card_name(c) for c in cards)

    @property
    def n_cards(self) -> int:
        return self.ranks * self.suits

    def deal_outcomes(self, used: tuple, n: int) -> list[tuple[str, float, tuple]]:
        """(label, probability, cards) of the next ``n`` cards given the cards ``used``."""
        return _deal_outcomes(self, tuple(sorted(used)), n)

    def value(self, hole: tuple, board: tuple) -> tuple:
        """Poker value of ``hole`` + ``board`` (see :mod:`.handeval`), cached."""
        key = (hole, board)
        v = self._values.get(key)
        if v is None:
            cards = hole + board
            if self.by_rank:
                v = hand_value(cards, None, self.ranks)
            else:
                v = hand_value(tuple(c // self.suits for c in cards), tuple(c % self.suits for c in cards), self.ranks)
            self._values[key] = v
        return v

    # -------------------------------------------------------------- states
    def initial_state(self) -> "NLFHState":
        return NLFHState(self, (), self.root, ())

    def state(self, holes: tuple, node: PublicNode, board: tuple = ()) -> "NLFHState":
        """The state with private cards ``holes = (hole0, hole1)`` at public ``node`` with ``board``."""
        return NLFHState(self, tuple(tuple(h) for h in holes), node, tuple(board))

    def node(self, hist: str) -> PublicNode:
        """The public node of a history string (``"b0.5,c/c"``); off-tree labels are allowed."""
        node = self.root
        rounds = hist.split("/")
        for i, r in enumerate(rounds):
            if i > 0:
                if node.kind != "deal":
                    raise GameError(f"history {hist!r}: round {i} starts before round {i - 1} is over")
                node = node.after_deal()
            for label in filter(None, r.split(",")):
                node = node.child(label)
        return node


@lru_cache(maxsize=None)
def _deal_outcomes_cached(ranks, suits, by_rank, used, n):
    if by_rank:
        left = [suits - used.count(r) for r in range(ranks)]
        total = math.comb(sum(left), n)
        out = []
        for combo in _multisets(ranks, n):
            p = 1
            for r in set(combo):
                p *= math.comb(left[r], combo.count(r))
            if p:
                cards = tuple(sorted(combo, reverse=True))
                out.append((cards, p / total))
        return out
    deck = [c for c in range(ranks * suits) if c not in used]
    total = math.comb(len(deck), n)
    return [(tuple(sorted(c, reverse=True)), 1.0 / total) for c in combinations(deck, n)]


def _multisets(ranks, n):
    if n == 0:
        yield ()
        return
    for r in range(ranks):
        for rest in _multisets(r + 1, n - 1):
            yield rest + (r,)


def _deal_outcomes(game, used, n):
    out = _deal_outcomes_cached(game.ranks, game.suits, game.by_rank, used, n)
    return [(game.cards_name(c), p, c) for c, p in out]


class NLFHState(RulesState):
    """A history: private cards (dealt so far), board and public node."""

    __slots__ = ("game", "holes", "node", "board")

    def __init__(self, game: NLFH, holes: tuple, node: PublicNode, board: tuple):
        self.game, self.holes, self.node, self.board = game, holes, node, board

    def is_chance(self):
        return len(self.holes) < 2 or self.node.kind == "deal"

    def is_terminal(self):
        return self.node.kind in ("fold", "showdown")

    def chance_outcomes(self):
        g = self.game
        if len(self.holes) < 2:
            return [(label, p) for label, p, _ in g.deal_outcomes(sum(self.holes, ()), g.hole)]
        return [(label, p) for label, p, _ in g.deal_outcomes(sum(self.holes, ()), g.flop)]

    def player(self):
        return self.node.to_act

    def infoset_key(self):
        g = self.game
        p = self.node.to_act
        return f"{g.cards_name(self.holes[p])}|{g.cards_name(self.board)}|{self.node.hist_str}"

    def legal_actions(self):
        return self.node.actions

    def apply(self, action):
        g = self.game
        if len(self.holes) < 2:
            for label, _, cards in g.deal_outcomes(sum(self.holes, ()), g.hole):
                if label == action:
                    return NLFHState(g, self.holes + (cards,), self.node, self.board)
            raise GameError(f"no deal {action!r} here")
        if self.node.kind == "deal":
            for label, _, cards in g.deal_outcomes(sum(self.holes, ()), g.flop):
                if label == action:
                    return NLFHState(g, self.holes, self.node.after_deal(), cards)
            raise GameError(f"no flop {action!r} here")
        return NLFHState(g, self.holes, self.node.child(action), self.board)

    def payoff(self):
        node = self.node
        if node.kind == "fold":
            return -float(node.contrib[0]) if node.folder == 0 else float(node.contrib[1])
        v0 = self.game.value(self.holes[0], self.board)
        v1 = self.game.value(self.holes[1], self.board)
        c = float(node.contrib[0])
        return c if v0 > v1 else (-c if v0 < v1 else 0.0)


def nlfh_real(bets="0.5,1,allin", **kw) -> NLFH:
    """The paper's NLFH (appendix B): 52 cards, 2 hole cards, 3-card flop, stacks 20,000, blinds 50/100."""
    return NLFH(ranks=13, suits=4, hole=2, flop=3, stack=20000, small_blind=50, big_blind=100, bets=bets, **kw)


def nlfh_small(**kw) -> NLFH:
    """The built-in small member: see ``SMALL`` for its parameters (exact best responses in seconds)."""
    return NLFH(**{**SMALL, **kw})


SMALL = dict(ranks=8, suits=2, hole=1, flop=1, stack=5000, small_blind=50, big_blind=100, bets="0.5,1,allin")
