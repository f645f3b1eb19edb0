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

Building (:func:`build_public_tree`). A street's betting depends only on the chips both
players matched before it (``m``) and, where OOP has donk sizes, on whether OOP called the
street before; not on the board. So each street's betting is built once per (street, m,
called) as a small template (:class:`_Template`: its decision nodes and the events a walk
meets, in order), the whole tree is counted from the templates and the board tree (each
distinct subtree once, :class:`_Counter`), and a numba walk (:func:`_expand`) writes the
tree's arrays in depth-first order (parents first; a node's children in action order). The
count comes first and refuses a tree above the memory budget before anything is allocated.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import permutations

import numba as nb
import numpy as np

from ..errors import InputError
from .cards import HAND_CARDS, HAND_INDEX, card_name
from .sizes import StreetSizes, street_actions

STREETS = ("flop", "turn", "river")
DECISION, CHANCE, TERMINAL = 0, 1, 2
FOLD, SHOWDOWN = 0, 1  # PublicTree.kinds
KIND_NAMES = ("fold", "showdown")
_DEC_EV, _FOLD_EV, _END_EV = 0, 1, 2  # template events


@dataclass
class TreeConfig:
    """Everything the betting depends on. ``sizes[street][p]`` is player p's :class:`StreetSizes`
    (street 0 = the starting street); ``raise_cap`` is the most raises after the opening bet
    on a street (None: until all-in); ``merging_threshold``: :func:`.sizes.merge_close`."""

    pot: int
    stack: int
    sizes: list[tuple[StreetSizes, StreetSizes]]
    add_allin_threshold: float = 1.5
    force_allin_threshold: float = 0.15
    raise_cap: int | None = None
    merging_threshold: float = 0.0


@dataclass
class Budget:
    """Refuse a tree while counting it: its cost is ``fixed + weights . (decision nodes, chance
    nodes, terminals, actions0, actions1)`` bytes (actions_p: the sum of player p's decision
    nodes' action counts); above ``limit`` the build stops with one line naming ``name`` (the
    spot) and ``limit_name``."""

    limit: int
    fixed: int
    weights: tuple[int, int, int, int, int]
    name: str
    limit_name: str

    def cost(self, counts) -> int:
        return self.fixed + sum(w * x for w, x in zip(self.weights, counts))


class RowView(Sequence):
    """A read-only sequence whose item i is ``get(i)``, made on demand (a flop tree has
    hundreds of thousands of nodes; their Python objects are not kept)."""

    def __init__(self, n: int, get):
        self._n, self._get = n, get

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._get(j) for j in range(*i.indices(self._n))]
        if not -self._n <= i < self._n:
            raise IndexError(i)
        return self._get(int(i) % self._n)


