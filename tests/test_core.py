"""Core: compiler, treeplex kernels, LP and metrics against numbers computed outside the code."""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_games import random_game

import treeplex as tp
from treeplex import chance, decision, terminal
from treeplex.model.game import ExplicitGame, GameError


def lp_solution(name):
    p = tp.compile_game(tp.make_game(name))
    return p, tp.solve_lp(p)


# ------------------------------------------------------------- known values


def test_kuhn_value_is_minus_one_eighteenth():
    # Kuhn (1950): the value of 3-card Kuhn poker for the first player is -1/18.
    p, lp = lp_solution("kuhn")
    assert lp.value == pytest.approx(-1 / 18, abs=1e-9)
    ev = tp.evaluate(p, lp.x, lp.y)
    assert ev.value == pytest.approx(-1 / 18, abs=1e-9)
    assert ev.exploitability < 1e-9
    assert p.X.is_plan(lp.x) and p.Y.is_plan(lp.y)


def test_kuhn_equilibrium_family():
    # Kuhn (1950): in every equilibrium player 0 never calls a bet with J, always calls with
    # K, and bets K at the root with 3x the probability it bluffs J.
    p, lp = lp_solution("kuhn")
    from treeplex.model.strategy import behavioral_dict

    b0 = behavioral_dict(p.X, lp.x)
    assert b0["J:pb"]["b"] == pytest.approx(0, abs=1e-9)
    assert b0["K:pb"]["b"] == pytest.approx(1, abs=1e-9)
    assert b0["K:"]["b"] == pytest.approx(3 * b0["J:"]["b"], abs=1e-7)


def test_leduc_value():
    # Published value of Leduc hold'em for the first player: -0.0856064 (e.g. OpenSpiel's
    # leduc_poker, Southey et al. 2005 rules).
    p, lp = lp_solution("leduc")
    assert lp.value == pytest.approx(-0.0856064, abs=1e-6)
    assert tp.evaluate(p, lp.x, lp.y).gap < 1e-8
    assert (p.X.n_infosets, p.Y.n_infosets) == (144, 144)


def test_suited_leduc_matches_openspiel_layout_and_value():
    # OpenSpiel's leduc_poker deals explicit cards: 936 infosets, 5520 terminals.
    p, lp = lp_solution("leduc(suited=True)")
    assert p.X.n_infosets + p.Y.n_infosets == 936
    assert p.stats["terminals"] == 5520
    assert lp.value == pytest.approx(-0.0856064, abs=1e-6)


def test_rps_plus_equilibrium():
    # Depth-limited solving paper, section 2: (R, P, S) = (0.4, 0.4, 0.2), value 0.
    p, lp = lp_solution("rps_plus")
    assert lp.value == pytest.approx(0, abs=1e-9)
    np.testing.assert_allclose(lp.x[1:], [0.4, 0.4, 0.2], atol=1e-6)
    np.testing.assert_allclose(lp.y[1:], [0.4, 0.4, 0.2], atol=1e-6)


# Peña's slides, "Player 1's payoff matrix" for simplified poker. Rows are player 1's
# sequences kJ, rJ, kQ, rQ, kJfJ, kJcJ, kQfQ, kQcQ; columns player 2's kJ, rJ, kQ, rQ, fJ,
# cJ, fQ, cQ (the empty sequences have all-zero rows/columns). The slides print -1/6 for
# (kJ, kQ), 1/6 for (rJ, fQ) and -1/3 for (rJ, cQ); every other entry of the same kind
# shows that P(J, Q) = P(Q, J) = 1/3 (e.g. (kQ, kJ) = +1/3, (kJcJ, rQ) = -2/3), so those
# three entries are misprints for -1/3, 1/3, -2/3, which is what the rules give.
t, s, h = 1 / 3, 1 / 6, 2 / 3
SLIDES_A = {
    ("kJ", "kJ"): 0, ("kJ", "kQ"): -t,
    ("rJ", "fJ"): s, ("rJ", "cJ"): 0, ("rJ", "fQ"): t, ("rJ", "cQ"): -h,
    ("kQ", "kJ"): t, ("kQ", "kQ"): 0,
    ("rQ", "fJ"): t, ("rQ", "cJ"): h, ("rQ", "fQ"): s, ("rQ", "cQ"): 0,
    ("kJfJ", "rJ"): -s, ("kJfJ", "rQ"): -t,
    ("kJcJ", "rJ"): 0, ("kJcJ", "rQ"): -h,
    ("kQfQ", "rJ"): -t, ("kQfQ", "rQ"): -s,
    ("kQcQ", "rJ"): h, ("kQcQ", "rQ"): 0,
}


