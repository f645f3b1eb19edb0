"""Raked postflop spots (``rake``, ``rake_cap``): terminal values by hand on a river spot, the
operator against a brute-force walk of the rules view with the rake written out here, the
fused engine against the sequence form, the Nash gap of a given profile, zero rake unchanged
bit for bit, CFR's gap going down, and the zero-sum solvers' refusals."""

import json
import subprocess
import sys

import numpy as np
import pytest

import treeplex as tp
from treeplex.errors import InputError
from treeplex.model.metrics import evaluate
from treeplex.poker.postflop import PostflopGame
from treeplex.refine.efpe import perturbation
from treeplex.run.driver import make_solver
from treeplex.solvers.cfr import CFRPlus

# AsAh against KsKh on a river AA wins: pot 100, stacks 100 behind, all-in or check
AA_KK = dict(board="Td9d6hQc2s", pot=100, stack=100, range0="AsAh", range1="KsKh", bet="a")
# a short-deck turn and river with a few hands: many terminals, ties, card removal
TURN = dict(board="KsQh9d8c", deck="89TJQKA", pot=20, stack=30, bet="50%", range0="AA,KK,QJ,T9", range1="AQ,JJ,T8,KQ",
            **{"raise": "2x"})
TURN_SMALL = dict(board="KsQhTdJc", deck="TJQKA", pot=20, stack=15, bet="50%", range0="AA,QJ,KT", range1="AK,TT,QQ",
                  **{"raise": "2x"})
RIVER = dict(board="AhKd7c2s9h", pot=20, stack=20, range0="AA,KK,QQ,AK,KQ,JT", range1="AA,KK,QQ,AQ,JJ,T9",
             bet="50%", deck="9TJQKA27", **{"raise": "2x"})


def plan(g, p, probs):
    """Player p's realization plan playing ``probs[history]`` (one mixture for every hand)."""
    t = g.tree
    x = np.zeros(g.n_seqs(p))
    x[0] = 1.0
    for v in range(t.n_nodes):
        if t.actor[v] != p:
            continue
        k = len(t.actions[v])
        for h in range(len(g.hands[p])):
            last = t.node_last[v][p]
            reach = 1.0 if last is None else x[g.bases[p][last[0]] + h * len(t.actions[last[0]]) + last[1]]
            x[g.bases[p][v] + h * k: g.bases[p][v] + (h + 1) * k] = reach * np.asarray(probs[t.history[v]])
    return x


def random_plan(T, rng):
    """A realization plan with random behavioral probabilities (each in proportion to U(0.2, 1))."""
    return T.plan_from_behavioral(T.behavioral_from_plan(T.plan_from_behavioral(rng.uniform(0.2, 1, T.n_seqs))))


def test_river_terminal_values_by_hand():
    """AA wins every showdown. Rake 5% capped at 1.2 big blinds (12 chips): check-check and
    either fold rake the 100 pot (5 chips), a called all-in the 300 pot (15, capped to 12).
    So x-x: AA +45 / KK -50; x-b100-f: -50 / +45; x-b100-c and b100-c: +138 / -150;
    b100-f: +45 / -50. Profile: OOP checks and folds to the all-in, IP shoves and calls:
    it plays x-b100-f (-50 / +45, rake 5). BR_0 = 138 (call, or shove: IP calls), BR_1 =
    45 (shove: OOP folds), so the Nash gap is (138 + 50) + (45 - 45) = 188."""
    g = PostflopGame(**AA_KK, rake=0.05, rake_cap=1.2)
    p = g.problem()
    hist = [g.tree.term_history[t] for t in range(g.tree.n_terminals)]
    want = {"x-x": (45, -50), "x-b100-f": (-50, 45), "x-b100-c": (138, -150), "b100-f": (45, -50),
            "b100-c": (138, -150)}
    assert sorted(hist) == sorted(want)
    oop = {"": [1, 0], "x-b100": [1, 0]}  # check; fold to the all-in
    ip = {"x": [0, 1], "b100": [0, 1]}  # shove; call
    x, y = plan(g, 0, oop), plan(g, 1, ip)
    e = evaluate(p, x, y)
    assert (e.value, e.value1, e.rake) == pytest.approx((-50, 45, 5))
    assert (e.br0, e.br1) == pytest.approx((138, -45))
    assert e.gap == pytest.approx(188) and e.exploitability == pytest.approx(94)
    for line, (u0, u1) in want.items():  # each terminal alone: pure plans that reach it
        acts = line.split("-")
        xs = {"": [1, 0] if acts[0] == "x" else [0, 1], "x-b100": [0, 1] if acts[-1] == "c" else [1, 0]}
        ys = {"x": [1, 0] if line == "x-x" else [0, 1], "b100": [0, 1] if acts[-1] == "c" else [1, 0]}
        e = evaluate(p, plan(g, 0, xs), plan(g, 1, ys))
        assert (e.value, e.value1) == pytest.approx((u0, u1)), line
    # the equilibrium: IP checks back and folds; OOP wins 45, the rake is 5 and the gap goes to 0
    res = tp.solve(p, "dcfr", max_iters=300)
    assert res.value == pytest.approx(45, abs=1e-3) and res.evaluation.value1 == pytest.approx(-50, abs=1e-3)
    assert res.gap < 1e-3


