"""AIVAT: a hand's chips plus zero-mean control variates (Burch, Schmid, Moravcik, Morrill and
Bowling, "AIVAT", AAAI 2018, §4).

With a value function v over histories (both players' cards known), a hand's score is its chips
plus, in player 0's chips:

- at each board card event (flop, turn, river): E_c[v(h c)] - v(h c_dealt), the expectation over
  the dealer's exact distribution given the cards out (the flop uniform over the dealer's flops
  that miss the four hole cards, the turn and river uniform over the cards left);
- at each decision of an agent whose policy is known (one that keeps ``decided``: the blueprint
  and the depth-limited agent): sum_a pi(a|I) v(h a) - v(h a_taken), pi what it sampled from;
- at each translation of a real action onto the blueprint's tree (the pseudo-harmonic coin of
  :meth:`.agents.Blueprint.map_probs`, a chance event of known odds): E_lab[v] - v(lab drawn);
- none at the decisions of an unknown agent.

Each term has mean 0 given the history before it, whatever v is, so the score is unbiased
(§4, Theorem 1). The hole-card term is left out: it has mean 0 too, and in a duplicate pair
(the same cards per seat twice) it is the same number in both hands, so the pair's A result
has none of it anyway.

Where the variance is left (``parts``, per hand): the score telescopes to v(root) plus, at each
step, E_step[v(next)] - v(h), which is 0 wherever the step's distribution is the one v assumes
(the dealer's; the blueprint's policy: v is its expected value). At a known agent's decision
this is its **gain** over the blueprint in v's terms, sum_a pi(a|I) v(h a) - v(h): 0 for the
blueprint itself, and for an agent that plays otherwise (the depth-limited one) it is what the
score measures, but weighted by v(h a), which knows both hands: it carries the luck of the
cards wherever the agent's policy departs from the blueprint's.

v(h) is the blueprint's expected value (:func:`treeplex.blueprint.kernels.expected_value`, both
players playing the blueprint) from the abstract node the real history maps to, with both real
hands' buckets, averaged over the board cards still to come: all rivers on the turn, every
``stride``-th ordered (turn, river) pair on the flop, and before the flop each of the dealer's
flops, or of a fixed random ``flop_samples`` of them where it has more (a fixed subset of
completions: v stays a function of h).

Where the dealer has more than ``flop_samples`` flops (an abstraction of every flop: 22,100),
the flop's term takes E_c[v(h c)] as the mean of v over ``flop_samples`` flops drawn uniformly,
with replacement, from those that miss the hole cards, independently of the flop dealt: an
unbiased estimate, so the term keeps mean 0 (its variance grows by Var(v) / flop_samples),
where the exact sum would walk the blueprint from every flop (about 2 million walks a hand).

Off the tree (an action the tree cannot map) v is 0 from there on, as it is at a completion
whose class the abstraction did not reach: those terms vanish, and the chips stand.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..blueprint import kernels as K
from ..blueprint.game import DECISION, MAX_DEPTH
from ..poker.cards import HAND_INDEX
from .agents import Blueprint
from .engine import BOARD_SEEN, Hand


@nb.njit(cache=True)
def _leaf(cards, root, P, kind, street, actor, n_act, first, payoff, children, offset, ix_rounds, ix_keys,
          ix_offsets, ix_shapes, ix_lens, vals, wheres, bk, frame, acc):
    """The blueprint's value from ``root`` on the full deal ``cards`` (0 where a class the
    subtree needs is not reached)."""
    sd = K.real_buckets(cards, ix_rounds, ix_keys, ix_offsets, ix_shapes, ix_lens, vals, wheres, bk)
    if kind[root] == DECISION:
        for p in range(2):
            for s in range(street[root], 4):
                if bk[p, s] < 0:
                    return 0.0
    return K.expected_value(bk, sd, kind, street, actor, n_act, first, payoff, children, offset, P, P, frame, acc,
                            root)


@nb.njit(cache=True)
def board_value(cards, nb_, root, flops, stride, P, kind, street, actor, n_act, first, payoff, children, offset,
                ix_rounds, ix_keys, ix_offsets, ix_shapes, ix_lens, vals, wheres):
    """v (module doc) at node ``root`` with ``cards[:4 + nb_]`` dealt: the mean of :func:`_leaf`
    over the completions of the board (``cards`` is scratch past ``4 + nb_``)."""
    bk = np.zeros((2, 4), dtype=np.int64)
    frame = np.zeros((MAX_DEPTH, 2), dtype=np.int64)
    acc = np.zeros(MAX_DEPTH)
    used = np.zeros(52, dtype=np.bool_)
    for j in range(4 + nb_):
        used[cards[j]] = True
    total, count = 0.0, 0
    nf = flops.shape[0] if nb_ == 0 else 1
    for f in range(nf):
        if nb_ == 0:
            if used[flops[f, 0]] or used[flops[f, 1]] or used[flops[f, 2]]:
                continue
            for j in range(3):
                cards[4 + j] = flops[f, j]
        k = 0
        for t in range(52 if nb_ < 4 else 1):
            if nb_ < 4:
                if used[t] or t == cards[4] or t == cards[5] or t == cards[6]:
                    continue
                cards[7] = t
            for r in range(52 if nb_ < 5 else 1):
                if nb_ < 5:
                    if used[r] or r == cards[4] or r == cards[5] or r == cards[6] or r == cards[7]:
                        continue
                    cards[8] = r
                if nb_ < 4:
                    k += 1
                    if (k - 1) % stride:
                        continue
                total += _leaf(cards, root, P, kind, street, actor, n_act, first, payoff, children, offset,
                               ix_rounds, ix_keys, ix_offsets, ix_shapes, ix_lens, vals, wheres, bk, frame, acc)
                count += 1
    return total / count if count else 0.0


class Aivat:
    """AIVAT scores (module doc) with v from blueprint ``bp``; ``flops``: the dealer's flops
    (rows of 3 cards; None: every flop); ``stride``: v on the flop averages every stride-th of
    the 1,980 ordered (turn, river) pairs; ``flop_samples``: the flops v averages before the
    flop, and those the flop's term draws, where the dealer has more. ``seconds``: time spent
    scoring; ``parts``: per scored hand, in player 0's chips, its terms summed by kind
    (``chance``, ``actions0``/``actions1`` at each player's known decisions, ``translation``)
    and, with ``gains``, each known player's ``gain0``/``gain1`` (module doc; not part of the
    score; one more v per known decision)."""

    def __init__(self, bp: Blueprint, flops=None, stride: int = 20, seed: int = 0, flop_samples: int = 100,
                 gains: bool = False):
        self.bp, self.stride, self.flop_samples, self.gains = bp, int(stride), int(flop_samples), gains
        if flops is None:
            from itertools import combinations

            flops = np.array(list(combinations(range(52), 3)), dtype=np.int64)
        self.flops = np.ascontiguousarray(flops, dtype=np.int64)
        self.v_flops = self.flops  # v's flops before the flop (module doc): all, or a fixed subset
        if len(self.flops) > self.flop_samples:
            pick = np.random.default_rng(0).choice(len(self.flops), self.flop_samples, replace=False)
            self.v_flops = np.ascontiguousarray(self.flops[np.sort(pick)])
        self.rng = np.random.default_rng(seed)
        self.seconds = 0.0
        self.parts: list[dict] = []

    def value(self, u: int, cards, nb_: int) -> float:
        """v at blueprint node ``u`` (-1: off the tree, 0) with ``cards[:4 + nb_]`` dealt."""
        if u < 0:
            return 0.0
        t, d = self.bp.tree, self.bp.deals
        c = np.zeros(9, dtype=np.int64)
        c[:4 + nb_] = cards[:4 + nb_]
        return board_value(c, nb_, u, self.v_flops, self.stride, self.bp.P, t.kind, t.street, t.actor, t.n_act,
                           t.first, t.payoff, t.children, t.offset, d.ix_rounds, d.ix_keys, d.ix_offsets,
                           d.ix_shapes, d.ix_lens, d.vals, d.wheres)

    def deal_outcomes(self, cards, nb_: int) -> list[tuple[list[int], float]]:
        """The cards the dealer can deal after ``cards[:4 + nb_]`` (the flop, turn or river), each
        as (the cards dealt with them; probability); the flop's, where there are more than
        ``flop_samples``, as ``flop_samples`` uniform draws of weight 1 / ``flop_samples`` each
        (module doc)."""
        used = list(cards[:4 + nb_])
        if nb_ == 0:
            ok = [f for f in self.flops.tolist() if not set(used) & set(f)]
            if len(ok) > self.flop_samples:
                ok = [ok[i] for i in self.rng.integers(len(ok), size=self.flop_samples)]
            return [(used + f, 1.0 / len(ok)) for f in ok]
        left = [c for c in range(52) if c not in used]
        return [(used + [c], 1.0 / len(left)) for c in left]

    def chance_term(self, u: int, cards, nb_: int) -> float:
        """E_c[v(h c)] - v(h c_dealt) at the deal of the board cards after ``nb_`` of them."""
        nxt = BOARD_SEEN[BOARD_SEEN.index(nb_) + 1]
        return sum(q * self.value(u, c, nxt) for c, q in self.deal_outcomes(cards, nb_)) - self.value(u, cards, nxt)

    def action_value(self, u: int, hand: Hand, token: str, cards, nb_: int) -> tuple[float, list]:
        """(v(h token): the mean over the translations of real ``token`` at ``hand``, the
        translations (label, probability, child, v))."""
        m = self.bp.map_probs(u, hand, token) if u >= 0 else []
        out = [(lab, q, self.bp.child(u, lab)) for lab, q in m]
        out = [(lab, q, v, self.value(v, cards, nb_)) for lab, q, v in out]
        return sum(q * x for _, q, _, x in out), out

    def score(self, hand: Hand, agents) -> tuple[float, float]:
        """(player 0's chips, its AIVAT score) of the finished ``hand`` played by ``agents``."""
        import time

        t0 = time.perf_counter()
        cards = list(hand.cards)
        h = Hand(cards, hand.table)
        u = 0
        parts = dict.fromkeys(("chance", "actions0", "actions1", "translation", "gain0", "gain1"), 0.0)
        toks = [t for r in hand.rounds for t in r]
        for tok in toks:
            p, nb_ = h.to_act, BOARD_SEEN[len(h.rounds) - 1]
            t = self.bp.tree
            if u >= 0 and (t.kind[u] != DECISION or t.street[u] != h.street or t.actor[u] != p):
                u = -1
            if u >= 0:
                known = getattr(agents[p], "decided", {}).get(h.betting())
                v_tok, trans = self.action_value(u, h, tok, cards, nb_)
                if known is not None:
                    tokens, P = known
                    pi = P[HAND_INDEX[cards[2 * p], cards[2 * p + 1]]] if np.ndim(P) == 2 else P
                    vals = {x: v_tok if x == tok else self.action_value(u, h, x, cards, nb_)[0] for x in set(tokens)}
                    mean = sum(float(q) * vals[x] for x, q in zip(tokens, pi))
                    parts[f"actions{p}"] += mean - v_tok
                    if self.gains:
                        parts[f"gain{p}"] += mean - self.value(u, cards, nb_)
                if trans:
                    i = 0 if len(trans) == 1 or self.rng.random() < trans[0][1] else 1
                    parts["translation"] += v_tok - trans[i][3]
                    u = trans[i][2]
                else:
                    u = -1
            h.apply(tok)
            while u >= 0 and nb_ < BOARD_SEEN[len(h.rounds) - 1]:
                parts["chance"] += self.chance_term(u, cards, nb_)
                nb_ = BOARD_SEEN[BOARD_SEEN.index(nb_) + 1]
        self.seconds += time.perf_counter() - t0
        self.parts.append(parts)
        chips = hand.payoff()
        return float(chips), chips + parts["chance"] + parts["actions0"] + parts["actions1"] + parts["translation"]