def _slide_name(T, s):
    """Our sequence label -> the slides' name, e.g. 'J:kr:f' -> 'kJfJ', 'J:r:c' -> 'cJ'."""
    card, hist, act = T.seq_label(s).split(":")
    own = [a for i, a in enumerate(hist + act) if i % 2 == (len(hist) % 2)]
    return "".join(a + card for a in own)


def test_simple_poker_matrix_matches_slides():
    p = tp.compile_game(tp.make_game("simple_poker"))
    A = p.A.to_sparse().toarray()
    rows = {_slide_name(p.X, i): i for i in range(1, p.X.n_seqs)}
    cols = {_slide_name(p.Y, j): j for j in range(1, p.Y.n_seqs)}
    assert set(rows) == {"kJ", "rJ", "kQ", "rQ", "kJfJ", "kJcJ", "kQfQ", "kQcQ"}
    assert set(cols) == {"kJ", "rJ", "kQ", "rQ", "fJ", "cJ", "fQ", "cQ"}
    expected = np.zeros_like(A)
    for (r, c), v in SLIDES_A.items():
        expected[rows[r], cols[c]] = v
    np.testing.assert_allclose(A, expected, atol=1e-15)


# ------------------------------------------------------------- kernels


def _pure_plans(T):
    """Every pure realization plan of a small treeplex, by brute force over behaviors."""
    choices = [range(T.end[j] - T.start[j]) for j in range(T.n_infosets)]
    for pick in itertools.product(*choices):
        b = np.zeros(T.n_seqs)
        for j, a in enumerate(pick):
            b[T.start[j] + a] = 1.0
        yield T.plan_from_behavioral(b)


def test_best_response_equals_brute_force():
    p = tp.compile_game(tp.make_game("kuhn"))
    rng = np.random.default_rng(0)
    for T in p.treeplexes:
        for _ in range(5):
            g = rng.normal(size=T.n_seqs)
            v, x = T.best_response(g)
            brute = max(g @ q for q in _pure_plans(T))
            assert v == pytest.approx(brute, abs=1e-12)
            assert g @ x == pytest.approx(v, abs=1e-12)
            assert set(np.unique(x)) <= {0.0, 1.0} and T.is_plan(x)
            assert T.best_response_value(g) == v  # the same arithmetic, without the plan
            assert T.best_response_value(-g, sign=-1.0) == v


def test_behavioral_round_trip_and_uniform():
    p = tp.compile_game(tp.make_game("leduc"))
    T = p.X
    rng = np.random.default_rng(1)
    b = rng.random(T.n_seqs)
    for j in range(T.n_infosets):
        b[T.start[j] : T.end[j]] /= b[T.start[j] : T.end[j]].sum()
    b[0] = 1.0
    x = T.plan_from_behavioral(b)
    assert T.is_plan(x, tol=1e-12)
    np.testing.assert_allclose(T.behavioral_from_plan(x), b, atol=1e-12)
    u = T.uniform()
    assert T.is_plan(u)
    first = T.infoset_keys.index("J:")  # root infoset: call or raise
    assert u[T.start[first]] == pytest.approx(0.5)


