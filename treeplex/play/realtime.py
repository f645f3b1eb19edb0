"""The depth-limited agent (issue 28, stage 3): real-time solving as Modicum does it (Brown,
Sandholm & Amos, "Depth-limited solving for imperfect-information games", NeurIPS 2018, §4,
§6.2 and Appendix A), on a blueprint of :mod:`treeplex.blueprint`.

**Beliefs.** Both players' ranges over the 1,326 hole-card pairs as the public sees them (the
agent's own range too: its strategy's, not its cards), updated by Bayes' rule on every action:
the weight of hand h times the probability that the actor plays the action with h, under the
strategy that produced it (preflop: the preflop's plan; later streets: the last subgame solution
of that street, whose tree holds every action of the street).

**Preflop: Modicum's cache** (Appendix A: "whenever the opponent takes an action that we have
not previously observed, we add it to the action abstraction for the preflop, solve the whole
preflop again, and cache the solution"; :class:`PreflopCache`). While the opponent's raises are
in the blueprint's tree the agent plays the blueprint's preflop (the cache's empty key). An
opponent raise to a size the tree lacks is added, and the whole preflop is solved as a
:class:`StreetSubgame` of street 0 (below: the 169 classes as buckets, uniform beliefs, leaves at
the flop's first decisions valued by rollouts from the matching blueprint node) within the
preflop's budget; the solution is cached under the preflop's actions through that raise (which
fix the added sizes and where), per seat, so a later hand with the same raise loads it. The
preflop beliefs are recomputed from uniform by Bayes' rule under the plan in force (the solved
one's probability of the opponent's raise: nested unsafe solving), and the flop subgame starts
from the plan's leaf.

**Flop: a depth-limited subgame** (:class:`StreetSubgame`) rooted at the start of the street
with the street-start beliefs. Its public tree is the street's betting with the blueprint's
sizes and raise cap, plus every size the hand has seen on this street (*nested unsafe
solving*: an opponent's off-tree action is added to the tree and the subgame solved again; the
solution's probability of it updates the beliefs, Appendix A). Infosets are (node, the
blueprint's bucket of the hand on this street) (the subgame uses the blueprint's card
abstraction). At each *leaf* (the street ends with chips behind) the opponent of the agent, the
*chooser*, picks per (leaf, bucket) one of k continuation strategies for the rest of the hand
(§4, Modicum's flop: the blueprint and the blueprint biased x10 toward fold, toward check/call
and toward bet/raise, renormalized) while the agent plays its blueprint (Proposition 1). A leaf
maps to the blueprint node reached by the same labels (an added size to the blueprint's nearest
raise by pot fraction) and its values are the blueprint's values there scaled by the ratio of
the real pot to the abstract pot (Appendix A: "as a fraction of the pot"). k = 1 is the naive
variant (a single value per state, the blueprint's; the paper's Table 1).

**Leaf values by rollouts** (§4: "Monte Carlo rollouts"): :func:`rollouts` samples n deals
(h0 from player 0's belief, h1 from player 1's, card-disjoint; on the preflop a flop of the
dealer's; then the turn and river uniform), computes the deal's buckets on every street and its
showdown, and adds to ``table[e, j, b0, b1]`` the deal's value at each end e of the subgame: a
fold's or a called all-in's chips, and at a leaf the blueprint's exact expected value (both players' actions
summed over, :func:`treeplex.blueprint.kernels.expected_value`) under continuation j, scaled.
``table / n`` is then the payoff of the bucket-level subgame (chance over bucket pairs with the
beliefs' probabilities, card removal included), an unbiased estimate of the real one. The
subgame is an ordinary :class:`~treeplex.model.problem.Problem` that every solver (and the LP)
runs; the agent uses the CFR family with the street's time budget.

**Turn and river** are solved to the end of the hand on the postflop engine
(:class:`~treeplex.poker.postflop.PostflopGame`: exact runouts and showdowns) from the street
start, with the beliefs as ranges (the ``max_hands`` heaviest of each, the agent's own hand
always kept), the blueprint's sizes for the street plus the sizes the hand has seen on it.

**Safe re-solving** (Appendix A: unsafe the first time, then "safe nested solving
(specifically, Reach subgame solving where the alternative payoffs are based on the expected
value from the previously-solved subgame)"): the hand's first turn or river spot is solved
unsafely; every later one (the river after the turn, a re-solve after the opponent acts) with
the resolve gadget for the opponent (:class:`~treeplex.model.gadget.GadgetPayoff`), each of its
hands' alt its expected value at the new root in the previous spot's solution plus its Reach
gift (:meth:`EndSpot.alts`). ``safe=False``: every spot unsafe.

Each decision re-solves from the start of its street (one simplification against the paper,
whose nested subgames start just before the opponent's last action): the beliefs stay at the
street start and the solve itself conditions on the street's actions.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import time
from dataclasses import dataclass
from functools import cached_property

import numba as nb
import numpy as np

from ..blueprint import kernels as K
from ..blueprint.game import DECISION, MAX_DEPTH
from ..errors import InputError
from ..model.game import GameError
from ..poker.betting import ALL_IN
from ..poker.cards import HAND_INDEX, N_HANDS
from ..poker.nlfh import PublicNode
from ..poker import public_tree as PT
from .agents import STREETS, Agent, Blueprint, sample_action
from .engine import Hand
from .equity import HOLES

BIAS = ("blueprint", "fold x10", "call x10", "raise x10")  # Modicum's four, in this order
DEFAULT_BUDGET = (30.0, 3.0, 3.0, 1.5)  # seconds per decision, preflop..river (preflop: a solve, Modicum's 30 s)
CALL = (["c"], np.ones((N_HANDS, 1)))  # (tokens, [1326, 1]): check/call with every hand, where the agent cannot follow


def bayes(w: np.ndarray, likelihood: np.ndarray) -> None:
    """``w *= likelihood`` in place, unless that leaves no weight (an action the strategy never
    takes: the belief stays as it was)."""
    new = w * likelihood
    if new.sum() > 0:
        w[:] = new


# ------------------------------------------------------------------ continuation strategies


def continuation_strategies(bp: Blueprint, k: int) -> np.ndarray:
    """``[k, slots]``: the blueprint's average strategy, then (k = 4) the same with the
    probabilities of fold, of check/call and of bet/raise multiplied by 10, renormalized per
    infoset (Modicum's bias set, §6.2)."""
    if k not in (1, 4):
        raise InputError(f"depth-limited agent: k must be 1 (naive) or 4 (Modicum's bias set), got {k}")
    t = bp.tree
    cls = np.zeros(t.n_slots, dtype=np.int8)
    inf = np.zeros(t.n_slots, dtype=np.int64)
    n_inf = 0
    for v in np.flatnonzero(t.kind == DECISION):
        labs = t.labels[v]
        b = int(t.buckets[t.street[v]])
        c = np.array([0 if lab == "f" else 1 if lab in ("x", "c") else 2 for lab in labs], dtype=np.int8)
        sl = slice(t.offset[v], t.offset[v] + len(labs) * b)
        cls[sl] = np.tile(c, b)
        inf[sl] = n_inf + np.repeat(np.arange(b), len(labs))
        n_inf += b
    out = np.empty((k, t.n_slots))
    out[0] = bp.P
    for j in range(1, k):
        q = bp.P * np.where(cls == j - 1, 10.0, 1.0)
        tot = np.bincount(inf, q, minlength=n_inf)
        out[j] = q / np.where(tot > 0, tot, 1.0)[inf]
    return out


# ------------------------------------------------------------------ rollouts


@nb.njit(cache=True)
def _draw(cdf, rng):
    u = K.uniform(rng) * cdf[-1]
    i = np.searchsorted(cdf, u, side="right")
    return min(i, cdf.shape[0] - 1)


@nb.njit(cache=True)
def rollouts(n, cdf0, cdf1, holes, board, flops, street, end_kind, end_value, end_node, end_scale, chooser, Pc, Pb,
             kind, tstreet, actor, n_act, first, payoff, children, offset, ix_rounds, ix_keys, ix_offsets,
             ix_shapes, ix_lens, vals, wheres, rng, table):
    """Add ``n`` sampled deals' values to ``table[e, j, b0, b1]`` (module doc). ``end_kind[e]``:
    0 fold (``end_value`` = player 0's chips), 1 showdown (``end_value`` = player 0's chips
    in, times the showdown sign), 2 leaf (blueprint node ``end_node``, times ``end_scale``;
    the chooser plays ``Pc[j]``, the other ``Pb``). With no ``board`` (the preflop) the flop is
    a row of ``flops`` (the dealer's), the deal drawn again where it shares a card with a hand
    (so hand pairs weigh as the dealer deals them). A deal whose later-street class the
    abstraction did not reach is drawn again. Returns the redraws."""
    cards = np.empty(9, dtype=np.int64)
    bk = np.zeros((2, 4), dtype=np.int64)
    frame = np.zeros((MAX_DEPTH, 2), dtype=np.int64)
    acc = np.zeros(MAX_DEPTH)
    used = np.zeros(52, dtype=np.bool_)
    nb_ = board.shape[0]
    redraws = 0
    done = 0
    while done < n:
        h0 = _draw(cdf0, rng)
        h1 = _draw(cdf1, rng)
        if holes[h1, 0] == holes[h0, 0] or holes[h1, 0] == holes[h0, 1] or holes[h1, 1] == holes[h0, 0] \
                or holes[h1, 1] == holes[h0, 1]:
            continue
        used[:] = False
        cards[0], cards[1], cards[2], cards[3] = holes[h0, 0], holes[h0, 1], holes[h1, 0], holes[h1, 1]
        for j in range(4):
            used[cards[j]] = True
        for j in range(nb_):
            cards[4 + j] = board[j]
            used[board[j]] = True
        dealt = nb_
        if nb_ == 0:
            f = K.below(rng, flops.shape[0])
            if used[flops[f, 0]] or used[flops[f, 1]] or used[flops[f, 2]]:
                continue
            for j in range(3):
                cards[4 + j] = flops[f, j]
                used[flops[f, j]] = True
            dealt = 3
        for j in range(dealt, 5):
            while True:
                c = K.below(rng, 52)
                if not used[c]:
                    break
            used[c] = True
            cards[4 + j] = c
        sd = K.real_buckets(cards, ix_rounds, ix_keys, ix_offsets, ix_shapes, ix_lens, vals, wheres, bk)
        ok = True
        for p in range(2):
            for s in range(street, 4):
                if bk[p, s] < 0:
                    ok = False
        if not ok:
            redraws += 1
            continue
        done += 1
        b0, b1 = bk[0, street], bk[1, street]
        for e in range(end_kind.shape[0]):
            if end_kind[e] == 0:
                table[e, 0, b0, b1] += end_value[e]
            elif end_kind[e] == 1:
                table[e, 0, b0, b1] += sd * end_value[e]
            else:
                for j in range(Pc.shape[0]):
                    P0 = Pc[j] if chooser == 0 else Pb
                    P1 = Pb if chooser == 0 else Pc[j]
                    table[e, j, b0, b1] += end_scale[e] * K.expected_value(
                        bk, sd, kind, tstreet, actor, n_act, first, payoff, children, offset, P0, P1, frame, acc,
                        end_node[e])
    return redraws


# ------------------------------------------------------------------ the street's betting


class _StreetRules:
    """What :class:`PublicNode` reads: the blueprint's chips, sizes and raise cap, plus
    ``off_tree`` sizes (history -> pot fractions) the hand has seen."""

    def __init__(self, bp: Blueprint, max_raises: int):
        from ..poker.nlfh import parse_bets

        c = bp.tree.config
        self.nodes = []
        self.stack, self.small_blind, self.big_blind = c.stack, c.small_blind, c.big_blind
        self.bets = parse_bets(c.bets, rounds=c.rounds)
        self.max_raises = max_raises
        self.rounds = c.rounds
        self.off_tree: dict[str, set] = {}
        self.added: list[tuple[str, int]] = []  # (history, chips raised to) of each size added, in order


def street_root(rules, street: int, contrib) -> PublicNode:
    """The first decision of ``street`` (the small blind acts first preflop, after the blinds;
    the big blind after the preflop)."""
    if street == 0:
        return PublicNode(rules, "decision", 0, (rules.small_blind, rules.big_blind), 0, last_inc=rules.big_blind)
    return PublicNode(rules, "decision", street, tuple(contrib), 1, street0=contrib[0])


def token_label(node: PublicNode, token: str, rules=None) -> str:
    """The label at ``node`` of a real action (a raise: the label whose chips are nearest,
    after adding its pot fraction to ``rules.off_tree`` at this history, and to
    ``rules.added``, when given and the tree lacks it)."""
    if token == "f":
        return "f"
    if token == "c":
        return "c" if node.to_call() > 0 else "x"
    to = int(token[1:])
    sizes = node.raise_sizes()
    if rules is not None and to not in sizes.values():
        rules.off_tree.setdefault(node.hist_str, set()).add(node.fraction_of(to))
        rules.added.append((node.hist_str, to))
        node._actions = None
        sizes = node.raise_sizes()
    if not sizes:
        raise InputError(f"depth-limited agent: no raise at {node.hist_str!r} for {token!r}")
    return min(sizes, key=lambda lab: abs(sizes[lab] - to))


def abstract_node(bp: Blueprint, history: str) -> PublicNode:
    """The blueprint's :class:`PublicNode` at tree history ``history`` (its chips)."""
    from ..blueprint.game import _Rules

    node = _Rules(bp.tree.config).root
    for r, labels in enumerate(history.split("/")):
        for lab in filter(None, labels.split(",")):
            node = node.child(lab)
            if node.kind == "deal":
                node = node.after_deal()
    return node


def blueprint_label(bp: Blueprint, v: int, an: PublicNode, node: PublicNode, label: str) -> str | None:
    """The label at blueprint node ``v`` (abstract node ``an``) for subgame label ``label`` at
    ``node``: itself when the blueprint has it, else the blueprint's raise nearest in pot
    fraction; None where the blueprint has no raise there."""
    labels = bp.tree.labels[v]
    if label in labels:
        return label
    if label in ("f", "x", "c"):
        return None
    x = node.fraction_of(node.raise_sizes()[label])
    raises = [lab for lab in labels if lab[0] == "p" or lab == "a"]
    if not raises:
        return None
    return min(raises, key=lambda lab: abs(an.fraction_of(an.frac_raise_to(ALL_IN if lab == "a" else float(lab[1:])))
                                           - x))


# ------------------------------------------------------------------ the street subgame (preflop and flop)


class StreetSubgame:
    """The depth-limited subgame of one street (module doc), built from the street-start
    state (``contrib``, the blueprint node ``vb`` there or -1, the board), the street's
    tokens so far (the sizes the tree lacks are added: ``key``, their (history, chips) in
    order), the beliefs ``w`` ([2, 1326]) and the agent's seat ``searcher``; ``Pc`` the
    continuation strategies ([k, slots]). Street 0 is the whole preflop (``vb`` 0, no board):
    its buckets are the 169 classes, its leaves the flop's first decisions."""

    def __init__(self, bp: Blueprint, street: int, contrib, vb: int, board, tokens, w, searcher: int,
                 Pc: np.ndarray):
        self.bp, self.street, self.board = bp, street, [int(c) for c in board]
        self.searcher, self.chooser, self.Pc = searcher, 1 - searcher, Pc
        self.k = Pc.shape[0]
        self.B = int(bp.tree.buckets[street])
        self.tokens = list(tokens)
        raises = sum(1 for t in tokens if t.startswith("r"))
        self.rules = _StreetRules(bp, max(bp.tree.config.max_raises, raises))
        self.root = street_root(self.rules, street, contrib)
        node = self.root
        self.path = []  # (subgame node, label) of the tokens
        for tok in tokens:
            lab = token_label(node, tok, self.rules)
            self.path.append((node, lab))
            node = node.child(lab)
        self.current = node
        self.key = tuple(self.rules.added)
        self.bucket = bp.buckets(street, HOLES, self.board)  # [1326], -1: blocked or unreached
        self.w = [np.where(self.bucket >= 0, np.asarray(x, dtype=np.float64), 0.0) for x in w]
        self._walk(vb)
        self._layout()

    def _walk(self, vb: int) -> None:
        """Number decision nodes (``vnode``: each one's blueprint node of the same labels, or
        -1) and ends (``end_at``: by node), and map each leaf to the blueprint."""
        self.nodes, self.ends, self.vnode = [], [], []
        # ends: (kind, value, blueprint node, scale, last (node, action) per player)
        self.index, self.end_at = {}, {}
        stack = [(self.root, (None, None), vb, abstract_node(self.bp, self.bp.tree.history[vb]) if vb >= 0 else None)]
        while stack:
            node, last, v, an = stack.pop()
            if node.kind == "decision":
                i = len(self.nodes)
                self.index[id(node)] = i
                self.nodes.append((node, last))
                self.vnode.append(v if v >= 0 and tuple(self.bp.tree.labels[v]) == tuple(node.actions) else -1)
                for a, lab in reversed(list(enumerate(node.actions))):
                    child = node.child(lab)
                    nl = tuple((i, a) if p == node.to_act else last[p] for p in (0, 1))
                    cv, can = -1, None
                    if v >= 0 and child.kind != "fold":
                        blab = blueprint_label(self.bp, v, an, node, lab)
                        if blab is not None:
                            cv = self.bp.child(v, blab)
                            can = an.child(blab)
                            if can.kind == "deal":
                                can = can.after_deal()
                    stack.append((child, nl, cv, can))
                continue
            self.end_at[id(node)] = len(self.ends)
            if node.kind == "fold":
                c = node.contrib
                self.ends.append((0, -float(c[0]) if node.folder == 0 else float(c[1]), -1, 0.0, last))
            elif node.kind == "showdown" or node.allin or v < 0:
                self.ends.append((1, float(node.contrib[0]), -1, 0.0, last))  # called all-in, or no blueprint: check down
            else:
                self.ends.append((2, 0.0, v, node.pot / an.pot, last))

    # ---------------------------------------------------------------- values

    def leaf_table(self, n: int, rng, time_limit: float | None = None) -> np.ndarray:
        """``[ends, k, B, B]``: the mean over ``n`` rollouts (module doc) of each end's value;
        with ``time_limit`` (seconds) fewer once it is spent (in chunks of 500, at least one)."""
        bp, t = self.bp, self.bp.tree
        E = len(self.ends)
        table = np.zeros((E, self.k, self.B, self.B))
        if not (self.w[0].sum() > 0 and self.w[1].sum() > 0):
            raise InputError("depth-limited agent: a belief is empty at the subgame's root")
        kinds = np.array([e[0] for e in self.ends], dtype=np.int64)
        values = np.array([e[1] for e in self.ends])
        nodes = np.array([e[2] for e in self.ends], dtype=np.int64)
        scales = np.array([e[3] for e in self.ends])
        d = bp.deals
        Pc = self.Pc if (kinds == 2).any() else self.Pc[:1]
        cdf = np.cumsum(self.w[0]), np.cumsum(self.w[1])
        board = np.array(self.board, dtype=np.int64)
        t0, done = time.perf_counter(), 0
        while done < n:
            m = n - done if time_limit is None else min(500, n - done)
            rollouts(m, cdf[0], cdf[1], HOLES, board, bp.flops, self.street, kinds, values, nodes, scales,
                     self.chooser, Pc, self.Pc[0], t.kind, t.street, t.actor, t.n_act, t.first, t.payoff, t.children,
                     t.offset, d.ix_rounds, d.ix_keys, d.ix_offsets, d.ix_shapes, d.ix_lens, d.vals, d.wheres, rng,
                     table)
            done += m
            if time_limit is not None and time.perf_counter() - t0 >= time_limit:
                break
        self.n_rollouts = done
        return table / done

    # ---------------------------------------------------------------- the sequence form

    def _layout(self) -> None:
        """The sequences: per player, infosets (decision node, bucket) with the node's actions
        (``base[i]``: node i's first sequence), then the chooser's (leaf, bucket) with k actions
        (``leaf_base[e]``); ``n_seqs`` per player."""
        B, k = self.B, self.k
        n = [1, 1]
        self._infosets = [[[], [], [], []], [[], [], [], []]]  # per player: starts, parents, keys, labels
        self.base = {}

        def infosets(p, last, m, name, label):  # one infoset per bucket, m actions each; returns the first sequence
            first, par = n[p], self.seq(last)
            st, pa, ke, la = self._infosets[p]
            for b in range(B):
                st.append(n[p] + b * m)
                pa.append(int(par[b]))
                ke.append(f"b{b}:{name}")
                la.append(label)
            n[p] += B * m
            return first

        for i, (node, last) in enumerate(self.nodes):
            p = node.to_act
            self.base[i] = infosets(p, last[p], len(node.actions), node.hist_str, tuple(node.actions))
        c = self.chooser
        self.leaf_base = {e: infosets(c, last[c], k, f"leaf{e}", BIAS[:k])
                          for e, (kind, _, _, _, last) in enumerate(self.ends) if kind == 2}
        self.n_seqs = tuple(n)

    def seq(self, last) -> np.ndarray:
        """The sequences, per bucket, of a player's last action ``last`` (node, action) (0: none)."""
        if last is None:
            return np.zeros(self.B, dtype=np.int64)
        i, a = last
        return self.base[i] + np.arange(self.B) * len(self.nodes[i][0].actions) + a

    def problem(self, table: np.ndarray):
        """The subgame as a :class:`Problem` over the sequences of :meth:`_layout`; A from
        ``table`` (player 0's chips x the bucket pair's probability)."""
        from ..core.treeplex import Treeplex
        from ..model.problem import Problem, SparsePayoff

        B, k, c = self.B, self.k, self.chooser
        bs = np.arange(B)
        rows, cols, vals = [], [], []
        g0, g1 = np.meshgrid(bs, bs, indexing="ij")
        for e, (kind, _, _, _, last) in enumerate(self.ends):
            s = [self.seq(last[0]), self.seq(last[1])]
            for j in range(k if kind == 2 else 1):
                if kind == 2:
                    s[c] = self.leaf_base[e] + bs * k + j
                m = table[e, j]
                nz = m != 0
                rows.append(s[0][g0][nz])
                cols.append(s[1][g1][nz])
                vals.append(m[nz])
        A = SparsePayoff((np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)), self.n_seqs)
        Ts = []
        for p in (0, 1):
            starts, parents, keys, labels = self._infosets[p]
            st = np.array(starts, dtype=np.int64)
            Ts.append(Treeplex(st, np.append(st[1:], self.n_seqs[p]), np.array(parents, dtype=np.int64), keys,
                               labels))
        return Problem(Ts[0], Ts[1], A, name=f"depth-limited {STREETS[self.street]} subgame (k={k})",
                       payoff_unit="chips", big_blind=self.bp.table.big_blind)

    def solve(self, n: int, rng, algorithm: str = "dcfr", time_limit: float | None = None,
              max_iters: int | None = None) -> "Solved":
        """Leaf values by ``n`` rollouts, then the subgame solved (module doc); with
        ``time_limit``, half of it bounds the rollouts and the rest the solve."""
        from ..model.metrics import evaluate
        from ..run.driver import solve

        t0 = time.perf_counter()
        table = self.leaf_table(n, rng, None if time_limit is None else time_limit / 2)
        prob = self.problem(table)
        t1 = time.perf_counter()
        if algorithm == "lp":
            res = solve(prob, "lp")
        else:
            rest = None if time_limit is None else max(0.02, time_limit - (t1 - t0))
            res = solve(prob, algorithm, time_limit=rest, max_iters=max_iters or 100_000,
                        check_every=max_iters or 100_000)
        ev = evaluate(prob, res.x, res.y)
        beh = [T.behavioral_from_plan(x) for T, x in zip(prob.treeplexes, (res.x, res.y))]
        return Solved(self, prob, table, beh, ev.value, ev.gap, t1 - t0, time.perf_counter() - t1)

    def probs(self, beh, node: PublicNode, buckets: np.ndarray) -> np.ndarray:
        """``[len(buckets), k]``: the behavioral strategy ``beh`` (of the actor) at ``node``
        per bucket (uniform where -1)."""
        i = self.index[id(node)]
        m = len(node.actions)
        rows = beh[self.base[i]:self.base[i] + self.B * m].reshape(self.B, m)
        return np.where((buckets >= 0)[:, None], rows[np.maximum(buckets, 0)], 1.0 / m)


