"""The public tree of a postflop subgame: betting rounds joined by chance nodes that deal cards.

Nodes are public: decision nodes (the actor, the board so far, each player's chips in), chance
nodes (one child per card of the deck not on the board) and terminals (fold or showdown, on
the board they end on). Player 0 is out of position (acts first on every street), player 1 in
position. Each street's betting follows :func:`.sizes.street_actions`, as postflop-solver
builds its trees: check/bet when not facing a bet; fold/call/raise when facing one; a call
(or check-check) ends the street; after an all-in and a call the remaining cards are dealt
with no betting.

Chips: ``pot`` is in the middle at the start, half from each player; ``stack`` is each
player's effective stack behind. ``contrib[v][p]`` is what player p has put in during the
whole hand (pot/2 + bets since the start). Terminal payoffs are player 0's chips relative to
the start of the hand (zero-sum): a fold loses what the folder has in, a showdown wins what
the loser has in (``stake``), ties split.

Chance probabilities (exact, for the explicit game with hole cards dealt first): a chance
node deals one of the ``n_deck - len(board) - 4`` cards held by neither the board nor the
two players' hands, uniformly. ``chance[t]`` of a terminal is the product of 1/that count
over the chance nodes on its path; the operator multiplies it in and gives zero weight to a
hand that holds a dealt card, so every card-compatible (h0, h1, runout) has the right weight.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from itertools import permutations

import numpy as np

from ..errors import InputError
from .cards import HAND_CARDS, HAND_INDEX, card_name
from .sizes import StreetSizes, street_actions

STREETS = ("flop", "turn", "river")
DECISION, CHANCE, TERMINAL = 0, 1, 2


@dataclass
class TreeConfig:
    """Everything the betting depends on. ``sizes[street][p]`` is player p's :class:`StreetSizes`
    (street 0 = the starting street); ``raise_cap`` is the most raises after the opening bet
    on a street (None: until all-in)."""

    pot: int
    stack: int
    sizes: list[tuple[StreetSizes, StreetSizes]]
    add_allin_threshold: float = 1.5
    force_allin_threshold: float = 0.15
    raise_cap: int | None = None


@dataclass
class PublicTree:
    """Decision nodes, chance nodes and terminals of a postflop subgame, parents first.

    A child is ``(DECISION, v)``, ``(CHANCE, c)`` or ``(TERMINAL, t)``. Decision node v:
    ``actor``, ``board`` (board id), ``contrib``, ``actions`` (labels: ``f``, ``x``, ``c``,
    ``bN`` = bet/raise to N chips this street), ``children``, ``history`` and ``node_last[v][p]``
    (p's last (node, action) before v, or None), ``node_chance`` (the chance weight of v's
    runout, as ``chance`` of a terminal). Chance node c: ``chance_board``,
    ``chance_cards`` (dealt card of each child), ``chance_children``. Terminal t: ``kind``,
    ``term_board``, ``payoff0`` (fold), ``stake`` (showdown), ``chance`` (see module doc),
    ``last[t][p]`` and ``term_history``. ``boards[b]`` is a tuple of card ids; ``histories`` use
    ``-`` between actions and ``/card/`` between streets.
    """

    config: TreeConfig
    deck: tuple[int, ...]
    boards: list[tuple[int, ...]] = field(default_factory=list)
    actor: list[int] = field(default_factory=list)
    board: list[int] = field(default_factory=list)
    contrib: list[tuple[int, int]] = field(default_factory=list)
    actions: list[tuple[str, ...]] = field(default_factory=list)
    children: list[list[tuple[int, int]]] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    node_last: list[tuple] = field(default_factory=list)
    node_chance: list[float] = field(default_factory=list)
    chance_board: list[int] = field(default_factory=list)
    chance_cards: list[list[int]] = field(default_factory=list)
    chance_children: list[list[tuple[int, int]]] = field(default_factory=list)
    chance_history: list[str] = field(default_factory=list)
    kind: list[str] = field(default_factory=list)
    term_board: list[int] = field(default_factory=list)
    payoff0: list[float] = field(default_factory=list)
    stake: list[float] = field(default_factory=list)
    chance: list[float] = field(default_factory=list)
    last: list[tuple] = field(default_factory=list)
    term_history: list[str] = field(default_factory=list)
    symmetries: list = field(default_factory=list)
    n_start: int = 0
    _board_ids: dict = field(default_factory=dict)

    @property
    def n_nodes(self) -> int:
        return len(self.actor)

    @property
    def n_terminals(self) -> int:
        return len(self.kind)

    @property
    def n_chance(self) -> int:
        return len(self.chance_board)

    def nodes_of(self, player: int) -> list[int]:
        return [v for v in range(self.n_nodes) if self.actor[v] == player]

    def stabilizer(self, b: int) -> list[tuple[int, ...]]:
        """The symmetries that fix every card dealt since the start on board ``b``."""
        dealt = self.boards[b][self.n_start:]
        return [s for s in self.symmetries if all(permute_card(c, s) == c for c in dealt)]

    def board_id(self, cards: tuple[int, ...]) -> int:
        b = self._board_ids.get(cards)
        if b is None:
            b = self._board_ids[cards] = len(self.boards)
            self.boards.append(cards)
        return b


def permute_card(c: int, perm: tuple[int, ...]) -> int:
    """The card of the same rank with suit ``perm[suit]``."""
    return 4 * (c // 4) + perm[c % 4]


def card_symmetries(board, deck, weights) -> list[tuple[int, ...]]:
    """Suit permutations that map the board (as a set), the deck and every weight vector
    (float[1326] by hand index) to themselves: the game's suit isomorphisms."""
    out = []
    for perm in permutations(range(4)):
        if {permute_card(c, perm) for c in board} != set(board) or {permute_card(c, perm) for c in deck} != set(deck):
            continue
        img = _hand_image(perm)
        if all(np.array_equal(w[img], w) for w in weights):
            out.append(perm)
    return out