class PublicTree:
    """Decision nodes, chance nodes and terminals of a postflop subgame, in depth-first order.

    A child is ``(DECISION, v)``, ``(CHANCE, c)`` or ``(TERMINAL, t)``. Decision node v:
    ``actor``, ``board`` (board id), ``contrib`` (float[n, 2]), ``actions`` (labels: ``f``,
    ``x``, ``c``, ``bN`` = bet/raise to N chips this street), ``children``, ``history`` and
    ``node_last[v][p]`` (p's last (node, action) before v, or None), ``node_chance`` (the
    chance weight of v's runout, as ``chance`` of a terminal). Chance node c:
    ``chance_board``, ``chance_cards`` (dealt card of each child), ``chance_children``,
    ``chance_history``. Terminal t: ``kind`` (``"fold"``/``"showdown"``), ``term_board``,
    ``payoff0`` (fold), ``stake`` (showdown), ``chance`` (see module doc), ``last[t][p]`` and
    ``term_history``. ``boards[b]`` is a tuple of card ids; ``histories`` use ``-`` between
    actions and ``/card/`` between streets.

    Storage: ``actor``, ``board``, ``contrib``, ``node_chance``, ``chance_board``,
    ``term_board``, ``payoff0``, ``stake`` and ``chance`` are NumPy arrays; the others are
    :class:`RowView` s over the arrays below, indexed as lists of the same items:
    ``n_actions[v]``; ``child_ptr`` (CSR over decision nodes) with ``child_kind``/``child_id``;
    ``last_node[v, p]``/``last_act[v, p]`` (-1: none); ``kinds[t]`` (:data:`FOLD`,
    :data:`SHOWDOWN`); ``term_last_node``/``term_last_act``; ``chance_ptr`` with
    ``chance_child_kind``/``chance_child_id``; per board ``deal_ptr`` into ``deal_card``
    (one card per orbit), ``deal_size`` (orbit size), ``deal_child`` (the board it makes);
    each node's edge from its parent ``*_up_kind`` (-1 root, DECISION, CHANCE), ``*_up_id``,
    ``*_up_idx`` (action or card index), for ``node``, ``chance`` and ``term``.
    """

    def __init__(self, config, deck, boards, symmetries, n_start, deals, arrays, labels):
        self.config, self.deck, self.boards = config, tuple(deck), boards
        self.symmetries, self.n_start = symmetries, n_start
        self._board_ids = {cards: b for b, cards in enumerate(boards)}
        self.deal_ptr, self.deal_card, self.deal_size, self.deal_child, self.n_left = deals
        self.__dict__.update(arrays)
        self._labels = labels
        n, nc, nt = len(self.actor), len(self.chance_board), len(self.kinds)
        self.actions = RowView(n, lambda v: labels[self.label_id[v]])
        self.children = RowView(n, lambda v: [
            (int(k), int(i)) for k, i in zip(self.child_kind[self.child_ptr[v]:self.child_ptr[v + 1]],
                                              self.child_id[self.child_ptr[v]:self.child_ptr[v + 1]])])
        self.node_last = RowView(n, lambda v: _pair(self.last_node[v], self.last_act[v]))
        self.last = RowView(nt, lambda t: _pair(self.term_last_node[t], self.term_last_act[t]))
        self.kind = RowView(nt, lambda t: KIND_NAMES[self.kinds[t]])
        self.chance_cards = RowView(nc, lambda c: self.deal_card[self.deal_ptr[self.chance_board[c]]:
                                                                 self.deal_ptr[self.chance_board[c] + 1]].tolist())
        self.chance_children = RowView(nc, lambda c: [
            (int(k), int(i)) for k, i in zip(self.chance_child_kind[self.chance_ptr[c]:self.chance_ptr[c + 1]],
                                              self.chance_child_id[self.chance_ptr[c]:self.chance_ptr[c + 1]])])
        self.history = RowView(n, lambda v: self._history(DECISION, v))
        self.chance_history = RowView(nc, lambda c: self._history(CHANCE, c))
        self.term_history = RowView(nt, lambda t: self._history(TERMINAL, t))

    @property
    def n_nodes(self) -> int:
        return len(self.actor)

    @property
    def n_terminals(self) -> int:
        return len(self.kinds)

    @property
    def n_chance(self) -> int:
        return len(self.chance_board)

    def nodes_of(self, player: int) -> np.ndarray:
        return np.flatnonzero(self.actor == player)

    def stabilizer(self, b: int) -> list[tuple[int, ...]]:
        """The symmetries that fix every card dealt since the start on board ``b``."""
        return _stabilizer(self.symmetries, self.boards[b][self.n_start:])

    def _history(self, kind: int, i: int) -> str:
        """The labels on the path from the root: ``-`` between actions, ``/card/`` at a deal."""
        up = {DECISION: (self.node_up_kind, self.node_up_id, self.node_up_idx),
              CHANCE: (self.chance_up_kind, self.chance_up_id, self.chance_up_idx),
              TERMINAL: (self.term_up_kind, self.term_up_id, self.term_up_idx)}
        edges = []
        while True:
            k, j, a = (int(x[i]) for x in up[kind])
            if k < 0:
                break
            edges.append((k, j, a))
            kind, i = k, j
        h = ""
        for k, j, a in reversed(edges):
            if k == DECISION:
                h += ("-" if h and not h.endswith("/") else "") + self.actions[j][a]
            else:
                b = self.chance_board[j]
                h += f"/{card_name(int(self.deal_card[self.deal_ptr[b] + a]))}/"
        return h