class Plan:
    """A strategy for both players on a :class:`StreetSubgame`'s tree (``sub``); subclasses
    give :meth:`probs`."""

    sub: StreetSubgame

    def probs(self, node: PublicNode, buckets: np.ndarray) -> np.ndarray:
        """``[len(buckets), k]``: the actor's probabilities at ``node`` per bucket."""
        raise NotImplementedError

    def node(self, tokens) -> PublicNode:
        """The subgame node the street's ``tokens`` reach."""
        node = self.sub.root
        for tok in tokens:
            node = node.child(token_label(node, tok))
        return node

    def strategy(self, tokens) -> tuple[list[str], np.ndarray]:
        """(protocol tokens, ``[1326, k]`` probabilities) of the actor at the node the street's
        ``tokens`` reach: its strategy per hand by the hand's bucket; a hand whose class the
        abstraction did not reach checks or calls, as the agent does."""
        node = self.node(tokens)
        toks = [_passive(lab) or f"r{node.raise_sizes()[lab]}" for lab in node.actions]
        P = self.probs(node, self.sub.bucket)
        P[self.sub.bucket < 0] = np.eye(len(toks))[toks.index("c")]
        return toks, P

    def update(self, w, tokens) -> None:
        """Bayes' rule on ``w`` ([2, 1326]) for each of the street's ``tokens`` (they are in
        the subgame's tree: the ones seen when it was built, then the agent's own and a call
        or fold)."""
        node = self.sub.root
        for tok in tokens:
            lab = token_label(node, tok)
            bayes(w[node.to_act], self.probs(node, self.sub.bucket)[:, node.actions.index(lab)])
            node = node.child(lab)

    def leaf_node(self, tokens) -> int:
        """The blueprint node of the leaf the street's ``tokens`` end at (the next street's
        first decision), -1 where they end elsewhere (a fold, a called all-in, no blueprint)."""
        e = self.sub.end_at.get(id(self.node(tokens)))
        return -1 if e is None or self.sub.ends[e][0] != 2 else int(self.sub.ends[e][2])