@cache
def _hand_image(perm: tuple[int, ...]) -> np.ndarray:
    """The hand index of each hand's image under the suit permutation ``perm`` (24 at most,
    kept: a batch driver estimates the size of every spot with :func:`card_symmetries`)."""
    img = HAND_INDEX[[permute_card(int(c), perm) for c in HAND_CARDS[:, 0]],
                     [permute_card(int(c), perm) for c in HAND_CARDS[:, 1]]]
    img.flags.writeable = False
    return img


@dataclass(frozen=True)
class _Street:
    """Betting state within a street: chips in this street, what the last action was, raises."""

    bets: tuple[int, int] = (0, 0)
    last: str = "none"  # none, check, call, bet, chance
    raises: int = 0


def build_public_tree(config: TreeConfig, board: tuple[int, ...], deck: tuple[int, ...],
                      symmetries: list[tuple[int, ...]] | None = None) -> PublicTree:
    """The public tree of a subgame starting on ``board`` (3, 4 or 5 cards), dealing from ``deck``.

    ``symmetries``: suit permutations (``perm[suit]`` = image) that fix the board and the
    ranges (:func:`card_symmetries`). A chance node then deals one card per orbit of the cards
    under the permutations that fix every card dealt so far (the smallest card of the orbit
    stands for it), and the orbit's size multiplies its chance weight.
    """
    if not (config.pot > 0 and config.stack > 0):
        raise InputError(f"postflop: pot and stack must be positive chips, got pot={config.pot}, stack={config.stack}")
    tree = PublicTree(config, tuple(deck))
    tree.symmetries = list(symmetries or [tuple(range(4))])
    tree.n_start = len(board)
    b = tree.board_id(tuple(board))
    _decision(tree, b, 0, (0, 0), _Street(), False, False, "", (None, None), 1.0)
    return tree


