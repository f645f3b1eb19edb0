"""The multi-street postflop engine against the generic compiler + exact LP, and its input checks."""

import json
import subprocess
import sys

import numpy as np
import pytest

import treeplex as tp
from treeplex.errors import InputError
from treeplex.poker.postflop import PostflopGame
from treeplex.poker.sizes import parse_sizes, street_actions

TURN_RANGES = dict(range0="AsKh,QdJd,TsTc,AhJh", range1="AcAd,9s9h,KdQs,JsTs,Jc9c")


def _lp_values(game):
    """(value from the structured operator's LP, value from the compiled rules game's LP)."""
    structured = tp.solve_lp(game.problem())
    compiled = tp.solve_lp(tp.compile_game(game))
    return structured.value, compiled.value


@pytest.mark.parametrize("board, deck, kw", [
    ("KsQh9d8c2s", None, dict(range0="AsKh,QdJd,TsTc,AhJh,8h8d", range1="AcAd,9s9h,KdQs,JsTs,Qc2c",
                              bet="50%,a", **{"raise": "2x"})),
    ("KsQh9d8c", "89TJQKA", dict(bet="50%,a", **{"raise": "2x"}, **TURN_RANGES)),
    ("KsQhTd", "TJQKA", dict(range0="AsKh,QdJd,TsTc", range1="AcAd,JsTs,KdQs", bet="a")),
])
def test_value_equals_compiled_game_lp(board, deck, kw):
    """River, turn and flop starts: the public-tree x hands engine (its own layout, chance
    weights and showdown sweeps) has the value of the explicit game tree the generic
    compiler builds from the rules view (hole cards, then every card dealt, phevaluator at
    every leaf)."""
    g = PostflopGame(board=board, pot=20, stack=30, deck=deck, **kw)
    structured, compiled = _lp_values(g)
    assert structured == pytest.approx(compiled, abs=1e-7)
    assert -30 <= structured <= 30


def test_products_equal_explicit_matrix_on_random_plans():
    """A @ y and A.T @ x of the structured turn operator equal the compiled game's matrix
    products, matched through the infoset keys (the compiled game leaves out infosets that no
    deal reaches)."""
    g = PostflopGame(board="KsQh9d8c", pot=20, stack=30, deck="89TJQKA", bet="50%,a", **{"raise": "2x"},
                     **TURN_RANGES)
    P, Q = g.problem(), tp.compile_game(g)
    rng = np.random.default_rng(1)
    seq_of = []
    for T, U in zip(P.treeplexes, Q.treeplexes):  # compiled sequence -> structured sequence
        pos = {k: j for j, k in enumerate(T.infoset_keys)}
        m = np.zeros(U.n_seqs, dtype=np.int64)
        for j, key in enumerate(U.infoset_keys):
            i = pos[key]
            m[U.start[j]:U.end[j]] = np.arange(T.start[i], T.end[i])
        seq_of.append(m)
    bx = rng.uniform(0.1, 1, P.X.n_seqs)
    by = rng.uniform(0.1, 1, P.Y.n_seqs)
    x, y = P.X.plan_from_behavioral(bx), P.Y.plan_from_behavioral(by)
    Ay, ATx = P.A.matvec(y), P.A.rmatvec(x)
    A = Q.A.to_sparse() if hasattr(Q.A, "to_sparse") else Q.A.A
    assert np.allclose(Ay[seq_of[0]], A @ y[seq_of[1]], atol=1e-12)
    assert np.allclose(ATx[seq_of[1]], A.T @ x[seq_of[0]], atol=1e-12)


