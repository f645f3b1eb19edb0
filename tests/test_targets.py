"""--target in the user's unit: gap, exploitability = gap / 2, mbb/g, % of the starting pot."""

import json
import re

import pytest

import treeplex as tp
from treeplex.cli import main
from treeplex.errors import InputError
from treeplex.run.targets import target_gap

RIVER = "river(pot=1000,board=KsQd7h4c2s,abstraction=fcpa)"
RANGES = ["--range0", "AA,KK,QJs,76s", "--range1", "QQ,JJ,AKo,98s"]


@pytest.fixture(scope="module")
def kuhn():
    return tp.compile_game(tp.make_game("kuhn"))


@pytest.fixture(scope="module")
def river():
    return tp.load_game(RIVER, range0="AA,KK", range1="QQ").problem()


@pytest.mark.parametrize("text,gap", [("1e-3", 1e-3), ("gap=1e-3", 1e-3), (" 0.25 ", 0.25),
                                      ("exploitability=1e-3", 2e-3), ("Exploitability = 0.5", 1.0)])
def test_gap_and_exploitability(kuhn, text, gap):
    assert target_gap(text, kuhn) == gap


@pytest.mark.parametrize("text,gap", [
    ("1mbb", 2 * 1 * 100 / 1000),        # big blind 100: 1 mbb/g = 0.1 chips of exploitability
    ("2.5 mbb/g", 2 * 2.5 * 100 / 1000),
    ("0.5%pot", 2 * 0.005 * 1000),       # pot 1000: 0.5% = 5 chips of exploitability
    ("1 % pot", 2 * 0.01 * 1000),
    ("3", 3.0),
])
def test_poker_units(river, text, gap):
    assert target_gap(text, river) == pytest.approx(gap, rel=1e-15)


def test_nlfh_pot_is_the_blinds():
    p = tp.compile_game(tp.make_game("nlfh(ranks=3, suits=1, hole=1, flop=1, stack=300, bets='allin')"))
    assert target_gap("10%pot", p) == pytest.approx(2 * 0.1 * 150)


@pytest.mark.parametrize("text,why", [
    ("1mbb", "mbb/g needs a poker game with a big blind"),
    ("1%pot", "%pot needs a poker game with a starting pot"),
    ("fast", "expected GAP, exploitability=E, Nmbb or P%pot"),
    ("exploitability=x", "expected GAP"),
    ("-1", "must be a finite number > 0"),
    ("nan", "must be a finite number > 0"),
])
def test_bad_targets(kuhn, text, why):
    with pytest.raises(InputError, match=re.escape(why)):
        target_gap(text, kuhn)


def test_cli_mbb_target_stops_at_exploitability(capsys):
    assert main(["solve", RIVER, *RANGES, "--algorithm", "cfr+", "--target", "50mbb", "--json",
                 "--no-strategies"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["target_gap"] == pytest.approx(10.0)  # 2 * 50/1000 * 100 chips
    assert d["stopped_by"] == "target" and d["exploitability_mbb_per_game"] <= 50


def test_cli_unit_on_a_game_without_one(capsys):
    assert main(["solve", "kuhn", "--target", "1mbb"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "mbb/g needs a poker game with a big blind; kuhn has none" in err