def _pair(node, act) -> tuple:
    return tuple(None if node[p] < 0 else (int(node[p]), int(act[p])) for p in (0, 1))


def permute_card(c: int, perm: tuple[int, ...]) -> int:
    """The card of the same rank with suit ``perm[suit]``."""
    return 4 * (c // 4) + perm[c % 4]


def _stabilizer(symmetries, dealt) -> list[tuple[int, ...]]:
    return [s for s in symmetries if all(permute_card(c, s) == c for c in dealt)]


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


# ------------------------------------------------------------------ boards


def _board_tree(board, deck, symmetries, n_start):
    """Every board the tree deals, depth-first (the order a walk of the tree first meets them),
    and per board its deal: one card per orbit of the cards left under the symmetries fixing
    the cards dealt since the start (the orbit's smallest card), the orbit's size, the board
    it makes. Returns (boards, (deal_ptr, deal_card, deal_size, deal_child, n_left))."""
    deck_arr = np.array(deck, dtype=np.int64)
    images = np.array([[permute_card(c, s) for c in range(52)] for s in symmetries], dtype=np.int64)
    boards, rows = [], []

    def visit(cards):
        b = len(boards)
        boards.append(cards)
        rows.append(None)
        if len(cards) == 5:
            rows[b] = (np.zeros(0, np.int64), np.zeros(0, np.int64), [], len(deck) - 5)
            return b
        left = deck_arr[~np.isin(deck_arr, cards)]
        dealt = cards[n_start:]
        stab = [i for i, s in enumerate(symmetries) if all(permute_card(c, s) == c for c in dealt)]
        orbit = images[stab][:, left].min(axis=0)
        reps, size = np.unique(orbit, return_counts=True)  # left is sorted: reps in deck order
        kids = [visit(cards + (int(k),)) for k in reps]
        rows[b] = (reps, size, kids, len(left))
        return b

    visit(tuple(board))
    ptr = np.zeros(len(boards) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(r[0]) for r in rows])
    cat = (lambda xs: np.concatenate(xs).astype(np.int64) if xs else np.zeros(0, np.int64))
    deals = (ptr, cat([r[0] for r in rows]), cat([r[1] for r in rows]), cat([np.array(r[2], dtype=np.int64)
                                                                                for r in rows]),
             np.array([r[3] for r in rows], dtype=np.int64))
    return boards, deals


# ------------------------------------------------------------------ street templates


