"""The fused CFR update split by independent subtrees (Treeplex.subtree_parts) equal the serial ones.

Expected numbers come from the serial kernels regret_pass / plan_pass (the independent
second method here), and the partition is checked against the tree structure itself.
"""

from __future__ import annotations

import numpy as np
import pytest

import treeplex as tp
from treeplex.poker.river import RiverGame
from treeplex.solvers.regret_kernels import kernel_args, plan_pass, regret_pass, update_parts
from random_games import random_game

# (pos, neg, floor, kappa, lam, eta): CFR+, DCFR-like, PDCFR+-like, Hedge
COEFS = [(1.0, 1.0, 0.0, 1.0, 0.0, 0.0), (0.7, 0.3, -np.inf, 1.0, 0.0, 0.0),
         (0.9, 0.9, 0.0, 0.95, 1.0, 0.0), (1.0, 1.0, -np.inf, 1.0, 0.0, 0.3)]


def treeplexes():
    river = RiverGame(pot=1000, board="AsKd7h2c3s", range0="AA,KK,72,QJs,T9s", range1="AA,KK,72,QJs,T9s")
    yield from river.problem().treeplexes
    for seed in range(6):
        yield from tp.compile_game(random_game(seed, max_depth=5, n_signals=3)).treeplexes


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_subtree_parts_cover_every_infoset_once_and_close_under_descendants(parts):
    for T in treeplexes():
        lo, hi, ptr = T.subtree_parts(parts)
        assert len(ptr) == parts + 1 and ptr[0] == 0 and ptr[-1] == len(lo)
        part = np.full(T.n_infosets, -1)
        for k in range(parts):
            for q in range(ptr[k], ptr[k + 1]):
                assert np.all(part[lo[q]:hi[q]] == -1)
                assert len(set(T.end[lo[q]:hi[q]] - T.start[lo[q]:hi[q]])) == 1  # one size per run
                part[lo[q]:hi[q]] = k
        assert np.all(part >= 0)
        below = T.parent > 0  # an infoset under a sequence is in the part of that sequence's infoset
        assert np.array_equal(part[below], part[T.seq_infoset[T.parent[below]]])


@pytest.mark.parametrize("coef", COEFS)
def test_parallel_passes_equal_the_serial_ones(coef):
    rng = np.random.default_rng(1)
    for T in treeplexes():
        n = T.n_seqs
        b = T.behavioral_from_plan(T.uniform())
        state = (rng.normal(size=n), b, np.abs(rng.normal(size=n)))  # g, b, R
        x, xsum = T.uniform(), rng.random(n)
        logprior = np.log(b) if coef[5] > 0 else np.zeros(0)
        g, b1, R1 = (a.copy() for a in state)
        x1, xsum1 = x.copy(), xsum.copy()
        value = regret_pass(T.start, T.end, T.parent, g, b1, R1, *kernel_args(coef, plain=True), logprior)
        plan_pass(T.start, T.end, T.parent, b1, x1, xsum1, 0.5, 2.0)
        for parts in (1, 2, 3, 40):
            v, b2, R2 = (a.copy() for a in state)
            x2, xsum2 = x.copy(), xsum.copy()
            P = T.subtree_parts(parts)
            value2 = update_parts(P, T.start, T.end, T.parent, v, b2, R2, x2, xsum2, *kernel_args(coef, plain=True), logprior,
                                  0.5, 2.0)
            for a, c in ((b1, b2), (R1, R2), (g[1:], v[1:]), (x1, x2), (xsum1, xsum2)):
                assert np.array_equal(a, c)  # same arithmetic, sequence by sequence
            assert value2 == pytest.approx(value, rel=1e-12, abs=1e-12)  # only the root sum is reordered
