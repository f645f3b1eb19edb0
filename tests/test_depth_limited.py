"""Depth-limited solving on NLFH: leaf values, multi-valued subgames, nested solving, RPAT,
arena. Expected numbers come from a second computation (the LP of the whole game, the
sequence-form value of the whole game) or from closed forms; each test says which."""

import numpy as np
import pytest

import treeplex as tp
from treeplex.depth_limited.arena import Agent, exact_match_value, play_duplicate
from treeplex.depth_limited.blueprint import compute_blueprint
from treeplex.depth_limited.evaluation import exploitability
from treeplex.depth_limited.index import NLFHIndex
from treeplex.depth_limited.leaves import LeafEvaluator, bracket, offtree_leaf_values
from treeplex.depth_limited.nested import respond_to_offtree
from treeplex.depth_limited.nlfh_subgames import nlfh_subgame
from treeplex.depth_limited.sets import BIAS, bias_table, self_generative_table
from treeplex.depth_limited.subgame import solve_subgame
from treeplex.depth_limited.translation import rpat_plan, rpat_probability
from treeplex.poker.nlfh import NLFH
from treeplex.model.strategy import behavioral_dict, behavioral_from_dict

TINY = dict(ranks=3, suits=2, hole=1, flop=1, stack=1000)  # 9946 histories: LP in well under a second


@pytest.fixture(scope="module")
def tiny():
    """The tiny game solved exactly (LP): the 'blueprint' is an exact equilibrium."""
    return compute_blueprint(NLFH(**TINY), "lp")


def random_behavioral(T, rng):
    b = rng.random(T.n_seqs) + 0.05
    b[0] = 1.0
    from treeplex.depth_limited.index import renormalize

    return renormalize(T, b)


def test_leaf_values_reproduce_the_game_value_of_any_profile(tiny):
    # Cut the game at the end of round 1 with k = 1 value per leaf state computed for a random
    # profile; played with the same profile's first-round strategies, the cut game has the
    # same value as the whole game (x^T A y of the compiled game: an independent computation).
    rng = np.random.default_rng(3)
    P, idx = tiny.problem, tiny.index
    b = [random_behavioral(T, rng) for T in P.treeplexes]
    plans = [T.plan_from_behavioral(bb) for T, bb in zip(P.treeplexes, b)]
    whole = float(plans[0] @ P.A.matvec(plans[1], count=False))
    ev = LeafEvaluator(idx)
    table = ev.table(0, tuple(b), [b[0]], ["profile"])
    G = tiny.game
    cut = tp.compile_game(nlfh_subgame(G, G.root, idx.deal, idx.holes, leaf_values=table.by_node(), chooser=0))
    d = [behavioral_dict(T, x) for T, x in zip(P.treeplexes, plans)]
    xs = [T.plan_from_behavioral(behavioral_from_dict(T, dd, p)) for p, (T, dd) in enumerate(zip(cut.treeplexes, d))]  # leaf picks: 1 action
    assert float(xs[0] @ cut.A.matvec(xs[1], count=False)) == pytest.approx(whole, abs=1e-9)


def test_depth_limited_value_with_equilibrium_values_is_the_game_value(tiny):
    # With exact equilibrium values at the leaves (k = 1), the equilibrium's first-round play is
    # an equilibrium of the cut game (section 4), so the cut game's LP value equals the whole
    # game's LP value.
    G, idx = tiny.game, tiny.index
    table = LeafEvaluator(idx).table(0, tiny.b, [tiny.b[0]], ["equilibrium"])
    sol = solve_subgame(nlfh_subgame(G, G.root, idx.deal, idx.holes, leaf_values=table.by_node(), chooser=0))
    assert sol.value == pytest.approx(tp.solve_lp(tiny.problem).value, abs=1e-7)
    # cost accounting: k x leaves x H^2 float64
    assert table.nbytes == 1 * len(table.row) * idx.n_holes**2 * 8


def test_self_generative_drives_the_depth_limited_solution_to_unexploitable(tiny):
    # Proposition 1: with enough continuation strategies the depth-limited solution, with the
    # blueprint beyond the leaves, is an equilibrium strategy. The best-response value against
    # it (whole-game best response) must come down to the game value.
    ev = LeafEvaluator(tiny.index)
    table, log = self_generative_table(ev, 0, tiny.b, 12)
    v = tp.solve_lp(tiny.problem).value
    gains = [row["br_value"] - v for row in log]
    assert gains[0] > 10.0  # one value per state: badly exploitable (chips; big blind 100)
    assert gains[-1] < 1e-6  # the double-oracle-like loop closes: a best response adds nothing
    assert all(row["weakening"] < 1e-9 for row in log)  # an exact equilibrium cannot be beaten


