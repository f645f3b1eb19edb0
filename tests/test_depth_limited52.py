"""Depth-limited solving on nlfh52's public tree x hands (:mod:`treeplex.depth_limited.nlfh52`),
against the engine's own products, the generic compiler's rules game and the exact LP."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import treeplex as tp
from treeplex.depth_limited.index import renormalize
from treeplex.depth_limited.nlfh52 import (LeafValues52, View52, bias_table52, biased52, build_subgame,
                                           check_pipeline_memory, check_table_memory, compose,
                                           compute_blueprint52, evaluate_full,
                                           self_generative_table52, solve_subgame52, subgame_plans_of, subtree)
from treeplex.depth_limited.subgame import DepthLimitedGame
from treeplex.errors import InputError
from treeplex.poker.cards import HAND_INDEX
from treeplex.poker.nlfh import NLFH
from treeplex.poker.nlfh52 import NLFH52
from treeplex.poker.public_tree import CHANCE

DECK4 = "JcJdQcQdKcKdAcAd"  # NLFH(ranks=4, suits=2)'s cards
DECK5 = "TcTdJcJdQcQdKcKdAcAd"
GAMES = {"deck4-all": dict(stack=300, flops="all", bets="0.5,1,a", deck=DECK4),
         "deck4-S3": dict(stack=370, flops="S3", bets="0.6,1.3,a", deck=DECK4),  # preflop folds dealt per class
         "deck5-S4-off": dict(stack=290, flops="S4", bets="0.7,a", deck=DECK5, isomorphism=False)}


def random_profile(game, seed):
    """Random behavioral strategies of the solver's layout (orbit infosets), as the problem's
    plans and as View52's full-layout behaviorals."""
    P = game.problem()
    rng = np.random.default_rng(seed)
    view = View52(game)
    red = [renormalize(T, rng.uniform(0.05, 1.0, T.n_seqs)) for T in P.treeplexes]
    plans = [T.plan_from_behavioral(b) for T, b in zip(P.treeplexes, red)]
    return view, plans, [view.full(p, red[p]) for p in (0, 1)]


@pytest.mark.parametrize("name", ["deck4-S3", "deck5-S4-off"])
def test_the_views_conversions_equal_the_full_layout_treeplexes(name):
    """View52 converts plans and behaviorals on the solver's (orbit) treeplexes and expands
    them (no full-layout treeplex, no index per full-layout sequence): bit for bit what the
    game's full-layout treeplexes give, with and without the suit reduction; ``reduced`` picks
    an orbit-constant vector back and refuses one that is not."""
    game = NLFH52(**GAMES[name])
    view, plans, b = random_profile(game, seed=11)
    for p in (0, 1):
        T = game.treeplex(p)
        assert np.array_equal(view.full(p, view.plan(p, b[p])), T.plan_from_behavioral(b[p]))
        assert np.array_equal(view.full_behavioral(p, plans[p]), T.behavioral_from_plan(view.full(p, plans[p])))
        pseudo = np.where(view.full(p, view.flop_seq[p].astype(float)) > 0, b[p], 1.0)
        assert np.array_equal(view.pseudo_plan(p, b[p]), T.plan_from_behavioral(pseudo))
        assert np.array_equal(view.reduced(p, view.full(p, plans[p])), plans[p])
    if game.reduction is not None:
        h = int(np.flatnonzero(np.bincount(view.orbit)[view.orbit] > 1)[0])  # a hand with suit images
        off = b[0].copy()
        off[view.bases[0][0] + h * int(game.tree.n_actions[0])] += 1e-3  # that hand alone, at the root
        with pytest.raises(ValueError, match="not constant on the suit-isomorphism orbits"):
            view.reduced(0, off)


@pytest.mark.parametrize("name", list(GAMES))
@pytest.mark.parametrize("chooser", [0, 1])
def test_one_value_of_a_profile_is_its_full_game_value(name, chooser):
    """k = 1 with a profile's own continuation: the depth-limited game's value of the profile's
    preflop play (leaf values: per flop class, dense products, reduced to hand orbits) equals
    the real game's x^T A y on the engine's operator, the plans made by the problem's own
    treeplexes (not View52's layout maps)."""
    game = NLFH52(**GAMES[name])
    view, plans, b = random_profile(game, seed=7 + chooser)
    full = float(plans[0] @ game.problem().A.matvec(plans[1]))
    lv = LeafValues52(view, b)
    sub = build_subgame(view, lv.table(chooser, [b[chooser]], ["own"]), 0)
    x, y = subgame_plans_of(sub, b)
    assert sub.weight == pytest.approx(1.0, abs=1e-12)
    assert float(x @ sub.problem.A.matvec(y)) == pytest.approx(full, abs=1e-9)
    assert abs(full) > 1e-3


def dense_line_block(view, end, b):
    """The leaf block of line ``end`` by dense hands x hands products (the independent method):
    per flop class, the pairs' masks (compatible and alive on the board; showdown: the sign of
    the strength difference, recomputed here by phevaluator), P0 diag(w) P1^T per terminal kind
    masked, summed, then reduced to orbit blocks, / Z."""
    from phevaluator import evaluate_cards

    from treeplex.depth_limited.nlfh52 import FOLD
    from treeplex.poker.cards import HAND_CARDS, card_name

    t, H = view.tree, view.H
    hc = HAND_CARDS[view.game.hands[0]]
    names = [[card_name(int(c)) for c in h] for h in hc]
    out = np.zeros((H, H))
    for _, root in t.chance_children[end["id"]]:
        board = [int(c) for c in t.boards[int(t.board[root])]]
        alive = ~np.isin(hc, board).any(axis=1)
        bn = [card_name(c) for c in board]
        rank = np.array([-evaluate_cards(*names[h], *bn) if alive[h] else 0 for h in range(H)])  # larger: better
        fold = view.compat & alive[:, None] & alive[None, :]
        sign = np.sign(rank[:, None] - rank[None, :]) * fold
        for kz, (r0, r1, w) in view.terminal_reaches(root, b).items():
            out += ((r0.T * w) @ r1) * (fold if kz == FOLD else sign)
    return view.R.T @ out @ view.R / view.Z


