"""Equities against the pure-Python evaluator (poker/handeval.py), EMD against SciPy's
Wasserstein distance, k-means on separated clusters, and the build: its tables against direct
computation, resuming after an interruption, and the CLI's checks."""

import os
import subprocess
import sys
from itertools import combinations

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

from treeplex.abstraction import build as B
from treeplex.abstraction.cluster import emd_kmeans, histograms_to_cdfs, quantile_buckets
from treeplex.abstraction.equity import board_equities, decode, encode
from treeplex.abstraction.indexer import Indexer
from treeplex.errors import InputError
from treeplex.poker.cards import HAND_INDEX
from treeplex.poker.handeval import hand_value


def _value(cards):
    return hand_value(tuple(c // 4 for c in cards), tuple(c % 4 for c in cards))


def _equity_brute(hole, board):
    """Equity by the independent evaluator: enumerate the 990 opponent hands."""
    mine = _value(list(hole) + list(board))
    rest = [c for c in range(52) if c not in hole and c not in board]
    win = tie = n = 0
    for o in combinations(rest, 2):
        v = _value(list(o) + list(board))
        n += 1
        win += v < mine
        tie += v == mine
    return (win + tie / 2) / n


def test_board_equities_match_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(2):
        cards = [int(c) for c in rng.permutation(52)[:7]]
        hole, board = cards[:2], cards[2:]
        e = board_equities(board)
        assert e[HAND_INDEX[hole[0], hole[1]]] == pytest.approx(_equity_brute(hole, board), abs=1e-6)
        assert np.isnan(e[HAND_INDEX[board[0], board[1]]])
    x = np.linspace(0, 1, 101)
    assert np.abs(decode(encode(x)) - x).max() <= 0.5 / 65534 + 1e-12


def test_emd_is_l1_between_cdfs():
    rng = np.random.default_rng(4)
    h = rng.integers(0, 5, (2, 50)) + 1
    cdf = histograms_to_cdfs(h)
    centres = (np.arange(50) + 0.5) / 50
    emd = wasserstein_distance(centres, centres, h[0], h[1])
    assert np.abs(cdf[0] - cdf[1]).sum() / 50 == pytest.approx(emd, rel=1e-5)


def test_kmeans_recovers_separated_clusters_and_is_seeded():
    rng = np.random.default_rng(5)
    means = [5, 25, 45]
    hist = np.zeros((300, 50))
    truth = np.repeat(np.arange(3), 100)
    for i, t in enumerate(truth):
        np.add.at(hist[i], np.clip(rng.normal(means[t], 2, 40).astype(int), 0, 49), 1)
    labels, _, _ = emd_kmeans(histograms_to_cdfs(hist), 3, seed=1)
    # the same partition up to names
    assert len({(a, b) for a, b in zip(truth, labels)}) == 3
    again, _, _ = emd_kmeans(histograms_to_cdfs(hist), 3, seed=1)
    assert (again == labels).all()
    q = quantile_buckets(np.arange(100), 4)
    assert (np.bincount(q) == 25).all()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A 2-flop build interrupted after its first flop and resumed, and the same build in one go."""
    d = tmp_path_factory.mktemp("abs")
    out = str(d / "abs.npz")
    calls = {"n": 0}
    real = B.process_flop

    def stop_on_second(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    B.process_flop = stop_on_second
    try:
        with pytest.raises(KeyboardInterrupt):
            B.build(out, (6, 6, 6), flops=2, seed=7, progress=False)
    finally:
        B.process_flop = real
    assert not os.path.exists(out)
    B.build(out, (6, 6, 6), flops=2, seed=7, progress=False)
    straight = str(d / "straight.npz")
    B.build(straight, (6, 6, 6), flops=2, seed=7, progress=False)
    return B.load(out), B.load(straight)


def test_resumed_build_equals_a_straight_one(built):
    a, b = built
    assert a.data.keys() == b.data.keys()
    for k in a.data:
        assert np.array_equal(a.data[k], b.data[k]), k


def test_build_tables_match_direct_computation(built):
    ab, _ = built
    rng = np.random.default_rng(6)
    ix = {s: Indexer(s) for s in ("flop", "turn", "river")}
    # river: reached classes' stored equity == board_equities of their canonical hand
    for i in rng.choice(ab.data["river_index"], 5):
        c = ix["river"].unindex(i)
        e = board_equities(c[2:])[HAND_INDEX[c[0], c[1]]]
        assert ab.river_equity([i])[0] == pytest.approx(e, abs=1e-4)
    # turn: a reached class's bucket is its histogram's nearest centre (k-means converged)
    t = rng.choice(ab.data["turn_index"])
    c = ix["turn"].unindex(t)
    hist = np.zeros(B.BINS)
    for r in set(range(52)) - set(c.tolist()):
        hist[min(int(board_equities(list(c[2:]) + [r])[HAND_INDEX[c[0], c[1]]] * B.BINS), B.BINS - 1)] += 1
    cdf = histograms_to_cdfs(hist[None])[0]
    d = np.abs(ab.data["turn_centres"] - cdf).sum(1)
    assert d[ab.bucket("turn", [t])[0]] == pytest.approx(d.min(), abs=1e-5)
    assert (ab.bucket("flop", ab.data["flop_index"]) >= 0).all()
    not_reached = np.setdiff1d(np.arange(100), ab.data["flop_index"])[:5]
    assert (ab.bucket("flop", not_reached) == -1).all()


def test_cli_build_and_bad_inputs(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    out = str(tmp_path / "a.npz")

    def run(*args):
        return subprocess.run([sys.executable, "-m", "treeplex.cli", "abstraction", "build", *args],
                              capture_output=True, text=True, env=env)

    r = run("--buckets", "4,4,4", "--flops", "1", "--quiet", "-o", out)
    assert r.returncode == 0, r.stderr
    assert B.load(out).buckets == (4, 4, 4)
    for args, msg in ((["--buckets", "4,4", "-o", out], "--buckets"),
                      (["--max-memory", "1M", "-o", out], "--max-memory"),
                      (["--buckets", "4,4,4", "--flops", "2", "-o", out], "other settings")):
        r = run(*args)
        assert r.returncode == 2 and msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    bad = str(tmp_path / "bad.npz")
    np.savez(bad, version=np.int64(99))
    with pytest.raises(InputError, match="version 99"):
        B.load(bad)
    np.savez(bad, version=np.int64(B.VERSION), buckets=np.array([4, 4, 4]), flop=np.zeros(3, np.int32))
    with pytest.raises(InputError, match="'flop' must be int16"):
        B.load(bad)


def test_merging_hands_into_buckets():
    """Singleton buckets give back the plan; real buckets make a bucket's hands play alike."""
    from treeplex.abstraction.loss import merged_plan
    from treeplex.model.metrics import evaluate
    from treeplex.poker.river import RiverGame
    from treeplex.run.driver import solve

    game = RiverGame(pot=2100, board="Qs9h7d4c2s", range0="AA,KK,AKs", range1="QQ,JJ,AQs")
    problem = game.problem()
    res = solve(problem, "cfr+", max_iters=50)
    same = merged_plan(game, problem.X, 0, res.x, np.arange(len(game.hands[0])))
    assert np.allclose(same, res.x)
    bucket = np.arange(len(game.hands[0])) % 2
    x = merged_plan(game, problem.X, 0, res.x, bucket)
    assert problem.X.is_plan(x)
    for v in game.tree.nodes_of(0):
        probs, _ = game.behavioral(0, x, v)
        for g in (0, 1):
            assert np.allclose(probs[bucket == g], probs[bucket == g][0])
    assert evaluate(problem, x, res.y).exploitability >= 0