def test_products_split_into_runs_on_threads_equal_the_explicit_matrix():
    """Above PARALLEL_SEQS a product's groups are cut into runs, one call each on the thread
    pool, each into its own partial output: three runs (more than this machine's threads),
    twice in a row (each run zeroes its partial), equal the one-run product and A's."""
    from treeplex.poker.operator import Partials
    from treeplex.poker.streets_operator import _split

    g = PostflopGame(board="KsQh9d8c", pot=20, stack=30, deck="89TJQKA", bet="50%,a", **{"raise": "2x"},
                     **TURN_RANGES)
    op = g.operator()
    rng = np.random.default_rng(2)
    x, y = rng.uniform(0.1, 1, op.shape[0]), rng.uniform(0.1, 1, op.shape[1])
    assert [len(r) for r in op._parts] == [2, 2]  # a small spot: one run
    one = op.matvec(y), op.rmatvec(x)
    op._parts = [_split(op._groups[p][0], 10, 3) for p in (0, 1)]
    op._partials = Partials(op._parts, op.shape)
    assert [len(r) for r in op._parts] == [4, 4]
    A = op.to_sparse()
    for _ in range(2):
        Ay, ATx = op.matvec(y), op.rmatvec(x)
        assert np.allclose(Ay, one[0], rtol=1e-13, atol=0) and np.allclose(ATx, one[1], rtol=1e-13, atol=0)
        assert np.allclose(Ay, A @ y, atol=1e-12) and np.allclose(ATx, A.T @ x, atol=1e-12)


def test_cfr_converges_to_the_lp_value():
    g = PostflopGame(board="KsQh9d8c", pot=20, stack=30, deck="89TJQKA", bet="50%,a", **{"raise": "2x"},
                     **TURN_RANGES)
    P = g.problem()
    lp = tp.solve_lp(P)
    res = tp.solve(P, "dcfr", target_gap=1e-4, max_iters=20000)
    assert res.gap <= 1e-4
    assert abs(res.value - lp.value) <= res.gap


def test_size_syntax():
    s = parse_sizes("33%, 75%,e,a", "bet")
    assert [str(z) for z in s] == ["33%", "75%", "e", "a"]
    with pytest.raises(InputError, match="sizes.turn.bet: cannot read size 'abc'"):
        parse_sizes("33%,abc", "sizes.turn.bet")
    with pytest.raises(InputError, match="raise size"):
        parse_sizes("2.5x", "bet")
    # pot 100, 100 behind: 33% -> 33, 75% -> 75, all-in 100 (postflop-solver's rounding)
    assert street_actions(s[:2] + s[3:], False, 100, 0, 0, 100, 1, 1, 1.5, 0.0, True) == [33, 75, 100]
    # geometric over 2 streets, pot 100, 300 behind: f = ((2*3+1)^(1/2) - 1)/2 = 0.8229 -> 82
    assert street_actions(parse_sizes("e", "b"), False, 100, 0, 0, 300, 1, 2, 0.0, 0.0, True) == [82]


def test_river_tree_follows_postflop_solver_rules():
    """Pot 100, stack 100, bets 33%,75%,a, raise 2.5x, add-all-in 1.5, force-all-in 0.15:
    a 75 bet leaves 25 behind, at most 0.15 x the new pot (250, rounded 38), so it becomes
    all-in; facing 33 the 2.5x raise (to 83) leaves 17 behind, at most 0.15 x 266, all-in too."""
    g = PostflopGame(board="Td9d6hQc2s", pot=100, stack=100, range0="AA", range1="KK", bet="33%,75%,a",
                     **{"raise": "2.5x"})
    t = g.tree
    assert t.actions[0] == ("x", "b33", "b100")
    v = t.children[0][1][1]
    assert t.actions[v] == ("f", "c", "b100")


