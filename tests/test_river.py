"""River endgames: cards, ranges, betting trees, the structured operator, values and the CLI.

Every expected number is computed outside the code: by hand from the rules (hand ranks, combo
counts, bet sizes), by a closed form (the polarized river game), by the generic compiler's
explicit matrix of the same game, or by OpenSpiel's universal_poker (when installed).
"""

import json

import numba as nb
import numpy as np
import pytest

import treeplex as tp
from treeplex.errors import InputError
from treeplex.poker.betting import ALL_IN, BettingAbstraction, PlayerBetting, build_tree, fcpa, libratus
from treeplex.poker.cards import HAND_INDEX, hand_strength, parse_board, parse_card
from treeplex.poker.ranges import make_range, parse_range
from treeplex.poker.river import RiverGame
from treeplex.model.problem import Problem, SparsePayoff

BOARD = "2c7d9hJsKd"


def hand(text):
    return int(HAND_INDEX[parse_card(text[:2]), parse_card(text[2:])])


# ------------------------------------------------------------------ cards


def test_hand_strength_orders_made_hands():
    # Ranked by hand from the rules of hold'em on 2c 7d 9h Js Kd.
    s = hand_strength(parse_board(BOARD))
    assert (s < 0).sum() == 1326 - 1081  # C(47, 2) = 1081 hands miss the board
    qt, t8, kk, aa, eights = (s[hand(h)] for h in ("QhTh", "Tc8c", "KhKs", "AhAc", "8c8d"))
    assert qt > t8 > kk > aa > eights  # K-high straight > J-high straight > set > AA > 88
    assert s[hand("3c4c")] == s[hand("3d4d")]  # both play K J 9 7 4: a split pot
    assert s[hand("AsQd")] > s[hand("AhTd")]  # A-high: the second kicker decides


def test_hand_strength_of_some_hands_is_the_same_as_of_all():
    board = parse_board(BOARD)
    every = hand_strength(board)
    asked = [hand(h) for h in ("QhTh", "KhKs", "2c3c", "3c4c")]  # 2c3c shares the board's 2c
    some = hand_strength(board, asked)
    assert np.array_equal(some[asked], every[asked])
    assert some[hand("2c3c")] == -1 and (some >= 0).sum() == 3


def test_bad_cards_are_named():
    with pytest.raises(InputError, match="Xs"):
        parse_board("AsKdXs2c3s")
    with pytest.raises(InputError, match="twice"):
        parse_board("AsKdAs2c3s")
    with pytest.raises(InputError, match="need 5 cards"):
        parse_board("AsKd")


# ------------------------------------------------------------------ ranges


@pytest.mark.parametrize(
    "text, combos",
    # combinatorics: a pair has C(4,2) = 6 combos, suited 4, offsuit 12
    [("AA", 6), ("AKs", 4), ("AKo", 12), ("AK", 16), ("QQ-88", 30), ("TT+", 30), ("ATs+", 16),
     ("AKs-ATs", 16), ("AsAh", 1), ("K9o+", 48), ("22+", 78)],
)
def test_range_combo_counts(text, combos):
    assert (parse_range(text) > 0).sum() == combos


def test_range_weights_later_tokens_override():
    w = parse_range("QQ-88,AKs,AsAh,AA:0.5")
    # 30 pair combos + 4 AKs at 1, the 6 AA combos at 0.5 (AsAh overridden by AA:0.5)
    assert w.sum() == pytest.approx(30 + 4 + 3)
    assert w[hand("AsAh")] == 0.5 and w[hand("QcQd")] == 1.0 and w[hand("AsKs")] == 1.0


@pytest.mark.parametrize("bad, token", [("QQ,AKx", "AKx"), ("AA:1.5", "AA:1.5"), ("KA", "KA"), ("QQ-8", "QQ-8"),
                                        ("AA,AsAs", "AsAs"), ("AA:x", "AA:x")])
def test_range_errors_name_the_token(bad, token):
    with pytest.raises(InputError, match=f"token '{token}'"):
        parse_range(bad)


def test_range_from_array_and_dict():
    w = make_range({"AsKs": 0.25, "QQ": 1})
    assert w.sum() == pytest.approx(0.25 + 6)
    assert np.array_equal(make_range(w), w)
    with pytest.raises(InputError, match="1326"):
        make_range(np.ones(10))
    with pytest.raises(InputError, match="negative"):
        make_range(-np.ones(1326))