class _Template:
    """One street's betting from its start, for chips ``m`` matched before it (``called``: OOP
    called the street before; it matters only where OOP has donk sizes). Decision nodes
    0, 1, ... in depth-first order; ``events`` in the order a walk meets them: a decision
    node (``_DEC_EV``), a fold (``_FOLD_EV``: action a of node j) or the end of the street
    (``_END_EV``: a call or check-check, then (m', all-in, OOP called) for the next street).
    ``last[j][p]`` (and an event's) is p's last (node, action) on this street, or (-1, -1):
    the last before the street."""

    def __init__(self, cfg: TreeConfig, depth: int, street: int, m: int, called: bool, limit: float):
        self.depth = depth
        self.actor, self.bet0, self.bet1, self.labels, self.last, self.parent = [], [], [], [], [], []
        self.events = []  # (type, j, a, m', allin', called', last0_j, last0_a, last1_j, last1_a)
        max_to = cfg.stack - m
        sizes = cfg.sizes[depth]
        none = (-1, -1)
        # a node to make: (actor, bets, last action, raises, all-in, oop called, (last0, last1), parent (j, a))
        todo = [("node", 0, (0, 0), "chance" if depth > 0 else "none", 0, False, (none, none), none)]
        while todo:
            item = todo.pop()
            if item[0] != "node":
                self.events.append(item[1])
                continue
            _, actor, bets, st_last, raises, allin, last, parent = item
            j = len(self.actor)
            if j >= limit:
                raise _TooBig(j)
            self.actor.append(actor)
            self.bet0.append(bets[0])
            self.bet1.append(bets[1])
            self.last.append(last)
            self.parent.append(parent)
            self.events.append((_DEC_EV, j, -1, 0, False, False, *last[0], *last[1]))
            opp = bets[1 - actor]
            to_call = opp - bets[actor]
            pot = cfg.pot + 2 * (m + opp)  # after calling
            acts: list[tuple[str, str, int]] = []
            if to_call > 0:
                acts += [("f", "fold", 0), ("c", "call", opp)]
                if not allin and (cfg.raise_cap is None or raises < cfg.raise_cap):
                    min_to = min(max(opp + to_call, 1), max_to)
                    for amt in street_actions(sizes[actor].raise_, True, pot, to_call, opp, max_to, min_to, 3 - street,
                                              cfg.add_allin_threshold, cfg.force_allin_threshold, True,
                                              cfg.merging_threshold):
                        acts.append((f"b{amt}", "raise", amt))
            else:
                acts.append(("x", "check", 0))
                s = sizes[actor]
                use = s.donk if (s.donk is not None and st_last == "chance" and called and actor == 0) else s.bet
                for amt in street_actions(use, False, pot, 0, 0, max_to, min(1, max_to), 3 - street,
                                          cfg.add_allin_threshold, cfg.force_allin_threshold, True,
                                          cfg.merging_threshold):
                    acts.append((f"b{amt}", "bet", amt))
            self.labels.append(tuple(a for a, _, _ in acts))
            kids = []
            for a, (_, what, amt) in enumerate(acts):
                new_last = tuple((j, a) if q == actor else last[q] for q in (0, 1))
                flat_last = (*new_last[0], *new_last[1])
                if what == "fold":
                    kids.append(("event", (_FOLD_EV, j, a, 0, False, False, *flat_last)))
                elif what == "check" and actor == 0:
                    kids.append(("node", 1, bets, "check", raises, allin, new_last, (j, a)))
                elif what in ("check", "call"):
                    kids.append(("event", (_END_EV, j, a, m + opp, allin or (what == "call" and opp == max_to),
                                           what == "call" and actor == 0, *flat_last)))
                else:
                    nbets = (amt, bets[1]) if actor == 0 else (bets[0], amt)
                    kids.append(("node", 1 - actor, nbets, "bet", raises + (what == "raise"), allin or amt == max_to,
                                 new_last, (j, a)))
            todo.extend(reversed(kids))
        self.k = [len(x) for x in self.labels]
        self.actions = [sum(k for k, p in zip(self.k, self.actor) if p == q) for q in (0, 1)]
        self.folds = sum(1 for e in self.events if e[0] == _FOLD_EV)
        self.ends = Counter(e[3:6] for e in self.events if e[0] == _END_EV)  # (m', all-in, called) -> count


class _TooBig(Exception):
    """A template passed the node limit while being built."""


