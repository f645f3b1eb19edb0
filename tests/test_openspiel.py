"""OpenSpiel games by name and policies both ways (skipped where open_spiel is not installed;
the install hint is tested in test_cli.py)."""

import json

import pytest

import treeplex as tp
from treeplex.cli import main


pyspiel = pytest.importorskip("pyspiel")


def test_kuhn_by_name_has_kuhns_value():
    # Kuhn (1950): the game value for the first player is -1/18.
    p = tp.compile_game(tp.load_game("openspiel:kuhn_poker"))
    assert tp.solve_lp(p).value == pytest.approx(-1 / 18, abs=1e-12)
    assert (p.X.n_infosets, p.Y.n_infosets) == (6, 6)


@pytest.mark.parametrize("name", ["leduc_poker", "liars_dice(numdice=1,dice_sides=3)"])
def test_value_equals_openspiel_gambit_export(name):
    # A second route from OpenSpiel's rules to a game value: its own Gambit exporter, read
    # by treeplex's .efg reader.
    from open_spiel.python.algorithms.gambit import export_gambit

    from treeplex.io.efg import read_efg

    ours = tp.solve_lp(tp.compile_game(tp.load_game(f"openspiel:{name}"))).value
    efg = tp.solve_lp(tp.compile_game(read_efg(export_gambit(pyspiel.load_game(name))))).value
    assert ours == pytest.approx(efg, abs=1e-9)


def test_leduc_by_name_equals_builtin_leduc():
    # treeplex's own Leduc rules, suit-isomorphic, have the same value as OpenSpiel's.
    theirs = tp.solve_lp(tp.compile_game(tp.load_game("openspiel:leduc_poker"))).value
    ours = tp.solve_lp(tp.compile_game(tp.make_game("leduc"))).value
    assert theirs == pytest.approx(ours, abs=1e-9)


@pytest.mark.parametrize("name,why", [
    ("goofspiel(num_cards=3)", "simultaneous-move games are not supported; load it as "
                               "openspiel:turn_based_simultaneous_game(game=goofspiel(num_cards=3))"),
    ("sheriff", "treeplex solves zero-sum games; this one is general-sum"),
    ("kuhn_poker(players=3)", "treeplex solves two-player games; this one has 3 players"),
])
def test_unsupported_games_are_refused_in_one_line(name, why, capsys):
    assert main(["solve", f"openspiel:{name}"]) == 2
    assert capsys.readouterr().err == f"treeplex: error: {name}: {why}\n"