def test_weakening_lowers_the_values_by_the_gain_over_the_blueprint(tiny):
    # With a poor blueprint for the chooser (uniform; the other player's is the equilibrium) a
    # best response beats the chooser's blueprint by delta = v(BR, bp_1) - v(bp_0, bp_1) > 0
    # (section 4, "weakening"); its leaf values are then lowered by exactly delta.
    P = tiny.problem
    ev = LeafEvaluator(tiny.index)
    bp = (P.X.behavioral_from_plan(P.X.uniform()), tiny.b[1])
    weak, log = self_generative_table(ev, 0, bp, 2, weaken=True)
    raw, _ = self_generative_table(ev, 0, bp, 2, weaken=False)
    delta = log[0]["weakening"]
    v_bp = float(P.X.uniform() @ P.A.matvec(tiny.plans[1], count=False))
    assert delta > 1.0
    # the chooser's strategy is a best response to the depth-limited solution, not to the
    # blueprint, so delta is at most its best-response gain against the blueprint
    assert delta <= tp.metrics.best_response(P, 0, tiny.plans[1])[0] - v_bp + 1e-9
    assert np.allclose(raw.values[1] - weak.values[1], delta)
    assert np.allclose(raw.values[0], weak.values[0])


def test_bias_strategies_renormalize_the_blueprint(tiny):
    ev = LeafEvaluator(tiny.index)
    table = bias_table(ev, 0, tiny.b, 4)
    assert table.names == [n for n, _ in BIAS[:4]]
    from treeplex.depth_limited.sets import biased

    T = tiny.problem.X
    b = biased(tiny.index, 0, tiny.b[0], {"fold": 10})
    # closed form at one second-round infoset: p'(f) = 10 p(f) / (10 p(f) + 1 - p(f))
    j = next(j for j, k in enumerate(T.infoset_keys) if "/" in k and "f" in T.action_labels[j]
             and 0.05 < tiny.b[0][T.start[j]] < 0.95)
    p = tiny.b[0][T.start[j]]
    assert b[T.start[j]] == pytest.approx(10 * p / (10 * p + 1 - p))
    assert np.allclose(np.add.reduceat(b[1:], T.start - 1), 1.0)


def test_rpat_probability_closed_form():
    # Ganzfried & Sandholm 2013: f(x) = (B - x)(1 + A) / ((B - A)(1 + x)); A=0.5, B=1, x=0.75:
    # 0.25 * 1.5 / (0.5 * 1.75) = 3/7.
    assert rpat_probability(0.75, 0.5, 1.0) == pytest.approx(3 / 7)
    assert rpat_probability(0.5 + 1e-12, 0.5, 1.0) == pytest.approx(1.0)


def test_offtree_leaves_average_their_two_neighbours(tiny):
    G = tiny.game
    Gx = NLFH(**TINY, off_tree={"": (0.75,)})
    assert bracket(G.root, 0.75) == [("p0.5", 0.5), ("p1", 0.5)]
    table = LeafEvaluator(tiny.index).table(0, tiny.b, [tiny.b[0]], ["bp"])
    vals = offtree_leaf_values(table, Gx.node("p0.75"))
    # leaf "p0.75,c" (250 chips each) = 1/2 (250/200) v["p0.5,c"] + 1/2 (250/300) v["p1,c"]
    want = 0.5 * 250 / 200 * table.values[:, table.row[G.node("p0.5,c").id]] + \
        0.5 * 250 / 300 * table.values[:, table.row[G.node("p1,c").id]]
    assert np.allclose(vals[Gx.node("p0.75,c").id], want)
    # RPAT-like weights: f(0.75) = 3/7 on the 0.5 size, 4/7 on 1 pot
    f = rpat_probability(0.75, 0.5, 1.0)
    assert bracket(G.root, 0.75, "rpat") == [("p0.5", pytest.approx(f)), ("p1", pytest.approx(1 - f))]
    vals = offtree_leaf_values(table, Gx.node("p0.75"), "rpat")
    want = f * 250 / 200 * table.values[:, table.row[G.node("p0.5,c").id]] + \
        (1 - f) * 250 / 300 * table.values[:, table.row[G.node("p1,c").id]]
    assert np.allclose(vals[Gx.node("p0.75,c").id], want) and f == pytest.approx(3 / 7)
    # an in-abstraction line maps one to one
    same = offtree_leaf_values(table, G.node("p1"))
    assert np.allclose(same[G.node("p1,c").id], table.values[:, table.row[G.node("p1,c").id]])


