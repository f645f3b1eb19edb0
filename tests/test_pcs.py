"""Public-chance sampling (mccfr-pcs, issue 13) on postflop spots: the sampled gradient is
unbiased (every runout enumerated with its probability), the average converges toward the
LP, seeds and checkpoints reproduce runs bit for bit, other problems are refused."""

import numpy as np
import pytest

import treeplex as tp
from treeplex.run.driver import solve
from treeplex.poker.postflop import PostflopGame
from treeplex.solvers import ALGORITHMS
from treeplex.solvers.pcs import PublicChanceSampling

TURN = dict(board="KsQh9d8c", pot=20, stack=30, deck="89TJQKA", bet="50%,a", **{"raise": "2x"},
            range0="AsKh,QdJd,TsTc,AhJh", range1="AcAd,9s9h,KdQs,JsTs,Jc9c")
TURN_ISO = dict(board="KsQhTh9s", pot=20, stack=30, deck="89TJQKA", range0="AKs,88", range1="AQs,99", bet="50%,a",
                **{"raise": "2x"})
FLOP = {"board": "KsQhTh", "pot": 20, "stack": 30, "deck": "TJQKA", "range0": "AKs,JJ", "range1": "AQs,TT", "bet": "a"}


@pytest.fixture(scope="module")
def turn():
    return PostflopGame(**TURN).problem()


@pytest.mark.parametrize("spec, iso", [(TURN, False), (TURN_ISO, True), (TURN_ISO, False), (FLOP, True),
                                       (FLOP, False)])
def test_expected_sampled_gradient_is_the_full_gradient(spec, iso):
    """Sum over every runout (turn, or turn then river on the flop) of q(runout) times the
    sampled gradient equals A y and -A^T x, with and without suit isomorphism."""
    g = PostflopGame(**spec, isomorphism=iso)
    P = g.problem()
    assert (len(g.symmetries) > 1) == (iso and spec is not TURN)
    s = PublicChanceSampling(P)
    runouts = s.runouts()
    assert sum(q for _, q in runouts) == pytest.approx(1.0, abs=1e-12)
    assert len({len(r) for r, _ in runouts}) == 1 and len(runouts[0][0]) == (2 if spec is FLOP else 1)
    rng = np.random.default_rng(3)
    x = P.X.plan_from_behavioral(rng.uniform(0.1, 1, P.X.n_seqs))
    y = P.Y.plan_from_behavioral(rng.uniform(0.1, 1, P.Y.n_seqs))
    for p, plan, full in ((0, y, P.A.matvec(y, count=False)), (1, x, -P.A.rmatvec(x, count=False))):
        samples = [s.sampled_gradient(p, plan, r) for r, _ in runouts]
        est = sum(q * v for (_, q), v in zip(runouts, samples))
        np.testing.assert_allclose(est, full, rtol=0, atol=1e-12)
        assert all(np.count_nonzero(v) < np.count_nonzero(full) for v in samples)  # each touches a part


def test_converges_toward_the_lp(turn):
    lp = tp.solve_lp(turn)
    gaps = {}
    s = PublicChanceSampling(turn, seed=1, variant="cfr")
    for it in range(1, 6001):
        s.step()
        if it in (300, 6000):
            gaps[it] = tp.metrics.gap(turn, *s.average())
    assert gaps[6000] < gaps[300] / 10 and gaps[6000] < 0.25  # pot 20: 0.6% of the pot in exploitability
    x, y = s.average()
    assert abs(x @ turn.A.matvec(y, count=False) - lp.value) <= gaps[6000]
    full = solve(turn, "cfr+", max_iters=300)  # full-width reference: same problem, same value
    assert abs(full.value - lp.value) <= full.gap


@pytest.mark.parametrize("variant", ["cfr+", "lcfr", "dcfr", "pcfr+"])
def test_variants_run_and_improve(turn, variant):
    s = PublicChanceSampling(turn, seed=2, variant=variant)
    first = None
    for it in range(1, 1501):
        s.step()
        if it == 50:
            first = tp.metrics.gap(turn, *s.average())
    assert tp.metrics.gap(turn, *s.average()) < first / 3


