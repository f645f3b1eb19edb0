"""No-limit flop hold'em on the public-tree engine (game ``nlfh52``): Brown, Sandholm & Amos
2018, §6.1 and appendix B, with 52 cards (or a short deck for tests).

**The game.** Player 0 is the small blind: it posts ``small_blind``, acts first before the
flop and second after it. Player 1 is the big blind: it posts ``big_blind`` and has its
option after a limp. Each player holds two hole cards from ``deck``; after the preflop round
a three-card flop is dealt, a second round is played, and a showdown compares the five cards
each player has (two hole cards and the flop). Both start with ``stack`` chips. The betting
is :mod:`.nlfh`'s, the one place it is written (its :class:`~.nlfh.PublicNode`): no limit,
the minimum bet is the big blind and a raise at least the last raise, a round ends when a
player calls (or checks) and both have acted, a called all-in is dealt to showdown. The
abstraction ``bets`` lists pot fractions (``0.5,1,a``; ``a`` is all-in; ``"0.5,1,a/1,a"``
per round): a fraction x raises to x times the pot after calling. Payoffs are player 0's
chips; mbb/g uses ``big_blind``.

**Flops.** ``flops="all"`` deals every flop. ``flops="S64"`` (``S<n>`` for any n) deals n
suit-isomorphism classes (each class is every flop a suit permutation maps onto its
representative), chosen once, deterministically, stratified by texture and rank
(:func:`stratified_classes`): the classes of all flops are split by texture (paired,
monotone, two-tone, rainbow) and each texture gets a number of classes proportional to its
number of flops (largest remainders); within a texture, classes sorted by ranks (high card
first) are taken at the midpoints of n_texture equal parts of their cumulative number of
flops. A list (``"AsKd7h,2c2d5s"``) deals the classes of the flops it names.

**The deal, exactly.** Let S be the dealt flops (a union of classes, N_S flops, from a deck
of n cards). The flop F is drawn uniformly from S *first* (hidden until the preflop round
ends), then the hole cards uniformly from the n - 3 cards left. Every compatible
(hand0, hand1, F) is then equally likely, with probability 1 / (N_S C(n-3,2) C(n-5,2)).
With S = all flops this is ordinary hold'em (hole cards first, then a uniform flop). With a
subset, a pair of hands that blocks more flops of S is rarer: the flop matters even when the
preflop round ends in a fold, so the fold's terminal is dealt over S too.

**Public tree x hands** (:mod:`.hands_game`, :mod:`.streets_operator`). Each player's hands
are the deck's C(n, 2) hands with weight 1, so the engine deals (hand0, hand1) uniformly
over the Z = C(n,2) C(n-2,2) compatible pairs, and a terminal below the flop class of F
carries the chance weight |class| Z / (N_S C(n-3,2) C(n-5,2)) (all flops: |class| / C(n-4,3));
the operator gives no weight to hands the flop blocks. A preflop fold with all flops keeps
weight 1. The tree: the preflop decision nodes (depth-first), then below each end of the
preflop round a chance node with one child per flop class: the flop round's betting (built
once per chips matched, a template, and tiled over the classes), a showdown (after a called
all-in) or a fold terminal (a subset's preflop fold).

**Suit isomorphism** (:mod:`.isomorphism`, exact): the symmetries are the suit permutations
that map the deck to itself. Preflop, a player's infosets are the hand orbits under all of
them (169 on 52 cards); below flop F, under those that map F to itself (as a set). Off with
``isomorphism=False``: every flop of S is dealt on its own.
"""

from __future__ import annotations

import math
import re
import time
from functools import cached_property, partial
from itertools import combinations

import numpy as np

from ..core.treeplex import DeferredTreeplex
from ..errors import InputError
from ..model.game import GameError
from ..model.problem import DeferredPayoff
from .cards import HAND_CARDS, card_name, flop_texture, parse_cards
from .hands_game import HandsProblem, PublicTreeGame, frequency_table
from .isomorphism import Reduction, SymmetricPayoff, hand_orbits
from .betting import ALL_IN
from .nlfh import NLFH, PublicNode, parse_bets
from .postflop import bytes_per_seq, parse_deck, BYTES_PER_PUBLIC_NODE
from .public_tree import CHANCE, DECISION, KIND_NAMES, TERMINAL, RowView, card_symmetries, permute_card
from .streets_operator import StreetsPayoff

ROOT = -1  # an up-link kind: the root
FOLD, SHOWDOWN = 0, 1
TEXTURE_ORDER = ("paired", "monotone", "two-tone", "rainbow")


def read_bets(bets) -> tuple[tuple[float, ...], ...]:
    """``"0.5,1,a"`` (``a`` or ``allin``: all-in; ``/`` between rounds) -> pot fractions per round."""
    if isinstance(bets, (list, tuple)):
        bets = ",".join(str(b) for b in bets)
    elif isinstance(bets, (int, float)) and not isinstance(bets, bool):  # bets=1 in a game name: one size
        bets = str(bets)
    if not isinstance(bets, str):
        raise InputError(f"nlfh52: bets must be pot fractions such as '0.5,1,a', got {bets!r}")
    text = "/".join(",".join("allin" if t.strip().lower() == "a" else t for t in part.split(","))
                    for part in bets.split("/"))
    return parse_bets(text)


# ------------------------------------------------------------------ flops