def test_split_pot_costs_each_player_half_the_rake():
    """Both play the board (a royal flush): a check-down ties and each pays half the rake."""
    g = PostflopGame(board="AsKsQsJsTs", pot=100, stack=100, range0="2c2d", range1="3c3d", bet="a", rake=0.05)
    x, y = plan(g, 0, {"": [1, 0], "x-b100": [1, 0]}), plan(g, 1, {"x": [1, 0], "b100": [1, 0]})
    e = evaluate(g.problem(), x, y)
    assert (e.value, e.value1, e.rake) == pytest.approx((-2.5, -2.5, 5))
    e = evaluate(g.problem(), plan(g, 0, {"": [0, 1], "x-b100": [1, 0]}), plan(g, 1, {"x": [1, 0], "b100": [0, 1]}))
    assert (e.value, e.value1, e.rake) == pytest.approx((-7.5, -7.5, 15))  # the called all-in: pot 300, no cap


def _brute_force(g, x, y, rate, cap_chips):
    """(u_0, u_1) by walking the rules view (hole cards, every card dealt, phevaluator at
    showdowns) with the rake written out: the winner nets half the pot minus r, the loser
    loses half the pot, a tie costs each r / 2; r = min(rate x pot, cap), pot = twice the
    loser's chips in at a fold, twice the stake at a showdown."""
    root = g.initial_state()  # builds the rules view (no isomorphism: the solver's tree)
    t = g.rules_tree
    beh = [{}, {}]
    for p, pl in ((0, x), (1, y)):
        for v in range(t.n_nodes):
            if t.actor[v] == p:
                beh[p][v] = g.behavioral(p, pl, v)[0]

    def walk(s):
        if s.is_terminal():
            i = s.at[1]
            z = s.payoff()
            half = abs(t.payoff0[i]) if t.kind[i] == "fold" else t.stake[i]
            r = min(rate * 2 * half, cap_chips)
            if z > 0:
                return np.array([half - r, -half])
            if z < 0:
                return np.array([-half, half - r])
            return np.array([-r / 2, -r / 2])
        if s.is_chance():
            return sum(q * walk(s.apply(a)) for a, q in s.chance_outcomes())
        p, v = s.player(), s.at[1]
        probs = beh[p][v][s.deal[p]]
        return sum(q * walk(s.apply(a)) for a, q in zip(s.legal_actions(), probs) if q > 0)

    return walk(root)


@pytest.mark.parametrize("spot", [RIVER, TURN_SMALL], ids=["river", "turn"])
def test_operator_equals_the_rules_game_with_rake(spot):
    """Both players' values of random profiles: the operator (per-player terminal values, a
    showdown's -r/2 as a fold-kind term) equals the brute-force walk, with and without a cap."""
    rng = np.random.default_rng(3)
    for rate, cap in ((0.05, None), (0.1, 0.25)):
        g = PostflopGame(**spot, rake=rate, rake_cap=cap, isomorphism=False)
        p = g.problem()
        x, y = (random_plan(T, rng) for T in p.treeplexes)
        e = evaluate(p, x, y)
        want = _brute_force(g, x, y, rate, np.inf if cap is None else cap * g.big_blind)
        assert (e.value, e.value1) == pytest.approx(tuple(want), abs=1e-10)


@pytest.mark.parametrize("spot", [TURN, RIVER], ids=["turn", "river"])
def test_fused_engine_equals_the_sequence_form_with_rake(spot):
    """The fused walk's per-player terminal values (:func:`.fused._raked_showdown`): its best
    responses and values of its own average profile equal the sequence-form operator's on the
    same plans (turn: with isomorphism; the cap binds above a 20-chip pot)."""
    g = PostflopGame(**spot, rake=0.05, rake_cap=0.1)
    p = g.problem()
    s = make_solver(p, "dcfr", fused=True)
    for _ in range(20):
        s.step()
    walked = s.evaluate_profile("average")
    e = evaluate(p, *s.average())
    for a, b in ((walked.value, e.value), (walked.value1, e.value1), (walked.br0, e.br0), (walked.br1, e.br1)):
        assert a == pytest.approx(b, abs=1e-9)
    assert walked.gap == pytest.approx(e.gap, abs=1e-9) and e.rake > 0


