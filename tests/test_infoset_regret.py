"""Infoset regret (EFPE paper, section 4) against an independent brute force.

The brute force walks the game's states directly (no flat tree, no sequence form), forms
the Bayes beliefs at the infoset, and enumerates every pure strategy of the player in the
subtree below it. For infosets the opponent never reaches it uses the definition of the
fallback itself: Bayes beliefs under the opponent's strategy mixed with eps * uniform,
with eps small (the regret is continuous in eps, so it agrees to O(eps)).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from random_games import random_game

from treeplex import compile_game, make_game, solve_lp
from treeplex.model.game import ExplicitGame, decision, terminal
from treeplex.refine.infoset_regret import BAYES, FALLBACK, InfosetRegret


MAX_PURE = 2000


def _behavior(T, plan, eps):
    b = T.behavioral_from_plan(plan)
    out = {}
    for j, key in enumerate(T.infoset_keys):
        n = T.end[j] - T.start[j]
        probs = (1 - eps) * b[T.start[j] : T.end[j]] + eps / n
        out[key] = dict(zip(T.action_labels[j], probs))
    return out


def brute_force_regret(game, problem, x, y, player, key, eps=0.0):
    """Regret at ``player``'s infoset ``key``: beliefs by Bayes under the opponent's
    (eps-trembling) strategy, best response by enumerating pure subtree strategies."""
    own = _behavior(problem.treeplexes[player], (x, y)[player], 0.0)
    opp = _behavior(problem.treeplexes[1 - player], (x, y)[1 - player], eps)
    sign = 1.0 if player == 0 else -1.0
    nodes = []  # (state, chance * opponent reach)

    def find(state, w):
        if state.is_terminal():
            return
        if state.is_chance():
            for a, p in state.chance_outcomes():
                find(state.apply(a), w * p)
            return
        pl = state.player()
        if pl == player and state.infoset_key() == key:
            nodes.append((state, w))
            return
        for a in state.legal_actions():
            find(state.apply(a), w * (opp[state.infoset_key()][a] if pl != player else 1.0))

    find(game.initial_state(), 1.0)
    total = sum(w for _, w in nodes)
    if total == 0.0:
        return 0.0

    below = []

    def collect(state):
        if state.is_terminal():
            return
        if not state.is_chance() and state.player() == player and state.infoset_key() not in below:
            below.append(state.infoset_key())
        for a in (state.legal_actions() if not state.is_chance() else [o for o, _ in state.chance_outcomes()]):
            collect(state.apply(a))

    for s, _ in nodes:
        collect(s)

    def value(state, policy):
        if state.is_terminal():
            u = state.payoff()
            return sign * (u[0] if isinstance(u, tuple) else u)
        if state.is_chance():
            return sum(p * value(state.apply(a), policy) for a, p in state.chance_outcomes())
        k = state.infoset_key()
        if state.player() == player:
            return sum(q * value(state.apply(a), policy) for a, q in policy[k].items() if q > 0)
        return sum(q * value(state.apply(a), policy) for a, q in opp[k].items() if q > 0)

    def expected(policy):
        return sum(w * value(s, policy) for s, w in nodes) / total

    labels = {k: list(own[k]) for k in below}
    if np.prod([len(v) for v in labels.values()]) > MAX_PURE:
        return None  # too many pure strategies to enumerate
    best = max(
        expected({k: {a: float(a == c) for a in labels[k]} for k, c in zip(below, choice)})
        for choice in itertools.product(*(labels[k] for k in below))
    )
    return best - expected(own)


def _random_profile(problem, rng, zero_frac=0.0):
    plans = []
    for T in problem.treeplexes:
        b = np.empty(T.n_seqs)
        b[0] = 1.0
        for j in range(T.n_infosets):
            p = rng.dirichlet(np.ones(T.end[j] - T.start[j]))
            if zero_frac and rng.random() < zero_frac:
                p[rng.integers(len(p))] = 0.0
                p = p / p.sum() if p.sum() > 0 else np.full(len(p), 1.0 / len(p))
            b[T.start[j] : T.end[j]] = p
        plans.append(T.plan_from_behavioral(b))
    return plans


def _check_all(game, problem, x, y, ir, keys=None, tol=1e-10):
    res = ir(x, y)
    checked = 0
    for pl in range(2):
        T = problem.treeplexes[pl]
        for j, key in enumerate(T.infoset_keys):
            if keys is not None and key not in keys:
                continue
            if res.belief[pl][j] == BAYES:
                want, t = brute_force_regret(game, problem, x, y, pl, key), tol
            else:
                want, t = brute_force_regret(game, problem, x, y, pl, key, eps=1e-8), 1e-5
            if want is None:
                continue
            assert res.regret[pl][j] == pytest.approx(want, abs=t), (pl, key, res.belief[pl][j])
            checked += 1
    return res, checked


def test_kuhn_matches_brute_force():
    game = make_game("kuhn")
    p = compile_game(game)
    ir = InfosetRegret(p)
    rng = np.random.default_rng(0)
    for k in range(5):
        x, y = _random_profile(p, rng, zero_frac=0.5 if k >= 2 else 0.0)
        _check_all(game, p, x, y, ir)
    lp = solve_lp(p)
    res, n = _check_all(game, p, lp.x, lp.y, ir)
    assert n == 12
    assert np.any(res.belief[1] == FALLBACK)  # LP: player 0 never bets, so player 1's "b" infosets


@pytest.mark.parametrize("seed", range(8))
def test_random_games_match_brute_force(seed):
    game = random_game(seed, max_depth=4)
    p = compile_game(game)
    ir = InfosetRegret(p)
    rng = np.random.default_rng(seed)
    checked = 0
    for zero in (0.0, 0.6):
        x, y = _random_profile(p, rng, zero_frac=zero)
        checked += _check_all(game, p, x, y, ir)[1]
    assert checked >= p.X.n_infosets + p.Y.n_infosets  # most infosets, both times


def test_leduc_round_two_infosets_match_brute_force():
    game = make_game("leduc")
    p = compile_game(game)
    ir = InfosetRegret(p)
    rng = np.random.default_rng(3)
    x, y = _random_profile(p, rng, zero_frac=0.3)
    keys = {k for T in p.treeplexes for k in T.infoset_keys if k.split(":")[1].count("/") == 1}
    keys = set(sorted(keys)[::9])  # a spread-out sample of round-two infosets
    _, n = _check_all(game, p, x, y, ir, keys=keys)
    assert n >= 10


def threat_game():
    """Player 0 takes 1 ("out") or goes "in"; then player 1 either "punish"es (player 0
    gets -5) or "concede"s (player 0 gets 0). Every Nash equilibrium has player 0 out (1 > 0
    >= anything in); player 1 is then free at her infoset, but only "punish" is sequentially
    rational: conceding gives up 5 (EFPE paper, figure 1, right)."""
    return ExplicitGame(
        decision(0, "P0", {
            "out": terminal(1.0),
            "in": decision(1, "P1", {"concede": terminal(0.0), "punish": terminal(-5.0)}),
        }),
        name="threat",
    )


def test_hand_computed_threat_game():
    game = threat_game()
    p = compile_game(game)
    ir = InfosetRegret(p)
    x = np.array([1.0, 1.0, 0.0])  # out
    for q, want in ((1.0, 5.0), (0.3, 1.5), (0.0, 0.0)):  # probability of conceding; regret 5q by hand
        y = np.array([1.0, q, 1.0 - q])
        res = ir(x, y)
        assert res.belief[1][0] == FALLBACK  # player 0 never goes in
        assert res.regret[1][0] == pytest.approx(want, abs=1e-14)
        assert res.regret[0][0] == pytest.approx(0.0, abs=1e-14)  # out (1) beats in (0 - 5q <= 0)
    assert res.max == pytest.approx(0.0, abs=1e-14)
    res = ir(x, np.array([1.0, 1.0, 0.0]))
    assert res.argmax == (1, "P1") and res.max == pytest.approx(5.0)
    lst = res.as_list()
    assert lst[1] == {"player": 1, "infoset": "P1", "regret": 5.0, "belief": "fallback"}


def _attained(ir, player, bound):
    """Largest regret the bound's witness profiles attain, over the infosets with the top bound."""
    best = 0.0
    for j in np.flatnonzero(bound >= bound.max() - 1e-9)[:20]:
        x, y = ir.worst_case(player, int(j))
        best = max(best, ir(x, y).regret[player][j])
    return best