def _decision(tree, b, actor, amount, st, allin, oop_called, hist, last, chance) -> tuple[int, int]:
    """Add a decision node; ``amount`` = chips each has matched before this street."""
    cfg = tree.config
    v = tree.n_nodes
    half = cfg.pot / 2
    street = len(tree.boards[b]) - 3  # 0 flop, 1 turn, 2 river
    tree.actor.append(actor)
    tree.board.append(b)
    tree.contrib.append((half + amount[0] + st.bets[0], half + amount[1] + st.bets[1]))
    tree.history.append(hist)
    tree.node_last.append(last)
    tree.node_chance.append(chance)
    tree.actions.append(())
    tree.children.append([])
    me, opp = st.bets[actor], st.bets[1 - actor]
    matched = amount[0]  # both matched the same before the street
    to_call = opp - me
    pot = cfg.pot + 2 * (matched + opp)  # after calling
    max_to = cfg.stack - matched
    acts: list[tuple[str, str, int]] = []
    facing = to_call > 0
    sizes = cfg.sizes[len(tree.boards[b]) - tree.n_start][actor]  # by street of the subgame
    if facing:
        acts += [("f", "fold", 0), ("c", "call", opp)]
        if not allin and (cfg.raise_cap is None or st.raises < cfg.raise_cap):
            min_to = min(max(opp + to_call, 1), max_to)
            for amt in street_actions(sizes.raise_, True, pot, to_call, opp, max_to, min_to, 3 - street,
                                      cfg.add_allin_threshold, cfg.force_allin_threshold, True):
                acts.append((f"b{amt}", "raise", amt))
    else:
        acts.append(("x", "check", 0))
        use = sizes.donk if (sizes.donk is not None and st.last == "chance" and oop_called and actor == 0) else sizes.bet
        for amt in street_actions(use, False, pot, 0, 0, max_to, min(1, max_to), 3 - street,
                                  cfg.add_allin_threshold, cfg.force_allin_threshold, True):
            acts.append((f"b{amt}", "bet", amt))
    tree.actions[v] = tuple(a for a, _, _ in acts)
    sep = "-" if hist and not hist.endswith("/") else ""
    children = []
    for a, (label, what, amt) in enumerate(acts):
        h = hist + sep + label
        new_last = tuple((v, a) if q == actor else last[q] for q in (0, 1))
        if what == "fold":
            c = tree.contrib[v]
            children.append(_terminal(tree, b, "fold", -c[0] if actor == 0 else c[1], 0.0, new_last, h, chance))
        elif what == "check" and actor == 0:
            children.append(_decision(tree, b, 1, amount, _Street(st.bets, "check", st.raises), allin,
                                      oop_called, h, new_last, chance))
        elif what in ("check", "call"):
            new_amount = (matched + opp, matched + opp)
            children.append(_street_end(tree, b, new_amount, allin or (what == "call" and opp == max_to),
                                        what == "call" and actor == 0, h, new_last, chance))
        else:
            bets = (amt, st.bets[1]) if actor == 0 else (st.bets[0], amt)
            children.append(_decision(tree, b, 1 - actor, amount,
                                      _Street(bets, "bet", st.raises + (what == "raise")),
                                      allin or amt == max_to, oop_called, h, new_last, chance))
    tree.children[v] = children
    return (DECISION, v)


def _street_end(tree, b, amount, allin, oop_called, hist, last, chance) -> tuple[int, int]:
    """After a call or check-check: showdown on the river, else deal the next card."""
    if len(tree.boards[b]) == 5:
        return _terminal(tree, b, "showdown", 0.0, tree.config.pot / 2 + amount[0], last, hist, chance)
    return _deal(tree, b, amount, allin, oop_called, hist, last, chance)


def _deal(tree, b, amount, allin, oop_called, hist, last, chance) -> tuple[int, int]:
    c = tree.n_chance
    board = tree.boards[b]
    left = [k for k in tree.deck if k not in board]
    stab = tree.stabilizer(b)
    orbit = {k: min(permute_card(k, s) for s in stab) for k in left}  # the orbit's smallest card
    cards = [k for k in left if orbit[k] == k]
    size = {k: sum(1 for j in left if orbit[j] == k) for k in cards}
    tree.chance_board.append(b)
    tree.chance_cards.append(cards)
    tree.chance_children.append([])
    tree.chance_history.append(hist)
    kids = []
    for k in cards:
        p = chance * size[k] / (len(left) - 4)  # the two hands hold 4 of the cards left
        nb = tree.board_id(board + (k,))
        h = f"{hist}/{card_name(k)}/"
        if allin:  # no more betting: deal on to the showdown
            kids.append(_street_end(tree, nb, amount, True, False, h, last, p))
        else:
            kids.append(_decision(tree, nb, 0, amount, _Street(last="chance"), False, oop_called, h, last, p))
    tree.chance_children[c] = kids
    return (CHANCE, c)


def _terminal(tree, b, kind, payoff0, stake, last, hist, chance) -> tuple[int, int]:
    t = tree.n_terminals
    tree.kind.append(kind)
    tree.term_board.append(b)
    tree.payoff0.append(float(payoff0))
    tree.stake.append(float(stake))
    tree.chance.append(chance)
    tree.last.append(last)
    tree.term_history.append(hist)
    return (TERMINAL, t)
