"""The backend's regret update, serial and split by independent subtrees (Treeplex.subtree_parts).

Expected numbers come from a plain-NumPy regret update written from the formulas (the
independent second method), and the partition is checked against the tree structure itself.
"""

from __future__ import annotations

import numpy as np
import pytest

import treeplex as tp
from treeplex.poker.river import RiverGame
from treeplex.backends.numba_regret import kernel_args, runs, update, update_parts
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


def reference_update(T, g, b, R, x, xsum, coef, rho, omega, lower=None):
    """The regret update of the module docstring of treeplex.backends.numba_regret, one
    infoset at a time in plain NumPy (the independent second method)."""
    pos, neg, floor, kappa, lam, eta = coef
    v = g.copy()
    for j in range(T.n_infosets - 1, -1, -1):
        sl = slice(T.start[j], T.end[j])
        played = b[sl] @ v[sl]
        value = played
        if lower is not None:
            value = (played - lower[sl] @ v[sl]) / (1 - lower[sl].sum())
        inst = v[sl] - value
        R[sl] = np.maximum(R[sl] * np.where(R[sl] > 0, pos, neg) + inst, floor)
        q = kappa * R[sl] + lam * inst
        if eta > 0:
            e = np.exp(eta * q - (eta * q).max())
            b[sl] = e / e.sum()
        else:
            q = np.maximum(q, 0)
            b[sl] = q / q.sum() if q.sum() > 0 else 1 / len(q)
        if lower is not None:
            b[sl] = lower[sl] + (1 - lower[sl].sum()) * b[sl]
        v[T.parent[j]] += played
    xsum[:] = rho * xsum + omega * x
    x[:] = T.plan_from_behavioral(b)
    return v


SLOW = pytest.mark.slow  # each parallel specialization compiles for ~20 s on a cold cache


@pytest.mark.parametrize("perturbed", [False, pytest.param(True, marks=SLOW)])
@pytest.mark.parametrize("coef", [*COEFS[:3], pytest.param(COEFS[3], marks=SLOW)])
def test_serial_and_parallel_updates_equal_the_reference(coef, perturbed):
    if perturbed and coef[5] > 0:
        pytest.skip("Hedge has no lower-bounded form")
    rng = np.random.default_rng(1)
    for T in treeplexes():
        n = T.n_seqs
        lower = None
        if perturbed:
            lower = np.full(n, 0.01)
            lower[0] = 0.0
        b = T.behavioral_from_plan(T.uniform())
        state = (rng.normal(size=n), b, np.abs(rng.normal(size=n)))  # g, b, R
        x, xsum = T.uniform(), rng.random(n)
        g, b1, R1 = (a.copy() for a in state)
        x1, xsum1 = x.copy(), xsum.copy()
        v = reference_update(T, g, b1, R1, x1, xsum1, coef, 0.5, 2.0, lower)
        bounds = None if lower is None else (lower, np.add.reduceat(lower, T.start))
        for parts, min_run in ((None, 1), (1, 1), (1, 8), (1, 10**9), (2, 8), (3, 1), (40, 8)):
            g2, b2, R2 = (a.copy() for a in state)
            x2, xsum2 = x.copy(), xsum.copy()
            args = (T.start, T.end, T.parent, g2, b2, R2, x2, xsum2, *kernel_args(coef, plain=True),
                    np.zeros(0), bounds, 0.5, 2.0)
            value = update(*args) if parts is None else update_parts(runs(T, parts, min_run), *args)
            for a, c in ((b1, b2), (R1, R2), (v, g2), (x1, x2), (xsum1, xsum2)):
                np.testing.assert_allclose(c, a, rtol=1e-12, atol=1e-12)
            assert value == pytest.approx(v[0], rel=1e-12, abs=1e-12)