# ------------------------------------------------------------------ betting


def node(tree, history):
    return tree.history.index(history)


def test_libratus_bet_sizes_by_hand():
    # Pot 2100 (1050 each), stacks 20000 (18950 behind). Section 7's sizes, worked by hand:
    t = build_tree(libratus(), 2100)
    root = node(t, "")
    # bets x * 2100 for x = .25 .5 1 2 4 8, then all-in 18950; fold is offered first
    assert t.actions[root] == ("f", "x", "b525", "b1050", "b2100", "b4200", "b8400", "b16800", "b18950")
    # opponent after a check: fold, check, .5 .75 1 pot, all-in
    assert t.actions[node(t, "x")] == ("f", "x", "b1050", "b1575", "b2100", "b18950")
    # L facing 1050: pot after calling 4200; raise by .4 .7 1.1 2 -> to 1050 + 1680, 2940, 4620, 8400
    assert t.actions[node(t, "x-b1050")] == ("f", "c", "b2730", "b3990", "b5670", "b9450", "b18950")
    # opponent facing L's 525 bet: pot after calling 3150; .7 -> 2205 (to 2730), 1.1 -> 3465 (to 3990)
    assert t.actions[node(t, "b525")] == ("f", "c", "b2730", "b3990", "b18950")
    # L facing a raise to 2730 after betting 525: pot after call 7560; .4 .7 2 -> +3024, 5292, 15120
    assert t.actions[node(t, "b525-b2730")] == ("f", "c", "b5754", "b8022", "b17850", "b18950")
    # facing all-in: fold or call only
    assert t.actions[node(t, "b18950")] == ("f", "c")


def test_min_raise_and_all_in_collapse():
    # Pot 1000, stacks 2000 (1500 behind). Player 1's raise of 0.01 pot is below the minimum
    # raise (the 1000 bet), so it becomes a raise to 1000 + 1000; 8x pot exceeds the stack
    # and merges with all-in.
    p0 = PlayerBetting(first_bet=(1, 8, ALL_IN))
    p1 = PlayerBetting(raises=((0.01, ALL_IN),))
    t = build_tree(BettingAbstraction((p0, p1)), 1000, stack=2000)
    assert t.actions[0] == ("x", "b1000", "b1500")
    assert t.actions[node(t, "b1000")] == ("f", "c", "b1500")  # 2000 > 1500 behind: all-in
    t = build_tree(BettingAbstraction((p0, p1)), 1000, stack=5000)
    assert t.actions[node(t, "b1000")] == ("f", "c", "b2000", "b4500")


def test_tree_payoffs_and_counts():
    # fcpa on pot 1000, stacks 20000; walked by hand: 16 decision nodes, 29 terminals.
    t = build_tree(fcpa(), 1000)
    assert (t.n_nodes, t.n_terminals) == (16, 29)
    term = {h: i for i, h in enumerate(t.term_history)}
    assert t.payoff0[term["b1000-f"]] == 500  # player 1 folds: player 0 wins 1's 500
    assert t.payoff0[term["x-b1000-f"]] == -500  # player 0 folds what it had in
    assert t.stake[term["x-x"]] == 500 and t.stake[term["b1000-c"]] == 1500
    assert t.stake[term["b1000-b4000-c"]] == 4500  # 500 + 4000 this round


# ------------------------------------------------------------------ the operator


def sequence_map(compiled, structured):
    """compiled sequence index -> structured sequence index, matched by (infoset key, action)."""
    where = {}
    for j, key in enumerate(structured.infoset_keys):
        for i, a in enumerate(structured.action_labels[j]):
            where[key, a] = structured.start[j] + i
    out = np.zeros(compiled.n_seqs, dtype=np.int64)
    for j, key in enumerate(compiled.infoset_keys):
        for i, a in enumerate(compiled.action_labels[j]):
            out[compiled.start[j] + i] = where[key, a]
    return out


SMALL = [
    dict(pot=1000, board="7s8h9dTc2s", range0="AA,KK,QJs,66,T9,32", range1="AA:0.5,KK,87,22,J8s"),
    dict(pot=2100, board="AhKhQh4h4c", range0="AA,KK,JTs,44,65", range1="AKs,QQ,33:0.3,T9s", first=1),
]


