"""Self-play arena: agents play NLFH hands against each other, duplicate format.

Each pair of hands uses one deal (both players' cards and the flop) and one action seed:
agent A sits in seat 0 for the first hand and in seat 1 for the second, with the same cards
in each seat, so the luck of the cards and of the seats cancels. A pair's score is A's
average chips over its two hands; the result is the mean over pairs in mbb/g with a 95%
confidence interval (mean +- 1.96 standard errors of the pair scores).

Agents are strategies by infoset key for both seats; :func:`exact_match_value` gives the
expected value exactly (the sampled result should cover it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.metrics import to_mbb
from ..poker.nlfh import NLFH
from ..model.problem import Problem
from ..model.strategy import behavioral_dict


@dataclass
class Agent:
    """``strategies[seat]`` = {infoset key: {action: probability}} for seat 0 and seat 1."""

    name: str
    strategies: tuple[dict, dict]

    @classmethod
    def from_plans(cls, name: str, problem: Problem, x: np.ndarray, y: np.ndarray) -> "Agent":
        """An agent playing realization plans (a mixture such as RPAT's becomes behavioral)."""
        return cls(name, (behavioral_dict(problem.X, x), behavioral_dict(problem.Y, y)))

    def act(self, seat: int, key: str, legal, u: float) -> str:
        probs = self.strategies[seat].get(key)
        if probs is None:
            raise KeyError(f"agent {self.name!r} has no strategy at seat {seat} infoset {key!r}")
        acc = 0.0
        for a in legal:
            acc += probs.get(a, 0.0)
            if u < acc:
                return a
        return max(legal, key=lambda a: probs.get(a, 0.0))


@dataclass
class MatchResult:
    a: str
    b: str
    pairs: int
    mbb: float  # A's mean winnings, mbb per hand
    ci95: float  # half-width of the 95% confidence interval, mbb per hand

    def line(self) -> str:
        return (f"{self.a} vs {self.b}: {self.mbb:+.1f} +- {self.ci95:.1f} mbb/g "
                f"(95% CI, {2 * self.pairs} hands, duplicate)")


def _deal(game: NLFH, rng) -> list[str]:
    """Chance labels for hole 0, hole 1 and the flop, drawn with the game's probabilities."""
    labels, used = [], ()
    for n in (game.hole, game.hole, game.flop):
        outcomes = game.deal_outcomes(used, n)
        i = rng.choice(len(outcomes), p=np.array([p for _, p, _ in outcomes]))
        labels.append(outcomes[i][0])
        used = used + outcomes[i][2]
    return labels


def play_hand(game: NLFH, seats: tuple[Agent, Agent], deal: list[str], action_seed: int) -> float:
    """Player 0's chips in one hand with the given chance labels and action random numbers."""
    rng = np.random.default_rng(action_seed)
    s = game.initial_state()
    chance = iter(deal)
    while not s.is_terminal():
        if s.is_chance():
            s = s.apply(next(chance))
        else:
            p = s.player()
            s = s.apply(seats[p].act(p, s.infoset_key(), s.legal_actions(), rng.random()))
    return float(s.payoff())


def play_duplicate(game: NLFH, a: Agent, b: Agent, pairs: int, seed: int = 0) -> MatchResult:
    """``pairs`` duplicate pairs of hands (2 * pairs hands); A's result with a 95% CI."""
    rng = np.random.default_rng(seed)
    scores = np.empty(pairs)
    for i in range(pairs):
        deal = _deal(game, rng)
        s = int(rng.integers(2**63))
        first = play_hand(game, (a, b), deal, s)  # A is player 0
        second = play_hand(game, (b, a), deal, s)  # A is player 1
        scores[i] = 0.5 * (first - second)
    se = scores.std(ddof=1) / np.sqrt(pairs) if pairs > 1 else float("inf")
    return MatchResult(a.name, b.name, pairs, to_mbb(scores.mean(), game.big_blind), to_mbb(1.96 * se, game.big_blind))


def exact_match_value(problem: Problem, a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray],
                      big_blind: float) -> float:
    """A's exact expected winnings per hand, mbb, averaged over the two seats (plans (x, y))."""
    v_a0 = float(a[0] @ problem.A.matvec(b[1], count=False))
    v_b0 = float(b[0] @ problem.A.matvec(a[1], count=False))
    return to_mbb(0.5 * (v_a0 - v_b0), big_blind)