@pytest.fixture(scope="module")
def offtree(tiny):
    Gx = NLFH(**TINY, off_tree={"": (0.75,)})
    Px = tp.compile_game(Gx)
    return Gx, Px


def test_safe_nested_solving_of_an_in_abstraction_bet_keeps_the_blueprint_unexploitable(tiny):
    # Re-solving after the blueprint's own 1-pot bet: solved to the end with the root gadget,
    # the exploitability cannot exceed the blueprint's (an exact equilibrium: 0). With many
    # state values the depth-limited re-solve also stays near 0, with one value it does not.
    G, P = tiny.game, tiny.problem
    after = G.node("p1")

    def expl(resp):
        d1 = dict(tiny.dicts[1])
        d1.update(resp.strategy)
        return exploitability(P, tiny.plans[0], d1, G.big_blind)[0]

    assert expl(respond_to_offtree(tiny, None, G, after, depth_limit=False)) < 1e-3
    ev = LeafEvaluator(tiny.index)
    one = expl(respond_to_offtree(tiny, bias_table(ev, 0, tiny.b, 1), G, after))
    many = expl(respond_to_offtree(tiny, bias_table(ev, 0, tiny.b, 16), G, after))
    assert one > 10 * max(many, 0.5)


def test_offtree_response_is_complete_and_exactly_evaluated(tiny, offtree):
    Gx, Px = offtree
    after = Gx.node("p0.75")
    ev = LeafEvaluator(tiny.index)
    resp = respond_to_offtree(tiny, bias_table(ev, 0, tiny.b, 4), Gx, after)
    d1 = dict(tiny.dicts[1])
    d1.update(resp.strategy)
    m, e = exploitability(Px, tiny.dicts[0], d1, Gx.big_blind)  # raises if a reached infoset is missing
    # best responses are exact: the gap is the sum of both players' gains (treeplex.model.metrics)
    assert e.gap == pytest.approx(e.br0 - e.br1) and m == pytest.approx(e.gap / 2 / Gx.big_blind * 1000)
    # the safe subgame solved to the end after the bet is the exact minimizer of player 0's
    # best-response value over all of player 1's strategies below the bet (the resolve gadget
    # with player 0's in-abstraction best-response values as alternatives), so no depth-limited
    # response, and no translation, can be less exploitable
    full = respond_to_offtree(tiny, None, Gx, after, depth_limit=False)
    d_full = dict(tiny.dicts[1])
    d_full.update(full.strategy)
    floor = exploitability(Px, tiny.dicts[0], d_full, Gx.big_blind)[0]
    idx = NLFHIndex(Gx, Px)
    y, _ = rpat_plan(Px.Y, idx.parse, tiny.dicts[1], tiny.game, after, behavioral_from_dict(Px.Y, tiny.dicts[1], 1))
    rpat = exploitability(Px, tiny.dicts[0], y, Gx.big_blind)[0]
    assert -1e-9 < floor <= m + 1e-7 and floor <= rpat + 1e-7
    c = resp.cost_summary()
    assert c["k"] == 4 and c["leaf_table_bytes"] > 0 and c["depth_limited_seconds"] > 0


def test_rpat_is_a_mixture_of_the_two_translations(tiny, offtree):
    Gx, Px = offtree
    idx = NLFHIndex(Gx, Px)
    y, info = rpat_plan(Px.Y, idx.parse, tiny.dicts[1], tiny.game, Gx.node("p0.75"),
                        behavioral_from_dict(Px.Y, tiny.dicts[1], 1))
    assert Px.Y.is_plan(y, tol=1e-9) and info["f"] == pytest.approx(3 / 7)
    # facing 0.75, RPAT folds with probability 3/7 P(fold | 0.5) + 4/7 P(fold | 1) (hole by hole)
    T = Px.Y
    for j, key in enumerate(T.infoset_keys):
        if key.endswith("||p0.75"):
            h = key.split("|")[0]
            f = 3 / 7 * tiny.dicts[1][f"{h}||p0.5"]["f"] + 4 / 7 * tiny.dicts[1][f"{h}||p1"]["f"]
            assert y[T.start[j]] == pytest.approx(f)