@pytest.mark.parametrize("spec", SMALL)
@pytest.mark.parametrize("showdown", ["sweep", "dense"])
def test_structured_operator_matches_compiled_matrix(spec, showdown):
    # The generic compiler walks the same game deal by deal (brute-force card removal and
    # showdowns); the structured operator must give the same products.
    g = RiverGame(abstraction="libratus", showdown=showdown, **spec)
    p = g.problem()
    c = tp.compile_game(g)
    m0, m1 = sequence_map(c.X, p.X), sequence_map(c.Y, p.Y)
    assert sorted(m0) == list(range(p.X.n_seqs)) and sorted(m1) == list(range(p.Y.n_seqs))
    # same treeplexes up to renumbering
    assert np.array_equal(p.X.seq_parent[m0[1:]], m0[c.X.seq_parent[1:]])
    assert np.array_equal(p.Y.seq_parent[m1[1:]], m1[c.Y.seq_parent[1:]])
    rng = np.random.default_rng(7)
    # random vectors, then pure plans (most betting lines never taken: all-zero input groups)
    pure = [(p.X.best_response(rng.normal(size=p.X.n_seqs))[1], p.Y.best_response(rng.normal(size=p.Y.n_seqs))[1])
            for _ in range(2)]
    threaded = g.operator(threads=3)  # small games run serial products by default; this one, 3 parts
    for x, y in [(rng.normal(size=p.X.n_seqs), rng.normal(size=p.Y.n_seqs)) for _ in range(3)] + pure:
        for A in (p.A, threaded):
            assert np.abs(A.matvec(y)[m0] - c.A.matvec(y[m1])).max() < 1e-10
            assert np.abs(A.rmatvec(x)[m1] - c.A.rmatvec(x[m0])).max() < 1e-10
    assert p.stats["leaves"] == c.stats["terminals"] and p.stats["histories"] == c.stats["histories"]
    assert abs(p.A.to_sparse() - c.A.to_sparse()[np.argsort(m0)][:, np.argsort(m1)]).max() < 1e-12


def polarized_game(pot=1000):
    """Player 0 holds the nuts (KhKd, top set) or air (6h5h), one combo each; player 1 holds
    one bluff-catcher (QcJc, a pair of queens) on Ks Qd 7h 4c 2s. Player 0 may check or bet
    the pot; player 1 may only check, call or fold."""
    ab = BettingAbstraction((PlayerBetting(first_bet=(1,)), PlayerBetting()))
    return RiverGame(pot=pot, board="KsQd7h4c2s", range0="KhKd,6h5h", range1="QcJc", abstraction=ab)


def test_polarized_river_closed_form():
    # Closed form (hand-start payoffs, bet B = pot P): player 1 calls with probability
    # P / (P + B) = 1/2; player 0 always bets the nuts and bluffs air with probability 1/2
    # (bluffs are B / (P + 2B) = 1/3 of bets). Value: (P [nuts] - P/2 [air]) / 2 = P / 4.
    g = polarized_game(1000)
    p = g.problem()
    lp = tp.solve_lp(Problem(p.X, p.Y, SparsePayoff(p.A.to_sparse())))
    assert lp.value == pytest.approx(250.0, abs=1e-7)
    d = g.strategy_dict(lp.x, lp.y)
    nodes = {n["history"]: n for n in d["nodes"]}
    assert nodes[""]["hands"]["KhKd"] == pytest.approx([0, 1], abs=1e-7)
    assert nodes[""]["hands"]["6h5h"] == pytest.approx([0.5, 0.5], abs=1e-7)
    assert nodes["b1000"]["hands"]["QcJc"] == pytest.approx([0.5, 0.5], abs=1e-7)
    # aggregate: player 0 bets (1 + 1/2) / 2 = 75% of its range
    assert nodes[""]["frequencies"] == pytest.approx([0.25, 0.75], abs=1e-7)
    assert "b1000  75.0%" in g.summary(lp.x, lp.y)


def test_cfr_plus_reaches_the_lp_value():
    from treeplex.solvers import ALGORITHMS

    if "cfr+" not in ALGORITHMS:
        pytest.skip("CFR+ is not registered")
    from treeplex.run.driver import solve

    g = RiverGame(abstraction="fcpa", **SMALL[0])
    p = g.problem()
    exact = tp.solve_lp(Problem(p.X, p.Y, SparsePayoff(p.A.to_sparse()))).value
    res = solve(p, "cfr+", target_gap=0.05, max_iters=20000)
    assert res.gap <= 0.05
    assert abs(res.value - exact) <= res.gap  # |v(x, y) - v*| <= gap