class BlueprintPlan(Plan):
    """The blueprint's own strategy on a subgame with no added size (its tree is the
    blueprint's: the preflop cache's empty key)."""

    def __init__(self, sub: StreetSubgame):
        if sub.key or min(sub.vnode) < 0:
            raise ValueError("BlueprintPlan: the subgame's tree is not the blueprint's")
        self.sub = sub

    def probs(self, node, buckets):
        return self.sub.bp.probs(self.sub.vnode[self.sub.index[id(node)]], buckets)


@dataclass
class Solved(Plan):
    """A solved street subgame: behavioral strategies per player, value and gap (chips);
    ``problem`` and ``table`` None once dropped (the preflop cache keeps only the strategies)."""

    sub: StreetSubgame
    problem: object
    table: np.ndarray | None
    beh: list
    value: float
    gap: float
    leaf_seconds: float
    solve_seconds: float

    def probs(self, node: PublicNode, buckets: np.ndarray) -> np.ndarray:
        return self.sub.probs(self.beh[node.to_act], node, buckets)


# ------------------------------------------------------------------ turn and river


def _size_text(x: float) -> str:
    return "a" if x == ALL_IN else f"{100 * x:g}%"


class EndSpot:
    """A turn or river spot solved to the end on the postflop engine (module doc), from the
    street start (``contrib``, ``board``) with beliefs ``w`` ([2, 1326], real players) and the
    street's ``tokens``; ``seat``/``hole``: the agent and its hand (kept in its range).
    Player 0 of the :class:`PostflopGame` is the out-of-position big blind, real player 1, so
    the opponent (the gadget's ``chooser``) is game player ``seat``. With ``prev`` = (the
    hand's previous solved spot, the tokens of that spot's street) the spot is solved safely:
    ``alt`` (:meth:`alts`) and :meth:`gadget_problem`; without, ``alt`` is None (unsafe)."""

    def __init__(self, bp: Blueprint, street: int, contrib, board, tokens, w, seat: int, hole: int,
                 max_hands: int = 60, prev: tuple | None = None):
        from ..poker.postflop import PostflopGame

        self.street, self.seat, self.hole = street, seat, hole
        rules = _StreetRules(bp, 99)
        node = street_root(rules, street, contrib)
        extra = set()
        for tok in tokens:  # the hand's sizes on this street the tree lacks, in chips on top of the call
            lab = token_label(node, tok)
            if tok.startswith("r") and int(tok[1:]) not in (rules.stack, node.raise_sizes()[lab]):
                extra.add(f"{int(tok[1:]) - node.contrib[1 - node.to_act]}c")
            node = node.child(lab)
        self.street0 = int(contrib[0])
        sizes = {}
        for s in range(street, 4):
            text = ",".join([_size_text(x) for x in rules.bets[s]] + (sorted(extra) if s == street else []))
            sizes[STREETS[s]] = {"bet": text, "raise": text}
        blocked = np.isin(HOLES, np.asarray(board)).any(axis=1)
        ranges = []
        for real in (1, 0):
            r = np.where(blocked, 0.0, np.asarray(w[real], dtype=np.float64))
            if real == seat and r[hole] <= 0:
                r[hole] = 1e-9 * max(r.max(), 1.0)
            if (r > 0).sum() > max_hands:  # the heaviest, ties in a fixed random order
                jitter = np.random.default_rng(hole + 1326 * real).random(N_HANDS)
                drop = np.lexsort((jitter, -r))[max_hands:]
                mine = r[hole]
                r[drop] = 0
                if real == seat:
                    r[hole] = mine
            ranges.append(r)
        self.game = PostflopGame(board=[int(c) for c in board], pot=int(contrib[0] + contrib[1]),
                                 stack=int(rules.stack - contrib[0]), range0=ranges[0], range1=ranges[1],
                                 sizes=sizes, big_blind=bp.table.big_blind,
                                 raise_cap=max(bp.tree.config.max_raises, sum(t[0] == "r" for t in tokens)) - 1,
                                 isomorphism=False)
        self.chooser = seat  # the opponent (real player 1 - seat) is the game's player seat
        self.alt = None if prev is None else prev[0].alts(self, prev[1])

    def path(self, tokens) -> list[tuple[int, int]]:
        """(decision node, action index) of each of ``tokens`` in the spot's tree."""
        t = self.game.tree
        v, out = 0, []
        for tok in tokens:
            labels = list(t.actions[v]) if v >= 0 else []
            if tok in ("f", "c"):
                lab = tok if tok == "f" or "c" in labels else "x"
                if lab not in labels:
                    raise InputError(f"depth-limited agent: {tok!r} is not in the {STREETS[self.street]} spot's tree")
                a = labels.index(lab)
            else:
                want = int(tok[1:]) - self.street0
                bets = [(abs(int(lab[1:]) - want), i) for i, lab in enumerate(labels) if lab[0] == "b"]
                if not bets:
                    raise InputError(f"depth-limited agent: no bet in the {STREETS[self.street]} spot for {tok!r}")
                a = min(bets)[1]
            out.append((v, a))
            kind, child = t.children[v][a]
            v = child if kind == PT.DECISION else -1
        return out, v

    def next_root(self, tokens, card: int) -> int:
        """The river's first decision node in this turn spot's tree below the turn's ``tokens``
        (the whole street, closed by a check or call) and the dealt river ``card``."""
        steps, _ = self.path(tokens)
        t = self.game.tree
        kind, c = t.children[steps[-1][0]][steps[-1][1]] if steps else (PT.DECISION, -1)
        if kind != PT.CHANCE:
            raise InputError(f"depth-limited agent: the turn's actions {tokens} lead to no river in the turn spot")
        kind, v = t.chance_children[c][t.chance_cards[c].index(card)]
        if kind != PT.DECISION:
            raise InputError("depth-limited agent: no river betting below the turn spot's line")
        return v

    @cached_property
    def compat(self) -> list[np.ndarray]:
        """Per game player p, bool[n_p, n_q]: which hand pairs share no card."""
        from ..poker.cards import HAND_CARDS
        from ..poker.operator import compatible

        g = self.game
        return [compatible(HAND_CARDS[g.hands[p]], HAND_CARDS[g.hands[1 - p]]) for p in (0, 1)]

    def mass(self, v: int, p: int) -> np.ndarray:
        """[n_p] the chance and opponent-reach mass meeting each of game player p's hands at
        node ``v`` under the solution (what a counterfactual value there divides by)."""
        g = self.game
        reach = g.opponent_reach(p, self.plans[1 - p], v)
        return g.coef[p] * g.tree.node_chance[v] * (self.compat[p] @ reach) * g.node_alive(p, v)

    def values_at(self, v: int, p: int) -> np.ndarray:
        """[n_p] game player p's expected payoff per hand at node ``v`` under the solution (both
        players' strategies; p's own chips relative to the spot's start, as the spot's
        payoffs): its counterfactual value (the engine's products, :meth:`PostflopGame.
        _counterfactual_values`) over :meth:`mass`; NaN where that is 0. At a node of the
        other player (a street's first decision), p's value is the sum over that player's
        actions, each leading to a node of p."""
        g, t = self.game, self.game.tree
        if getattr(self, "_cfv", None) is None:
            self._cfv = g._counterfactual_values(*self.plans)

        def cf(u):
            if t.actor[u] == p:
                probs, _ = g.behavioral(p, self.plans[p], u)
                return (probs * g.node_block(p, self._cfv[p], u)).sum(axis=1)
            kids = t.children[u]
            if any(k != PT.DECISION for k, _ in kids):
                raise InputError("depth-limited agent: a safe re-solve starts at a street's first decision")
            return sum(cf(i) for _, i in kids)

        m = self.mass(v, p)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(m > 0, cf(v) / np.where(m > 0, m, 1.0), np.nan)

    def gifts(self, v: int, p: int, steps) -> np.ndarray:
        """[n_p] Reach subgame solving's gift to game player p's hands at node ``v`` (Brown &
        Sandholm 2017), p's chips per unit of reach, >= 0: what each hand has given up in this
        spot against its best responses to our solution, in counterfactual units: its margin at
        this spot's gadget (alt - best-response value of entering; 0 unsafe) plus, at each of
        its decisions (u, a) on ``steps`` (the path to ``v``), max_b BR(u, b) - BR(u, a);
        shared over the n next roots the hand meets (1 at this spot's root; else the next
        street's first decisions with mass > 0): m / n, then per unit of reach at ``v``."""
        from ..depth_limited.nested import infoset_br_values
        from ..depth_limited.sets import br_values

        g, t = self.game, self.game.tree
        P = g.problem()
        T = P.treeplexes[p]
        grad = P.A.matvec(self.plans[1], count=False) if p == 0 else -P.A.rmatvec(self.plans[0], count=False)
        brv = br_values(T, grad)  # p's own chips, counterfactual, per sequence
        n = len(g.hands[p])
        gift = np.zeros(n)
        if self.alt is not None:
            top = np.flatnonzero(T.parent == 0)
            enter = np.bincount(top % n, infoset_br_values(T, grad)[top], minlength=n)
            gift += np.maximum(0.0, (self.alt if p == 0 else -self.alt) * self.mass(0, p) - enter)
        for u, a in steps:
            if t.actor[u] == p:
                block = g.node_block(p, brv, u)
                gift += block.max(axis=1) - block[:, a]
        roots = [0] if v == 0 else np.flatnonzero(np.asarray(t.node_up_kind) == PT.CHANCE)
        shared = np.sum([self.mass(r, p) > 0 for r in roots], axis=0)
        m = self.mass(v, p)
        ok = (m > 0) & (shared > 0)
        return np.where(ok, gift / np.where(ok, shared * m, 1.0), 0.0)

    def alts(self, new: "EndSpot", tokens, gifts: bool = True) -> np.ndarray:
        """[n] the resolve gadget's alternative payoffs of ``new``'s opponent hands (its
        ``game.hands[new.chooser]``), player 0's chips per unit of reach relative to ``new``'s
        start: each hand's expected payoff in this (previous) spot's solution at ``new``'s
        root (this spot's root for a re-solve of the same street, else the river root below
        the turn's ``tokens`` and the river card, :meth:`next_root`), plus the chips d each
        player has put in between the two roots (a payoff from the turn's start is one from
        the river's start minus d), raised by its :meth:`gifts` (with ``gifts``; at most to
        what it can win, pot/2 + stack: :func:`.nested.gifted_bounds`). A hand this spot never
        meets there has no bound: its alt is below any payoff (it always enters, as in unsafe
        solving)."""
        from ..depth_limited.nested import gifted_bounds

        c = new.chooser
        steps = [] if new.street == self.street else self.path(tokens)[0]
        v = 0 if new.street == self.street else self.next_root(tokens, int(new.game.board[-1]))
        d = (new.game.pot - self.game.pot) / 2
        own = self.values_at(v, c) + d
        where = {int(h): i for i, h in enumerate(self.game.hands[c])}
        rows = np.array([where.get(int(h), -1) for h in new.game.hands[c]])
        known = (rows >= 0) & np.isfinite(own[np.maximum(rows, 0)])
        floor = -(new.game.pot / 2 + new.game.stack) - 1.0
        out = np.where(known, own[np.maximum(rows, 0)], floor)
        out = out if c == 0 else -out
        if not gifts:
            return out
        gift = np.where(known, self.gifts(v, c, steps)[np.maximum(rows, 0)], 0.0)
        return gifted_bounds(out, gift, new.game.pot / 2 + new.game.stack, c)

    def gadget_problem(self):
        """The spot with Burch et al.'s resolve gadget for the opponent (Brown & Sandholm 2017):
        before its first decision each of its hands h takes ``alt[h]`` or enters, gadget h's
        sequences 1 + 2h (alt) and 2 + 2h (enter), the hand's top infosets hanging from the
        latter (:class:`~treeplex.model.gadget.GadgetPayoff`; alt in counterfactual units: per
        unit of reach times the hand's chance mass at the root, coef_h sum_h' w_h')."""
        from ..model.gadget import GadgetPayoff, gadget_treeplex
        from ..model.problem import Problem

        g, c = self.game, self.chooser
        P = g.problem()
        T = P.treeplexes[c]
        n = len(g.hands[c])
        mass = g.coef[c] * (self.compat[c] @ g.weight[1 - c])
        parent = np.array(T.parent, np.int64)
        top = np.flatnonzero(parent == 0)
        parent[top] = -1 - top % n  # infosets go node by node, hand by hand (HandsGame.treeplex): hand h's gadget
        Ts = [P.treeplexes[0], P.treeplexes[1]]
        Ts[c] = gadget_treeplex(T.start, T.end, parent, n)
        return Problem(Ts[0], Ts[1], GadgetPayoff(P.A, c, self.alt * mass), name=f"safe {g.name}",
                       payoff_unit="chips", big_blind=g.big_blind)

    def solve(self, time_limit: float | None, max_iters: int, algorithm: str = "dcfr") -> None:
        """Solve the spot (unsafe without ``alt``, else :meth:`gadget_problem`); ``plans`` are
        the game's (the opponent's with every gadget entered); ``gap``: the solved problem's."""
        from ..run.driver import solve

        t0 = time.perf_counter()
        prob = self.game.problem() if self.alt is None else self.gadget_problem()
        kw = {} if algorithm == "lp" else {"time_limit": time_limit, "max_iters": max_iters, "check_every": max_iters}
        res = solve(prob, algorithm, **kw)
        plans = [res.x, res.y]
        if self.alt is not None:
            c, T = self.chooser, self.game.problem().treeplexes[self.chooser]
            plans[c] = T.plan_from_behavioral(prob.A.inner_vector(prob.treeplexes[c].behavioral_from_plan(plans[c])))
        self.plans, self._cfv = tuple(plans), None
        self.gap = res.evaluation.gap
        self.iterations = int(getattr(res, "iterations", 0) or 0)
        self.seconds = time.perf_counter() - t0

    def probs(self, v: int, real: int) -> tuple[np.ndarray, np.ndarray]:
        """(hands [n] as 1326-indices, probabilities [n, k]) of real player ``real`` at ``v``."""
        p = 1 - real
        probs, _ = self.game.behavioral(p, self.plans[p], v)
        return self.game.hands[p], probs

    def strategy(self, tokens) -> tuple[list[str], np.ndarray]:
        """(protocol tokens, ``[1326, k]`` probabilities) of the actor at the node the street's
        ``tokens`` reach: the solution's per hand of the spot's range; a hand left out of the
        range gets the range's action frequencies there (an approximation: the agent holding it
        would solve a spot with it added). Check/call for every hand where the tokens leave the tree."""
        _, v = self.path(tokens)
        if v < 0:
            return CALL
        p = int(self.game.tree.actor[v])
        probs, reach = self.game.behavioral(p, self.plans[p], v)
        freq, _ = self.game.frequencies(p, probs, reach)
        P = np.tile(freq if np.isfinite(freq).all() else np.full(probs.shape[1], 1 / probs.shape[1]), (N_HANDS, 1))
        P[self.game.hands[p]] = probs
        return [_passive(lab) or f"r{self.street0 + int(lab[1:])}" for lab in self.game.tree.actions[v]], P

    def update(self, w, tokens) -> None:
        """Bayes' rule on ``w`` for each of the street's ``tokens`` (hands left out of a range: 0)."""
        for v, a in self.path(tokens)[0]:
            real = 1 - int(self.game.tree.actor[v])
            hands, probs = self.probs(v, real)
            out = np.zeros(N_HANDS)
            out[hands] = probs[:, a]
            bayes(w[real], out)