def test_arena_estimate_covers_the_exact_value(tiny):
    # Two different strategy profiles (exact equilibrium vs uniform) in duplicate; the sampled
    # mean must agree with the exact expectation within 4 standard errors (1.96 se = ci95).
    G, P = tiny.game, tiny.problem
    eq = tiny.plans
    uni = (P.X.uniform(), P.Y.uniform())
    res = play_duplicate(G, Agent.from_plans("eq", P, *eq), Agent.from_plans("uniform", P, *uni), 3000, seed=1)
    exact = exact_match_value(P, eq, uni, G.big_blind)
    assert exact > 0  # an equilibrium cannot lose to anything on average over both seats
    assert abs(res.mbb - exact) < 4 * res.ci95 / 1.96
    # duplicate (same cards per seat, same action seed) makes a strategy against itself exactly even
    same = play_duplicate(G, Agent.from_plans("a", P, *uni), Agent.from_plans("b", P, *uni), 200, seed=2)
    assert same.mbb == 0.0 and same.ci95 == 0.0


def test_self_generated_strategies_are_best_responses_at_every_infoset(tiny):
    # Section 4: the added strategy is a best response (an MDP solve), which chooses a best
    # action at every infoset, also below leaves its own first-round play never reaches. A
    # behavioral strategy read off the pure best-response plan plays uniformly there instead
    # (the bug this guards against); the check: the chooser's second-round play in the
    # continuation strategy that produced row 1 is pure at every infoset, and its value from
    # every infoset is the maximum over actions (recursion over the treeplex written out here).
    P = tiny.problem
    ev = LeafEvaluator(tiny.index)
    G, idx = tiny.game, tiny.index
    table = ev.table(0, tiny.b, [tiny.b[0]], ["blueprint"])
    sol = solve_subgame(nlfh_subgame(G, G.root, idx.deal, idx.holes, leaf_values=table.by_node(), chooser=0))
    y = P.Y.plan_from_behavioral(behavioral_from_dict(P.Y, sol.strategies[1], 1, default=tiny.b[1]))
    from treeplex.depth_limited.sets import best_response_everywhere

    b, v = best_response_everywhere(P, 0, y)
    assert v == pytest.approx(tp.metrics.best_response(P, 0, y)[0], abs=1e-9)
    T, g = P.X, P.A.matvec(y, count=False)
    kids = {}
    for j in range(T.n_infosets):
        kids.setdefault(int(T.parent[j]), []).append(j)
    val = np.array(g, dtype=np.float64)
    for s in range(T.n_seqs - 1, -1, -1):  # children have larger sequence ids (topological order)
        val[s] += sum(max(val[T.start[j]:T.end[j]]) for j in kids.get(s, []))
    for j in range(T.n_infosets):
        sl = slice(T.start[j], T.end[j])
        assert sorted(b[sl]) == [0.0] * (T.end[j] - T.start[j] - 1) + [1.0]
        assert val[sl][np.argmax(b[sl])] == pytest.approx(val[sl].max(), abs=1e-9)
    # and self_generative_table uses exactly this strategy's values for row 1 (no weakening at
    # an exact equilibrium blueprint)
    sg, _ = self_generative_table(ev, 0, tiny.b, 2)
    assert np.allclose(sg.values[1], ev.values(b, tiny.b[1]))


def test_offtree_sizes_outside_the_bracket_are_refused_in_one_line(capsys, tmp_path):
    from treeplex.depth_limited.translation import rpat_bracket
    from treeplex.errors import InputError

    G = NLFH(**TINY)  # opening raises 0.5 pot (the minimum raise), 1 pot, all-in
    assert [lab for _, lab in rpat_bracket(G.root, 0.75)] == ["p0.5", "p1"]
    for x in (0.4, 0.5, 1.0, 100.0):  # below the smallest, equal to one, above all-in
        with pytest.raises(InputError, match="not strictly between"):
            rpat_bracket(G.root, x)
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[1] / "experiments"))
    import depth_limited_nlfh as exp

    tiny = ["--ranks", "3", "--stack", "1000", "--out", str(tmp_path / "never")]
    for size, needle in (("0.3", "rounds to the chips"), ("1", "in the abstraction"), ("-1", "not positive"),
                         ("1e6", "all-in")):
        assert exp.main(["--offtree", size] + tiny) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"--offtree {float(size):g}" in err and needle in err, err
    assert not (tmp_path / "never").exists()  # refused before any work
    # a size in a bracket passes, its labels say so (checked without solving)
    Gx = NLFH(**TINY, off_tree={"": (0.6,)})
    assert exp.offtree_size(G, Gx, 0.6) == pytest.approx(0.6, abs=0.01)