def test_memory_is_linear():
    # An Endgame-2-sized game (all 1081 hands each, Libratus abstraction at pot 2100):
    # the structured operator holds per-hand and per-terminal arrays, plus one partial
    # product per thread (8 bytes per sequence each) as scratch when it runs on threads.
    p = RiverGame(pot=2100, board=BOARD, abstraction="libratus").problem()
    assert p.X.n_seqs == 1 + 1081 * 152  # 152 actions over player 0's betting nodes
    assert p.stats["leaves"] == 203 * 1081 * 990  # 203 terminal sequences x C(47,2) x C(45,2)
    scratch = sum(a.nbytes for a in p.A._partials)
    assert scratch <= 8 * nb.get_num_threads() * (p.X.n_seqs + p.Y.n_seqs)
    assert p.A.nbytes - scratch < 1_000_000
    assert p.X.nbytes + p.Y.nbytes < 10_000_000


def test_bad_river_input():
    with pytest.raises(InputError, match="board is required"):
        RiverGame(pot=100)
    with pytest.raises(InputError, match="range1 has no hand"):
        RiverGame(pot=100, board="AsAhAdAc2s", range1="AA")
    with pytest.raises(InputError, match="stack"):
        RiverGame(pot=50000, board=BOARD)
    with pytest.raises(InputError, match="pot must be a number"):
        RiverGame(pot="abc", board=BOARD)
    with pytest.raises(InputError, match="first must be 0 or 1"):
        RiverGame(pot=100, board=BOARD, first=2)


# ------------------------------------------------------------------ OpenSpiel


def test_openspiel_universal_poker_same_value():
    pytest.importorskip("pyspiel")
    from treeplex.io.openspiel import OpenSpielGame
    from treeplex.poker.openspiel import load_universal_poker

    # OpenSpiel's own rules, payoffs, hand evaluator and infosets, compiled and solved by LP,
    # against our fcpa river game with the same pot, board and reach weights.
    g = RiverGame(pot=1000, board="7s8h9dTc2s", range0="AA,KK:0.5,QJs,66,T9o:0.3,32",
                  range1="AA,KK,87,22:0.7,J8s", abstraction="fcpa", first=1, stack=5000)
    ours = g.problem()
    theirs = tp.compile_game(OpenSpielGame(load_universal_poker(g)))
    assert (theirs.X.n_seqs, theirs.Y.n_seqs) == (ours.X.n_seqs, ours.Y.n_seqs)
    v_ours = tp.solve_lp(Problem(ours.X, ours.Y, SparsePayoff(ours.A.to_sparse()))).value
    v_theirs = tp.solve_lp(theirs).value
    assert v_ours == pytest.approx(v_theirs, abs=1e-6)


# ------------------------------------------------------------------ CLI