class _Counter:
    """The tree's size, counted from the templates and the board tree, each distinct subtree
    once (a subtree is fixed by its template or all-in runout and its board). ``spent``
    counts, in the order a depth-first walk meets them, the decision nodes, chance nodes,
    terminals and each player's actions met so far; the count stops with :class:`InputError`
    once their cost passes the budget."""

    def __init__(self, cfg, n_start, boards, deals, budget: Budget | None):
        self.cfg, self.n_start, self.boards, self.budget = cfg, n_start, boards, budget
        self.deal_ptr, self.deal_child = deals[0], deals[3]
        self.templates: dict[tuple, int] = {}  # key -> template id
        self.list: list[_Template] = []
        self.memo: dict[tuple, np.ndarray] = {}
        self.spent = (0,) * 6  # and the children of chance nodes

    def template(self, depth: int, m: int, called: bool) -> int:
        cfg = self.cfg
        street = self.n_start - 3 + depth
        called = called and depth > 0 and cfg.sizes[depth][0].donk is not None  # matters only for donk sizes
        key = (depth, m, called)
        tid = self.templates.get(key)
        if tid is None:
            limit = float("inf")
            if self.budget is not None:  # one node costs at least its public bytes
                limit = self.budget.limit / max(self.budget.weights[0], 1)
            try:
                tpl = _Template(cfg, depth, street, m, called, limit)
            except _TooBig as e:
                self._refuse((int(e.args[0]), 0, 0, 0, 0, 0))
            tid = self.templates[key] = len(self.list)
            self.list.append(tpl)
        return tid

    def add(self, counts: tuple, times: int = 1) -> None:
        self.spent = tuple(x + y * times for x, y in zip(self.spent, counts))
        if self.budget is not None and self.budget.cost(self.spent) > self.budget.limit:
            self._refuse(self.spent)

    def _refuse(self, spent):
        bud = self.budget
        from ..core.memory import show

        raise InputError(f"{bud.name}: the betting tree passed {sum(spent[:3]):,} public nodes "
                         f"({spent[0]:,} decision nodes) while being counted, about "
                         f"{show(bud.cost(spent))} at least, above {bud.limit_name} ({show(bud.limit)})")

    def street(self, tid: int, b: int) -> tuple:
        """Counts of a street template's subtree on board b; adds the occurrence to ``spent``."""
        tpl = self.list[tid]
        river = len(self.boards[b]) == 5
        key = ("t", tid, -1 if river else b)
        got = self.memo.get(key)
        if got is not None:
            self.add(got)
            return got
        own = (len(tpl.actor), 0, tpl.folds, *tpl.actions, 0)
        self.add(own)
        total = own
        depth = len(self.boards[b]) - self.n_start
        for (m, allin, called), times in tpl.ends.items():
            sub = self.end(depth, m, allin, called, b)
            self.add(sub, times - 1)
            total = tuple(x + y * times for x, y in zip(total, sub))
        self.memo[key] = total
        return total

    def end(self, depth: int, m: int, allin: bool, called: bool, b: int) -> tuple:
        """Counts after a street ends on board b: a showdown on the river, else a deal."""
        if len(self.boards[b]) == 5:
            self.add(_SHOWDOWN)
            return _SHOWDOWN
        key = ("a", b) if allin else ("e", depth, m, called, b)
        got = self.memo.get(key)
        if got is not None:
            self.add(got)
            return got
        kids = self.deal_child[self.deal_ptr[b]:self.deal_ptr[b + 1]].tolist()
        total = (0, 1, 0, 0, 0, len(kids))
        self.add(total)
        tid = -1 if allin else self.template(depth + 1, m, called)
        for child in kids:
            sub = self.end(depth + 1, m, True, False, child) if allin else self.street(tid, child)
            total = tuple(x + y for x, y in zip(total, sub))
        self.memo[key] = total
        return total


_SHOWDOWN = (0, 0, 1, 0, 0, 0)