def test_behavioral_from_plan_tiny_reach_with_all_zero_actions_is_unreached():
    """A solver's plan (the exact LP's subgame plan, issue 27) can reach an infoset with
    weight ~7e-8 while all its actions are exactly 0. That infoset is unreached (uniform, every
    row a distribution, so a strategy file of it reads back); an infoset that the same tiny
    weight reaches with nonzero actions keeps exactly the ratios it was built from."""
    from treeplex.model.strategy import behavioral_dict, behavioral_from_dict
    from treeplex.core.treeplex import UNREACHED_TOL

    T = tp.compile_game(tp.make_game("leduc")).X
    rng = np.random.default_rng(3)
    b = rng.random(T.n_seqs)
    for j in range(T.n_infosets):
        b[T.start[j] : T.end[j]] /= b[T.start[j] : T.end[j]].sum()
    b[0] = 1.0
    # an action p, with infosets j (zeroed below) and j2 (kept) after it; p gets probability 7e-8
    p = next(s for s in range(1, T.n_seqs) if np.count_nonzero(T.parent == s) >= 2)
    j, j2 = np.flatnonzero(T.parent == p)[:2]
    i = T.seq_infoset[p]
    b[T.start[i] : T.end[i]] *= (1 - 6.7e-8) / (1 - b[p])
    b[p] = 6.7e-8
    x = T.plan_from_behavioral(b)
    zero = set(range(T.start[j], T.end[j]))
    for jj in range(T.n_infosets):  # infosets come top-down: j's whole subtree
        if T.parent[jj] in zero:
            zero.update(range(T.start[jj], T.end[jj]))
    x[sorted(zero)] = 0.0
    assert x[p] == pytest.approx(6.7e-8) and x[p] > UNREACHED_TOL * x[0]
    got = T.behavioral_from_plan(x)
    rows = [got[T.start[k] : T.end[k]] for k in range(T.n_infosets)]
    assert all(np.all(r >= 0) and abs(r.sum() - 1.0) < 1e-12 for r in rows)
    unreached = {k for k in range(T.n_infosets) if T.start[k] in zero or k == j}
    for k in range(T.n_infosets):
        want = 1.0 / (T.end[k] - T.start[k]) if k in unreached else b[T.start[k] : T.end[k]]
        np.testing.assert_allclose(rows[k], want, rtol=1e-12, atol=0)
    assert j2 not in unreached and x[T.start[j2]] < 1e-7  # reached with tiny weight: kept exactly
    np.testing.assert_allclose(behavioral_from_dict(T, behavioral_dict(T, x), 0), got, atol=1e-15)
    # the stated tolerance: actions carrying <= UNREACHED_TOL * x[0] in all are unreached,
    # more is reached and keeps its ratios (also with round-off negatives counted as 0)
    y = T.plan_from_behavioral(b)
    n = T.end[j] - T.start[j]
    y[T.start[j] : T.end[j]] = 0.9 * UNREACHED_TOL / n
    y[T.start[j]] = -1e-20
    np.testing.assert_allclose(T.behavioral_from_plan(y)[T.start[j] : T.end[j]], 1.0 / n)
    y[T.start[j] : T.end[j]] = 3 * UNREACHED_TOL * np.arange(1, n + 1)
    np.testing.assert_allclose(T.behavioral_from_plan(y)[T.start[j] : T.end[j]],
                               np.arange(1, n + 1) / (n * (n + 1) / 2), rtol=1e-12)


def test_check_plan_names_the_infoset():
    p = tp.compile_game(tp.make_game("kuhn"))
    x = p.X.uniform()
    x[p.X.start[2]] += 0.1
    msg = p.X.check_plan(x)
    assert msg is not None and repr(p.X.infoset_keys[2]) in msg
    x = p.X.uniform()
    x[3] = -0.5
    assert "negative" in p.X.check_plan(x)