def test_leduc5_largest_infoset_regret_is_22():
    # 22 is stated in the EFPE paper, section 4. By hand: holding a pair with the public
    # card after the first round went raise-raise-call (5 chips each), raising, being
    # re-raised and folding loses 9, while calling instead wins 13.
    game = make_game("leduc(ranks=5)")
    p = compile_game(game)
    ir = InfosetRegret(p)
    bound = ir.bound()
    for pl in range(2):
        assert bound[pl].max() == pytest.approx(22.0)
        assert _attained(ir, pl, bound[pl]) == pytest.approx(22.0)


def test_kuhn_bound_by_hand():
    # Player 1 holding Q facing a bet: calling wins 2 against J, folding loses 1: 3.
    game = make_game("kuhn")
    p = compile_game(game)
    ir = InfosetRegret(p)
    b1 = dict(zip(p.Y.infoset_keys, ir.bound()[1]))
    assert b1["Q:b"] == pytest.approx(3.0)
    assert _attained(ir, 1, ir.bound()[1]) == pytest.approx(3.0)


@pytest.mark.parametrize("seed", range(6))
def test_bound_holds_for_random_profiles(seed):
    game = random_game(seed, max_depth=4)
    p = compile_game(game)
    ir = InfosetRegret(p)
    bound = ir.bound()
    rng = np.random.default_rng(seed)
    for zero in (0.0, 0.5, 0.9):
        res = ir(*_random_profile(p, rng, zero_frac=zero))
        for pl in range(2):
            assert np.all(res.regret[pl] <= bound[pl] + 1e-9)