def build_public_tree(config: TreeConfig, board: tuple[int, ...], deck: tuple[int, ...],
                      symmetries: list[tuple[int, ...]] | None = None, budget: Budget | None = None) -> PublicTree:
    """The public tree of a subgame starting on ``board`` (3, 4 or 5 cards), dealing from ``deck``.

    ``symmetries``: suit permutations (``perm[suit]`` = image) that fix the board and the
    ranges (:func:`card_symmetries`). A chance node then deals one card per orbit of the cards
    under the permutations that fix every card dealt so far (the smallest card of the orbit
    stands for it), and the orbit's size multiplies its chance weight. ``budget``: refuse,
    while counting and before allocating, a tree that costs more (:class:`Budget`).
    """
    if not (config.pot > 0 and config.stack > 0):
        raise InputError(f"postflop: pot and stack must be positive chips, got pot={config.pot}, stack={config.stack}")
    symmetries = list(symmetries or [tuple(range(4))])
    n_start = len(board)
    boards, deals = _board_tree(tuple(board), deck, symmetries, n_start)
    counter = _Counter(config, n_start, boards, deals, budget)
    root = counter.template(0, 0, False)
    counts = counter.street(root, 0)
    tpls = counter.list
    for tpl in list(tpls):  # the next street's template after each END event (-1: all-in, or the river)
        tpl.next = [counter.template(tpl.depth + 1, e[3], e[5])
                    if e[0] == _END_EV and not e[4] and n_start + tpl.depth < 5 else -1 for e in tpl.events]
    label_ids: dict[tuple, int] = {}
    for tpl in tpls:
        tpl.label_id = [label_ids.setdefault(x, len(label_ids)) for x in tpl.labels]
    cat = (lambda xs: np.concatenate([np.asarray(x, dtype=np.int64) for x in xs]))
    t_node = np.concatenate(([0], np.cumsum([len(t.actor) for t in tpls]))).astype(np.int64)
    t_ev = np.concatenate(([0], np.cumsum([len(t.events) for t in tpls]))).astype(np.int64)
    n_bets = np.stack([cat([t.bet0 for t in tpls]), cat([t.bet1 for t in tpls])], axis=1)
    n_last = cat([[(*l0, *l1) for l0, l1 in t.last] for t in tpls]).reshape(-1, 4)
    n_parent = cat([t.parent for t in tpls]).reshape(-1, 2)
    events = cat([[tuple(int(x) for x in e) for e in t.events] for t in tpls]).reshape(-1, 10)
    arrays = _tree_arrays(*(int(x) for x in (*counts[:3], counts[5])))
    max_nodes = int(max(len(t.actor) for t in tpls))
    _expand(t_node, t_ev, cat([t.actor for t in tpls]), n_bets, cat([t.k for t in tpls]),
            cat([t.label_id for t in tpls]), n_last, n_parent, events, cat([t.next for t in tpls]),
            deals[0], deals[3], deals[2], deals[4], np.array([len(b) for b in boards], dtype=np.int64),
            float(config.pot) / 2, tuple(arrays.values()), _walk_stack(max_nodes))
    _child_links(arrays)
    return PublicTree(config, deck, boards, symmetries, n_start, deals, arrays, list(label_ids))


def _tree_arrays(D: int, C: int, T: int, K: int) -> dict:
    """The arrays :func:`_expand` writes, in its order, for ``D`` decision nodes, ``C`` chance
    nodes, ``T`` terminals and ``K`` children of chance nodes. Allocated here, so that the
    kernel allocates and returns nothing: its first compile with numba's allocation helpers
    took 3.5-4.6 s of CPU time, 1.8-2.4 s without them (the README's postflop spot)."""
    e, z = np.empty, np.zeros
    return {"actor": e(D, np.int8), "board": e(D, np.int32), "contrib": e((D, 2)), "n_actions": e(D, np.int32),
            "label_id": e(D, np.int32), "node_chance": e(D), "child_ptr": z(D + 1, np.int64),
            "last_node": e((D, 2), np.int64), "last_act": e((D, 2), np.int32), "node_up_kind": e(D, np.int8),
            "node_up_id": e(D, np.int64), "node_up_idx": e(D, np.int32), "chance_board": e(C, np.int32),
            "chance_ptr": z(C + 1, np.int64), "chance_child_kind": e(K, np.int8), "chance_child_id": e(K, np.int64),
            "chance_up_kind": e(C, np.int8), "chance_up_id": e(C, np.int64), "chance_up_idx": e(C, np.int32),
            "kinds": e(T, np.int8), "term_board": e(T, np.int32), "payoff0": z(T), "stake": z(T), "chance": e(T),
            "term_last_node": e((T, 2), np.int64), "term_last_act": e((T, 2), np.int32),
            "term_up_kind": e(T, np.int8), "term_up_id": e(T, np.int64), "term_up_idx": e(T, np.int32)}


def _walk_stack(max_nodes: int) -> tuple:
    """:func:`_expand`'s stack: ``fr_type`` (0 template instance, 1 chance node), ``fr_i``,
    ``fr_w``, ``ent`` per frame (16: a template and a deal per street, all-in deals), ``gid``
    per street depth, and one (node, action) pair per player ``lst``."""
    S = 16
    return (np.zeros(S, np.int64), np.zeros((S, 8), np.int64), np.zeros(S), np.full((S, 4), -1, np.int64),
            np.zeros((4, max_nodes), np.int64), np.empty(4, np.int64))


