"""The flop re-solve on the fused walk (treeplex/poker/fused_lines.py) against the sequence form
of the same problem (treeplex/poker/flop_lines.py), and against the exact LP."""

import numpy as np
import pytest
from test_depth_limited52 import OFF_PARAMS, _safe_spot

from treeplex.depth_limited.nlfh52 import LeafValues52
from treeplex.depth_limited.offtree52 import (flop_alts, offtree_table, result_behaviorals, safe_flop_problem,
                                             with_bracket_range)
from treeplex.errors import InputError
from treeplex.model.metrics import evaluate
from treeplex.poker.flop_lines import FlopLines
from treeplex.poker.fused import FusedProfile, _plan_to_fused
from treeplex.run.driver import solve
from treeplex.solvers import ALGORITHMS


@pytest.fixture(scope="module")
def spot():
    """The 0.75-pot open on the short deck at 15 BB (four lines after it), the safe re-solve's
    alts, and a bettor's range that makes the bet (the bracket's sizes, half each)."""
    vx, bx, bet, args, b1, info, lines = _safe_spot(params={**OFF_PARAMS, "stack": 1500})
    table = offtree_table(args[0], args[1], LeafValues52(vx, bx), args[5])[0]
    alts = flop_alts(vx, table, info["solution"], b1, lines)
    b0 = with_bracket_range(args[0], 0, bx[0], bet, [("p0.5", 0.5), ("p1", 0.5)])
    return vx, lines, alts, [bx[0], b1], [b0, b1]


def _problems(spot):
    """(name, problem): the safe re-solve of the bettor (chooser 0), the same with the responder
    choosing (chooser 1, alts of the other sign), the unsafe one (both reaches fixed)."""
    vx, lines, alts, lock, ranged = spot
    fl = FlopLines(vx.game, lines)
    reach = tuple(vx.line_reach(p, ranged[p], fl.lines) for p in (0, 1))
    assert all(r.max() > 0 for r in reach) and (reach[1] == 0).any()  # some hands never reach a line
    return [("safe, chooser 0", safe_flop_problem(vx, lock, lines, 0, alts).problem),
            ("safe, chooser 1", safe_flop_problem(vx, ranged, lines, 1, {l: -a for l, a in alts.items()}).problem),
            ("unsafe", fl.problem(reach, name="unsafe"))]


def _regrets_below_the_lines(P, solver, p) -> np.ndarray:
    """Player p's regrets at the problem's infosets, in the fused layout (a sequence-form
    solver's converted), each infoset's times p's fixed reach into its line where p has one;
    then the gadgets' (alt, enter)."""
    lt, t = P.game, P.game.tree
    R = np.asarray(solver.players[p].R, np.float64)
    if solver.engine is None:
        out = np.zeros(t.size[p])
        _plan_to_fused(t.static, lt.sbase[p], p, R, out, lt.want[p])
        gad = R[1:1 + 2 * lt.G].reshape(-1, 2).T.ravel() if p == lt.chooser else np.zeros(0)
    else:
        out, gad = R[:t.size[p]].copy(), R[t.size[p]:]
    rows = []
    for v in lt.fl.nodes[p].tolist():
        k, m, off = int(t.cptr[v + 1] - t.cptr[v]), int(t.m[v]), int(t.off[v])
        block = out[off:off + k * m].reshape(k, m)
        if solver.engine is not None and p != lt.chooser:  # the sequence form's values carry p's reach
            block = block * lt.reach[p][lt.fl.line[v], t.rep[p][t.tab[v]][:m]][None, :]
        rows.append(block.ravel())
    return np.concatenate(rows + [gad])


def test_one_iteration_equals_the_sequence_forms(spot):
    """After one DCFR iteration (float64, both players updated against the uniform first play),
    every regret below the lines and every gadget's is the sequence form's (a player's fixed
    reach into its line scales its values there: regret matching plays the same). Later
    iterates equal them to rounding, which regret matching turns into different play where
    regrets are 0 up to rounding (a hand the board blocks)."""
    for name, P in _problems(spot):
        got = []
        for fused in (False, True):
            s = ALGORITHMS["dcfr"](P, fused=fused, storage="float64", alternating=False)
            assert (s.engine is not None) == fused
            s.step()
            got.append([_regrets_below_the_lines(P, s, p) for p in (0, 1)])
        for p in (0, 1):
            scale = np.abs(got[0][p]).max()
            assert scale > 0.1, name
            np.testing.assert_allclose(got[1][p], got[0][p], rtol=0, atol=1e-12 * scale, err_msg=name)