def flop_orbits(deck, symmetries) -> list[tuple[tuple[int, ...], list[tuple[int, ...]]]]:
    """[(representative, its flops)]: the 3-card subsets of ``deck`` by orbit under the suit
    permutations ``symmetries``; a representative is its orbit's smallest flop (cards high
    first, compared as tuples), orbits in order of representative."""
    images = np.array([[permute_card(c, s) for c in range(52)] for s in symmetries], dtype=np.int64)
    flops = np.array(list(combinations(sorted(deck, reverse=True), 3)), dtype=np.int64)
    if len(flops) == 0:
        return []
    imgs = -np.sort(-images[:, flops], axis=2)  # [perm, flop, 3], high first
    key = imgs[..., 0] * 2704 + imgs[..., 1] * 52 + imgs[..., 2]
    rep_key = key.min(axis=0)
    out: dict[int, list] = {}
    for k, f in zip(rep_key.tolist(), flops.tolist()):
        out.setdefault(k, []).append(tuple(f))
    return [((k // 2704, k // 52 % 52, k % 52), sorted(out[k], reverse=True)) for k in sorted(out)]


def stratified_classes(classes, n: int):
    """``n`` of ``classes`` (:func:`flop_orbits` under every suit permutation of the deck),
    stratified by texture and rank: the module docstring's rule. Deterministic."""
    if not 1 <= n <= len(classes):
        raise InputError(f"nlfh52: flops=S{n}: this deck has {len(classes)} flop classes; choose S1 to "
                         f"S{len(classes)} or all")
    by_tex = {t: [] for t in TEXTURE_ORDER}
    for rep, members in classes:
        by_tex[flop_texture(rep)].append((rep, members))
    weight = {t: sum(len(m) for _, m in cs) for t, cs in by_tex.items()}
    total = sum(weight.values())
    quota = {t: n * weight[t] / total for t in TEXTURE_ORDER}
    take = {t: min(int(quota[t]), len(by_tex[t])) for t in TEXTURE_ORDER}
    for t in sorted(TEXTURE_ORDER, key=lambda t: (-(quota[t] - int(quota[t])), TEXTURE_ORDER.index(t))):
        if sum(take.values()) < n and take[t] < len(by_tex[t]):
            take[t] += 1
    while sum(take.values()) < n:  # a texture ran out of classes: fill from the others in order
        t = next(t for t in TEXTURE_ORDER if take[t] < len(by_tex[t]))
        take[t] += 1
    chosen = []
    for t in TEXTURE_ORDER:
        cs = sorted(by_tex[t], key=lambda c: tuple(-(x // 4) for x in c[0]) + c[0])
        if take[t] == 0:
            continue
        cum = np.cumsum([len(m) for _, m in cs])
        picked: list[int] = []
        for i in range(take[t]):
            j = int(np.searchsorted(cum, (i + 0.5) * cum[-1] / take[t], side="left"))
            while j in picked:  # a heavy class spans two midpoints: the next one
                j = (j + 1) % len(cs)
            picked.append(j)
        chosen.extend(cs[j] for j in sorted(picked))
    return sorted(chosen)


def read_flops(flops, deck, where: str = "nlfh52: flops"):
    """The dealt classes (under every suit permutation of ``deck``): ``"all"``, ``"S<n>"`` or
    a list of flops (text ``"AsKd7h,2c2d5s"`` or a list of texts)."""
    full = card_symmetries((), deck, [np.ones(len(HAND_CARDS))])
    classes = flop_orbits(deck, full)
    if isinstance(flops, str) and flops.strip().lower() == "all":
        return classes, "all"
    if isinstance(flops, str) and re.fullmatch(r"\s*[sS]\d+\s*", flops):
        n = int(flops.strip()[1:])
        return stratified_classes(classes, n), f"S{n}"
    items = flops.split(",") if isinstance(flops, str) else flops
    if not isinstance(items, (list, tuple)) or not items:
        raise InputError(f"{where}: expected all, S<n> (e.g. S64) or flops such as 'AsKd7h,2c2d5s', got {flops!r}")
    class_of = {f: i for i, (_, members) in enumerate(classes) for f in members}
    picked, given = [], []
    for item in items:
        cards = parse_cards(str(item).strip(), where)
        if len(cards) != 3:
            raise InputError(f"{where}: {item!r} is not a 3-card flop")
        off = [card_name(c) for c in cards if c not in deck]
        if off:
            raise InputError(f"{where}: card {off[0]} of {item!r} is not in the deck")
        flop = tuple(sorted(cards, reverse=True))
        i = class_of[flop]
        if i in picked:
            raise InputError(f"{where}: {item!r} is in the same suit-isomorphism class as an earlier flop")
        picked.append(i)
        given.append((flop, classes[i][1]))  # the flop given stands for its class
    return sorted(given), ",".join(flop_text(f) for f, _ in sorted(given))


def flop_text(flop) -> str:
    return "".join(card_name(c) for c in flop)


def setwise_stabilizer(symmetries, cards) -> list[tuple[int, ...]]:
    """The permutations of ``symmetries`` that map the set ``cards`` onto itself."""
    s = set(cards)
    return [p for p in symmetries if {permute_card(c, p) for c in cards} == s]


# ------------------------------------------------------------------ betting rounds


class _Round:
    """One betting round walked from ``start`` (a :class:`~.nlfh.PublicNode`), depth first:
    decision nodes 0, 1, ... (``actor``, ``k``, ``labels``, ``contrib``, ``up`` = (node,
    action) above or (-1, -1), ``last`` = each player's last (node, action) in this round or
    (-1, -1)) and its ends in the same walk (``ends``: (node, up, last0, last1) with
    ``node.kind`` fold, showdown or deal)."""

    def __init__(self, start: PublicNode):
        self.actor, self.k, self.labels, self.contrib, self.up, self.last = [], [], [], [], [], []
        self.ends = []
        none = (-1, -1)
        stack = [(start, none, (none, none))]
        while stack:
            node, up, last = stack.pop()
            if node.kind != "decision":
                self.ends.append((node, up, *last))
                continue
            j = len(self.actor)
            acts = node.actions
            self.actor.append(node.to_act)
            self.k.append(len(acts))
            self.labels.append(tuple(acts))
            self.contrib.append(node.contrib)
            self.up.append(up)
            self.last.append(last)
            for a in range(len(acts) - 1, -1, -1):
                nl = list(last)
                nl[node.to_act] = (j, a)
                stack.append((node.child(acts[a]), (j, a), tuple(nl)))

    def player_actions(self, p: int) -> int:
        return sum(k for a, k in zip(self.actor, self.k) if a == p)


class _FlopTemplate:
    """The flop round for chips ``c`` in each (a :class:`_Round` from the deal's next node),
    as arrays to tile over the flop classes: decision nodes and terminals (fold or showdown)."""

    def __init__(self, start: PublicNode):
        r = _Round(start)
        self.n = len(r.actor)
        self.actor = np.array(r.actor, dtype=np.int8)
        self.k = np.array(r.k, dtype=np.int32)
        self.labels = r.labels
        self.contrib = np.array(r.contrib, dtype=np.float64).reshape(-1, 2)
        self.up = np.array(r.up, dtype=np.int64).reshape(-1, 2)
        self.last = np.array([[*l0, *l1] for l0, l1 in r.last], dtype=np.int64).reshape(-1, 4)
        self.t_kind = np.array([FOLD if e[0].kind == "fold" else SHOWDOWN for e in r.ends], dtype=np.int8)
        self.t_payoff = np.array([_fold_payoff(e[0]) if e[0].kind == "fold" else 0.0 for e in r.ends])
        self.t_stake = np.array([float(e[0].contrib[0]) if e[0].kind == "showdown" else 0.0 for e in r.ends])
        self.t_up = np.array([e[1] for e in r.ends], dtype=np.int64).reshape(-1, 2)
        self.t_last = np.array([[*e[2], *e[3]] for e in r.ends], dtype=np.int64).reshape(-1, 4)
        self.actions = (r.player_actions(0), r.player_actions(1))


def _fold_payoff(node: PublicNode) -> float:
    """Player 0's chips at a fold: it loses what the folder has in, or wins what player 1 has in."""
    return -float(node.contrib[0]) if node.folder == 0 else float(node.contrib[1])


# ------------------------------------------------------------------ the tree


class FlopTree:
    """The public tree of :class:`NLFH52` (module docstring), with the arrays the engine's
    sequence form, operator and suit reduction read: per decision node ``actor``, ``board``,
    ``contrib``, ``n_actions``, ``last_node``/``last_act`` [n, 2] (-1: none), ``node_chance``;
    per terminal ``kinds`` (0 fold, 1 showdown), ``term_board``, ``payoff0``, ``stake``,
    ``chance``, ``term_last_node``/``term_last_act``; per chance node ``chance_up``. Each node
    has its edge up (``*_up_kind``: -1 root, 0 decision, 1 chance; ``*_up_id``, ``*_up_idx``:
    action or flop-class index) for histories, made on demand: ``"c,x/AsKd7h/x,p1"``
    (preflop labels, the flop, flop labels). ``boards[0]`` is the empty board, ``boards[1 +
    i]`` the flop of class i."""

    def __init__(self, game: "NLFH52"):
        self.game = game
        self.symmetries = game.symmetries
        self.boards = [()] + [rep for rep, _ in game.classes]
        self._stabs = [list(self.symmetries)] + [setwise_stabilizer(self.symmetries, rep) for rep, _ in game.classes]
        pre, ends, templates = game.preflop, game.preflop.ends, game.templates
        C = len(game.classes)
        cw = game.class_chance
        P = len(pre.actor)
        # sizes first: decision nodes, chance nodes, terminals
        D, T, nc = P, 0, 0
        for node, *_ in ends:
            if node.kind == "deal" and not node.allin:
                D += C * templates[node.contrib[0]].n
                T += C * len(templates[node.contrib[0]].t_kind)
                nc += 1
            elif node.kind == "deal" or game.subset:
                T += C
                nc += 1
            else:
                T += 1
        self.labels = list(pre.labels)
        self.label_id = np.empty(D, np.int32)
        self.label_id[:P] = np.arange(P)
        self.actor = np.empty(D, np.int8)
        self.board = np.zeros(D, np.int32)
        self.contrib = np.empty((D, 2))
        self.n_actions = np.empty(D, np.int64)
        self.last_node = np.empty((D, 2), np.int64)
        self.last_act = np.empty((D, 2), np.int32)
        self.node_chance = np.ones(D)
        self.node_up_kind, self.node_up_id, self.node_up_idx = np.empty(D, np.int8), np.empty(D, np.int64), \
            np.empty(D, np.int32)
        self.kinds = np.empty(T, np.int8)
        self.term_board = np.zeros(T, np.int32)
        self.payoff0 = np.zeros(T)
        self.stake = np.zeros(T)
        self.chance = np.ones(T)
        self.term_last_node = np.empty((T, 2), np.int64)
        self.term_last_act = np.empty((T, 2), np.int32)
        self.term_up_kind, self.term_up_id, self.term_up_idx = np.empty(T, np.int8), np.empty(T, np.int64), \
            np.empty(T, np.int32)
        self.chance_up = np.empty((nc, 2), np.int64)
        # preflop: local ids are global
        self.actor[:P] = pre.actor
        self.n_actions[:P] = pre.k
        self.contrib[:P] = np.array(pre.contrib, dtype=np.float64).reshape(-1, 2)
        last = np.array([[*l0, *l1] for l0, l1 in pre.last], dtype=np.int64).reshape(-1, 4)
        self.last_node[:P], self.last_act[:P] = last[:, [0, 2]], last[:, [1, 3]]
        up = np.array(pre.up, dtype=np.int64).reshape(-1, 2)
        self.node_up_kind[:P] = np.where(up[:, 0] < 0, ROOT, DECISION)
        self.node_up_id[:P], self.node_up_idx[:P] = up[:, 0], up[:, 1]
        flop_boards = np.arange(1, C + 1, dtype=np.int32)
        d, t = P, 0
        label_of = {}
        c = 0
        for node, up, l0, l1 in ends:
            if node.kind == "fold" and not game.subset:
                self._terminal(t, FOLD, 0, _fold_payoff(node), 0.0, 1.0, (l0, l1), (DECISION, *up))
                t += 1
                continue
            self.chance_up[c] = up
            if node.kind == "deal" and not node.allin:
                tpl = templates[node.contrib[0]]
                ids = label_of.get(node.contrib[0])
                if ids is None:
                    ids = label_of[node.contrib[0]] = np.arange(len(self.labels), len(self.labels) + tpl.n)
                    self.labels.extend(tpl.labels)
                d, t = self._tile(tpl, ids, d, t, c, (l0, l1), flop_boards, cw)
            else:  # a called all-in (showdown) or a subset's fold, on each flop class
                kind = SHOWDOWN if node.kind == "deal" else FOLD
                sl = slice(t, t + C)
                self.kinds[sl] = kind
                self.term_board[sl] = flop_boards
                self.payoff0[sl] = _fold_payoff(node) if kind == FOLD else 0.0
                self.stake[sl] = float(node.contrib[0]) if kind == SHOWDOWN else 0.0
                self.chance[sl] = cw
                self.term_last_node[sl] = (l0[0], l1[0])
                self.term_last_act[sl] = (l0[1], l1[1])
                self.term_up_kind[sl], self.term_up_id[sl], self.term_up_idx[sl] = CHANCE, c, np.arange(C)
                t += C
            c += 1
        assert d == D and t == T and c == nc
        self._link_children()

    def _link_children(self) -> None:
        """Each node's children from their edges up, as :class:`~.public_tree.PublicTree`
        keeps them (``child_ptr``/``child_kind``/``child_id`` by action,
        ``chance_ptr``/``chance_child_kind``/``chance_child_id`` by flop class), and its views
        ``children``, ``chance_children`` and ``kind`` (what the fused engine reads)."""
        D, T, nc, C = self.n_nodes, self.n_terminals, self.n_chance, len(self.boards) - 1
        self.child_ptr = np.zeros(D + 1, np.int64)
        self.child_ptr[1:] = np.cumsum(self.n_actions)
        self.chance_ptr = C * np.arange(nc + 1, dtype=np.int64)
        self.child_kind = np.full(self.child_ptr[-1], -1, np.int8)
        self.child_id = np.full(self.child_ptr[-1], -1, np.int64)
        self.chance_child_kind = np.full(C * nc, -1, np.int8)
        self.chance_child_id = np.full(C * nc, -1, np.int64)
        ups = [(DECISION, self.node_up_kind, self.node_up_id, self.node_up_idx),
               (TERMINAL, self.term_up_kind, self.term_up_id, self.term_up_idx),
               (CHANCE, np.full(nc, DECISION, np.int8), self.chance_up[:, 0], self.chance_up[:, 1])]
        for kind, up_kind, up_id, up_idx in ups:
            for parent, ptr, kinds, ids in ((DECISION, self.child_ptr, self.child_kind, self.child_id),
                                            (CHANCE, self.chance_ptr, self.chance_child_kind, self.chance_child_id)):
                mine = np.flatnonzero(up_kind == parent)
                slot = ptr[up_id[mine]] + up_idx[mine]
                kinds[slot], ids[slot] = kind, mine
        assert (self.child_kind >= 0).all() and (self.chance_child_kind >= 0).all()
        pairs = lambda kinds, ids, a, b: [(int(k), int(i)) for k, i in zip(kinds[a:b], ids[a:b])]  # noqa: E731
        self.children = RowView(D, lambda v: pairs(self.child_kind, self.child_id, self.child_ptr[v],
                                                   self.child_ptr[v + 1]))
        self.chance_children = RowView(nc, lambda c: pairs(self.chance_child_kind, self.chance_child_id,
                                                           self.chance_ptr[c], self.chance_ptr[c + 1]))
        self.kind = RowView(T, lambda t: KIND_NAMES[self.kinds[t]])

    def _terminal(self, t, kind, board, payoff, stake, chance, last, up):
        self.kinds[t], self.term_board[t], self.payoff0[t], self.stake[t], self.chance[t] = kind, board, payoff, \
            stake, chance
        self.term_last_node[t] = (last[0][0], last[1][0])
        self.term_last_act[t] = (last[0][1], last[1][1])
        self.term_up_kind[t], self.term_up_id[t], self.term_up_idx[t] = up

    def _tile(self, tpl: _FlopTemplate, label_ids, d, t, c, entry, flop_boards, cw):
        """Write the template's nodes and terminals once per flop class below chance node c
        (node ids ``d + i * n + j``); ``entry``: each player's last (node, action) before the flop."""
        C, n, m = len(flop_boards), tpl.n, len(tpl.t_kind)
        off = d + n * np.arange(C, dtype=np.int64)[:, None]  # [C, 1]
        sl = slice(d, d + C * n)
        self.actor[sl] = np.tile(tpl.actor, C)
        self.n_actions[sl] = np.tile(tpl.k, C)
        self.label_id[sl] = np.tile(label_ids, C)
        self.contrib[sl] = np.tile(tpl.contrib, (C, 1))
        self.board[sl] = np.repeat(flop_boards, n)
        self.node_chance[sl] = np.repeat(cw, n)
        for p in (0, 1):
            lj, la = tpl.last[:, 2 * p], tpl.last[:, 2 * p + 1]
            self.last_node[sl, p] = np.where(lj[None, :] >= 0, off + lj[None, :], entry[p][0]).ravel()
            self.last_act[sl, p] = np.tile(np.where(lj >= 0, la, entry[p][1]), C)
        uj = tpl.up[:, 0]
        self.node_up_kind[sl] = np.tile(np.where(uj >= 0, DECISION, CHANCE), C)
        self.node_up_id[sl] = np.where(uj[None, :] >= 0, off + uj[None, :], c).ravel()
        self.node_up_idx[sl] = np.where(uj[None, :] >= 0, tpl.up[None, :, 1], np.arange(C)[:, None]).ravel()
        ts = slice(t, t + C * m)
        self.kinds[ts] = np.tile(tpl.t_kind, C)
        self.term_board[ts] = np.repeat(flop_boards, m)
        self.payoff0[ts] = np.tile(tpl.t_payoff, C)
        self.stake[ts] = np.tile(tpl.t_stake, C)
        self.chance[ts] = np.repeat(cw, m)
        for p in (0, 1):
            lj, la = tpl.t_last[:, 2 * p], tpl.t_last[:, 2 * p + 1]
            self.term_last_node[ts, p] = np.where(lj[None, :] >= 0, off + lj[None, :], entry[p][0]).ravel()
            self.term_last_act[ts, p] = np.tile(np.where(lj >= 0, la, entry[p][1]), C)
        self.term_up_kind[ts] = DECISION  # a flop round's terminal follows an action
        self.term_up_id[ts] = (off + tpl.t_up[None, :, 0]).ravel()
        self.term_up_idx[ts] = np.tile(tpl.t_up[:, 1], C)
        return d + C * n, t + C * m

    # ---------------------------------------------------------------- the engine's view

    @property
    def n_nodes(self) -> int:
        return len(self.actor)

    @property
    def n_terminals(self) -> int:
        return len(self.kinds)

    @property
    def n_chance(self) -> int:
        return len(self.chance_up)

    def nodes_of(self, player: int) -> np.ndarray:
        return np.flatnonzero(self.actor == player)

    @cached_property
    def line_of_node(self) -> np.ndarray:
        """int[decision nodes]: the chance node (the end of the preflop round) a flop node is
        below; -1 preflop."""
        out = np.full(self.n_nodes, -1, np.int64)
        for v in range(len(self.game.preflop.actor), self.n_nodes):  # a flop node's parent has a smaller id
            uk, ui = int(self.node_up_kind[v]), int(self.node_up_id[v])
            out[v] = ui if uk == CHANCE else out[ui]
        return out

    def stabilizer(self, b: int) -> list[tuple[int, ...]]:
        """The symmetries that map board b onto itself (all of them preflop)."""
        return self._stabs[b]

    @cached_property
    def actions(self):
        return RowView(self.n_nodes, lambda v: list(self.labels[self.label_id[v]]))

    @cached_property
    def history(self):
        return RowView(self.n_nodes, lambda v: self._history(DECISION, v))

    @cached_property
    def term_history(self):
        return RowView(self.n_terminals, lambda t: self._history(2, t))

    def _history(self, kind: int, i: int) -> str:
        """Preflop labels, then ``/flop/`` and the flop's labels: ``"c,x/AsKd7h/x,p1"``."""
        parts: list[str] = []
        if kind == 2:
            k, j, a = int(self.term_up_kind[i]), int(self.term_up_id[i]), int(self.term_up_idx[i])
        else:
            k, j, a = int(self.node_up_kind[i]), int(self.node_up_id[i]), int(self.node_up_idx[i])
        while k != ROOT:
            if k == DECISION:
                parts.append(self.labels[self.label_id[j]][a])
                k, j, a = int(self.node_up_kind[j]), int(self.node_up_id[j]), int(self.node_up_idx[j])
            else:
                parts.append("/" + flop_text(self.boards[1 + a]) + "/")
                u, ua = self.chance_up[j]
                k, j, a = DECISION, int(u), int(ua)
        out = ""
        for x in reversed(parts):
            out += x if (x.startswith("/") or not out or out.endswith("/")) else "," + x
        return out


# ------------------------------------------------------------------ the game


class NLFH52(PublicTreeGame):
    """No-limit flop hold'em on the public tree x hands engine; see the module docstring.

    ``stack`` (chips each), ``small_blind``, ``big_blind``, ``bets`` (``"0.5,1,a"``, per
    round with ``/``), ``flops`` (``"all"``, ``"S64"``/``"S<n>"`` or flops such as
    ``"AsKd7h,2c2d5s"``), ``deck`` (None: 52 cards; ``"TJQKA"``: every suit of those ranks;
    or cards), ``max_raises`` (per round; None: none), ``isomorphism`` (default True), ``off_tree``
    ({history: (pot fractions,)}: extra raises at those preflop nodes, :class:`~.nlfh.NLFH`'s;
    the depth-limited off-tree responses' real game).
    """

    payoff_unit = "chips"
    strategy_options = ("profile",)  # a fused solve's profile, read at the preflop nodes

    def __init__(self, stack: int = 5000, flops="S64", bets="0.5,1,a", small_blind: int = 50, big_blind: int = 100,
                 deck=None, max_raises: int | None = None, isomorphism: bool = True, off_tree: dict | None = None):
        for name, v in (("stack", stack), ("small_blind", small_blind), ("big_blind", big_blind)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise InputError(f"nlfh52: {name} must be a whole number of chips, got {v!r}")
        if not (0 < small_blind <= big_blind < stack):
            raise InputError(f"nlfh52: need 0 < small_blind <= big_blind < stack, got {small_blind}, {big_blind}, "
                             f"{stack}")
        if not isinstance(isomorphism, bool):
            raise InputError(f"nlfh52: isomorphism must be true or false, got {isomorphism!r}")
        self.deck = parse_deck(deck)
        n = len(self.deck)
        if n < 7:
            raise InputError(f"nlfh52: a deck of {n} cards cannot deal two hole cards each and a 3-card flop")
        self.stack, self.small_blind, self.big_blind = stack, small_blind, big_blind
        self.pot = small_blind + big_blind  # the starting pot (chips), for %pot units
        self.bets = read_bets(bets)
        self.betting = NLFH(ranks=13, suits=4, hole=2, flop=3, stack=stack, small_blind=small_blind,
                            big_blind=big_blind, bets=self.bets, max_raises=max_raises, off_tree=off_tree)
        # the dealt flop classes, under every suit permutation of the deck (the game does not
        # depend on isomorphism); with isomorphism off each flop is its own class
        classes, self.flops_name = read_flops(flops, self.deck)
        self.n_flops = sum(len(m) for _, m in classes)
        self.subset = self.n_flops < math.comb(n, 3)
        if isomorphism:
            self.symmetries = card_symmetries((), self.deck, [np.ones(len(HAND_CARDS))])
            self.classes = classes
        else:
            self.symmetries = [tuple(range(4))]
            self.classes = sorted(((f, [f]) for _, m in classes for f in m))
        self.hands = [self._deck_hands(), self._deck_hands()]
        self.weight = [np.ones(len(h)) for h in self.hands]
        pairs = math.comb(n, 2) * math.comb(n - 2, 2)  # Z: compatible (hand0, hand1)
        per_flop = pairs / (self.n_flops * math.comb(n - 3, 2) * math.comb(n - 5, 2))
        self.class_chance = np.array([len(m) * per_flop for _, m in self.classes])
        self.name = (f"nlfh52(stack={stack}, flops={self.flops_name}, bets={_bets_text(self.bets)}"
                     + (f", blinds={small_blind}/{big_blind}" if (small_blind, big_blind) != (50, 100) else "")
                     + (f", deck={deck}" if deck is not None else "")
                     + (f", max_raises={max_raises}" if max_raises is not None else "")
                     + (f", off_tree={self.betting.off_tree}" if off_tree else "")
                     + (", isomorphism=false" if not isomorphism else "") + ")")
        self._tree = None
        self._problem = None
        self._max_memory = None  # problem()'s limit (check_sequence_form_memory applies it)
        self.products_checked = False  # a caller of products alone checked its own need (check_sequence_form_memory)
        self.reduction = None

    def _deck_hands(self) -> np.ndarray:
        d = np.zeros(52, dtype=bool)
        d[list(self.deck)] = True
        return np.flatnonzero(d[HAND_CARDS[:, 0]] & d[HAND_CARDS[:, 1]])

    # ----------------------------------------------------------- betting and sizes

    @cached_property
    def preflop(self) -> _Round:
        """The preflop round (its decision nodes and its ends: folds and deals)."""
        return _Round(self.betting.root)

    @cached_property
    def templates(self) -> dict[int, _FlopTemplate]:
        """The flop round per chips each player has in at the flop (one per distinct amount)."""
        out = {}
        for node, *_ in self.preflop.ends:
            if node.kind == "deal" and not node.allin and node.contrib[0] not in out:
                out[node.contrib[0]] = _FlopTemplate(node.after_deal())
        return out

    def sizes(self, storage: str | None = None, threads: int | None = None) -> dict:
        """The game's sizes, counted without building it: public nodes (preflop; flop
        decision nodes per flop line, i.e. per end of the preflop round that goes on to flop
        betting, and per flop: over all lines), flop classes and flops, sequences per player in the full layout
        (every hand at every node), in the solver's (hand orbits) and counting only the hand
        orbits a node's flop leaves (``sequences_live_hands``), and the memory estimates of
        a CFR-family solve as :meth:`.postflop.PostflopGame.memory_estimate` makes them
        (:func:`.postflop.bytes_per_seq` per full sequence, 200 B per public node): on the
        sequence form (``memory_sequence_form_bytes``, float64 unless ``storage``), on the
        fused engine (``memory_fused_bytes``, float32 unless ``storage``) and on the path
        ``fused=None`` takes (``memory_estimate_bytes``: :meth:`fused_by_default`)."""
        import numba as nb

        c = self._counts
        threads = threads or nb.get_num_threads()
        nodes = BYTES_PER_PUBLIC_NODE * (c["public_decision_nodes"] + c["public_terminals"] + c["public_chance_nodes"])
        full = c["sequences_full_layout"]
        seq_form, fused = (bytes_per_seq(threads, storage or ("float32" if f else "float64"), f) * sum(full)
                           + nodes for f in (False, True))
        return {**c, "memory_estimate_bytes": fused if self._fused_by_default(full) else seq_form,
                "memory_sequence_form_bytes": seq_form, "memory_fused_bytes": fused}

    @cached_property
    def _counts(self) -> dict:
        """:meth:`sizes` but the memory estimates (counted once)."""
        pre, C = self.preflop, len(self.classes)
        lines = [node for node, *_ in pre.ends if node.kind == "deal" and not node.allin]
        flop_nodes = [self.templates[node.contrib[0]].n for node in lines]
        allins = sum(1 for node, *_ in pre.ends if node.kind == "deal" and node.allin)
        folds = sum(1 for node, *_ in pre.ends if node.kind == "fold")
        orbits, live = self.orbit_counts(), self.orbit_counts(live=True)
        full, reduced, alive = [], [], []
        for p in (0, 1):
            a_pre = pre.player_actions(p)
            a_flop = sum(self.templates[node.contrib[0]].actions[p] for node in lines)
            full.append(1 + len(self.hands[p]) * (a_pre + C * a_flop))
            reduced.append(1 + orbits[0] * a_pre + int(sum(orbits[1:])) * a_flop)
            alive.append(1 + live[0] * a_pre + int(sum(live[1:])) * a_flop)
        decision = len(pre.actor) + C * sum(flop_nodes)
        terminals = (folds * (C if self.subset else 1) + allins * C
                     + C * sum(len(self.templates[node.contrib[0]].t_kind) for node in lines))
        chance = len(lines) + allins + (folds if self.subset else 0)
        return {"preflop_public_nodes": len(pre.actor), "flop_lines": len(lines), "preflop_allin_calls": allins,
                "preflop_folds": folds, "flop_nodes_per_line": {"min": min(flop_nodes, default=0),
                                                                "max": max(flop_nodes, default=0)},
                "flop_nodes_per_flop": sum(flop_nodes),
                "flop_classes": C, "flops": self.n_flops, "public_decision_nodes": decision,
                "public_chance_nodes": chance, "public_terminals": terminals,
                "preflop_hand_orbits": orbits[0], "sequences": reduced, "sequences_full_layout": full,
                "sequences_live_hands": alive}

    def orbit_counts(self, live: bool = False) -> list[int]:
        """Hand orbits per player: preflop (all the symmetries), then below each flop class
        (the symmetries that map the flop onto itself). ``live``: below a flop, only the
        hands it leaves (the engine's layout keeps the others, with no weight)."""
        hands = self.hands[0]
        out = [int(hand_orbits(hands, self.symmetries).max()) + 1]
        cache: dict = {}
        for rep, _ in self.classes:
            st = tuple(setwise_stabilizer(self.symmetries, rep))
            key = (st, rep if live else None)
            if key not in cache:
                hs = hands[~np.isin(HAND_CARDS[hands], rep).any(axis=1)] if live else hands
                cache[key] = int(hand_orbits(hs, list(st)).max()) + 1
            out.append(cache[key])
        return out

    @property
    def tree(self) -> FlopTree:
        if self._tree is None:
            self.build_tree()
        return self._tree

    def build_tree(self, max_memory: str | int | None = None) -> None:
        """Build the public tree, after counting it (:meth:`sizes`): a game whose memory
        estimate on the fused engine (the smallest solve) passes ``max_memory`` (default: the
        memory available now) is refused first."""
        from ..core.memory import limit_bytes, show

        limit, name = limit_bytes(None if max_memory is None else str(max_memory))
        if limit is not None:
            s = self.sizes()
            if s["memory_fused_bytes"] > limit:
                raise InputError(f"{self.name}: needs about {show(s['memory_fused_bytes'])} on the fused engine "
                                 f"({sum(s['sequences_full_layout']):,} sequences, "
                                 f"{s['public_decision_nodes']:,} public decision nodes), above {name} ({show(limit)})")
        self._tree = FlopTree(self)

    def memory_estimate(self, storage: str | None = None, fused: bool | None = None) -> int:
        """Bytes of a CFR-family solve (:meth:`sizes`), counted without building anything: on the
        fused engine or the sequence form (``fused=None``: the path the solvers take)."""
        key = {None: "memory_estimate_bytes", True: "memory_fused_bytes", False: "memory_sequence_form_bytes"}[fused]
        return self.sizes(storage)[key]

    def fused_by_default(self) -> bool:
        """Whether ``fused=None`` runs this game on the fused engine: from
        :data:`.postflop.FUSED_MIN_SEQS` full-layout sequences, as a postflop spot."""
        return self._fused_by_default(self.sizes()["sequences_full_layout"])

    @staticmethod
    def _fused_by_default(full) -> bool:
        from . import postflop

        return sum(full) >= postflop.FUSED_MIN_SEQS

    def check_sequence_form_memory(self) -> None:
        """Refuse (InputError), before the treeplexes and a solver's sequence-form state are
        allocated, a game whose sequence-form estimate passes the limit :meth:`problem` was
        given (:meth:`.postflop.PostflopGame.check_sequence_form_memory`). Skipped where a
        caller that takes only products and best responses on the sequence form, never a
        solver's state, has checked its own estimate (``products_checked``: the depth-limited
        pipeline, :func:`treeplex.depth_limited.nlfh52.check_pipeline_memory`)."""
        from ..core.memory import limit_bytes, show

        if self.products_checked:
            return
        limit, name = limit_bytes(self._max_memory)
        s = self.sizes()
        if limit is not None and s["memory_sequence_form_bytes"] > limit:
            raise InputError(f"{self.name}: the sequence form needs about {show(s['memory_sequence_form_bytes'])} "
                             f"({sum(s['sequences_full_layout']):,} sequences), above {name} ({show(limit)}); "
                             "the fused engine (a CFR-family solver, fused=true) needs about "
                             f"{show(s['memory_fused_bytes'])}")

    # ----------------------------------------------------------- sequence form

    def _river_orders(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per player, (ptr, hand indices weakest first, strengths) per board of the tree
        (:class:`~.hands_game.PublicTreeGame`'s showdown orders, for the operator and the
        fused engine): the five-card value (2 hole cards + the flop; ``7463 - phevaluator
        rank``, larger is better) of each hand the flop leaves; none on the empty board."""
        from phevaluator import _pheval

        ev = _pheval.evaluate_5cards
        out = []
        hands = self.hands[0]
        hc = HAND_CARDS[hands].tolist()
        per_board = [(np.zeros(0, np.int64), np.zeros(0, np.int32))]
        for flop in self.tree.boards[1:]:
            f = set(flop)
            alive = [i for i, (a, b) in enumerate(hc) if a not in f and b not in f]
            s = np.array([7463 - ev(hc[i][0], hc[i][1], *flop) for i in alive], dtype=np.int32)
            order = np.argsort(s, kind="stable")
            per_board.append((np.array(alive, dtype=np.int64)[order], s[order]))
        ptr = np.concatenate(([0], np.cumsum([len(i) for i, _ in per_board]))).astype(np.int64)
        idx = np.concatenate([i for i, _ in per_board]).astype(np.int64)
        st = np.concatenate([s for _, s in per_board]).astype(np.int32)
        for _ in (0, 1):  # both players hold the deck's hands
            out.append((ptr, idx, st))
        return out

    def operator(self) -> StreetsPayoff:
        kind, value, base, stride = self.terminal_arrays()
        return StreetsPayoff((self.n_seqs(0), self.n_seqs(1)), [HAND_CARDS[h] for h in self.hands], self.weight,
                             self._boards(), self._river_orders(), kind, value, self.tree.term_board, base, stride)

    def problem(self, max_memory: str | int | None = None) -> HandsProblem:
        """The problem (suit-reduced unless ``isomorphism=False``), its treeplexes built on
        first use (the fused engine never needs them). Refused before anything is allocated
        when the memory estimate of the path ``fused=None`` takes passes ``max_memory``
        (default: the memory available now; the fused engine's, the leanest, is checked before
        the tree is built); a solver that needs the sequence form then checks its estimate
        (:meth:`check_sequence_form_memory`)."""
        from ..core.memory import limit_bytes, show

        if self._problem is not None:
            return self._problem
        if self._tree is None:
            self.build_tree(max_memory)
        self._max_memory = None if max_memory is None else str(max_memory)
        limit, name = limit_bytes(self._max_memory)
        need = self.memory_estimate(fused=True)  # the leanest path; the sequence form is checked when a solver needs it
        if limit is not None and need > limit:
            raise InputError(f"{self.name}: needs about {show(need)} ({sum(self.sizes()['sequences_full_layout']):,} "
                             f"sequences), above {name} ({show(limit)})")
        t0 = time.perf_counter()
        if len(self.symmetries) > 1:
            self.reduction = Reduction(self)
        n = (self.n_seqs(0), self.n_seqs(1)) if self.reduction is None else self.reduction.n_red
        A = DeferredPayoff(n, self._reduced_operator)  # the fused engine never forms a product
        make = self.treeplex if self.reduction is None else self.reduction.treeplex
        X, Y = (DeferredTreeplex(n[p], partial(make, p)) for p in (0, 1))
        stats = self.stats()
        stats["compile_seconds"] = time.perf_counter() - t0
        self._problem = HandsProblem(X, Y, A, name=self.name, stats=stats, payoff_unit="chips",
                                     big_blind=self.big_blind, game=self)
        return self._problem

    def _reduced_operator(self):
        """:meth:`operator`, on the suit-reduced sequences where the game has symmetries."""
        A = self.operator()
        return A if self.reduction is None else SymmetricPayoff(A, self.reduction)

    def stats(self) -> dict:
        t = self.tree
        deals = math.comb(len(self.deck), 2) * math.comb(len(self.deck) - 2, 2)
        s = self.sizes()
        return {"histories": 1 + deals * (t.n_nodes + t.n_chance + t.n_terminals),
                "terminals": deals * t.n_terminals, "chance_nodes": 1 + deals * t.n_chance,
                "decision_nodes": deals * t.n_nodes, "deals": deals,
                "counted": "public nodes x compatible deals (deals blocked by the flop included)",
                **{k: v for k, v in s.items() if k not in ("sequences",)}}

    def node_block(self, p: int, vec: np.ndarray, v: int) -> np.ndarray:
        """float[n_hands, k]: ``vec``'s entries (the solver's layout) of p's hands at node v."""
        r = self.reduction
        if r is None:
            return super().node_block(p, vec, v)
        k = int(self.tree.n_actions[v])
        return vec[r.rbase[p][v] + r.orbits[p][v][:, None] * k + np.arange(k)[None, :]]

    # ----------------------------------------------------------- results

    def strategy_dict(self, x: np.ndarray, y: np.ndarray, profile=None) -> dict:
        """Per hand, the strategy at each preflop decision node (169 classes on 52 cards are
        written as every hand), and each node's range-weighted action frequencies. ``profile``
        (a fused solve's :class:`.fused.FusedProfile`, instead of x and y): read there only."""
        preflop = range(len(self.preflop.actor))
        plans = (x, y) if profile is None else profile.plans_at(preflop)
        nodes = []
        for v in preflop:
            p = int(self.tree.actor[v])
            probs, reach = self.behavioral(p, plans[p], v)
            freq, share = self.frequencies(p, probs, reach)
            nodes.append({"node": v, "history": self.tree.history[v], "player": p,
                          "actions": list(self.tree.actions[v]), "pot": float(sum(self.tree.contrib[v])),
                          "reach": share, "frequencies": freq,
                          "hands": {_hand(h): [round(float(q), 6) for q in probs[i]]
                                    for i, h in enumerate(self.hands[p]) if reach[i] > 0}})
        return {"game": self.name, "units": "chips; player 0 = small blind", "nodes": nodes}

    def summary(self, x: np.ndarray, y: np.ndarray, profile=None) -> str:
        """Range-weighted action frequencies at the preflop nodes."""
        return frequency_table(f"{self.name}: {self.tree.n_nodes:,} public decision nodes, {len(self.classes)} flop "
                               "classes", self.strategy_dict(x, y, profile)["nodes"])

    def initial_state(self):
        raise GameError("nlfh52 builds its own sequence form (problem()); for the rules game use nlfh(...)")


def _hand(h: int) -> str:
    hi, lo = HAND_CARDS[h]
    return card_name(int(hi)) + card_name(int(lo))


def _bets_text(bets) -> str:
    rounds = [",".join("a" if x == ALL_IN else f"{x:g}" for x in r) for r in bets]
    return rounds[0] if len(set(rounds)) == 1 else "/".join(rounds)
