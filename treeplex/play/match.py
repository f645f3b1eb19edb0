"""Duplicate matches between two agents, and A's result in mbb/g with a 95% interval.

Each deal is played twice with the same cards per seat: A as the small blind (player 0)
against B, then B as the small blind against A. A's result on the pair is the mean of its
two results, so the luck of the cards cancels where both agents play alike (two calling
stations: exactly 0). The interval is the normal approximation over the pairs:
mean ± 1.96 s / sqrt(n).
"""

from __future__ import annotations

import math

import numpy as np

from .engine import Hand, Table, deal


def play_hand(cards, agents, table: Table = Table()) -> Hand:
    """Play one hand: ``agents[p]`` is player p (0 = small blind)."""
    h = Hand(cards, table)
    for p in (0, 1):
        agents[p].begin(p, h.view(p))
    while not h.done:
        p = h.to_act
        h.apply(agents[p].act(h.view(p), p))
    for p in (0, 1):
        agents[p].end(h.view(p), p)
    return h


def allin_value(h: Hand, rollouts: int, rng, flops=None) -> float:
    """Player 0's expected chips of a finished hand given the cards seen when its all-in was
    called (module doc); the payoff itself for other hands. With ``flops`` (the dealer's flops,
    uniform; a partial abstraction's) a preflop all-in averages over those flops that miss the
    four hole cards (all of them, or ``rollouts // 10`` sampled), each with every turn and river."""
    from ..blueprint.kernels import uniform
    from ..poker.cards import HAND_INDEX
    from .engine import BOARD_SEEN
    from .equity import HOLES, equity

    last = max(i for i, r in enumerate(h.rounds) if r)
    if not h.showdown() or last == 3:
        return float(h.payoff())
    w = np.zeros(len(HOLES))
    w[HAND_INDEX[h.cards[2], h.cards[3]]] = 1
    hole = np.array(h.hole(0), dtype=np.int64)
    if last == 0 and flops is not None:
        ok = flops[~np.isin(flops, h.cards[:4]).any(axis=1)]
        n = max(1, rollouts // 10)
        pick = ok if len(ok) <= n else ok[[int(uniform(rng) * len(ok)) for _ in range(n)]]
        e = float(np.mean([equity(hole, np.asarray(f, dtype=np.int64), w, HOLES, 1081, rng) for f in pick]))
    else:
        e = equity(hole, np.array(h.cards[4:4 + BOARD_SEEN[last]], dtype=np.int64), w, HOLES, rollouts, rng)
    return h.node.contrib[0] * (2 * e - 1)


def summary(values, big_blind: int) -> dict:
    """mbb/g and the 95% half-width of per-pair chip results."""
    v = np.asarray(values, dtype=np.float64)
    scale = 1000.0 / big_blind
    ci = 1.96 * v.std(ddof=1) / math.sqrt(len(v)) * scale if len(v) > 1 else float("inf")
    return {"mbb": float(v.mean() * scale), "ci95": float(ci), "pairs": len(v)}


def seat_scores(h, seat: int, aivat=None, seats=None) -> tuple[float, float]:
    """A played hand's chips and its AIVAT score (0 without ``aivat``; ``seats`` as
    :meth:`.aivat.Aivat.score` takes them) for the player in ``seat``: player 0's, signed."""
    sign = 1 if seat == 0 else -1  # (whole chips stay whole)
    return sign * h.payoff(), (sign * aivat.score(h, seats)[1] if aivat is not None else 0.0)


def duplicate_match(a, b, n: int, seed: int = 0, table: Table = Table(), flops=None, history=None,
                    allin_ev: bool = False, rollouts: int = 1000, aivat=None) -> dict:
    """``n`` duplicate pairs of ``a`` against ``b`` (module doc); ``history.write`` gets each
    hand's STATE line. With ``allin_ev`` the result has ``adjusted``, the summary of the
    all-in-adjusted pairs; with ``aivat`` (an :class:`.aivat.Aivat`) ``aivat``, the summary of
    the pairs' AIVAT scores. ``per_pair`` holds A's chips per pair for each of them (two agents
    run on the same ``seed`` get the same cards: their per-pair differences are paired)."""
    from ..blueprint.kernels import seed_state
    from .history import state_line

    rng = np.random.default_rng(seed)
    eq_rng = seed_state(seed)
    pairs, adjusted, scored = [], [], []
    number = 0
    for _ in range(n):
        cards = deal(rng, flops)
        u = adj = sc = 0
        for seats in ((a, b), (b, a)):
            h = play_hand(cards, seats, table)
            chips, score = seat_scores(h, 0 if seats[0] is a else 1, aivat, seats)
            u, sc = u + chips, sc + score
            if allin_ev:
                x = allin_value(h, rollouts, eq_rng, flops)
                adj += x if seats[0] is a else -x
            if history is not None:
                history.write(state_line(h, number, [s.name for s in seats]) + "\n")
            number += 1
        pairs.append(u / 2)
        adjusted.append(adj / 2)
        scored.append(sc / 2)
    out = summary(pairs, table.big_blind)
    if allin_ev:
        out["adjusted"] = summary(adjusted, table.big_blind)
    out["per_pair"] = {"plain": pairs}
    if allin_ev:
        out["per_pair"]["adjusted"] = adjusted
    if aivat is not None:
        out["aivat"] = summary(scored, table.big_blind)
        out["per_pair"]["aivat"] = scored
    return out
