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


def summary(values, big_blind: int) -> dict:
    """mbb/g and the 95% half-width of per-pair chip results."""
    v = np.asarray(values, dtype=np.float64)
    scale = 1000.0 / big_blind
    ci = 1.96 * v.std(ddof=1) / math.sqrt(len(v)) * scale if len(v) > 1 else float("inf")
    return {"mbb": float(v.mean() * scale), "ci95": float(ci), "pairs": len(v)}


def duplicate_match(a, b, n: int, seed: int = 0, table: Table = Table(), flops=None, history=None,
                    on_hand=None) -> dict:
    """``n`` duplicate pairs of ``a`` against ``b`` (module doc); ``history(hand, number,
    names)`` is called after each hand with the names by player (0 = small blind)."""
    from .history import state_line

    rng = np.random.default_rng(seed)
    pairs = []
    number = 0
    for _ in range(n):
        cards = deal(rng, flops)
        u = 0
        for seats in ((a, b), (b, a)):
            h = play_hand(cards, seats, table)
            r = h.payoff()
            u += r if seats[0] is a else -r
            if history is not None:
                history.write(state_line(h, number, [s.name for s in seats]) + "\n")
            number += 1
        pairs.append(u / 2)
        if on_hand is not None:
            on_hand(len(pairs))
    return summary(pairs, table.big_blind)