def test_spec_file_example_from_the_issue(tmp_path):
    spec = {"game": "postflop", "board": "Ah8d5c2s", "pot": 550, "stack": 1200,
            "range0": "99-22,A5s-A2s,K9s+,QTs+,87s,76s", "range1": "AA-TT,AJs+,KQs,AQo+",
            "sizes": {"turn": {"bet": "50%,a", "raise": "2.5x"},
                      "river": {"bet": "50%,125%,a", "raise": "100%,a", "donk": "33%"}},
            "add_allin_threshold": 1.5, "force_allin_threshold": 0.15}
    path = tmp_path / "spot.json"
    path.write_text(json.dumps(spec))
    out = subprocess.run([sys.executable, "-m", "treeplex.cli", "info", str(path), "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["streets"] == 2 and info["boards"] == 1 + 48  # the turn board and 48 river cards
    toml = tmp_path / "spot.toml"
    toml.write_text('game = "postflop"\nboard = "Ah8d5c2s"\npot = 550\nstack = 1200\nrange0 = "99-22"\n'
                    'range1 = "AA-TT"\n[sizes.turn]\nbet = "50%"\nraise = "2.5x"\n[sizes.river]\nbet = "a"\n')
    out = subprocess.run([sys.executable, "-m", "treeplex.cli", "info", str(toml), "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("kw, message", [
    (dict(bet="33%,huge"), "cannot read size 'huge'"),
    (dict(sizes={"turn": {"bet": "50%"}}), "sizes.river is missing"),
    (dict(board="KsKsQh9d"), "card Ks appears twice"),
    (dict(board="KsXh9d8c"), "bad card 'Xh'"),
    (dict(range0="KsQs"), "range0: no hand left once the board"),
    (dict(pot=0), "pot must be a positive number"),
    (dict(stack=-5), "stack must be a positive number"),
    (dict(add_allin_threshold="x"), "add_allin_threshold must be a finite number"),
    (dict(isomorphism="maybe"), "isomorphism must be true or false"),
])
def test_bad_input_names_the_field(kw, message):
    base = dict(board="KsQh9d8c", pot=20, stack=30, range0="AA", range1="KK")
    with pytest.raises(InputError, match=message):
        PostflopGame(**{**base, **kw})


def test_oversized_spot_is_refused_before_allocation():
    """Below the leanest path's estimate (the fused engine's) the problem is refused; below the
    sequence form's only, the problem is built (its treeplexes deferred) and the default solver
    is refused before its state is allocated."""
    g = PostflopGame(board="KsQh9d8c", pot=20, stack=30, range0="AA,KK", range1="QQ")
    lean, full = g.memory_estimate(fused=True), g.memory_estimate()
    with pytest.raises(InputError, match="needs about .* above --max-memory"):
        g.problem(max_memory=lean - 1)
    P = PostflopGame(board="KsQh9d8c", pot=20, stack=30, range0="AA,KK", range1="QQ").problem(max_memory=full - 1)
    with pytest.raises(InputError, match="sequence form of this spot needs about .* above --max-memory"):
        tp.solve(P, "dcfr", max_iters=2)


def test_range_ev_at_the_root_is_the_game_value():
    """The per-hand EVs (counterfactual values / reach probabilities), averaged over the
    range, give back the LP's game value: value + pot/2 for OOP, -value + pot/2 for IP."""
    g = PostflopGame(board="KsQh9d8c", pot=20, stack=30, bet="50%,a", **{"raise": "2x"}, deck="89TJQKA",
                     **TURN_RANGES)
    lp = tp.solve_lp(g.problem())
    nodes = {n["history"]: n for n in g.strategy_dict(lp.x, lp.y)["nodes"]}
    assert nodes[""]["range_ev"] == pytest.approx(lp.value + 10, abs=1e-7)
    x_line = nodes["x"]  # IP after OOP checks: all of OOP's range checks or not, IP's EV is its payoff there
    assert x_line["player"] == 1 and x_line["range_ev"] is not None


def test_check_down_ev_is_equity_times_pot():
    """With no bets, a hand's EV is its equity x pot: the operator's counterfactual values
    against the enumeration of every runout with phevaluator."""
    g = PostflopGame(board="KsQh9d8c", pot=20, stack=30, bet="", **{"raise": ""}, add_allin_threshold=0, **TURN_RANGES)
    lp = tp.solve_lp(g.problem())
    root = g.strategy_dict(lp.x, lp.y)["nodes"][0]
    for hand, ev in root["ev"].items():
        assert ev == pytest.approx(20 * root["equity"][hand], abs=2e-5)  # both rounded to 1e-6
    assert root["range_ev"] == pytest.approx(lp.value + 10, abs=1e-7)


def test_out_and_show_grid_match_the_strategy(tmp_path):
    """solve --out writes per-hand strategies; show prints the 13x13 grid of one action whose
    cells are the weighted frequencies of the JSON's combos (here: pairs, one class each)."""
    out = tmp_path / "s.json"
    spot = "postflop(board=KsQh9d8c,pot=20,stack=30,range0=JJ-22,range1=AA-TT,bet=50%,raise=2x)"
    run = subprocess.run([sys.executable, "-m", "treeplex.cli", "solve", spot, "--algorithm", "dcfr",
                          "--max-iters", "50", "--out", str(out), "--no-strategies"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    data = json.loads(out.read_text())
    node = next(n for n in data["nodes"] if n["history"] == "x")  # IP after a check: check or bet
    shown = subprocess.run([sys.executable, "-m", "treeplex.cli", "show", str(out), "x"],
                           capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    grid = lines[lines.index("x: frequency per hand class (%)") + 2:][:13]
    aa = [p for h, p in node["hands"].items() if h[0] == "A" and h[2] == "A"]
    w = [node["weight"][h] for h in node["hands"] if h[0] == "A" and h[2] == "A"]
    expect = 100 * sum(q[0] * wi for q, wi in zip(aa, w)) / sum(w)
    assert float(grid[0].split()[1]) == pytest.approx(expect, abs=0.5)
    bad = subprocess.run([sys.executable, "-m", "treeplex.cli", "show", str(out), "nope"], capture_output=True, text=True)
    assert bad.returncode == 2 and "no node 'nope'" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.slow  # compiles the float32 streets kernels (~25 s cold); tests/test_split.py keeps a float32 case
def test_float32_storage_converges_with_gaps_in_float64():
    g = PostflopGame(board="KsQh9d8c", pot=20, stack=30, deck="89TJQKA", bet="50%,a", **{"raise": "2x"},
                     **TURN_RANGES)
    P = g.problem()
    lp = tp.solve_lp(P)
    from treeplex.run.driver import make_solver
    solver = make_solver(P, "dcfr", storage="float32")
    assert solver.players[0].R.dtype == np.float32 and solver.players[1].xsum.dtype == np.float32
    res = tp.solve(P, "dcfr", target_gap=1e-3, max_iters=5000, storage="float32")
    assert res.x.dtype == np.float64 and res.gap <= 1e-3
    assert abs(res.value - lp.value) <= res.gap


def test_turn_spot_equals_openspiel_universal_poker():
    """A turn spot against OpenSpiel's universal_poker (fcpa, handReaches, 4 board cards):
    OpenSpiel's own rules, river deal, hand evaluator and infosets, compiled and solved by LP,
    have our engine's game value."""
    pytest.importorskip("pyspiel")
    from treeplex.io.openspiel import OpenSpielGame
    from treeplex.poker.openspiel import load_universal_poker

    g = PostflopGame(board="Ks9h7d2c", pot=100, stack=200, range0="AsKh,QdJd,5c6c", range1="KdQd,9c8c,AhAc,7s7c:0.5",
                     bet="100%,a", **{"raise": "100%,a"}, add_allin_threshold=0, force_allin_threshold=0)
    theirs = tp.compile_game(OpenSpielGame(load_universal_poker(g)))
    ours = tp.solve_lp(g.problem()).value
    assert ours == pytest.approx(tp.solve_lp(theirs).value, abs=1e-6)
    assert abs(ours) < 0.45 * g.pot  # a mixed spot: neither side wins the pot outright (|value| = pot/2)


@pytest.mark.parametrize("board, deck, kw", [
    ("KsQhTh9s", "89TJQKA", dict(range0="AKs,88", range1="AQs,99", bet="50%,a", **{"raise": "2x"})),
    ("KsQhTh", "TJQKA", dict(range0="AKs", range1="AQs,TT", bet="a")),
])
def test_suit_isomorphism_is_exact(board, deck, kw):
    """Clubs and diamonds are interchangeable on these boards and ranges: the public tree
    deals one card per orbit and the solver sees one infoset per hand orbit, and the game
    value equals the one without isomorphism and the compiled full game's."""
    on = PostflopGame(board=board, pot=20, stack=30, deck=deck, **kw)
    off = PostflopGame(board=board, pot=20, stack=30, deck=deck, isomorphism=False, **kw)
    assert on.symmetries == [(0, 1, 2, 3), (1, 0, 2, 3)]
    assert on.tree.n_nodes < off.tree.n_nodes
    p_on, p_off = on.problem(), off.problem()
    assert p_on.X.n_seqs < p_off.X.n_seqs
    v_on, v_off = tp.solve_lp(p_on).value, tp.solve_lp(p_off).value
    assert v_on == pytest.approx(v_off, abs=1e-8)
    assert v_on == pytest.approx(tp.solve_lp(tp.compile_game(on)).value, abs=1e-8)
    res = tp.solve(p_on, "dcfr", target_gap=1e-3, max_iters=5000)  # iterative solvers on the reduced game
    assert abs(res.value - v_off) <= res.gap


def test_isomorphic_spot_results_on_every_hand():
    """Strategies and EVs of the reduced game are written for every hand (the orbit's plan)."""
    g = PostflopGame(board="KsQhTh9s", pot=20, stack=30, deck="89TJQKA", range0="AKs,JTs,88", range1="AQ,99",
                     bet="50%,a", **{"raise": "2x"})
    lp = tp.solve_lp(g.problem())
    root = g.strategy_dict(lp.x, lp.y)["nodes"][0]
    assert {"AcKc", "AdKd"} <= set(root["hands"])
    assert root["hands"]["AcKc"] == root["hands"]["AdKd"]
    assert root["range_ev"] == pytest.approx(lp.value + 10, abs=1e-7)


def test_isomorphic_values_from_the_orbit_layout_equal_the_full_layout():
    """node_values works on the solver's orbit layout (no copy of the tree on every hand). A
    hand's EV is its orbit's average over the hands of the representative tree (which deals
    one card per orbit, so a hand and its suit image meet different cards there; in the game
    they have the same EV): the reference computes every hand's value on the representative
    tree, from the plans expanded to every hand, the full treeplex and the unreduced operator,
    then averages over each orbit."""
    from treeplex.backends.numba_regret import counterfactual_values

    g = PostflopGame(board="KsQhTh9s", pot=20, stack=30, deck="89TJQKA", range0="AKs,JTs,88", range1="AQ,99",
                     bet="50%,a", **{"raise": "2x"})
    lp = tp.solve_lp(g.problem())
    red, M = g.reduction, g.problem().A.inner
    full = [red.expand(0, lp.x), red.expand(1, lp.y)]  # E x, E y
    nodes = [v for v in range(g.tree.n_nodes) if len(g.tree.boards[g.tree.board[v]]) == 4]
    got = g.node_values(lp.x, lp.y, nodes)
    split = compared = 0
    for p in (0, 1):
        T = g.treeplex(p)  # every hand
        vals = M.matvec(full[1], count=False) if p == 0 else -M.rmatvec(full[0], count=False)
        counterfactual_values(T.start, T.end, T.parent, vals, T.behavioral_from_plan(full[p]))
        for v in (v for v in nodes if g.tree.actor[v] == p):
            n, k = g.n_hands[p], g.tree.n_actions[v]
            plan = full[p][g.bases[p][v]: g.bases[p][v] + n * k].reshape(n, k)
            reach = plan.sum(axis=1)
            probs = np.where(reach[:, None] > 0, plan / np.where(reach > 0, reach, 1)[:, None], 1 / k)
            cfv = (probs * vals[g.bases[p][v]: g.bases[p][v] + n * k].reshape(n, k)).sum(axis=1)
            orb = red.orbits[p][v]
            avg = (np.bincount(orb, weights=cfv) / np.bincount(orb))[orb]
            split += int(not np.allclose(cfv, avg))
            norm = M.coef[p] * g.tree.node_chance[v] * got[v]["mass"]
            ok = norm > 0
            compared += int(ok.sum())
            assert np.allclose(got[v]["ev"][ok], avg[ok] / norm[ok] + 10, atol=1e-9)
    assert compared > 50 and split > 0  # the representative tree does treat some hands of an orbit differently