@pytest.mark.parametrize("fused", [False, True])
def test_zero_rake_is_the_zero_sum_game_bit_for_bit(fused):
    """rake=0 (with or without a cap) builds the zero-sum operator and gives the same iterates,
    values and gaps as a spot without rake, bit for bit."""
    runs = []
    for kw in ({}, {"rake": 0}, {"rake": 0.0, "rake_cap": 3}):
        p = PostflopGame(**TURN, **kw).problem()
        assert not p.general_sum
        res = tp.solve(p, "dcfr", max_iters=15, fused=fused)
        runs.append((res.x, res.y, res.value, res.gap))
    for r in runs[1:]:
        assert np.array_equal(r[0], runs[0][0]) and np.array_equal(r[1], runs[0][1])
        assert r[2:] == runs[0][2:]


def test_raked_cfr_gap_goes_down_and_rake_changes_the_solution():
    g = PostflopGame(**TURN, rake=0.05, rake_cap=1)
    p = g.problem()
    assert p.general_sum
    gaps = [tp.solve(p, "dcfr", max_iters=n).gap for n in (5, 40, 300)]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-2 * gaps[0]
    raked = tp.solve(PostflopGame(**TURN, rake=0.05, rake_cap=1).problem(), "dcfr", max_iters=300)
    plain = tp.solve(PostflopGame(**TURN).problem(), "dcfr", max_iters=300)
    assert raked.evaluation.rake > 0 and raked.evaluation.value1 is not None
    assert abs(raked.value - plain.value) > 10 * (raked.gap + plain.gap)


@pytest.mark.parametrize("algorithm", ["lp", "egt", "mirror-prox", "dual-averaging", "mccfr-es", "apcfr+"])
def test_zero_sum_solvers_refuse_a_raked_spot(algorithm):
    p = PostflopGame(**AA_KK, rake=0.05).problem()
    with pytest.raises(InputError, match="general-sum"):
        tp.solve(p, algorithm, max_iters=2)


def test_efpe_refuses_a_raked_spot():
    p = PostflopGame(**AA_KK, rake=0.05).problem()
    with pytest.raises(InputError, match="general-sum"):
        CFRPlus(p, lower=perturbation(p, 1e-3))


@pytest.mark.parametrize("kw,msg", [({"rake": 1}, "rake must be a fraction"), ({"rake": -0.01}, "rake must be"),
                                    ({"rake": "x"}, "rake must be"), ({"rake": 0.05, "rake_cap": 0}, "rake_cap must"),
                                    ({"rake": 0.05, "rake_cap": "inf"}, "rake_cap must")])
def test_bad_rake_is_refused(kw, msg):
    with pytest.raises(InputError, match=msg):
        PostflopGame(**AA_KK, **kw)


def test_cli_reports_both_values_and_the_rake(tmp_path):
    spec = tmp_path / "raked.json"
    spec.write_text(json.dumps({"game": "postflop", **AA_KK, "rake": 0.05, "rake_cap": 1.2}))
    out = subprocess.run([sys.executable, "-m", "treeplex.cli", "solve", str(spec), "--json", "--no-strategies",
                          "--algorithm", "dcfr", "--max-iters", "300"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["value"] == pytest.approx(45, abs=1e-3) and r["value_player1"] == pytest.approx(-50, abs=1e-3)
    assert r["expected_rake"] == pytest.approx(5, abs=1e-3) and r["gap"] >= 0
    bad = subprocess.run([sys.executable, "-m", "treeplex.cli", "solve", str(spec), "--algorithm", "lp"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "general-sum" in bad.stderr and bad.stderr.count("\n") == 1


def test_split_solve_refuses_a_raked_spot():
    from treeplex.scale.split import SplitSolver

    with pytest.raises(InputError, match="raked spots are general-sum"):
        SplitSolver({"game": "postflop", **TURN, "rake": 0.05}, 2, "cfr+", engine="local")


def test_locked_raked_spot_gains_each_players_own_value(tmp_path):
    """A lock on a raked spot: each player's EV gain is from its own values (the game is not
    zero-sum, so they are not opposite), and they differ by the change in expected rake."""
    spec = tmp_path / "locked.json"
    spec.write_text(json.dumps({"game": "postflop", **RIVER, "rake": 0.05, "rake_cap": 0.3,
                                "locks": [{"node": "x", "player": 1, "strategy": {"x": 0.8, "b10": 0.2}}]}))
    out = subprocess.run([sys.executable, "-m", "treeplex.cli", "solve", str(spec), "--json", "--no-strategies",
                          "--algorithm", "dcfr", "--max-iters", "400"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    base, gain = r["baseline"], r["lock_ev_gain"]["chips"]
    assert gain[0] == pytest.approx(r["value"] - base["value"], abs=1e-12)
    assert gain[1] == pytest.approx(r["value_player1"] - base["value_player1"], abs=1e-12)
    rake_change = r["expected_rake"] + base["value"] + base["value_player1"]
    assert gain[0] + gain[1] == pytest.approx(-rake_change, abs=1e-9) and abs(rake_change) > 1e-3
