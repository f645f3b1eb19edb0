"""Local best response (LBR; Lisý & Bowling, "Equilibrium approximation quality of current
no-limit poker bots", AAAI-17 workshops 2017): a lower bound on an agent's exploitability.

LBR knows the opponent's strategy (a *model*: per opponent hand, the probability of each of
its actions) and keeps the opponent's range over the 1,326 hole-card pairs by Bayes' rule: at
each opponent action the weight of hand h is multiplied by the probability that h takes it
(hands that share a card with LBR's or the board have weight 0). At each of its own decisions
LBR assumes the hand would go to showdown with no more betting after a call, and picks, by
utility relative to folding, among fold, check/call, a pot raise (x = 1 pot after calling)
and all-in:

    U(call)  = wp * pot - (1 - wp) * to_call
    U(raise to T) = fp * pot + (1 - fp) * (wp * 2T - (T - c_me))

``wp`` is LBR's equity (win + tie/2) against the range over the remaining board cards (all
runouts on the turn and river, ``rollouts`` sampled ones before; with ``flops``, the dealer's
flops of a partial abstraction, a preflop equity samples its flops from them), ``fp`` the range's
probability of folding to the raise, ``c_me`` what LBR has in. LBR plays the best action if
its utility is positive, else folds (checks when nothing is to call). Against a blueprint LBR
raises only to sizes its tree has (its pot and all-in where the tree offers them; at the tree's
raise cap LBR only folds or calls), so the opponent never needs action translation. Models:
:class:`BlueprintModel`, :class:`DepthLimitedModel` (the depth-limited agent's own solves) and
:class:`AgentModel` (calling station, folder).
"""

from __future__ import annotations

import numpy as np

from ..blueprint.kernels import seed_state, uniform
from ..poker.cards import HAND_INDEX, N_HANDS
from .agents import Agent, Blueprint, Follower
from .engine import Hand, replay
from .equity import HOLES as _HOLES, equity, equity_sums


class BlueprintModel:
    """The opponent as a :class:`Blueprint` plays: per hand, its tree's probabilities."""

    def __init__(self, bp: Blueprint):
        self.bp = bp

    def _node(self, hand: Hand) -> int:
        v = Follower(self.bp, np.random.default_rng(0)).sync(hand)
        if v < 0:
            raise RuntimeError(f"LBR: the hand {hand.betting()!r} left the blueprint's tree")
        return v

    def probs(self, hand: Hand, holes) -> dict:
        """{token: probability per row of ``holes``} at the opponent's decision in ``hand``."""
        v = self._node(hand)
        P = self.bp.probs(v, self.bp.buckets(hand.street, holes, hand.board()))
        out = {}
        for a, lab in enumerate(self.bp.tree.labels[v]):
            tok = self.bp.real_token(lab, hand)
            out[tok] = out.get(tok, 0) + P[:, a]
        return out

    def raises(self, hand: Hand) -> list[str]:
        """LBR's raise tokens here: the tree's 1-pot raise and all-in, where it has them."""
        labels = self.bp.tree.labels[self._node(hand)]
        return [self.bp.real_token(lab, hand) for lab in ("p1", "a") if lab in labels]


class DepthLimitedModel:
    """The depth-limited agent (:class:`.realtime.DepthLimitedAgent`, playing the match) as LBR
    sees it: per hand, the probabilities of its solves, read from the agent (not solved again).

    Exact: at every decision the agent has taken, the probabilities are the ones its own solve
    gave for all 1,326 hands there, the ones it drew its action from (preflop the blueprint's;
    on the flop the subgame's per bucket; on the turn and river the spot's per hand).
    Approximate: (1) on the turn and river a hand the spot left out of the agent's range (it
    keeps the ``hands=N`` heaviest) gets the range's action frequencies; (2) LBR's fold
    probability after its raise, a decision the agent has not reached, is read from the
    agent's latest solve of the street (when LBR acts first on a street, the model has the
    agent solve the street then, as it would, but aside: the agent's state is restored after,
    so the questions do not change its play); the agent solves again from the street start
    when it gets there, with the same beliefs and, LBR raising only to sizes of the tree, the
    same tree, but fresh rollouts and iterations, so its strategy there differs by the solve's
    noise. The agent re-solves in each seat of a duplicate pair, so the two hands of a pair
    differ by that noise as well. Preflop the probabilities are the agent's preflop plan's
    (exact); LBR raises to the blueprint's sizes there (:class:`BlueprintModel`), which are in
    the plan's tree, so the agent plays its blueprint's preflop against LBR."""

    def __init__(self, agent):
        self.agent = agent
        self.preflop = BlueprintModel(agent.bp)
        self.solved = None  # (the street's start, its solution) of the latest solve made aside

    def _strategy(self, hand: Hand):
        """(tokens, probabilities): the agent's decision there, else its preflop plan's, else
        its latest solve of the street, else a solve of the street as the agent would make it
        (made aside, :meth:`~.realtime.DepthLimitedAgent.aside`, and kept here for the street:
        the agent's own state, which its play reads, is left as it was)."""
        ag = self.agent
        known = ag.decided.get(hand.betting())
        if known is not None:
            return known
        if hand.street > 0 and ag.last is not None and ag.last_street == hand.street:
            return ag.last.strategy(hand.rounds[hand.street])
        start = (ag.seat, tuple(hand.cards), tuple(tuple(r) for r in hand.rounds[:hand.street]))  # street start
        if hand.street > 0 and self.solved is not None and self.solved[0] == start:
            return self.solved[1].strategy(hand.rounds[hand.street])
        with ag.aside():
            ag.observe(hand)  # the beliefs (preflop: this line's plan), as the agent's next act would take them
            if hand.street == 0:
                return ag.plan.strategy(hand.rounds[0])
            got = ag.solve_or_call(hand)
            if ag.last is not None:
                self.solved = (start, ag.last)
            return got

    def probs(self, hand: Hand, holes) -> dict:
        """{token: probability per row of ``holes``} at the agent's decision in ``hand``."""
        tokens, P = self._strategy(hand)
        rows = P[HAND_INDEX[holes[:, 0], holes[:, 1]]]
        out = {}
        for a, tok in enumerate(tokens):
            out[tok] = out.get(tok, 0) + rows[:, a]
        return out

    def raises(self, hand: Hand) -> list[str]:
        """LBR's raise tokens here: the tree's raises nearest to 1 pot and the largest (all-in)."""
        if hand.street == 0:
            return self.preflop.raises(hand)
        sizes = [int(t[1:]) for t in self._strategy(hand)[0] if t[0] == "r"]
        if not sizes:
            return []
        pot = hand.node.frac_raise_to(1.0)
        return [f"r{T}" for T in sorted({min(sizes, key=lambda T: abs(T - pot)), max(sizes)})]