# ------------------------------------------------------------------ the agent


def parse_budget(text: str | None) -> tuple[float, ...]:
    """``"P,F,T,R"``: seconds per decision on each street (module doc), or None: the defaults."""
    if text is None:
        return DEFAULT_BUDGET
    try:
        b = tuple(float(x) for x in str(text).split(","))
    except ValueError:
        b = ()
    if len(b) != 4 or any(not (x >= 0) for x in b):
        raise InputError(f"--budget {text!r}: expected 4 seconds per decision, preflop,flop,turn,river (e.g. 30,3,3,1.5)")
    return b


class PreflopCache:
    """Modicum's preflop cache (Appendix A): per (seat, key) a :class:`Plan` of the whole
    preflop. ``key`` is the preflop's tokens through the opponent's last raise off the tree:
    they fix which sizes the tree adds and where (the added sizes, ``StreetSubgame.key``). The
    empty key is the blueprint's own strategy (:class:`BlueprintPlan`); any other is a
    :class:`StreetSubgame` of street 0 from uniform beliefs, solved once by ``solve`` (only its
    strategies are kept). ``path``: an npz the solved plans are loaded from (checked: this
    blueprint, this k, each entry's tree) and saved to."""

    FORMAT = "treeplex preflop cache 1"

    def __init__(self, bp: Blueprint, Pc: np.ndarray, path: str | None = None):
        self.bp, self.Pc, self.path = bp, Pc, path
        self.plans: dict[tuple, Plan] = {}
        self.dirty = False  # solved plans not saved yet
        if path is not None:
            from ..io.files import check_output

            check_output(path, "--preflop-cache", {bp.path: "the blueprint"}, regular=True)
            if os.path.exists(path):
                self._load(path)

    def subgame(self, seat: int, key) -> StreetSubgame:
        t = self.bp.table
        return StreetSubgame(self.bp, 0, (t.small_blind, t.big_blind), 0, [], list(key),
                             [np.ones(N_HANDS), np.ones(N_HANDS)], seat, self.Pc)

    def get(self, seat: int, key: tuple, solve) -> tuple[Plan, bool]:
        """(the plan of ``key`` for the agent in ``seat``, whether ``solve(subgame)`` made it now)."""
        plan = self.plans.get((seat, key))
        if plan is not None:
            return plan, False
        sub = self.subgame(seat, key)
        if not key:
            plan = BlueprintPlan(sub)
        else:
            plan = dataclasses.replace(solve(sub), problem=None, table=None)
            self.dirty = True
        self.plans[(seat, key)] = plan
        return plan, bool(key)

    def fingerprint(self) -> str:
        """sha256 of the blueprint's tree, its strategy and k: what the plans were solved for."""
        h = hashlib.sha256(self.bp.tree.digest().encode())
        h.update(np.ascontiguousarray(self.bp.P).tobytes())
        h.update(np.ascontiguousarray(self.Pc).tobytes())
        return h.hexdigest()

    def save(self) -> None:
        from ..io.files import atomic_write

        arrays = {"format": np.array(self.FORMAT), "fingerprint": np.array(self.fingerprint())}
        solved = [(k, p) for k, p in self.plans.items() if k[1]]
        for i, ((seat, key), plan) in enumerate(solved):
            arrays[f"seat{i}"] = np.array(seat)
            arrays[f"key{i}"] = np.array(",".join(key))
            arrays[f"x{i}"], arrays[f"y{i}"] = plan.beh
        atomic_write(self.path, lambda f: np.savez(f, **arrays))
        self.dirty = False

    def _load(self, path: str) -> None:
        def bad(what):
            return InputError(f"--preflop-cache {path}: {what}")

        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {name: z[name] for name in z.files}
        except Exception as e:  # noqa: BLE001 - any unreadable file is the same one-line error
            raise bad(f"not a readable npz file ({type(e).__name__})") from None
        if str(arrays.get("format", "")) != self.FORMAT:
            raise bad(f"not a preflop cache (no format {self.FORMAT!r})")
        if str(arrays.get("fingerprint", "")) != self.fingerprint():
            raise bad("made for another blueprint or k")
        i = 0
        while f"seat{i}" in arrays:
            try:
                seat, key = int(arrays[f"seat{i}"]), tuple(str(arrays[f"key{i}"]).split(","))
                beh = [np.asarray(arrays[f"{p}{i}"], dtype=np.float64) for p in "xy"]
                if seat not in (0, 1):
                    raise ValueError(f"seat {seat}")
                sub = self.subgame(seat, key)
            except (KeyError, ValueError, InputError, GameError) as e:
                raise bad(f"entry {i}: {e}") from None
            if not sub.key or any(b.shape != (n,) or not np.isfinite(b).all() or (b < 0).any() or (b > 1 + 1e-9).any()
                                  for b, n in zip(beh, sub.n_seqs)):
                raise bad(f"entry {i} ({','.join(key)}): not a strategy of that subgame's tree")
            self.plans[(seat, key)] = Solved(sub, None, None, beh, float("nan"), float("nan"), 0.0, 0.0)
            i += 1