def test_same_seed_same_iterates(turn):
    def run(seed):
        s = PublicChanceSampling(turn, seed=seed)
        for _ in range(200):
            s.step()
        return s

    a, b, c = run(5), run(5), run(6)
    for p in (0, 1):
        for f in ("R", "b", "xsum"):
            np.testing.assert_array_equal(getattr(a.players[p], f), getattr(b.players[p], f))
    assert not np.array_equal(a.players[0].R, c.players[0].R)
    assert a.trace_extra() == b.trace_extra()


class Crash(Exception):
    pass


@pytest.mark.parametrize("variant", ["cfr", "dcfr"])
def test_resume_reproduces_the_uninterrupted_run(tmp_path, turn, variant):
    kw = {"max_iters": 200, "check_every": 50, "seed": 11, "variant": variant}
    full = solve(turn, "mccfr-pcs", **kw)
    path = str(tmp_path / "run.npz")

    def crash(solver, row):
        if row["iteration"] == 100:
            raise Crash

    with pytest.raises(Crash):
        solve(turn, "mccfr-pcs", checkpoint=path, on_check=crash, **kw)
    resumed = solve(turn, "mccfr-pcs", resume=path, **kw)
    assert resumed.iterations == full.iterations == 200
    np.testing.assert_array_equal(resumed.x, full.x)
    np.testing.assert_array_equal(resumed.y, full.y)
    np.testing.assert_array_equal(resumed.current[0], full.current[0])
    strip = [{k: v for k, v in row.items() if k != "seconds"} for row in full.trace]
    assert [{k: v for k, v in row.items() if k != "seconds"} for row in resumed.trace] == strip
    last = full.trace[-1]
    assert last["samples"] == 200 and last["gradients"] == 0
    assert 0 < last["products"] < 2 * 200 / 5 and last["terminals_touched"] > 0 and last["groups_touched"] > 0


def test_refusals(turn):
    river = PostflopGame(board="KsQh9d8c2s", pot=20, stack=30, range0="AsKh,QdJd", range1="AcAd,9s9h").problem()
    for problem, match in ((river, "deals no card"), (tp.compile_game(tp.make_game("kuhn")), "postflop spots")):
        with pytest.raises(tp.InputError, match=match) as e:
            ALGORITHMS["mccfr-pcs"](problem)
        assert "\n" not in str(e.value)
    with pytest.raises(tp.InputError, match="variant"):
        ALGORITHMS["mccfr-pcs"](turn, variant="hedge")


# ---------------------------------------------------------------- regret pruning (mccfr-es)


@pytest.fixture(scope="module")
def leduc():
    return tp.compile_game(tp.make_game("leduc"))


def test_external_sampling_with_regret_pruning(leduc):
    """Pluribus-style pruning (treeplex/solvers/mccfr.py): fewer nodes walked for the same
    iterations, still converging, regrets floored, batches equal to steps, and nothing
    changes without it."""
    params = {"seed": 3, "prune_threshold": -20.0, "prune_after": 2000}
    plain = ALGORITHMS["mccfr-es"](leduc, seed=3)
    pruned = ALGORITHMS["mccfr-es"](leduc, prune=0.95, **params)
    plain.run(20000)
    pruned.run(4000)
    early = tp.metrics.gap(leduc, *pruned.average())
    pruned.run(16000)
    assert pruned.nodes_touched < 0.8 * plain.nodes_touched
    assert tp.metrics.gap(leduc, *pruned.average()) < 0.75 * early
    assert min(s.R.min() for s in pruned.players) >= 1.1 * -20.0
    stepped = ALGORITHMS["mccfr-es"](leduc, prune=0.95, **params)
    for _ in range(300):
        stepped.step()
    batched = ALGORITHMS["mccfr-es"](leduc, prune=0.95, **params)
    batched.run(300)
    for p in (0, 1):
        np.testing.assert_array_equal(stepped.players[p].R, batched.players[p].R)
    off = ALGORITHMS["mccfr-es"](leduc, prune=0.0, **params)
    off.run(300)
    ref = ALGORITHMS["mccfr-es"](leduc, seed=3)
    ref.run(300)
    np.testing.assert_array_equal(off.players[0].R, ref.players[0].R)
    with pytest.raises(tp.InputError, match="external sampling"):
        ALGORITHMS["mccfr-os"](leduc, prune=0.5)
    with pytest.raises(tp.InputError, match="prune_threshold"):
        ALGORITHMS["mccfr-es"](leduc, prune=0.5, prune_threshold=1.0)