def _child_links(a: dict) -> None:
    """``child_kind``/``child_id`` of the decision nodes' children (CSR by ``child_ptr``), from
    each node's edge up to its parent."""
    a["child_kind"] = np.empty(a["child_ptr"][-1], np.int8)
    a["child_id"] = np.empty(a["child_ptr"][-1], np.int64)
    for kind, name in ((DECISION, "node"), (CHANCE, "chance"), (TERMINAL, "term")):
        i = np.flatnonzero(a[f"{name}_up_kind"] == 0)
        slot = a["child_ptr"][a[f"{name}_up_id"][i]] + a[f"{name}_up_idx"][i]
        a["child_kind"][slot], a["child_id"][slot] = kind, i


@nb.njit(cache=True)
def _expand(t_node, t_ev, n_actor, n_bets, n_k, n_label, n_last, n_parent, events, ev_next, deal_ptr, deal_child,
            deal_size, n_left, board_len, half, out, work):
    """Walk the tree depth-first from the root template on board 0 and write its arrays
    ``out`` (:func:`_tree_arrays`, as counted). The stack holds template instances (``fr_i``:
    template, board, m, next event, street depth, the edge from the parent; ``ent``: the last
    (node, action) of each player before the street; ``gid[depth]`` maps the instance's local
    nodes to the tree's) and chance nodes (chance id, board, next card, m, all-in, next
    template, depth; ``ent``: the last actions after the street)."""
    (actor, board, contrib, k_of, label, node_chance, child_ptr, last_node, last_act, up_kind, up_id, up_idx,
     chance_board, chance_ptr, cc_kind, cc_id, c_up_kind, c_up_id, c_up_idx, kinds, term_board, payoff0, stake,
     chance, t_last_node, t_last_act, t_up_kind, t_up_id, t_up_idx) = out
    fr_type, fr_i, fr_w, ent, gid, lst = work
    nd = nc = nt = 0
    fr_i[0, 5] = -1  # the root: no parent edge
    fr_i[0, 6] = -1
    fr_i[0, 7] = -1
    fr_w[0] = 1.0
    sp = 1
    while sp > 0:
        f = sp - 1
        if fr_type[f] == 0:
            tid, b, m, pos, dep = fr_i[f, 0], fr_i[f, 1], fr_i[f, 2], fr_i[f, 3], fr_i[f, 4]
            if pos == t_ev[tid + 1] - t_ev[tid]:
                sp -= 1
                continue
            fr_i[f, 3] = pos + 1
            e = t_ev[tid] + pos
            typ, j, a = events[e, 0], events[e, 1], events[e, 2]
            g = t_node[tid] + j
            if typ == 0:  # a decision node
                v = nd
                nd += 1
                gid[dep, j] = v
                actor[v] = n_actor[g]
                board[v] = b
                contrib[v, 0] = half + m + n_bets[g, 0]
                contrib[v, 1] = half + m + n_bets[g, 1]
                k_of[v] = n_k[g]
                label[v] = n_label[g]
                node_chance[v] = fr_w[f]
                for p in range(2):
                    lj = n_last[g, 2 * p]
                    last_node[v, p] = ent[f, 2 * p] if lj < 0 else gid[dep, lj]
                    last_act[v, p] = ent[f, 2 * p + 1] if lj < 0 else n_last[g, 2 * p + 1]
                pj = n_parent[g, 0]
                if pj < 0:
                    up_kind[v], up_id[v], up_idx[v] = fr_i[f, 5], fr_i[f, 6], fr_i[f, 7]
                else:
                    up_kind[v], up_id[v], up_idx[v] = 0, gid[dep, pj], n_parent[g, 1]
                child_ptr[v + 1] = child_ptr[v] + n_k[g]
                continue
            u = gid[dep, j]
            for p in range(2):
                lj = events[e, 6 + 2 * p]
                lst[2 * p] = ent[f, 2 * p] if lj < 0 else gid[dep, lj]
                lst[2 * p + 1] = ent[f, 2 * p + 1] if lj < 0 else events[e, 7 + 2 * p]
            if typ == 1 or board_len[b] == 5:  # a fold, or a showdown on the river
                t = nt
                nt += 1
                kinds[t] = 0 if typ == 1 else 1
                term_board[t] = b
                if typ == 1:
                    payoff0[t] = -(half + m + n_bets[g, 0]) if n_actor[g] == 0 else half + m + n_bets[g, 1]
                else:
                    stake[t] = half + events[e, 3]
                chance[t] = fr_w[f]
                for q in range(2):
                    t_last_node[t, q] = lst[2 * q]
                    t_last_act[t, q] = lst[2 * q + 1]
                t_up_kind[t], t_up_id[t], t_up_idx[t] = 0, u, a
                continue
            c = nc  # the street ends before the river: a deal
            nc += 1
            chance_board[c] = b
            chance_ptr[c + 1] = chance_ptr[c] + deal_ptr[b + 1] - deal_ptr[b]
            c_up_kind[c], c_up_id[c], c_up_idx[c] = 0, u, a
            h = sp
            sp += 1
            fr_type[h] = 1
            fr_i[h, 0], fr_i[h, 1], fr_i[h, 2], fr_i[h, 3] = c, b, 0, events[e, 3]
            fr_i[h, 4], fr_i[h, 5], fr_i[h, 6] = events[e, 4], ev_next[e], dep
            fr_w[h] = fr_w[f]
            for q in range(4):
                ent[h, q] = lst[q]
        else:
            c, b, i, m = fr_i[f, 0], fr_i[f, 1], fr_i[f, 2], fr_i[f, 3]
            allin, nxt, dep = fr_i[f, 4], fr_i[f, 5], fr_i[f, 6]
            if i == deal_ptr[b + 1] - deal_ptr[b]:
                sp -= 1
                continue
            fr_i[f, 2] = i + 1
            r = deal_ptr[b] + i
            nb_ = deal_child[r]
            w = fr_w[f] * deal_size[r] / (n_left[b] - 4)  # the two hands hold 4 of the cards left
            slot = chance_ptr[c] + i
            if allin == 0:  # the next street's betting
                cc_kind[slot], cc_id[slot] = 0, nd
                h = sp
                sp += 1
                fr_type[h] = 0
                fr_i[h, 0], fr_i[h, 1], fr_i[h, 2], fr_i[h, 3], fr_i[h, 4] = nxt, nb_, m, 0, dep + 1
                fr_i[h, 5], fr_i[h, 6], fr_i[h, 7] = 1, c, i
                fr_w[h] = w
                for q in range(4):
                    ent[h, q] = ent[f, q]
            elif board_len[nb_] == 5:  # an all-in runout reaches the river: showdown
                t = nt
                nt += 1
                kinds[t] = 1
                term_board[t] = nb_
                stake[t] = half + m
                chance[t] = w
                for q in range(2):
                    t_last_node[t, q] = ent[f, 2 * q]
                    t_last_act[t, q] = ent[f, 2 * q + 1]
                t_up_kind[t], t_up_id[t], t_up_idx[t] = 1, c, i
                cc_kind[slot], cc_id[slot] = 2, t
            else:  # an all-in runout: deal on
                c2 = nc
                nc += 1
                chance_board[c2] = nb_
                chance_ptr[c2 + 1] = chance_ptr[c2] + deal_ptr[nb_ + 1] - deal_ptr[nb_]
                c_up_kind[c2], c_up_id[c2], c_up_idx[c2] = 1, c, i
                cc_kind[slot], cc_id[slot] = 1, c2
                h = sp
                sp += 1
                fr_type[h] = 1
                fr_i[h, 0], fr_i[h, 1], fr_i[h, 2], fr_i[h, 3] = c2, nb_, 0, m
                fr_i[h, 4], fr_i[h, 5], fr_i[h, 6] = 1, -1, dep + 1
                fr_w[h] = w
                for q in range(4):
                    ent[h, q] = ent[f, q]