def test_lp_noise_in_the_first_round_strategy_does_not_stop_the_second_round(tiny, offtree, monkeypatch):
    # The first-round subgame's LP returns probabilities such as 9e-10 where it means 0 (the
    # off-tree sweep at 0.8 pot): a hole then reaches a second-round leaf with weight ~1e-9 of
    # the others, its payoff entries sit 1e9x below the rest and the exact LP refused the
    # round-2 subgame. Inject that noise: the response must complete, be complete (plan_of
    # raises on a reached infoset without a strategy) and match the clean one.
    import treeplex.depth_limited.nested as nested

    Gx, Px = offtree
    after = Gx.node("p0.75")
    table = bias_table(LeafEvaluator(tiny.index), 0, tiny.b, 4)
    clean = respond_to_offtree(tiny, table, Gx, after)
    real = nested.solve_subgame
    noised = []

    def noisy(game, **kw):
        sol = real(game, **kw)
        if not noised:  # the first-round subgame: 1e-9 on every action the LP left at 0
            noised.append(True)
            for probs in sol.strategies[1].values():
                if 0.0 in probs.values():
                    zeros = [a for a, p in probs.items() if p == 0.0]
                    top = max(probs, key=probs.get)
                    for a in zeros:
                        probs[a] = 1e-9
                    probs[top] -= 1e-9 * len(zeros)
        return sol

    monkeypatch.setattr(nested, "solve_subgame", noisy)
    resp = respond_to_offtree(tiny, table, Gx, after)

    def expl(rs):
        d1 = dict(tiny.dicts[1])
        d1.update(rs.strategy)
        return exploitability(Px, tiny.dicts[0], d1, Gx.big_blind)[0]

    assert noised and expl(resp) == pytest.approx(expl(clean), abs=1e-6)


@pytest.mark.xfail(strict=True, reason=(
    "open defect: the gifts fix depends on which exact equilibrium the LP blueprint is. With the blueprint "
    "HiGHS 1.16 (highspy) returns, RPAT weights give 18.3 mbb/g with gifts and 18.7 without; with the one scipy "
    "1.17's bundled HiGHS returned they gave 0.000 and 3.76. The average weighting is exact (5e-13) with both."))
def test_round2_gifts_keep_a_near_allin_offtree_response_unexploitable():
    # 4 ranks, 2,000 stacks (all-in = 9.5 x pot at the first action), exact LP blueprint:
    # player 0 opens 8.55 x pot off-tree. Leaves after it borrow mostly the all-in's values
    # (RPAT weights), which leave no room for the 0.95 x pot still behind; the round-2 resolve
    # gadgets then held every hand of player 0 to its leaf value, also hands that never bring
    # the bet to that leaf, and these bounds cannot all be met: the LP gave up the strong
    # hands' bounds (3.8 mbb/g, measured before the fix). With the step-1 margins given back
    # as gifts (Reach subgame solving) the response is as unexploitable as the blueprint (0:
    # an exact equilibrium), the level of solving the whole rest of the game after the bet.
    P = dict(ranks=4, suits=2, hole=1, flop=1, stack=2000)
    bp = compute_blueprint(NLFH(**P), "lp")
    Gx = NLFH(**P, off_tree={"": (8.55,)})
    Px = tp.compile_game(Gx)
    after = Gx.node("p8.55")
    table = bias_table(LeafEvaluator(bp.index), 0, bp.b, 4)

    def expl(**kw):
        d1 = dict(bp.dicts[1])
        d1.update(respond_to_offtree(bp, table, Gx, after, leaf_weighting="rpat", **kw).strategy)
        return exploitability(Px, bp.dicts[0], d1, Gx.big_blind)[0]

    assert expl(gifts=False) > 1.0  # the bug, kept reachable for comparison
    assert expl() < 1e-3