def test_unknown_game_is_one_line(capsys):
    assert main(["solve", "openspiel:no_such_game"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Unknown game 'no_such_game'" in err


def test_turn_based_goofspiel_solves(capsys):
    # goofspiel with 3 cards is symmetric: value 0.
    assert main(["solve", "openspiel:turn_based_simultaneous_game(game=goofspiel(num_cards=3))", "--json",
                 "--no-strategies"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == pytest.approx(0.0, abs=1e-12)


# ------------------------------------------------------------------ policies


@pytest.fixture(scope="module", params=["kuhn_poker", "leduc_poker"])
def solved(request):
    game = tp.load_game(f"openspiel:{request.param}")
    problem = tp.compile_game(game)
    res = tp.solve(problem, "cfr+", max_iters=200)
    return game, problem, res


def test_exported_policy_has_openspiels_exploitability(solved):
    # OpenSpiel's exploitability() (best responses on its own tree, NashConv / 2) of the
    # exported TabularPolicy equals treeplex's gap / 2.
    from open_spiel.python.algorithms.exploitability import exploitability

    from treeplex.io.openspiel import to_tabular_policy

    game, problem, res = solved
    pol = to_tabular_policy(game, problem, res.x, res.y)
    assert res.exploitability > 1e-6  # not an equilibrium: a real check
    assert exploitability(game.spiel_game, pol) == pytest.approx(res.exploitability, abs=1e-9)


def test_imported_openspiel_policy_has_openspiels_exploitability(solved):
    # The other way: OpenSpiel's own (C++) CFR+ average policy, imported as plans.
    from treeplex.io.openspiel import plans_from_policy

    game, problem, _ = solved
    cfr = pyspiel.CFRPlusSolver(game.spiel_game)
    for _ in range(30):
        cfr.evaluate_and_update_policy()
    pol = cfr.tabular_average_policy()
    x, y = plans_from_policy(game, problem, pol)
    assert tp.exploitability(problem, x, y) == pytest.approx(pyspiel.exploitability(game.spiel_game, pol), abs=1e-9)


@pytest.mark.parametrize("suffix", ["pkl", "json"])
def test_cli_policy_file_round_trip(suffix, tmp_path, capsys):
    from open_spiel.python.algorithms.exploitability import exploitability

    from treeplex.io.openspiel import load_policy, plans_from_policy

    out = tmp_path / f"policy.{suffix}"
    assert main(["solve", "openspiel:kuhn_poker", "--algorithm", "cfr+", "--max-iters", "50", "--json",
                 "--no-strategies", "--out", str(out), "--format", "openspiel"]) == 0
    ours = json.loads(capsys.readouterr().out)["exploitability"]
    pol = load_policy(str(out))
    game = tp.load_game("openspiel:kuhn_poker")
    problem = tp.compile_game(game)
    if suffix == "pkl":
        assert exploitability(game.spiel_game, pol) == pytest.approx(ours, abs=1e-9)
    assert tp.exploitability(problem, *plans_from_policy(game, problem, pol)) == pytest.approx(ours, abs=1e-12)
    # as a warm start: the first iterate is the prior, so the average after 1 iteration is it
    assert main(["solve", "openspiel:kuhn_poker", "--algorithm", "cfr+", "--max-iters", "1", "--json",
                 "--no-strategies", "--warm-start", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["exploitability"] == pytest.approx(ours, abs=1e-12)


def test_format_openspiel_needs_an_openspiel_game(capsys):
    assert main(["solve", "kuhn", "--out", "x.pkl", "--format", "openspiel"]) == 2
    assert "needs an OpenSpiel game" in capsys.readouterr().err


# Exploitability at T = 1000 in the released curves of Xu et al., ICLR 2024 (DDCFR),
# github.com/rpSebastian/DDCFR results/{CFRPlus,DCFR}/<game>/data.csv, on OpenSpiel's games
# with their parameters (ddcfr/game/game_config.py).
GOOFSPIEL = "turn_based_simultaneous_game(game=goofspiel(num_cards={},imp_info=True,points_order=descending))"
GOOFSPIEL3, GOOFSPIEL4 = GOOFSPIEL.format(3), GOOFSPIEL.format(4)


@pytest.mark.parametrize("name,algorithm,published", [
    ("liars_dice(numdice=1,dice_sides=3)", "cfr+", 4.842475981453598e-06),
    ("liars_dice(numdice=1,dice_sides=3)", "dcfr", 3.952371344095873e-08),
    ("liars_dice(numdice=1,dice_sides=4)", "cfr+", 4.533202689365606e-05),
    ("liars_dice(numdice=1,dice_sides=4)", "dcfr", 2.6220483322750288e-05),
    (GOOFSPIEL3, "cfr+", 1.8315018315018316e-06),
    (GOOFSPIEL3, "dcfr", 3.4947561184442756e-09),
    (GOOFSPIEL4, "cfr+", 2.680067895387836e-04),
    (GOOFSPIEL4, "dcfr", 4.096428420659016e-04),
])
def test_reproduces_published_ddcfr_curves_on_openspiel_games(name, algorithm, published):
    p = tp.compile_game(tp.load_game(f"openspiel:{name}"))
    res = tp.solve(p, algorithm, max_iters=1000, check_every=1000)
    assert res.exploitability == pytest.approx(published, rel=1e-8)