def test_value_is_bilinear_form():
    # x^T A y computed by the operator equals the dense product and a direct tree walk.
    p = tp.compile_game(tp.make_game("kuhn"))
    x, y = p.X.uniform(), p.Y.uniform()
    assert tp.evaluate(p, x, y).value == pytest.approx(x @ p.A.to_sparse().toarray() @ y, abs=1e-15)
    # Uniform vs uniform in Kuhn, by hand: by symmetry of the card deal the showdown terms
    # cancel; folds: P0 bets & P1 folds (+1, prob 1/4), P0 passes, P1 bets, P0 folds (-1,
    # prob 1/8). Value = 1/4 - 1/8 = 1/8.
    assert tp.evaluate(p, x, y).value == pytest.approx(1 / 8, abs=1e-15)


@pytest.mark.parametrize("name", ["kuhn", "leduc"])
def test_problem_tree_counts_and_uniform_value(name):
    # The history tree of a compiled game has the compiler's node counts, its child lists
    # tile each subtree, and the expected payoff of uniform play, summed over its terminals
    # with reach = chance x 1/(number of actions) per decision, equals x^T A y.
    from treeplex.core.tree import CHANCE, TERMINAL

    p = tp.compile_game(tp.make_game(name))
    t = p.tree
    assert t is p.tree  # built once
    assert t.n_nodes == p.stats["histories"]
    assert np.sum(t.kind == TERMINAL) == p.stats["terminals"]
    assert np.sum(t.kind == CHANCE) == p.stats["chance_nodes"]
    assert np.sum(t.kind < 2) == p.stats["decision_nodes"]
    reach = np.ones(t.n_nodes)
    for n in range(t.n_nodes):
        kids = t.children[t.child_ptr[n] : t.child_ptr[n + 1]]
        assert 1 + t.size[kids].sum() == t.size[n]
        assert all(t.parent[c] == n for c in kids)
        for c in kids:
            reach[c] = reach[n] * (t.edge_prob[c] if t.kind[n] == CHANCE else 1.0 / len(kids))
    leaf = t.kind == TERMINAL
    x, y = p.X.uniform(), p.Y.uniform()
    assert reach[leaf] @ t.payoff[leaf] == pytest.approx(x @ p.A.matvec(y, count=False), abs=1e-12)


def test_metrics_count_no_gradients():
    p = tp.compile_game(tp.make_game("kuhn"))
    tp.evaluate(p, p.X.uniform(), p.Y.uniform())
    assert p.A.gradients == 0
    p.A.matvec(p.Y.uniform())
    assert p.A.gradients == 1


# ------------------------------------------------------------- bad input


def test_general_sum_refused():
    g = ExplicitGame(decision(0, "i", {"a": terminal((1.0, -1.0)), "b": terminal((2.0, 0.0))}))
    with pytest.raises(GameError, match="general-sum.*zero-sum"):
        tp.compile_game(g)


def test_constant_sum_accepted():
    # u0 + u1 = 1 everywhere: same equilibrium as the zero-sum game with payoffs u0.
    g = ExplicitGame(decision(0, "i", {"a": terminal((1.0, 0.0)), "b": terminal((0.25, 0.75))}))
    p = tp.compile_game(g)
    assert tp.solve_lp(p).value == pytest.approx(1.0)
    assert p.stats["constant_sum"] == pytest.approx(1.0)


def test_imperfect_recall_names_infoset_and_histories():
    # Player 0 forgets its own first move: both second-move nodes share infoset "forget".
    second = lambda: decision(0, "forget", {"l": terminal(1), "r": terminal(0)})  # noqa: E731
    g = ExplicitGame(decision(0, "first", {"L": second(), "R": second()}))
    with pytest.raises(GameError, match=r"imperfect recall.*'forget'.*L.*R"):
        tp.compile_game(g)