class DepthLimitedAgent(Agent):
    """Real-time depth-limited solving over a :class:`Blueprint` (module doc). ``k`` 4 (bias
    set) or 1 (naive); ``budget`` seconds per decision per street; ``rollouts`` deals per
    subgame's leaf table (preflop and flop); ``max_hands`` per range in the turn and river
    spots; ``preflop_cache`` an npz for :class:`PreflopCache`; ``max_iters`` DCFR iterations at
    most per preflop or flop solve. ``times``: the seconds of each decision, per street, and
    ``preflop_times`` of the preflop ones off the blueprint's tree (that solved, or that used a
    cached plan); ``stats`` as :class:`.agents.BlueprintAgent`'s, and the preflop cache's solves
    and loads (a cached solved plan used in a new hand); ``decided``: per betting string of the
    hand, the (tokens, ``[1326, k]`` probabilities) the decision there sampled its
    action from (its strategy for every hand it could hold)."""

    def __init__(self, bp: Blueprint, k: int = 4, seed: int = 0, budget=DEFAULT_BUDGET, rollouts: int = 20000,
                 max_hands: int = 60, safe: bool = True, name: str | None = None, preflop_cache: str | None = None,
                 max_iters: int = 2000):
        self.bp, self.k, self.safe, self.max_iters = bp, k, safe, int(max_iters)
        self.Pc = continuation_strategies(bp, k)
        self.budget = tuple(budget)
        self.n_rollouts, self.max_hands = int(rollouts), int(max_hands)
        self.rng = np.random.default_rng(seed)
        self.krng = K.seed_state(seed)
        self.name = name or f"dl:k={k}"
        self.times = [[] for _ in STREETS]
        self.preflop_times = {"solved": [], "cached": []}
        self.stats = {"decisions": 0, "off_tree": 0, "unreached": 0, "preflop_solves": 0, "preflop_loads": 0,
                      "safe_solves": 0}
        self.preflop = PreflopCache(bp, self.Pc, preflop_cache)

    def begin(self, seat, hand):
        self.seat, self.hole = seat, int(HAND_INDEX[hand.hole(seat)[0], hand.hole(seat)[1]])
        self.w = [np.ones(N_HANDS), np.ones(N_HANDS)]
        self.plan = None  # the preflop's plan for the preflop tokens ``pre`` (beliefs ``w`` are the preflop's by it)
        self.pre = None
        self.keys = set()  # the preflop cache's keys this hand has used
        self.last = None  # the latest solution of the current street (Solved or EndSpot)
        self.last_street = 0
        self.closed = 0  # the last street whose actions the beliefs have taken in
        self.spot = None  # the hand's latest solved turn or river EndSpot (the next one's alts)
        self.decided: dict[str, tuple] = {}

    def end(self, hand, seat):
        if self.preflop.dirty and self.preflop.path is not None:
            self.preflop.save()

    HAND_STATE = ("w", "plan", "pre", "keys", "last", "last_street", "closed", "spot", "stats", "krng")

    @contextlib.contextmanager
    def aside(self):
        """Solves and belief updates made inside are undone after: every per-hand state the
        agent's own play reads (beliefs, plans, the latest solutions and the previous spot its
        safe re-solves start from, counts, the rollouts' random state) is restored, so a
        caller that asks the agent about lines it may not play (LBR's model) leaves its play
        as it would be without the questions. The preflop cache keeps what it solved."""
        saved = {k: getattr(self, k) for k in self.HAND_STATE}
        saved["w"] = [w.copy() for w in self.w]
        saved["keys"], saved["stats"], saved["krng"] = set(self.keys), dict(self.stats), self.krng.copy()
        try:
            yield
        finally:
            for k, v in saved.items():
                setattr(self, k, v)

    # ---------------------------------------------------------------- beliefs

    def observe(self, hand: Hand) -> None:
        """Take in the actions of ``hand`` not taken in yet (``hand`` may be a line the agent
        considers, as LBR's model of it does: preflop the beliefs are recomputed whenever the
        preflop's tokens differ): the preflop by its plan (module doc); a later street's once
        it is over, by its last solution."""
        self._preflop(hand)
        for r in range(max(1, self.closed + 1), len(hand.rounds) - 1):
            if self.last is not None and self.last_street == r:
                try:
                    self.last.update(self.w, hand.rounds[r])
                except (InputError, GameError):  # an action outside the last solution's tree: no update
                    pass
            self.last = None
            self.closed = r

    def _preflop(self, hand: Hand) -> None:
        """The plan of the preflop's tokens (the blueprint's until the opponent raises to a size
        the plan's tree lacks; then the cached plan with the sizes added through that raise, solved
        on a miss: nested unsafe solving) and both beliefs by Bayes' rule under it from uniform."""
        toks = tuple(hand.rounds[0])
        if toks == self.pre:
            return
        plan = self._plan(())
        node = plan.sub.root
        for i, tok in enumerate(toks):
            if node.to_act != self.seat and tok[0] == "r" and int(tok[1:]) not in node.raise_sizes().values():
                plan = self._plan(toks[:i + 1])
                node = plan.sub.path[-1][0]
            node = node.child(token_label(node, tok))
        self.plan, self.pre = plan, toks
        self.w = [np.ones(N_HANDS), np.ones(N_HANDS)]
        plan.update(self.w, toks)

    def _plan(self, key: tuple) -> Plan:
        """The preflop cache's plan of ``key`` for this seat, solved within the preflop's budget
        on a miss (counted in ``stats``)."""
        def solve(sub):
            return sub.solve(self.n_rollouts, self.krng, time_limit=max(0.05, self.budget[0] * 0.8),
                             max_iters=self.max_iters)

        plan, solved = self.preflop.get(self.seat, key, solve)
        if key and key not in self.keys:
            self.keys.add(key)
            self.stats["preflop_solves" if solved else "preflop_loads"] += 1
        return plan

    # ---------------------------------------------------------------- acting

    def act(self, hand, seat):
        t0 = time.perf_counter()
        self.stats["decisions"] += 1
        solves = self.stats["preflop_solves"]
        self.observe(hand)
        s = hand.street
        if s == 0:
            tokens, P = self.plan.strategy(hand.rounds[0])
        else:
            if s == 1 and self._flop_node(hand) < 0:
                self.stats["off_tree"] += 1
            tokens, P = self.solve_or_call(hand)
            if self.last is None:
                self.stats["off_tree"] += 1
            if s == 1 and self.last is not None and self.last.sub.bucket[self.hole] < 0:
                self.stats["unreached"] += 1
        a = sample_action(P[self.hole], self.rng)
        self.decided[hand.betting()] = (tokens, P)
        self.times[s].append(time.perf_counter() - t0)
        if s == 0 and self.plan.sub.key:
            solved = self.stats["preflop_solves"] > solves
            self.preflop_times["solved" if solved else "cached"].append(self.times[0][-1])
        return tokens[a]

    def _flop_node(self, hand) -> int:
        """The blueprint node at the flop's start: the preflop plan's leaf (-1: none)."""
        return self.plan.leaf_node(hand.rounds[0])

    def solve_or_call(self, hand):
        """(tokens, ``[1326, k]`` probabilities) at ``hand``'s decision from a new solve of its
        street (kept in ``last``), or check/call (``last`` None) where the hand's actions do not
        fit the subgame's tree (sizes merged into all-in)."""
        try:
            self.last, self.last_street = self.solve_street(hand), hand.street
            return self.last.strategy(hand.rounds[hand.street])
        except (InputError, GameError):
            self.last = None
            return CALL

    def solve_street(self, hand) -> "Solved | EndSpot":
        """The subgame of ``hand``'s street (after the preflop) from the street start, with the
        street-start beliefs and the street's tokens, solved within the street's budget (module
        doc): a :class:`Solved` flop subgame, or a solved turn or river :class:`EndSpot`."""
        s = hand.street
        c = hand.node.street0
        toks = list(hand.rounds[s])
        if s == 1:
            sub = StreetSubgame(self.bp, 1, (c, c), self._flop_node(hand), hand.board(), toks,
                                [w.copy() for w in self.w], self.seat, self.Pc)
            return sub.solve(self.n_rollouts, self.krng, time_limit=max(0.05, self.budget[1] * 0.8),
                             max_iters=self.max_iters)
        args = (self.bp, s, (c, c), hand.board(), toks, self.w, self.seat, self.hole, self.max_hands)
        spot = None
        if self.safe and self.spot is not None:  # Reach-style safe re-solving from the previous spot
            try:
                spot = EndSpot(*args, prev=(self.spot, hand.rounds[self.spot.street]))
                self.stats["safe_solves"] += 1
            except (InputError, GameError):  # the previous spot lacks this line: unsafe, as the first
                pass
        spot = spot or EndSpot(*args)
        spot.solve(time_limit=max(0.05, self.budget[s] * 0.8), max_iters=1000)
        self.spot = spot
        return spot