def test_cli_river(capsys, tmp_path):
    from treeplex.cli import main

    spec = "river(pot=1000,board=KsQd7h4c2s,abstraction=libratus)"
    assert main(["info", spec, "--range0", "KhKd,6h5h", "--range1", "QcJc", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    t = build_tree(libratus(), 1000)
    k = [sum(len(t.actions[v]) for v in t.nodes_of(q)) for q in (0, 1)]
    assert info["hands"] == [2, 1] and info["sequences"] == [1 + 2 * k[0], 1 + k[1]]  # node x hand layout
    path = tmp_path / "polar.json"
    path.write_text(json.dumps({"pot": 1000, "board": "KsQd7h4c2s", "range0": "KhKd,6h5h", "range1": "QcJc",
                                "abstraction": {"players": [{"first_bet": [1]}, {}]}}))
    out = tmp_path / "strategy.json"
    assert main(["solve", str(path), "--algorithm", "lp", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "250 chips" in text and "2500 mbb/g" in text and "25% of the pot" in text  # closed form P/4
    d = json.loads(out.read_text())
    assert d["nodes"][0]["hands"]["6h5h"] == pytest.approx([0.5, 0.5], abs=1e-6)
    assert main(["info", spec, "--range0", "QQ,AKx"]) == 2
    assert "AKx" in capsys.readouterr().err


def test_max_abs_entry_matches_explicit_matrix():
    # EGT scales mu by max |A_ij|; the structured value must equal the explicit matrix's.
    for spec in SMALL:
        p = RiverGame(abstraction="libratus", **spec).problem()
        assert p.A.max_abs_entry() == pytest.approx(abs(p.A.to_sparse()).max(), rel=1e-12)


def test_game_name_with_a_board_python_cannot_parse():
    # "7h2c..." is not a Python token; the name parser falls back to plain key=value splitting.
    g = tp.make_game("river(pot=2100,board=7h2cAsKd3s,abstraction=fcpa)")
    assert g.board_text == "7h2cAsKd3s" and g.pot == 2100 and g.abstraction.name == "fcpa"


def test_reach_weights_full_game_units():
    # weights="reach": deal (h0, h1) has weight w0 w1 / N (N = card-disjoint pairs), not / Z.
    from treeplex.run.driver import solve
    from treeplex.poker.cards import HAND_CARDS
    from treeplex.poker.operator import _normalizer

    spec = dict(SMALL[0])
    w = [make_range(spec.pop("range0")), make_range(spec.pop("range1"))]
    cond = RiverGame(abstraction="fcpa", range0=w[0], range1=w[1], **spec)
    cards = [HAND_CARDS[h] for h in cond.hands]
    Z = _normalizer(cards, cond.weight)
    N = _normalizer(cards, [np.ones(len(v)) for v in cond.weight])
    assert N == cond.problem().stats["deals"] and abs(Z - N) > 1  # the test would be empty otherwise
    # reach weights whose compatible pairs sum to N: the conditional game, product for product
    same = RiverGame(abstraction="fcpa", range0=w[0] * (N / Z), range1=w[1], weights="reach", **spec)
    assert same.reach_scale == pytest.approx(1.0, rel=1e-12)
    rng = np.random.default_rng(3)
    pc, ps = cond.problem(), same.problem()
    for _ in range(3):
        x, y = rng.normal(size=pc.X.n_seqs), rng.normal(size=pc.Y.n_seqs)
        assert np.allclose(ps.A.matvec(y), pc.A.matvec(y), rtol=1e-12, atol=1e-12)
        assert np.allclose(ps.A.rmatvec(x), pc.A.rmatvec(x), rtol=1e-12, atol=1e-12)
    # the raw weights as reach probabilities: everything times Z / N (here not 1)
    raw = RiverGame(abstraction="fcpa", range0=w[0], range1=w[1], weights="reach", **spec)
    assert raw.reach_scale == pytest.approx(Z / N, rel=1e-12) and "weights=reach" in raw.name
    # the rules view (compiled deal by deal) agrees with the structured operator
    c = tp.compile_game(raw)
    pr = raw.problem()
    m0, m1 = sequence_map(c.X, pr.X), sequence_map(c.Y, pr.Y)
    y = rng.normal(size=pr.Y.n_seqs)
    assert np.abs(pr.A.matvec(y)[m0] - c.A.matvec(y[m1])).max() < 1e-10
    # scaling a range by c scales value and gap by c; CFR+'s iterates are the same (c a power
    # of 2 keeps every float exact: bit for bit; other c agree to rounding, which CFR+'s
    # clipping can amplify over hundreds of iterations)
    scaled = RiverGame(abstraction="fcpa", range0=0.25 * w[0], range1=w[1], weights="reach", **spec)
    r1, r2 = solve(pr, "cfr+", max_iters=200), solve(scaled.problem(), "cfr+", max_iters=200)
    assert np.array_equal(r1.x, r2.x) and np.array_equal(r1.y, r2.y)
    assert r2.value == pytest.approx(0.25 * r1.value, rel=1e-12)
    assert r2.gap == pytest.approx(0.25 * r1.gap, rel=1e-12) and r1.gap > 0
    lp = [tp.solve_lp(Problem(q.X, q.Y, SparsePayoff(q.A.to_sparse()))).value for q in (pc, pr)]
    assert lp[1] == pytest.approx(Z / N * lp[0], rel=1e-7)  # the game value: the conditional one's x Z / N
    with pytest.raises(InputError, match="weights must be"):
        RiverGame(board=BOARD, weights="joint")