def test_infoset_with_different_actions():
    g = ExplicitGame(chance([
        ("x", 0.5, decision(0, "I", {"a": terminal(1), "b": terminal(0)})),
        ("y", 0.5, decision(0, "I", {"a": terminal(1), "c": terminal(0)})),
    ]))
    with pytest.raises(GameError, match="different actions"):
        tp.compile_game(g)


def test_chance_probabilities_must_sum_to_one():
    g = ExplicitGame(chance([("x", 0.5, terminal(1)), ("y", 0.4, terminal(0))]))
    with pytest.raises(GameError, match="sum to 0.9"):
        tp.compile_game(g)
    g = ExplicitGame(chance([("x", 1.5, terminal(1)), ("y", -0.5, terminal(0))]))
    with pytest.raises(GameError, match="probability -0.5"):
        tp.compile_game(g)


def test_bad_game_names():
    with pytest.raises(GameError, match="unknown game"):
        tp.make_game("poker9")
    with pytest.raises(GameError, match="ranks"):
        tp.make_game("leduc(ranks=1)")
    with pytest.raises(GameError, match="parameters"):
        tp.make_game("kuhn(players=3)")


# ------------------------------------------------------------- properties


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6))
def test_lp_on_random_games(seed):
    p = tp.compile_game(random_game(seed))
    lp = tp.solve_lp(p)
    assert p.X.is_plan(lp.x, tol=1e-7) and p.Y.is_plan(lp.y, tol=1e-7)
    # the LP value equals each side's best-response value against the other's LP strategy
    br0, _ = tp.metrics.best_response(p, 0, lp.y)
    br1, _ = tp.metrics.best_response(p, 1, lp.x)
    assert br0 == pytest.approx(lp.value, abs=1e-7)
    assert br1 == pytest.approx(lp.value, abs=1e-7)


def _normal_form_value(p):
    """Game value by the normal-form LP over all pure strategy pairs: an independent method."""
    from scipy.optimize import linprog

    X = np.array(list(_pure_plans(p.X)))
    Y = np.array(list(_pure_plans(p.Y)))
    M = X @ p.A.to_sparse().toarray() @ Y.T  # payoff of pure pairs
    m, n = M.shape
    # max v s.t. sum_i s_i M[i, j] >= v for all j, s in simplex
    c = np.zeros(m + 1)
    c[-1] = -1
    res = linprog(c, A_ub=np.hstack([-M.T, np.ones((n, 1))]), b_ub=np.zeros(n),
                  A_eq=np.hstack([np.ones((1, m)), [[0]]]), b_eq=[1], bounds=[(0, None)] * m + [(None, None)])
    return -res.fun


@pytest.mark.parametrize("seed", [3, 13, 18, 28])  # games with <= 10 infosets per player
def test_sequence_form_lp_equals_normal_form_lp(seed):
    p = tp.compile_game(random_game(seed, max_depth=3, max_actions=2))
    assert tp.solve_lp(p).value == pytest.approx(_normal_form_value(p), abs=1e-8)


@pytest.mark.parametrize("backend", ["numba", "array"])
@pytest.mark.parametrize("algorithm", ["cfr+", "hedge", "egt", "dual-averaging"])
def test_a_player_who_never_acts(algorithm, backend):
    # player 1 has no infosets (a treeplex of the empty sequence alone): the one-player
    # optimum is 2, reached by r then y; its regret kernels, parts and entropy constants
    # must cope with nothing to update (they crashed or divided by M_Q = 0)
    game = ExplicitGame(decision(0, "a", {"l": terminal(1.0), "r": decision(0, "b", {
        "x": terminal(0.0), "y": terminal(2.0), "z": terminal(-1.0)})}))
    p = tp.compile_game(game)
    assert p.Y.n_infosets == 0
    res = tp.solve(p, algorithm, max_iters=300, backend=backend)
    assert res.evaluation.value == pytest.approx(2.0, abs=0.05)
    assert res.evaluation.gap == pytest.approx(2.0 - res.evaluation.value, abs=1e-12)