def _passive(label: str) -> str:
    """The protocol token of a fold ("f") or a check/call ("c"); "" for a bet or raise."""
    return "f" if label == "f" else "c" if label in ("x", "c") else ""


def make_agent(spec: str, abstraction: str | None, seed: int, budget: str | None = None, stdin=None,
               stdout=None, preflop_cache: str | None = None) -> Agent:
    """``dl:BP.npz[,k=4][,rollouts=N][,hands=N][,safe=1]``: the depth-limited agent on that
    blueprint (``budget``: seconds per decision per street, "P,F,T,R"; ``preflop_cache``: its npz
    file); any other spec is :func:`.agents.make_agent`'s."""
    from .agents import make_agent as plain

    if not spec.startswith("dl:"):
        if preflop_cache is not None:
            raise InputError(f"--preflop-cache: {spec!r} is not a depth-limited agent (dl:BP.npz)")
        return plain(spec, abstraction, seed, stdin, stdout)
    path, *opts = spec[3:].split(",")
    kw = {"k": 4, "rollouts": 20000, "hands": 60, "safe": 1}
    for o in opts:
        key, _, val = o.partition("=")
        if key not in kw or not val.isdigit() or (key == "safe" and val not in ("0", "1")):
            raise InputError(f"agent {spec!r}: unknown option {o!r}; expected k=1|4, rollouts=N, hands=N, safe=0|1")
        kw[key] = int(val)
    if not abstraction:
        raise InputError(f"{spec}: a depth-limited agent needs --abstraction ABS.npz")
    return DepthLimitedAgent(Blueprint(path, abstraction), k=kw["k"], seed=seed, budget=parse_budget(budget),
                             rollouts=kw["rollouts"], max_hands=kw["hands"], safe=bool(kw["safe"]), name=spec,
                             preflop_cache=preflop_cache)