@pytest.mark.parametrize("name", list(GAMES) + ["52-S2"])
def test_leaf_blocks_equal_dense_products(name):
    """:meth:`View52.line_block` (orbit blocks first, inclusion-exclusion on shared cards) equals
    the dense hands x hands products reduced afterwards, to 1e-9 relative to the block's scale,
    on every line; and the flop-averaged fold block sums to 1 (every pair sees a flop)."""
    spec = GAMES[name] if name in GAMES else dict(stack=300, flops="S2")
    game = NLFH52(**spec)
    view, _, b = random_profile(game, seed=5)
    for e in view.lines:
        ref = dense_line_block(view, e, b)
        assert np.abs(ref).max() > 0
        np.testing.assert_allclose(view.line_block(e, b), ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    assert view.flop_blocks[0].sum() == pytest.approx(1.0, abs=1e-12)
    assert len(view.lines) >= 2


def _rules_card(c: int, ranks: int, suits: int) -> int:
    return 4 * (13 - ranks + c // suits) + c % suits


@pytest.mark.parametrize("chooser,k", [(1, 3), (0, 2)])
def test_subgame_lp_equals_the_compiled_rules_gadget(chooser, k):
    """The k-valued subgame as our sequence-form problem has the LP value of the same gadget
    game built by the generic compiler: :class:`~treeplex.depth_limited.subgame.DepthLimitedGame`
    over the rules game :class:`~treeplex.poker.nlfh.NLFH` (2 hole cards, 3-card flop, its own
    hand evaluator for the called all-ins), cut at the flop deals, with the table's values
    per hand pair (isomorphism off: every hand its own orbit, so the table is per pair)."""
    game = NLFH52(stack=300, flops="all", bets="0.5,1,a", deck=DECK4, isomorphism=False)
    view, _, b = random_profile(game, seed=3)
    table = bias_table52(LeafValues52(view, b), chooser, k)
    sub = build_subgame(view, table, 0)
    ours = solve_subgame52(sub, "lp")
    assert ours.gap < 1e-7
    rules = NLFH(ranks=4, suits=2, hole=2, flop=3, stack=300, bets="0.5,1,allin")
    pos = {int(h): i for i, h in enumerate(game.hands[0])}

    def hand(cards):
        a, c = (_rules_card(x, 4, 2) for x in cards)
        return pos[int(HAND_INDEX[a, c])]

    line = {e["history"]: l for l, e in enumerate(view.lines)}
    per_pair = table.values / np.where(view.leaf_mass > 0, view.leaf_mass, 1.0)[None, None]
    dl = DepthLimitedGame(
        rules.initial_state(),
        is_leaf=lambda s: len(s.holes) == 2 and s.node.kind == "deal" and not s.node.allin,
        leaf_values=lambda s: per_pair[:, line[s.node.hist_str], hand(s.holes[0]), hand(s.holes[1])],
        leaf_key=lambda s: f"{rules.cards_name(s.holes[chooser])}|{s.node.hist_str}", chooser=chooser)
    compiled = tp.solve_lp(tp.compile_game(dl))
    assert dl.n_leaves > 0
    assert compiled.value == pytest.approx(ours.value, abs=1e-7)


def test_isomorphism_on_and_off_give_the_same_subgame():
    """With the same blueprint (DCFR with simultaneous updates in float64, on a game with no
    exact ties between two actions' regrets: its iterates do not depend on the layout, as
    tests/test_nlfh52.py checks), the subgame on hand orbits and on every hand has the same LP
    value; the orbit one is smaller."""
    out = []
    for iso in (True, False):
        view = View52(NLFH52(stack=290, flops="all", bets="0.7,a", deck=DECK4, isomorphism=iso))
        bp = compute_blueprint52(view, "dcfr", max_iters=12, alternating=False, storage="float64")
        sub = build_subgame(view, bias_table52(LeafValues52(view, bp.b), 1, 3), 0)
        out.append((bp.value, solve_subgame52(sub, "lp").value, sum(sub.problem.n_seqs)))
    (bp_on, v_on, n_on), (bp_off, v_off, n_off) = out
    assert bp_on == pytest.approx(bp_off, abs=1e-9)
    assert v_on == pytest.approx(v_off, abs=1e-7) and n_on < n_off


@pytest.mark.parametrize("name", ["deck4-all", "deck4-S3"])
def test_composed_strategies_have_the_subgame_value_in_the_real_game(name):
    """Back in the real game (subgame preflop play, the searcher's blueprint after the flop, the
    chooser's continuations mixed by its leaf choices): at the root, the profile's value is
    the subgame's; at an inner node r, it is the blueprint's value with the subtree's share
    replaced, v(bp) - U_r(bp) + U_r(solution) (U_r: the subgame's unnormalized values). The
    searcher's real worst case is at most what the subgame promises (the chooser is less
    constrained in the real game)."""
    game = NLFH52(**GAMES[name])
    view = View52(game)
    bp = compute_blueprint52(view, "dcfr", max_iters=30)
    lv = LeafValues52(view, bp.b)
    table = bias_table52(lv, 1, 4)
    sol = solve_subgame52(build_subgame(view, table, 0), "lp")
    both = compose(sol, bp.b)
    assert evaluate_full(view, both).value == pytest.approx(sol.value, abs=1e-9)
    searcher_only = [both[0], bp.b[1]]
    assert evaluate_full(view, searcher_only).br1 <= sol.value + 1e-9
    inner = [v for v in range(1, view.P) if any(e["line"] and e["v"] in subtree(view, v) for e in view.ends)]
    assert inner
    r = inner[0]
    sub = build_subgame(view, table, r, view.reach_to(r, bp.b))
    sol = solve_subgame52(sub, "lp")
    U_bp = float(np.dot(*(lambda x, y: (x, sub.problem.A.matvec(y)))(*subgame_plans_of(sub, bp.b))))
    U_sol = sol.value * sub.weight
    assert evaluate_full(view, compose(sol, bp.b)).value == pytest.approx(bp.value - U_bp + U_sol, abs=1e-9)
    assert abs(U_sol - U_bp) > 1e-6  # the subgame changed play


def test_tables_without_their_strategies_have_the_same_values():
    """``LeafValues52(keep_strategies=False)`` (the Figure 1 run's memory): the bias and
    self-generative tables' values, shifts and the responder's composed play are those of the
    tables that keep their continuations; composing the chooser's play from such a table is
    refused, not done with missing strategies."""
    game = NLFH52(**GAMES["deck4-all"])
    view = View52(game)
    bp = compute_blueprint52(view, "dcfr", max_iters=30)
    kept, lean = LeafValues52(view, bp.b), LeafValues52(view, bp.b, keep_strategies=False)
    for make in (lambda lv: bias_table52(lv, 1, 4), lambda lv: self_generative_table52(lv, 1, 3)[0]):
        a, b = make(kept), make(lean)
        np.testing.assert_array_equal(a.values, b.values)
        assert a.shifts == b.shifts and len(a.continuations) == a.k and b.continuations == []
        sa, sb = (solve_subgame52(build_subgame(view, t, 0), "lp") for t in (a, b))
        np.testing.assert_array_equal(compose(sa, bp.b, players=(0,))[0], compose(sb, bp.b, players=(0,))[0])
        with pytest.raises(ValueError, match="keeps no continuation strategies"):
            compose(sb, bp.b)


@pytest.mark.parametrize("name", ["deck4-all", "deck4-S3"])
@pytest.mark.parametrize("blueprint", ["dcfr", "random"])
def test_self_generative_set_and_its_weakening(name, blueprint):
    """Each self-generated continuation is the chooser's best response in the real game to the
    searcher's play (subgame preflop, blueprint flop): its logged value is the real game's best
    response. The subgame's value moves for the chooser as the set grows (nested sets). The
    weakening is by how much the whole generated strategy (preflop part and continuation) beats
    the chooser's blueprint against the searcher's blueprint, in the real game (a random
    "blueprint" makes the best responses beat it, so the weakening acts); undone, the
    depth-limited value of that strategy is its real value, and so is the solution's."""
    game = NLFH52(**GAMES[name])
    if blueprint == "dcfr":
        view = View52(game)
        bp = compute_blueprint52(view, "dcfr", max_iters=30)
        b, v_bp = bp.b, bp.value
    else:
        view, plans, b = random_profile(game, seed=5)
        v_bp = float(plans[0] @ game.problem().A.matvec(plans[1]))
    lv = LeafValues52(view, b)
    chooser = 0
    table, log = self_generative_table52(lv, chooser, 4)
    assert table.k == 4 and [row["k"] for row in log] == [2, 3, 4]
    assert table.shifts == pytest.approx([0.0] + [row["weakening"] for row in log])  # chooser 0: + delta
    if blueprint == "random":
        assert max(table.shifts) > 1e-3
    values = [solve_subgame52(build_subgame(view, table_k, 0), "lp").value
              for table_k in (_first(table, j) for j in range(1, 5))]
    assert all(y >= x - 1e-9 for x, y in zip(values, values[1:]))  # chooser 0 maximizes
    assert [row["subgame_value"] for row in log] == pytest.approx(values[:3], abs=1e-9)
    sub = build_subgame(view, table, 0)
    true = build_subgame(view, table.unweakened(), 0).problem
    for j in range(1, 4):
        x, y = subgame_plans_of(sub, [table.continuations[j], b[1]], choice=j)
        u_weak, u_true = float(x @ sub.problem.A.matvec(y)), float(x @ true.A.matvec(y))
        real = evaluate_full(view, [table.continuations[j], b[1]]).value  # the whole strategy vs the blueprint
        assert u_true == pytest.approx(real, abs=1e-9)
        assert log[j - 1]["weakening"] == pytest.approx(max(0.0, real - v_bp), abs=1e-9)
        assert (u_weak < u_true - 1e-9) if log[j - 1]["weakening"] > 0 else u_weak == pytest.approx(u_true, abs=1e-12)
    sol = solve_subgame52(sub, "lp")
    assert evaluate_full(view, compose(sol, b)).value == pytest.approx(
        float(sol.plans[0] @ true.A.matvec(sol.plans[1])), abs=1e-9)
    # the first best response against the real game's, recomputed from the first subgame's solution
    sol = solve_subgame52(build_subgame(view, _first(table, 1), 0), "lp")
    assert evaluate_full(view, [b[0], compose(sol, b)[1]]).br0 == pytest.approx(log[0]["br_value"], abs=1e-9)


def _first(table, k):
    from dataclasses import replace

    return replace(table, values=table.values[:k], names=table.names[:k], continuations=table.continuations[:k])


def test_leaf_table_memory_is_refused_before_allocating():
    view = View52(NLFH52(**GAMES["deck4-all"]))
    need = check_table_memory(view, 8)
    assert need >= 8 * 8 * len(view.lines) * view.O ** 2
    with pytest.raises(InputError, match=r"k=8 values x 3 leaves x 16 x 16 hand orbits needs about .* above "
                                         r"--max-memory"):
        check_table_memory(view, 8, "1K")


GAME_SPEC = "nlfh52(stack=300, flops=all, bets=0.5,1,a, deck=JcJdQcQdKcKdAcAd)"


def _json(capsys, *args):
    """``treeplex depth-limited ARGS --json`` in this process: its parsed output."""
    from treeplex.cli import main

    assert main(["depth-limited", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    return subprocess.run([sys.executable, "-m", "treeplex.cli", "depth-limited", *args], capture_output=True,
                          text=True, env=env)


def test_the_documented_command_on_a_short_deck(capsys):
    """``treeplex depth-limited --game "nlfh52(...)" --method self-generative --k 8 --exact``
    (the docs' command): the printed numbers are consistent with each other and with the exact
    LP, and the depth-limited strategy with 8 self-generated values is less exploitable than
    with 1 (the paper's Figure 1 trend, measured here in the real game)."""
    runs = {}
    for k in (1, 8):
        runs[k] = out = _json(capsys, "--game", GAME_SPEC, "--method", "self-generative", "--k", str(k), "--exact")
        assert out["composed_value"] == pytest.approx(out["subgame_value_unweakened"], abs=1e-9)
        # chooser 0: weakening lowers its values, so the subgame's value is at most the real one
        assert out["subgame_value"] <= out["subgame_value_unweakened"] + 1e-12
        assert out["dl_exploitability"] == pytest.approx(out["dl_gap"] / 2, abs=1e-12)
        assert out["dl_exploitability_mbb"] == pytest.approx(out["dl_exploitability"] / 100 * 1000, abs=1e-9)
        assert out["dl_worst_case"] == out["dl_br0"]  # searcher 1: player 0's best response
        assert out["dl_searcher_exploitability"] == pytest.approx(out["dl_worst_case"] - out["game_value"])
        assert out["dl_searcher_exploitability"] >= -1e-9 and out["blueprint_searcher_exploitability"] >= -1e-9
        assert sum(out["subgame_sequences"]) < sum(out["full_game_sequences"]) / 10
    assert runs[8]["dl_searcher_exploitability"] < runs[1]["dl_searcher_exploitability"]


def test_an_inner_root_with_the_gadget_from_the_cli(capsys):
    """``--at c`` (after the small blind's limp): the resolve gadget is on by default, the
    subgame is solved by DCFR to the default target (1e-4 big blinds per unit of the root's
    weight), and the searcher's exploitability against the exact game value is not negative."""
    out = {}
    for extra in ([], ["--no-root-safety"]):
        run = _json(capsys, "--game", GAME_SPEC, "--at", "c", "--method", "bias", "--k", "4", "--solver", "dcfr",
                    "--exact", *extra)
        assert run["root_gadget"] is (not extra) and run["subgame_gap"] <= 1e-2 + 1e-12
        assert run["dl_searcher_exploitability"] >= -1e-9 and run["composed_value"] is None
        out[bool(extra)] = run
    assert out[True]["subgame_sequences"][0] + out[True]["subgame_sequences"][1] \
        + 2 * int(out[True]["leaves_x_orbits"].split(" x ")[1]) == sum(out[False]["subgame_sequences"])


@pytest.mark.parametrize("args,msg", [
    (["--bet", "0.5"], "that size is in the abstraction"),
    (["--bet", "1"], "not a raise of its own"),  # stack 300: a pot-size open is all-in
    (["--bet", "0.75", "--searcher", "0"], "the responder, player 1, solves"),
    (["--round2", "unsafe"], "keeps its blueprint in the flop"),
    (["--round2", "safe"], "keeps its blueprint in the flop"),
    (["--bet", "0.75", "--round2", "safe", "--round2-iters", "0"], "--round2-iters must be at least 1"),
    (["--bet", "0.75", "--round2", "safe", "--round2-warm", "-1"], "--round2-warm must be at least 0"),
    (["--bet", "0.75", "--round2", "maxmargin", "--round2-warm", "10"], "not taken by Maxmargin"),
    (["--bet", "0.75", "--round2", "safe", "--round2-budget", "0"], "--round2-budget must be a positive number"),
    (["--bet", "0.75", "--round2", "maxmargin", "--round2-budget", "5"], "not made line by line"),
    (["--bet", "0.75", "--round2", "safe", "--round2-target-mbb", "-1"], "--round2-target-mbb must be a positive"),
    (["--at", "zz"], "not a preflop decision node"),
    (["--blueprint", "dcfr"], "SOLVER:ITERATIONS"),
    (["--max-memory", "20K"], "needs about"),
])
def test_bad_input_on_nlfh52_is_one_line_exit_2(args, msg):
    p = _cli("--game", GAME_SPEC, *args)
    assert p.returncode == 2 and msg in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_the_pipeline_is_refused_from_its_own_estimate(monkeypatch):
    """``check_pipeline_memory``: refused in one InputError naming its need (75 B per
    full-layout sequence and 1 GB) before anything is built; once it passes, the game's
    sequence form, which the pipeline takes products and best responses on and never a
    solver's state, is not refused by a solve's estimate, nor the game with the off-tree bet's
    (counted in the same estimate). Without it that estimate still applies."""
    from treeplex.depth_limited.offtree52 import offtree_game
    from treeplex.poker import postflop

    monkeypatch.setattr(postflop, "FUSED_MIN_SEQS", 1)  # as a large game: the fused path is the default
    params = dict(stack=300, flops="all", bets="0.5,1,a", deck=DECK4)
    g = NLFH52(**params)
    with pytest.raises(InputError, match="depth-limited solving needs about"):
        check_pipeline_memory(g, "1M")
    assert g._tree is None and not g.products_checked
    s = g.sizes()
    between = str((s["memory_fused_bytes"] + s["memory_sequence_form_bytes"]) // 2)  # the fused path fits, a
    plain = NLFH52(**params)                                                            # sequence-form solve not
    plain.problem(max_memory=between)
    with pytest.raises(InputError, match="the sequence form needs about"):
        plain.problem().X
    assert check_pipeline_memory(g, "2G") == 75 * sum(s["sequences_full_layout"]) + 2**30
    g.problem(max_memory=between)
    assert g.problem().X.n_seqs > 1
    gx, _, _ = offtree_game(g, params, "", 0.75)
    gx.problem(max_memory=between)
    assert gx.products_checked and gx.problem().Y.n_seqs > 1


def test_leaf_values_per_pair_equal_the_history_tree_evaluator():
    """Per (leaf, hand, hand), the leaf values of a random profile's flop play equal the toy
    code's :class:`~treeplex.depth_limited.leaves.LeafEvaluator`, which reads them off the
    compiled rules game's payoff nonzeros (a different method on a different representation):
    isomorphism off, strategies matched through the infoset keys."""
    from treeplex.depth_limited.index import NLFHIndex
    from treeplex.depth_limited.leaves import LeafEvaluator

    game = NLFH52(stack=300, flops="all", bets="0.5,1,a", deck=DECK4, isomorphism=False)
    view, _, b = random_profile(game, seed=11)
    rules = NLFH(ranks=4, suits=2, hole=2, flop=3, stack=300, bets="0.5,1,allin")
    Q = tp.compile_game(rules)
    ev = LeafEvaluator(NLFHIndex(rules, Q))
    ours_keys = [list(T.infoset_keys) for T in game.problem().treeplexes]
    toy_b = []
    for p, (T, U) in enumerate(zip(game.problem().treeplexes, Q.treeplexes)):
        pos = {k: i for i, k in enumerate(ours_keys[p])}
        bt = np.ones(U.n_seqs)
        for j, key in enumerate(U.infoset_keys):
            hole, flop, hist = key.split("|")
            pre, *post = hist.split("/")
            i = pos[f"{hole}:{pre}/{flop}/{post[0]}" if flop else f"{hole}:{pre}"]
            bt[U.start[j]:U.end[j]] = b[p][T.start[i]:T.end[i]]
        toy_b.append(bt)
    toy = ev.values(*toy_b)  # [leaves, H, H] given the pair
    pos = {int(h): i for i, h in enumerate(game.hands[0])}
    ours_of_toy = np.array([pos[int(HAND_INDEX[_rules_card(c[0], 4, 2), _rules_card(c[1], 4, 2)])]
                            for c in ev.index.holes])
    mass = view.leaf_mass[np.ix_(ours_of_toy, ours_of_toy)]
    checked = 0
    for l, e in enumerate(view.lines):
        r = ev.row[next(n.id for n in ev.leaves if n.hist_str == e["history"])]
        ours = view.line_block(e, b)[np.ix_(ours_of_toy, ours_of_toy)]
        live = mass > 0
        np.testing.assert_allclose(ours[live] / mass[live], toy[r][live], rtol=0, atol=1e-9)
        checked += int(live.sum())
    assert checked > 0 and len(view.lines) > 1


def _inner_root(view):
    """A preflop node below the root with flop lines under it, where the chooser has hands of
    several reaches (a random profile)."""
    return next(v for v in range(1, view.P) if sum(e["line"] for e in view.ends if e["v"] in subtree(view, v)) >= 2)


@pytest.mark.parametrize("chooser", [0, 1])
def test_safe_subgame_at_an_inner_node_equals_the_compiled_rules_gadget(chooser):
    """At an inner preflop node, with the blueprint's reaches and the resolve gadget (alt: the
    chooser's best-response value against the searcher's blueprint), the subgame's LP value
    equals the toy code's :func:`~treeplex.depth_limited.nlfh_subgames.nlfh_subgame` (root
    chance weighted by chance x reaches, gadget per hand, the same leaf values per pair) built
    over the rules game and compiled; isomorphism off."""
    from treeplex.depth_limited.nlfh_subgames import nlfh_subgame
    from treeplex.depth_limited.nlfh52 import root_alt

    game = NLFH52(stack=300, flops="all", bets="0.5,1,a", deck=DECK4, isomorphism=False)
    view, _, b = random_profile(game, seed=21 + chooser)
    lv = LeafValues52(view, b)
    r = _inner_root(view)
    reach = view.reach_to(r, b)
    alt = root_alt(lv, chooser, r, reach)
    table = bias_table52(lv, chooser, 3)
    sub = build_subgame(view, table, r, reach, alt=alt)
    ours = solve_subgame52(sub, "lp")
    rules = NLFH(ranks=4, suits=2, hole=2, flop=3, stack=300, bets="0.5,1,allin")
    holes = [c for _, _, c in rules.deal_outcomes((), 2)]
    pos = {int(h): i for i, h in enumerate(game.hands[0])}
    ours_of = np.array([pos[int(HAND_INDEX[_rules_card(c[0], 4, 2), _rules_card(c[1], 4, 2)])] for c in holes])
    ix = np.ix_(ours_of, ours_of)
    pair = view.compat.astype(float) / view.Z
    weights = (reach[0][:, None] * reach[1][None, :] * pair)[ix]
    mass = view.leaf_mass[ix]
    per_pair = table.values[:, :, ours_of][:, :, :, ours_of] / np.where(mass > 0, mass, 1.0)
    node = rules.node(view.tree.history[r])
    leaf_values = {}
    for l, e in enumerate(view.lines):
        leaf_values[rules.node(e["history"]).id] = per_pair[:, l]
    for i, e in enumerate(view.ends):  # the toy cuts called all-ins too: their showdown value, k times
        if e["kind"] == CHANCE and not e["line"]:
            allin = table.terminals[i][ix] / np.where(mass > 0, mass, 1.0)
            leaf_values[rules.node(e["history"]).id] = np.repeat(allin[None], table.k, axis=0)
    own = weights.sum(axis=1 - chooser)  # the chooser's hands' root weight: alt per unit of it
    bound = np.where(own > 0, alt[ours_of] / np.where(own > 0, own, 1.0), 0.0)
    dl = nlfh_subgame(rules, node, weights, holes, leaf_values=leaf_values, chooser=chooser, alt=(chooser, bound))
    compiled = tp.solve_lp(tp.compile_game(dl)).value
    assert ours.value == pytest.approx(compiled, abs=1e-7)
    assert sub.weight == pytest.approx(weights.sum(), rel=1e-12)
    sign = 1.0 if chooser == 0 else -1.0
    assert sign * (ours.value * sub.weight - alt.sum()) >= -1e-9  # the chooser can always take alt


@pytest.mark.parametrize("chooser", [0, 1])
def test_gadget_alt_is_the_best_response_value_against_the_blueprint(chooser):
    """With the chooser's real best response to the blueprint as its only continuation, the
    blueprint keeps every alt exactly (the chooser is indifferent) and nothing does better: the
    safe subgame's value is sum(alt), at an inner node and at the root; at the root sum(alt)
    is the real game's best-response value against the searcher's blueprint."""
    from treeplex.depth_limited.nlfh52 import root_alt
    from treeplex.depth_limited.sets import best_response_everywhere

    game = NLFH52(**GAMES["deck4-S3"])
    view = View52(game)
    bp = compute_blueprint52(view, "dcfr", max_iters=20)
    lv = LeafValues52(view, bp.b)
    me = 1 - chooser
    b_red, v_br = best_response_everywhere(game.problem(), chooser, bp.plans[me])
    table = lv.table(chooser, [view.full(chooser, b_red)], ["best response"])
    for r in (0, _inner_root(view)):
        reach = view.reach_to(r, bp.b)
        alt = root_alt(lv, chooser, r, reach)
        sol = solve_subgame52(build_subgame(view, table, r, reach, alt=alt), "lp")
        assert sol.value * sol.subgame.weight == pytest.approx(alt.sum(), abs=1e-8)
        if r == 0:
            assert alt.sum() == pytest.approx(v_br, abs=1e-9)


OFF_PARAMS = dict(stack=500, flops="all", bets="0.5,1,a", deck=DECK4)


@pytest.mark.parametrize("at", ["", "c"])
def test_the_blueprint_carried_into_the_game_with_the_bet(at):
    """In the game with the off-tree raise (x = 0.75 pot at ``at``), the blueprint translated
    label by label and RPAT's response (the two translated plans mixed once per hand) keep the
    abstraction's value exactly while the bettor never makes the bet; RPAT's response is a
    realization plan; and the leaves the bet does not lead to keep their leaf values (computed
    again in the bigger game from the translated blueprint)."""
    from treeplex.depth_limited.offtree52 import Translator, offtree_game, rpat_response

    game = NLFH52(**OFF_PARAMS)
    view = View52(game)
    bp = compute_blueprint52(view, "dcfr", max_iters=30)
    gx, bet, after = offtree_game(game, OFF_PARAMS, at, 0.75)
    vx = View52(gx)
    tr = Translator(view, vx, bet)
    bx = [tr.behavioral(p, bp.b[p]) for p in (0, 1)]
    assert evaluate_full(vx, bx).value == pytest.approx(bp.value, abs=1e-9)
    responder = 1 - int(gx.tree.actor[bet])
    plan, info = rpat_response(tr, responder, bp.b[responder], after)
    assert vx.treeplexes[responder].is_plan(plan) and 0 < info["f"] < 1
    plans = [vx.plan(p, bx[p]) for p in (0, 1)]
    plans[responder] = plan
    assert float(plans[0] @ gx.problem().A.matvec(plans[1])) == pytest.approx(bp.value, abs=1e-9)
    table = LeafValues52(view, bp.b).table(1 - responder, [bp.b[1 - responder]], ["blueprint"])
    again = LeafValues52(vx, bx).values(1 - responder, bx[1 - responder])
    g_line = {e["history"]: l for l, e in enumerate(view.lines)}
    shared = [(l, g_line[e["history"]]) for l, e in enumerate(vx.lines) if e["history"] in g_line]
    assert len(shared) == len(view.lines) < len(vx.lines)
    for lx, lg in shared:
        np.testing.assert_allclose(again[lx], table.values[0, lg], rtol=0, atol=1e-12)


def test_offtree_response_from_the_cli(capsys):
    """``treeplex depth-limited --game "nlfh52(...)" --bet 0.75 --method self-generative --k 8
    --no-root-safety`` (the docs' command): every exploitability is gap / 2 in mbb/g of the game with the bet, at
    least the blueprint's part that the response does not change (RPAT's, here: the bettor
    gains nothing by the bet against it on this 5 BB short deck); the subgame to the flop is
    smaller than the one to the end."""
    spec = "nlfh52(stack=500, flops=all, bets=0.5,1,a, deck=JcJdQcQdKcKdAcAd)"
    out = _json(capsys, "--game", spec, "--bet", "0.75", "--method", "self-generative", "--k", "8", "--no-root-safety")
    for key in ("rpat", "dl", "lower_bound"):
        assert out[f"{key}_exploitability"] == pytest.approx(out[f"{key}_gap"] / 2, abs=1e-12)
        assert out[f"{key}_exploitability_mbb"] == pytest.approx(out[f"{key}_gap"] / 2 / 100 * 1000, abs=1e-9)
        assert out[f"{key}_gap"] >= -1e-9
    assert sum(out["subgame_sequences"]) < sum(out["subgame_to_the_end_sequences"])
    assert out["off_tree_bet"] == "p0.75 at (start) by player 0" and out["responder"] == 1
    assert out["round2"].startswith("unsafe: dcfr 500 iterations") and out["root_gadget"] is False


def test_flop_resolve_keeps_the_locks_and_the_bracket_range():
    """The bettor's range for the re-solve makes the off-tree raise as often as the two
    bracketing sizes together (half each) and scales its other actions to keep a distribution;
    the unsafe flop re-solve (the real game with every other infoset locked) returns play equal
    to the locks wherever it is reached and solves the free flop infosets (small gap in the
    locked game)."""
    from treeplex.depth_limited.offtree52 import Translator, flop_resolve, offtree_game, with_bracket_range

    game = NLFH52(**OFF_PARAMS)
    view = View52(game)
    bp = compute_blueprint52(view, "dcfr", max_iters=30)
    gx, bet, after = offtree_game(game, OFF_PARAMS, "", 0.75)
    vx = View52(gx)
    tr = Translator(view, vx, bet)
    bx = [tr.behavioral(p, bp.b[p]) for p in (0, 1)]
    picks = [("p0.5", 0.5), ("p1", 0.5)]
    b0 = with_bracket_range(tr, 0, bx[0], bet, picks)
    labels, H = gx.tree.actions[bet], vx.H
    rows = b0[vx.bases[0][bet]:vx.bases[0][bet] + H * len(labels)].reshape(H, len(labels))
    old = bx[0][vx.bases[0][bet]:vx.bases[0][bet] + H * len(labels)].reshape(H, len(labels))
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, atol=1e-12)
    off = labels.index("p0.75")
    np.testing.assert_allclose(rows[:, off], 0.5 * old[:, labels.index("p0.5")] + 0.5 * old[:, labels.index("p1")])
    lines = {e["id"] for e in vx.lines if tr.after_bet(gx.betting.node(e["history"]))}
    assert lines
    both, res = flop_resolve(vx, [b0, bx[1]], lines, "dcfr", max_iters=300)
    assert res.gap < 1e-3
    free = np.isin(vx.line_of_node, list(lines))
    for p, lock in ((0, b0), (1, bx[1])):
        reached = gx.treeplex(p).plan_from_behavioral(both[p]) > 1e-9
        for v in np.flatnonzero(~free & (gx.tree.actor == p)):
            sl = slice(vx.bases[p][v], vx.bases[p][v] + H * int(gx.tree.n_actions[v]))
            np.testing.assert_allclose(both[p][sl][reached[sl]], lock[sl][reached[sl]], atol=1e-9)


@pytest.mark.parametrize("isomorphism", [True, False])
def test_flop_lines_payoffs_are_the_real_games_below_the_lines(isomorphism):
    """:class:`FlopLines` on Gx (the game with the off-tree bet): two profiles that differ only
    in the flop below its lines differ in value by as much in the real game (the engine's
    operator on the whole game) as in the sub-game, each player's fixed preflop reach into each
    line folded into its payoffs. Without the reach scale, or without one of the lines, the
    difference is another one. The explicit matrix (the LP's) agrees with the products, and the
    sub-game's play written back into the full layout is the profile's. With the suit
    reduction and without."""
    from treeplex.depth_limited.offtree52 import offtree_game
    from treeplex.poker.flop_lines import FlopLines

    params = dict(OFF_PARAMS, isomorphism=isomorphism)
    gx = offtree_game(NLFH52(**params), params, "", 0.75)[0]
    vx, _, b1 = random_profile(gx, seed=3)
    other = random_profile(gx, seed=4)[2]
    lines = [e["id"] for e in vx.lines]  # the one line after the bet, and the others
    assert len(lines) >= 2
    fl = FlopLines(gx, lines)
    b2 = [b.copy() for b in b1]
    for p in (0, 1):
        b2[p][fl.pos[p][1:]] = other[p][fl.pos[p][1:]]
    P = gx.problem()
    real = [float(vx.plan(0, b[0]) @ P.A.matvec(vx.plan(1, b[1]))) for b in (b1, b2)]
    reach = tuple(vx.line_reach(p, b1[p], lines) for p in (0, 1))
    assert all(np.ptp(r) > 0.1 for r in reach)  # the preflop play is random: the scale matters

    def sub_values(fl, reach):
        A = fl.operator(reach)
        out = []
        for b in (b1, b2):
            x, y = (fl.treeplex(p).plan_from_behavioral(fl.behavioral(p, b[p])) for p in (0, 1))
            out.append(float(x @ A.matvec(y)))
        np.testing.assert_allclose(x @ (A.to_sparse() @ y), out[-1], rtol=1e-12, atol=1e-12)
        return out

    sub = sub_values(fl, reach)
    assert abs(real[0] - real[1]) > 1e-3
    assert sub[0] - sub[1] == pytest.approx(real[0] - real[1], abs=1e-10)
    unscaled = sub_values(fl, (None, None))
    assert abs((unscaled[0] - unscaled[1]) - (real[0] - real[1])) > 1e-4
    fewer = FlopLines(gx, lines[1:])
    short = sub_values(fewer, tuple(r[1:] for r in reach))
    assert abs((short[0] - short[1]) - (real[0] - real[1])) > 1e-4
    for p in (0, 1):
        np.testing.assert_array_equal(fl.full_behavioral(p, fl.behavioral(p, b2[p]), b1[p]), b2[p])


def _locked_reference(vx, b, lines, chooser, alt):
    """The safe flop re-solve as the whole real game (the reference the sub-game replaces):
    every infoset but the flop below ``lines`` locked to ``b`` (node locks), the chooser's flop
    infosets below line l with hand orbit o hanging from gadget l x O + o."""
    from treeplex.core.locks import Locks
    from treeplex.core.treeplex import Treeplex
    from treeplex.model.gadget import GadgetPayoff
    from treeplex.model.problem import Problem

    t, g = vx.tree, vx.game
    P = g.problem()
    free_nodes = np.isin(vx.line_of_node, list(lines))
    locks = []
    for p, T in enumerate(P.treeplexes):
        red = vx.reduced(p, b[p])
        free = np.zeros(T.n_seqs, dtype=bool)
        for v in np.flatnonzero(free_nodes & (t.actor == p)):
            lo, width = g.reduction.rbase[p][v], int(g.reduction.orbits[p][v].max()) + 1
            free[lo:lo + width * int(t.n_actions[v])] = True
        seqs = np.flatnonzero(~free)[1:].astype(np.int64)
        locks.append(Locks(seqs, red[seqs], T.n_seqs))
    T = P.treeplexes[chooser]
    G = len(lines) * vx.O
    parent = np.where(T.parent > 0, T.parent + 2 * G, 0)
    red_of = g.reduction.red_of(chooser)
    for i, l in enumerate(lines):
        u, a = next(e for e in vx.lines if e["id"] == l)["last"][chooser]
        gadget = np.full(T.n_seqs, -1)
        gadget[red_of[vx.bases[chooser][u] + vx.first * int(t.n_actions[u]) + a]] = i * vx.O + \
            np.arange(vx.O)
        nodes = np.flatnonzero((vx.line_of_node == l) & (t.actor == chooser))
        full = np.concatenate([vx.bases[chooser][v] + np.arange(vx.H * int(t.n_actions[v])) for v in nodes])
        js = np.unique(T.seq_infoset[red_of[full]])
        gi = gadget[T.parent[js]]
        parent[js[gi >= 0]] = 2 + 2 * gi[gi >= 0]
    Tg = Treeplex(np.concatenate((1 + 2 * np.arange(G), T.start + 2 * G)),
                  np.concatenate((3 + 2 * np.arange(G), T.end + 2 * G)), np.concatenate((np.zeros(G), parent)))
    alts = np.array([alt[l][o] for l in lines for o in range(vx.O)])
    lk = locks[chooser]
    locks[chooser] = Locks(lk.seqs + 2 * G, lk.probs, Tg.n_seqs)
    Ts = [P.X, P.Y]
    Ts[chooser] = Tg
    return Problem(Ts[0], Ts[1], GadgetPayoff(P.A, chooser, alts), locks=tuple(locks))


def test_safe_flop_re_solve_is_the_locked_game_below_the_lines():
    """The safe flop re-solve on the flop below the bet's lines alone (the responder's preflop
    reach folded into the payoffs) against the whole game with every other infoset locked
    (:func:`_locked_reference`, the same gadgets), both by the exact LP: the restricted
    solution, carried into the whole game, is an equilibrium there (locked gap 0) with the
    whole game's LP value, which is the restricted value plus the locked part's constant; every
    gadget's "enter" value against it is the same in both."""
    from treeplex.depth_limited.offtree52 import flop_alts, offtree_table, safe_flop_resolve
    from treeplex.depth_limited.sets import br_values
    from treeplex.model.metrics import evaluate
    from treeplex.run.driver import solve

    vx, bx, bet, args, b1, info, lines = _safe_spot()
    table = offtree_table(args[0], args[1], LeafValues52(vx, bx), args[5])[0]
    alts = flop_alts(vx, table, info["solution"], b1, lines)
    lock = [bx[0], b1]
    sf = safe_flop_resolve(vx, lock, lines, 0, alts, "lp")
    ref = _locked_reference(vx, lock, lines, 0, alts)
    both = sf.behaviorals()
    G = len(sf.gadgets)
    gad = sf.problem.X.behavioral_from_plan(sf.res.x)[1:1 + 2 * G]
    x = ref.X.plan_from_behavioral(np.concatenate(([1.0], gad, vx.reduced(0, both[0])[1:])))
    y = vx.plan(1, both[1])
    ev = evaluate(ref, x, y)
    assert ev.gap < 1e-6
    enter = br_values(ref.X, ref.A.matvec(y, count=False))[2 + 2 * np.arange(G)]
    np.testing.assert_allclose(sf.enter_values(sf.res.y), enter, rtol=0, atol=1e-9)
    assert np.ptp(enter) > 1e-3
    exact = solve(ref, "lp")
    assert evaluate(ref, exact.x, exact.y).value == pytest.approx(ev.value, abs=1e-6)
    const = ev.value - evaluate(sf.problem, sf.res.x, sf.res.y).value  # the locked part's, not 0 here
    assert abs(const) > 1e-3


def test_maxmargin_flop_re_solve_raises_the_smallest_margin():
    """Reach-Maxmargin (``safe_flop_problem(..., margin=True)``), solved by the exact LP: its
    products agree with its explicit matrix; its value is the largest normalized excess over
    the bounds, max_g (enter_g - alt_g) / w_g, of the responder's solution, with the enter
    values taken independently in the resolve gadget's problem; no other responder play has a
    smaller one (the resolve gadget's LP solution and the uniform play checked); every
    unreached gadget has w = 0."""
    from treeplex.depth_limited.offtree52 import flop_alts, offtree_table, safe_flop_resolve
    from treeplex.model.metrics import evaluate

    vx, bx, bet, args, b1, info, lines = _safe_spot()
    table = offtree_table(args[0], args[1], LeafValues52(vx, bx), args[5])[0]
    alts = flop_alts(vx, table, info["solution"], b1, lines)
    lock = [bx[0], b1]
    mm = safe_flop_resolve(vx, lock, lines, 0, alts, "lp", margin=True)
    A = mm.problem.A
    rng = np.random.default_rng(3)
    x, y = rng.random(A.shape[0]), rng.random(A.shape[1])
    M = A.to_sparse()
    np.testing.assert_allclose(A.matvec(y), M @ y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A.rmatvec(x), M.T @ x, rtol=1e-12, atol=1e-12)

    def excess(y_plan):
        e = mm.enter_values(y_plan)[A.reached]
        return float(np.max((e - mm.alt[A.reached]) / A.w[A.reached]))

    value = evaluate(mm.problem, mm.res.x, mm.res.y).value
    assert excess(mm.res.y) == pytest.approx(value, abs=1e-7) and mm.margin(mm.res.y) == pytest.approx(-value, abs=1e-7)
    rs = safe_flop_resolve(vx, lock, lines, 0, alts, "lp")
    for other in (rs.res.y, mm.problem.Y.uniform()):
        assert excess(other) >= value - 1e-7
    assert value < 0  # every bound held with room to spare: the LP raised the smallest margin
    unreached = np.setdiff1d(np.arange(len(mm.gadgets)), A.reached)
    assert np.all(A.w[unreached] <= 1e-12 * A.w.max())


@pytest.mark.parametrize("size", [0.75, 1.8])
def test_maxmargin_response_keeps_its_bounds_or_falls_back_to_resolve(size):
    """``dl_response(round2="maxmargin")``: where the Maxmargin re-solve holds every bettor hand
    to its alt (smallest margin >= 0) its play is kept; where it cannot, the response is the
    resolve gadget's, the same as ``round2="safe"`` (on the short deck 0.75 pot keeps it and
    1.8 pot falls back; both cases must occur)."""
    from treeplex.depth_limited.offtree52 import dl_response

    vx, bx, bet, args, b1, info, lines = _safe_spot(size)
    kw = dict(safe=True, solver="lp", round2_kw={"max_iters": 200})
    b_mm, i_mm = dl_response(*args, round2="maxmargin", **kw)
    b_rs, i_rs = dl_response(*args, round2="safe", **kw)
    sf = i_mm["safe_flop"]
    if size == 0.75:
        assert sf.resolve is not None and sf.margin(sf.res.y) >= 0
        assert np.abs(b_mm - b_rs).max() > 1e-6
    else:
        assert sf.resolve is None
        np.testing.assert_array_equal(b_mm, b_rs)


def _safe_spot(size: float = 0.75, params: dict = OFF_PARAMS):
    """The off-tree ``size``-pot open on the short deck: the step-1 subgame solved exactly
    (LP) with the root gadget and a bias table of k = 2 (the bettor, player 0, chooses)."""
    from treeplex.depth_limited.offtree52 import Translator, dl_response, offtree_game

    game = NLFH52(**params)
    view = View52(game)
    bp = compute_blueprint52(view, "dcfr", max_iters=30)
    lv = LeafValues52(view, bp.b)
    gx, bet, after = offtree_game(game, params, "", size)
    vx = View52(gx)
    tr = Translator(view, vx, bet)
    bx = [tr.behavioral(p, bp.b[p]) for p in (0, 1)]
    args = (tr, bias_table52(lv, 0, 2), lv, bx, bet, after)
    b1, info = dl_response(*args, safe=True, round2="none", solver="lp")
    lines = [e["id"] for e in vx.lines if tr.after_bet(gx.betting.node(e["history"]))]
    return vx, bx, bet, args, b1, info, lines


def _bet_values(vx, bet, off_label, b_resp):
    """[O] player 0's counterfactual best-response value of the off-tree bet per hand orbit
    against player 1's full-layout behavioral ``b_resp``, in the real game (its own best
    responses below, computed on the game's operator), in the gadgets' units."""
    from treeplex.depth_limited.sets import br_values

    P = vx.game.problem()
    v = br_values(P.X, P.A.matvec(vx.plan(1, b_resp), count=False))
    k = int(vx.tree.n_actions[bet])
    full = vx.bases[0][bet] + vx.first * k + vx.tree.actions[bet].index(off_label)
    return v[full if vx.game.reduction is None else vx.game.reduction.red_of(0)[full]]


def test_safe_flop_resolve_holds_every_hand_to_its_bound():
    """Safe flop re-solving after the off-tree bet (``round2="safe"``). Its alts without gifts
    are the step-1 subgame's leaf values, read there by a best-response pass of the subgame
    (another path than the table x reach sums); the gifts add the step-1 margins, m / n per
    line. The gadget problem solved by the exact LP and by DCFR: the same value within DCFR's
    gap, every hand's "enter" at most its alt (LP: exactly; DCFR: up to its gap). In the real
    game, with both steps exact, no hand of the bettor gains more by the bet against the
    response than max(its root alt, its step-1 value): Reach subgame solving's guarantee, from
    full best responses."""
    from treeplex.depth_limited.nlfh52 import enter_values
    from treeplex.depth_limited.offtree52 import dl_response, flop_alts, offtree_table, safe_flop_resolve
    from treeplex.depth_limited.sets import br_values
    from treeplex.model.metrics import evaluate

    vx, bx, bet, args, b1, info, lines = _safe_spot()
    sol, sub = info["solution"], info["subgame"]
    tr = args[0]
    table = offtree_table(tr, args[1], LeafValues52(vx, bx), args[5])[0]  # the step-1 subgame's (Gx) table
    plain = flop_alts(vx, table, sol, b1, lines, gifts=False)
    v = br_values(sub.problem.X, sub.problem.A.matvec(sol.plans[1], count=False))
    line_index = {e["id"]: i for i, e in enumerate(vx.lines)}
    for l in lines:
        base = sub.lb[line_index[l]] + np.arange(vx.O)[:, None] * table.k + np.arange(table.k)[None, :]
        np.testing.assert_allclose(plain[l], v[base].max(axis=1), rtol=0, atol=1e-9)
    alts = flop_alts(vx, table, sol, b1, lines)
    margin = np.maximum(0.0, sub.alt - enter_values(sub, sol.plans))
    gifts = sum(alts[l] - plain[l] for l in lines)
    assert margin.max() > 1e-3 and np.all(gifts >= -1e-12)
    np.testing.assert_allclose(gifts, margin, rtol=0, atol=1e-9)  # no cap reached here
    lock = [bx[0], b1]
    exact = safe_flop_resolve(vx, lock, lines, 0, alts, "lp")
    b_dcfr, info_dcfr = dl_response(*args, safe=True, round2="safe", solver="lp", round2_kw={"max_iters": 300})
    approx = info_dcfr["safe_flop"]
    np.testing.assert_allclose(approx.alt, exact.alt, rtol=0, atol=1e-9)
    gap = approx.res.gap
    assert gap < 1e-2
    P = exact.problem
    assert evaluate(P, approx.res.x, approx.res.y).value == pytest.approx(evaluate(P, exact.res.x, exact.res.y).value,
                                                                         abs=gap)
    assert np.all(exact.enter_values(exact.res.y) <= exact.alt + 1e-7)
    assert np.all(approx.enter_values(approx.res.y) <= approx.alt + gap)
    bound = np.maximum(sub.alt, enter_values(sub, sol.plans))
    assert np.all(_bet_values(vx, bet, tr.off_label, exact.behaviorals()[1]) <= bound + 1e-7)
    assert np.all(_bet_values(vx, bet, tr.off_label, b_dcfr) <= bound + gap)
    # the translated blueprint's flop play (round2 "none") does not keep every bound here
    assert np.any(_bet_values(vx, bet, tr.off_label, b1) > bound + 1e-3)


def test_the_flop_re_solve_starts_warm_and_each_line_solves_alone():
    """The safe flop re-solve (resolve gadget, DCFR, on the fused walk). Warm (``prior_weight``
    > 0): after one iteration its strategy is the prior, the flop play above (the translated blueprint's
    below the lines, the bettor entering every gadget), and after 300 it has the exact LP's
    value within its gap. The lines do not interact: each line re-solved alone gets the
    strategy the re-solve of all gives it, cold and warm (the same iterates)."""
    from treeplex.depth_limited.offtree52 import flop_alts, offtree_table, safe_flop_resolve
    from treeplex.model.metrics import evaluate

    vx, bx, bet, args, b1, info, lines = _safe_spot(params={**OFF_PARAMS, "stack": 1500})
    assert len(lines) > 2
    table = offtree_table(args[0], args[1], LeafValues52(vx, bx), args[5])[0]
    alts = flop_alts(vx, table, info["solution"], b1, lines)
    lock = [bx[0], b1]
    first = safe_flop_resolve(vx, lock, lines, 0, alts, "dcfr", warm=10, max_iters=1, check_every=1)
    G = len(first.gadgets)
    np.testing.assert_allclose(first.problem.X.behavioral_from_plan(first.res.x)[2:2 + 2 * G:2], 1.0, rtol=0,
                               atol=1e-12)  # every gadget entered
    for p, b in enumerate(first.behaviorals()):  # (the fused re-solve's strategy sums: float32)
        reach = vx.line_reach(p, lock[p], first.lines.lines).ravel()[first.lines.cell[p][1:]]
        at = first.lines.pos[p][1:][(reach > 0) | (p == 0)]  # the chooser's, and where the other's reach goes
        np.testing.assert_allclose(b[at], lock[p][at], rtol=0, atol=1e-6)
        rest = np.setdiff1d(np.arange(len(b)), first.lines.pos[p][1:])
        np.testing.assert_array_equal(b[rest], lock[p][rest])
    exact = safe_flop_resolve(vx, lock, lines, 0, alts, "lp")
    v = evaluate(exact.problem, exact.res.x, exact.res.y).value
    for warm in (0.0, 10.0):
        kw = {"warm": warm, "max_iters": 300, "check_every": 300}
        joint = safe_flop_resolve(vx, lock, lines, 0, alts, "dcfr", **kw)
        assert joint.res.gap < 0.2  # chips: gap / 2 under 1 mbb/g
        assert evaluate(joint.problem, joint.res.x, joint.res.y).value == pytest.approx(v, abs=joint.res.gap)
        both = joint.behaviorals()
        assert min(np.ptp(both[p][joint.lines.pos[p][1:]]) for p in (0, 1)) > 0.1  # not only uniform rows
        for l in lines:
            alone = safe_flop_resolve(vx, lock, [l], 0, alts, "dcfr", **kw)
            for p, b in enumerate(alone.behaviorals()):
                pos = alone.lines.pos[p][1:]
                np.testing.assert_allclose(b[pos], both[p][pos], rtol=0, atol=1e-12)
    with pytest.raises(InputError, match="Maxmargin"):
        safe_flop_resolve(vx, lock, lines, 0, alts, "dcfr", margin=True, warm=10, max_iters=1)


def test_a_held_out_size_bracketed_by_all_in():
    """1.8 pot (between 1 pot and all-in at 5 BB): each flop line after it gets half the 1-pot
    line's values and half the called all-in's showdown block, each scaled by the pot ratio;
    the all-in half is the same for every continuation, so the continuations differ by half
    the 1-pot line's differences. The ratios here are from the chips by hand: after 1.8 pot
    called, 460 in; after 1 pot called, 300; all-in, 500."""
    from treeplex.depth_limited.offtree52 import Translator, offtree_game, offtree_table

    game = NLFH52(**OFF_PARAMS)
    view, _, b = random_profile(game, seed=13)
    gx, bet, after = offtree_game(game, OFF_PARAMS, "", 1.8)
    vx = View52(gx)
    tr = Translator(view, vx, bet)
    lv = LeafValues52(view, b)
    table_g = lv.table(0, [b[0], biased52(view, 0, b[0], {"call": 10.0})], ["own", "call x10"])
    bx = [tr.behavioral(p, b[p]) for p in (0, 1)]
    table, picks = offtree_table(tr, table_g, LeafValues52(vx, bx), after)
    assert sorted(lab for lab, _ in picks) == ["a", "p1"] and all(w == 0.5 for _, w in picks)
    lx = next(l for l, e in enumerate(vx.lines) if e["history"] == "p1.8,c")
    lg = next(l for l, e in enumerate(view.lines) if e["history"] == "p1,c")
    allin = next(i for i, e in enumerate(view.ends) if e["history"] == "a,c")
    for j in range(2):
        expect = 0.5 * table_g.values[j, lg] * 460 / 300 + 0.5 * lv.terminals[allin] * 460 / 500
        np.testing.assert_allclose(table.values[j, lx], expect, rtol=0, atol=1e-12)
    assert np.abs(table.values[1, lx] - table.values[0, lx]).max() > 1e-6


@pytest.mark.parametrize("round2,warm,budget", [("none", "0", []), ("safe", "0", []), ("safe", "10", []),
                                                ("unsafe", "0", ["--round2-budget", "600"]), ("maxmargin", "0", [])])
def test_the_figure_on_nlfh52_agrees_with_the_cli(tmp_path, round2, warm, budget):
    """``experiments/depth_limited_nlfh.py --game "nlfh52(...)"`` (the README's Figure 1 at 52
    cards, here on a short deck): with the same blueprint (30 DCFR iterations, the target out of
    reach) its RPAT, lower bound and self-generative k = 2 rows equal ``treeplex depth-limited
    --bet 0.75``'s (another entry point, one process each); k = 1 is the same for both sets (the
    blueprint's continuation alone); it writes the table, the JSON and the figure. The same
    with the flop after the bet re-solved safely (``--round2 safe``, 50 DCFR iterations in both),
    and with the Maxmargin gadget where it holds (``--round2 maxmargin``: the CLI says which gadget
    it kept, as the experiment's log), with the safe re-solve started warm (``--round2-warm``), and
    with the unsafe one line by line within a budget (``--round2-budget``, which 50 iterations end
    first)."""
    spec = "nlfh52(stack=500, flops=all, bets=0.5,1,a, deck=JcJdQcQdKcKdAcAd)"
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    r = subprocess.run([sys.executable, "experiments/depth_limited_nlfh.py", "--game", spec, "--k", "1", "2",
                        "--max-iters", "30", "--target-mbb", "1e-9", "--round2", round2, "--round2-iters", "50",
                        "--round2-warm", warm, *budget, "--out", str(tmp_path)], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads((tmp_path / "results.json").read_text())
    assert (tmp_path / "table.md").exists() and (tmp_path / "figure1.png").exists()
    assert json.loads((tmp_path / "rows.json").read_text())["rows"] == res["rows"]  # written before the lower bound
    rows = {(row["method"], row["k"]): row["exploitability_mbb"] for row in res["rows"]}
    assert rows[("bias", 1)] == pytest.approx(rows[("self-generative", 1)], abs=1e-9)
    p = _cli("--game", spec, "--bet", "0.75", "--method", "self-generative", "--k", "2", "--solver", "dcfr",
             "--round2", round2, "--round2-iters", "50", "--round2-warm", warm, *budget, "--blueprint", "dcfr:30",
             "--json")
    assert p.returncode == 0, p.stderr[-2000:]
    cli = json.loads(p.stdout)
    assert res["blueprint_iterations"] == 30 and res["costs"]["round2"] == [round2]
    if budget:
        assert cli["round2"].startswith(f"{round2}: line by line, ") and " s for 50 iterations, locked gap " in cli["round2"]
        per_line = res["rows"][-1]["round2_lines"]
        assert per_line and all(r["iterations"] == 50 and r["seconds"] > 0 for r in per_line)
        assert sum(r["gap_mbb"] for r in per_line) == pytest.approx(res["rows"][-1]["round2_gap_mbb"], rel=1e-9)
    else:
        assert cli["round2"].startswith("none" if round2 == "none" else f"{round2}: dcfr 50 iterations" + (
            f" from the blueprint's flop (prior weight {warm})" if warm != "0" else ", locked gap"))
    if round2 == "maxmargin":
        assert cli["round2"].endswith(f", {res['rows'][-1]['gadgets']['gadget']} gadget kept")
    assert res["rpat_mbb"] == pytest.approx(cli["rpat_exploitability_mbb"], abs=1e-9)
    assert res["lower_bound_mbb"] == pytest.approx(cli["lower_bound_exploitability_mbb"], abs=1e-9)
    assert rows[("self-generative", 2)] == pytest.approx(cli["dl_exploitability_mbb"], abs=1e-9)


def test_the_figures_blueprint_continues_from_its_checkpoint(tmp_path):
    """``--blueprint-checkpoint FILE``: a run stopped after 10 DCFR iterations and continued to
    20 gives the same blueprint and the same rows as 20 iterations in one run; a checkpoint of
    another game is refused (exit 2, one line naming both games)."""
    spec = "nlfh52(stack=500, flops=all, bets=0.5,1,a, deck=JcJdQcQdKcKdAcAd)"
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    ck = str(tmp_path / "bp.ck")

    def run(game, iters, out, *extra):
        return subprocess.run([sys.executable, "experiments/depth_limited_nlfh.py", "--game", game, "--k", "1",
                               "--max-iters", str(iters), "--target-mbb", "1e-9", "--out", str(tmp_path / out),
                               *extra], capture_output=True, text=True, env=env)

    for iters, out in ((10, "first"), (20, "continued")):
        r = run(spec, iters, out, "--blueprint-checkpoint", ck)
        assert r.returncode == 0, r.stderr[-2000:]
    assert "continuing its run" in r.stdout
    r = run(spec, 20, "straight")
    assert r.returncode == 0, r.stderr[-2000:]
    got, want = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("continued", "straight"))
    assert got["blueprint_iterations"] == want["blueprint_iterations"] == 20
    assert got["blueprint_mbb"] == pytest.approx(want["blueprint_mbb"], rel=1e-12)
    assert [row["exploitability_mbb"] for row in got["rows"]] == pytest.approx(
        [row["exploitability_mbb"] for row in want["rows"]], rel=1e-12)
    r = run(spec.replace("stack=500", "stack=300"), 20, "other", "--blueprint-checkpoint", ck)
    assert r.returncode == 2 and "checkpoint is for 'nlfh52(stack=500" in r.stderr and "stack=300" in r.stderr


def test_the_blueprint_cache_is_read_back_checked(tmp_path):
    """:func:`cached_blueprint52`: the first call computes and saves, the second reads the same
    plans and numbers without solving; a file of another game, a truncated plan, a plan that is
    not a realization plan and a file that is not an npz are each refused with the file named."""
    from treeplex.depth_limited.nlfh52 import cached_blueprint52

    view = View52(NLFH52(**OFF_PARAMS))
    path = str(tmp_path / "bp.npz")
    bp = cached_blueprint52(view, path, max_iters=5)
    again = cached_blueprint52(view, path, max_iters=1)
    assert again.iterations == bp.iterations == 5 and again.gap == bp.gap and again.value == bp.value
    for p in (0, 1):
        np.testing.assert_array_equal(again.plans[p], bp.plans[p])
        np.testing.assert_array_equal(again.b[p], bp.b[p])
    other = View52(NLFH52(**{**OFF_PARAMS, "stack": 300}))
    with pytest.raises(InputError, match=r"bp\.npz: the blueprint of nlfh52\(stack=500"):
        cached_blueprint52(other, path)
    z = dict(np.load(path))
    for change, msg in (({"x": z["x"][:-1]}, "player 0's plan: expected shape"),
                        ({"y": 2 * z["y"]}, "player 1's plan: empty sequence has mass")):
        bad = str(tmp_path / "bad.npz")
        np.savez(bad, **{**z, **change})
        with pytest.raises(InputError, match=msg):
            cached_blueprint52(view, bad)
    (tmp_path / "junk.npz").write_text("not an npz")
    with pytest.raises(InputError, match="junk.npz: not a blueprint file"):
        cached_blueprint52(view, str(tmp_path / "junk.npz"))


def test_the_bracket_flop_mix_is_the_full_layout_mix():
    """:func:`half_and_half_flop` mixes the bracket's translated blueprints as realization plans
    from each line on :class:`FlopLines`' layout, translating only the nodes below the lines;
    the same mix on the whole game's full layout (each translated whole, its pseudo-plan with
    the preflop counted as 1, mixed node by node) gives the same rows, and the rows above and
    off the lines are ``base``'s."""
    from treeplex.depth_limited.offtree52 import half_and_half_flop
    from treeplex.poker.flop_lines import FlopLines

    vx, bx, bet, args, b1, info, lines = _safe_spot(params={**OFF_PARAMS, "stack": 1500})
    tr, lv = args[0], args[2]
    picks = info["picks"]
    assert len(picks) == 2 and len(lines) > 2
    base = np.full_like(bx[1], 0.5)
    got = half_and_half_flop(tr, 1, lv.blueprint[1], picks, base, FlopLines(vx.game, lines))
    pseudo = [(w, vx.pseudo_plan(1, tr.behavioral(1, lv.blueprint[1], lab))) for lab, w in picks]
    want, t, H = base.copy(), vx.tree, vx.H
    for v in np.flatnonzero(np.isin(vx.line_of_node, lines) & (t.actor == 1)):
        k = int(t.n_actions[v])
        sl = slice(vx.bases[1][v], vx.bases[1][v] + H * k)
        mix = sum(w * pp[sl].reshape(H, k) for w, pp in pseudo)
        tot = mix.sum(axis=1, keepdims=True)
        want[sl] = np.where(tot > 1e-12, mix / np.where(tot > 0, tot, 1.0), 1.0 / k).ravel()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert np.count_nonzero(got != base) > 1000


@pytest.mark.parametrize("round2", ["safe", "unsafe"])
def test_the_flop_re_solved_line_by_line_within_a_budget(round2):
    """``round2_kw["budget"]``: each line's flop re-solved alone, as play meets it
    (:class:`ByLine`: per line a result and its seconds, the gaps summed). With a budget no
    line reaches and 100 iterations the response is the joint re-solve's of 100 iterations
    (the lines do not interact); with 1 ms each line stops on its time limit; with a target
    gap each line stops on it, its gap at most the target."""
    from treeplex.depth_limited.offtree52 import ByLine, dl_response

    vx, bx, bet, args, b1, info, lines = _safe_spot(params={**OFF_PARAMS, "stack": 1500})
    joint, info_j = dl_response(*args, safe=True, round2=round2, solver="lp", round2_kw={"max_iters": 100})
    got, info_l = dl_response(*args, safe=True, round2=round2, solver="lp",
                              round2_kw={"max_iters": 100, "budget": 600.0})
    by = info_l["round2"]
    assert isinstance(by, ByLine) and by.lines == lines and len(by.seconds) == len(lines)
    assert by.iterations == 100 and all(r.stopped_by == "max_iters" and r.iterations == 100 for r in by.results)
    np.testing.assert_allclose(got, joint, rtol=0, atol=1e-12)
    assert by.gap == pytest.approx(info_j["round2"].gap, rel=1e-9)
    assert np.count_nonzero(np.abs(got - b1) > 1e-6) > 100  # the re-solve changed the flop
    _, info_t = dl_response(*args, safe=True, round2=round2, solver="lp", round2_kw={"budget": 1e-3})
    assert all(r.stopped_by in ("time_limit", "deadline") and r.iterations >= 1 for r in info_t["round2"].results)
    target = by.gap / len(lines)
    _, info_g = dl_response(*args, safe=True, round2=round2, solver="lp", round2_kw={"budget": 600.0,
                                                                                    "target_gap": target})
    assert all(r.stopped_by == "target" and r.gap <= target for r in info_g["round2"].results)
    with pytest.raises(InputError, match="budget per line must be > 0"):
        dl_response(*args, safe=True, round2=round2, solver="lp", round2_kw={"budget": 0})


@pytest.mark.parametrize("round2", ["safe", "unsafe"])
def test_a_line_s_deadline_covers_its_warm_start(monkeypatch, round2):
    """The deadline of a line covers its warm start's setup (two products and the prior), not
    only the solver: a setup that takes longer than the budget leaves the solver the 1 ms
    floor (before, the solver's time limit was read first and the setup came on top)."""
    import time as clock

    from treeplex.depth_limited import offtree52
    from treeplex.run import driver

    vx, bx, bet, args, b1, info, lines = _safe_spot(params={**OFF_PARAMS, "stack": 1500})
    slow, solve, limits = offtree52.flop_prior, driver.solve, []

    def slow_prior(*a, **kw):
        clock.sleep(0.05)
        return slow(*a, **kw)

    def spy(*a, **kw):  # the lines' solves (the step-1 subgame's LP has no time limit)
        if "time_limit" in kw:
            limits.append(kw["time_limit"])
        return solve(*a, **kw)

    monkeypatch.setattr(offtree52, "flop_prior", slow_prior)
    monkeypatch.setattr(driver, "solve", spy)
    offtree52.dl_response(*args, safe=True, round2=round2, solver="lp",
                          round2_kw={"budget": 0.01, "prior_weight": 3.0})
    assert len(limits) == len(lines) and all(t == 1e-3 for t in limits)