def test_the_walks_gap_and_value_are_the_plans(spot):
    """The fused solver's best responses and value (walks, the alts' payoff included on both
    sides) equal the sequence form's evaluation of the plans it returns, iteration after
    iteration; 300 iterations reach the exact LP's value within the gap."""
    for name, P in _problems(spot):
        s = ALGORITHMS["dcfr"](P)
        assert s.engine is not None
        for _ in range(4):
            s.step()
            e = evaluate(P, *s.average())
            ev = s.evaluate_profile("average", value=True)
            assert (ev.br0, ev.br1, ev.value) == pytest.approx((e.br0, e.br1, e.value), rel=1e-5, abs=1e-6), name
        res = solve(P, "dcfr", max_iters=300, check_every=300)
        exact = solve(P, "lp")
        e = evaluate(P, res.x, res.y)
        assert res.gap == pytest.approx(e.gap, rel=1e-4, abs=1e-6), name
        assert res.gap < 1.0, name  # chips: gap / 2 under 5 mbb/g
        assert e.value == pytest.approx(evaluate(P, exact.x, exact.y).value, abs=res.gap + 1e-6), name


def test_the_behaviorals_are_the_walks_profile(spot):
    """The behaviorals read straight from the walk's state (what a re-solve writes back, no plan
    pair made), the gadgets' entries included, are the profile the walk evaluated: the sequence
    form's best responses and value of their plans equal the result's, which the walk's own
    best-response and value passes computed from its state."""
    for name, P in _problems(spot):
        res = solve(P, "dcfr", max_iters=20, check_every=20)
        assert isinstance(res.plans, FusedProfile), name
        plans = [T.plan_from_behavioral(b) for T, b in zip(P.treeplexes, result_behaviorals(P, res))]
        e, w = evaluate(P, *plans), res.evaluation
        assert (e.br0, e.br1, e.value) == pytest.approx((w.br0, w.br1, w.value), rel=1e-5, abs=1e-6), name


def test_predictive_variants_and_refusals(spot):
    """A predictive variant (PCFR+) runs on the fused walk too and converges; 16-bit storage
    and node locks are refused in one line."""
    name, P = _problems(spot)[0]
    res = solve(P, "pcfr+", max_iters=200, check_every=200)
    assert res.gap == pytest.approx(evaluate(P, res.x, res.y).gap, rel=1e-4, abs=1e-6)
    assert res.gap < 1.0
    with pytest.raises(InputError, match="16-bit"):
        solve(P, "dcfr", max_iters=1, compression=16)
    with pytest.raises(InputError, match="locks"):
        P.game.set_locks((None, None))


@pytest.mark.parametrize("algorithm", ["dcfr", "cfr+"])
def test_a_warm_start_equals_the_sequence_forms(spot, algorithm):
    """From a prior (the plans of a few iterations), the fused re-solve's starting regrets are
    the sequence form's R = w (r + c b) (unified view, "Initialization with a Prior"; cfr+
    clamps them at 0), the gadgets' included; warm, 300 iterations reach the LP's value within
    the gap."""
    for name, P in _problems(spot):
        prior = solve(P, "dcfr", max_iters=3, check_every=3, fused=False)
        got = []
        for fused in (False, True):
            s = ALGORITHMS[algorithm](P, fused=fused, storage="float64", prior=(prior.x, prior.y), prior_weight=3.0)
            assert (s.engine is not None) == fused
            got.append([_regrets_below_the_lines(P, s, p) for p in (0, 1)])
        for p in (0, 1):
            scale = np.abs(got[0][p]).max()
            assert scale > 0.1, name
            np.testing.assert_allclose(got[1][p], got[0][p], rtol=0, atol=1e-10 * scale, err_msg=name)
    res = solve(P, "dcfr", max_iters=300, check_every=300, prior=(prior.x, prior.y), prior_weight=3.0)
    exact = solve(P, "lp")
    assert res.gap < 1.0 and evaluate(P, res.x, res.y).value == pytest.approx(
        evaluate(P, exact.x, exact.y).value, abs=res.gap + 1e-6)