class AgentModel:
    """An opponent whose action does not depend on its cards (calling station, folder)."""

    def __init__(self, agent):
        self.agent = agent

    def probs(self, hand: Hand, holes) -> dict:
        return {self.agent.act(hand, hand.to_act): np.ones(len(holes))}

    def raises(self, hand: Hand) -> list[str]:
        rr = hand.raise_range()
        if rr is None:
            return []
        pot = min(max(hand.node.frac_raise_to(1.0), rr[0]), rr[1])
        return sorted({f"r{pot}", f"r{rr[1]}"}, key=lambda t: int(t[1:]))


class LBRAgent(Agent):
    """Local best response against ``model`` (module doc)."""

    name = "lbr"

    def __init__(self, model, rollouts: int = 200, seed: int = 0, flops=None):
        self.model, self.rollouts, self.flops = model, int(rollouts), flops
        self.rng = seed_state(seed)

    def begin(self, seat, hand):
        mine = hand.hole(seat)
        self.w = np.ones(N_HANDS)
        self.w[np.isin(_HOLES, mine).any(axis=1)] = 0
        self.n = 0

    def _update(self, hand: Hand, seat: int) -> None:
        """Bayes' rule on the opponent's actions not seen yet."""
        toks = [t for r in hand.rounds for t in r]
        actors = [p for r in hand.actors for p in r]
        h = Hand(hand.cards, hand.table)
        for i, tok in enumerate(toks):
            if i >= self.n and actors[i] != seat:
                alive = self.w > 0
                p = self.model.probs(h, _HOLES[alive])
                self.w[alive] *= p.get(tok, 0.0)
            h.apply(tok)
        self.n = len(toks)

    def utilities(self, hand: Hand, seat: int) -> dict:
        """{token: utility relative to folding} (module doc)."""
        self._update(hand, seat)
        board = np.array(hand.board(), dtype=np.int64)
        w = self.w.copy()
        if len(board):
            w[np.isin(_HOLES, board).any(axis=1)] = 0
        hole = np.array(hand.hole(seat), dtype=np.int64)
        if hand.street == 0 and self.flops is not None:
            wp = self._preflop_equity(hole, w)
        else:
            wp = equity(hole, board, w, _HOLES, self.rollouts, self.rng)
        pot, ask = hand.pot, hand.to_call()
        c_me = hand.node.contrib[seat]
        U = {"c": wp * pot - (1 - wp) * ask}
        alive = w > 0
        for tok in self.model.raises(hand):
            T = int(tok[1:])
            after = replay(hand.cards, hand.betting(), hand.table).apply(tok)
            fold = self.model.probs(after, _HOLES[alive]).get("f")
            fp = float(fold @ w[alive] / w[alive].sum()) if fold is not None and w[alive].sum() > 0 else 0.0
            U[tok] = fp * pot + (1 - fp) * (wp * 2 * T - (T - c_me))
        return U

    def _preflop_equity(self, hole, w, per_flop: int = 10) -> float:
        """Equity over the dealer's flops (uniform among those that miss ``hole``; ``rollouts //
        10`` of them sampled, or all), ``per_flop`` sampled turns and rivers each (all of them from 1,081): the ratio of the sums
        weights each (flop, hand) pair as the deal does."""
        ok = self.flops[~np.isin(self.flops, hole).any(axis=1)]
        k = max(1, self.rollouts // 10)
        pick = ok if len(ok) <= k else ok[[int(uniform(self.rng) * len(ok)) for _ in range(k)]]
        num = den = 0.0
        for f in pick:
            f = np.asarray(f, dtype=np.int64)
            wf = np.where(np.isin(_HOLES, f).any(axis=1), 0.0, w)
            a, b = equity_sums(hole, f, wf, _HOLES, per_flop, self.rng)
            num += a
            den += b
        return num / den if den > 0 else 0.5

    def act(self, hand, seat):
        U = self.utilities(hand, seat)
        best = max(U, key=lambda t: U[t])  # the first of equal ones: call, then the smaller raise
        if U[best] > 0 or hand.to_call() <= 0:
            return best if U[best] > 0 else "c"
        return "f"
