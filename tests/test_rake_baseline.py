"""A raked solve records its baseline (the spot without rake) and what the rake costs each
player (treeplex/run/whatif.py): by hand on a river where one hand always wins, against the
unraked LP on a river with mixed play, from a ``--baseline`` file, in the viewer's what-if
rows and in ``treeplex report``'s columns."""

import contextlib
import csv
import io
import json
import re

import pytest

import treeplex as tp
from treeplex.cli import main
from treeplex.poker.postflop import PostflopGame
from treeplex.scale.batch import run_batch
from treeplex.scale.report import spot_rows, write_report
from treeplex.viewer import page_html

# AsAh against KsKh on a river AA wins: pot 100, 100 behind, all-in or check (test_rake.py's)
AA_KK = dict(board="Td9d6hQc2s", pot=100, stack=100, range0="AsAh", range1="KsKh", bet="a")
RAKE = dict(rake=0.05, rake_cap=1.2)  # 5% of the pot capped at 1.2 big blinds (12 chips; big blind 10)
RIVER = dict(board="AhKd7c2s9h", pot=20, stack=20, range0="AA,KK,QQ,AK,KQ,JT", range1="AA,KK,QQ,AQ,JJ,T9",
             bet="50%", deck="9TJQKA27", **{"raise": "2x"})


def _solve(*args) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["solve", *map(str, args), "--json", "--no-strategies"]) == 0
    return json.loads(out.getvalue())


def _spec(tmp_path, name, **spot):
    path = tmp_path / name
    path.write_text(json.dumps({"game": "postflop", **spot}))
    return path


def test_rake_cost_by_hand(tmp_path):
    """AA always wins, so KK never calls a bet and AA takes the 100 pot either way: without
    rake AA nets +50 and KK -50; with rake the pot pays 5% = 5 chips (under the cap), all
    from the winner: AA +45, KK -50. The rake costs AA 5 chips (500 mbb/g, 5% of the pot)
    and KK nothing, and the two costs add up to the expected rake (5)."""
    spec = _spec(tmp_path, "raked.json", **AA_KK, **RAKE)
    r = _solve(spec, "--algorithm", "dcfr", "--max-iters", "300", "--out", tmp_path / "raked_out.json")
    b, c = r["baseline"], r["rake_ev_cost"]
    assert b["file"] is None and b["algorithm"] == "dcfr" and b["iterations"] == 300
    assert b["value"] == pytest.approx(50, abs=1e-3) and b["gap"] < 1e-3
    assert c["chips"] == pytest.approx([5, 0], abs=1e-3)
    assert c["mbb_per_game"] == pytest.approx([500, 0], abs=0.1) and c["pct_pot"] == pytest.approx([5, 0], abs=1e-3)
    assert sum(c["chips"]) == pytest.approx(r["expected_rake"], abs=1e-9)
    assert c["error_bound_chips"] == pytest.approx(r["gap"] + b["gap"], abs=1e-12)
    saved = json.loads((tmp_path / "raked_out.json").read_text())
    assert saved["rake_ev_cost"] == c and saved["baseline"] == b and "lock_ev_gain" not in saved
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert main(["solve", str(spec), "--algorithm", "dcfr", "--max-iters", "300", "--no-strategies"]) == 0
    costs = re.findall(r"rake cost p(\d) +([-+][\d.e-]+) chips = ([-+][\d.e-]+) mbb/g", text.getvalue())
    assert [q for q, _, _ in costs] == ["0", "1"]
    assert [float(x) for _, x, _ in costs] == pytest.approx([5, 0], abs=1e-3)
    assert [float(m) for _, _, m in costs] == pytest.approx([500, 0], abs=0.1)
    assert "the spot without rake" in text.getvalue()


def test_rake_cost_against_the_unraked_lp(tmp_path):
    """A river with mixed play: the baseline's value is within its gap of the unraked spot's LP
    value (a separate exact solve), and player 0's cost is within the recorded bound of that
    LP value minus the raked value; each player's cost is its own value's drop."""
    spec = _spec(tmp_path, "river.json", **RIVER, rake=0.05, rake_cap=0.3)
    r = _solve(spec, "--algorithm", "dcfr", "--target", "0.1%pot")
    lp = tp.solve_lp(PostflopGame(**RIVER).problem()).value
    b, c = r["baseline"], r["rake_ev_cost"]
    assert abs(b["value"] - lp) <= b["gap"] + 1e-9
    assert abs(c["chips"][0] - (lp - r["value"])) <= c["error_bound_chips"]
    assert c["chips"][1] == pytest.approx(-b["value"] - r["value_player1"], abs=1e-12)
    assert sum(c["chips"]) == pytest.approx(r["expected_rake"], abs=1e-9) and r["expected_rake"] > 0.1


def test_baseline_file_and_bad_baselines(tmp_path, capsys):
    """``--baseline FILE`` reads the unraked spot's saved solve; a raked solution, another
    spot's or ``--baseline`` on a spot without rake or locks are refused in one line."""
    plain = _spec(tmp_path, "plain.json", **AA_KK)
    raked = _spec(tmp_path, "raked.json", **AA_KK, **RAKE)
    base = _solve(plain, "--algorithm", "dcfr", "--max-iters", "200", "--out", tmp_path / "plain_out.json")
    r = _solve(raked, "--algorithm", "dcfr", "--max-iters", "200", "--baseline", tmp_path / "plain_out.json",
               "--out", tmp_path / "raked_out.json")
    assert r["baseline"]["file"] == str(tmp_path / "plain_out.json") and r["baseline"]["value"] == base["value"]
    assert r["rake_ev_cost"]["chips"][0] == pytest.approx(base["value"] - r["value"], abs=1e-12)
    other = _spec(tmp_path, "other.json", **{**AA_KK, "pot": 80})
    _solve(other, "--algorithm", "dcfr", "--max-iters", "10", "--out", tmp_path / "other_out.json")
    wide = _spec(tmp_path, "wide.json", **{**AA_KK, "range1": "KsKh,QsQh"})  # the same name, other ranges
    _solve(wide, "--algorithm", "dcfr", "--max-iters", "10", "--out", tmp_path / "wide_out.json")
    for args, msg in [([raked, "--baseline", tmp_path / "raked_out.json"], "(the spot without rake)"),
                      ([raked, "--baseline", tmp_path / "wide_out.json"], "not in player 1's range here"),
                      ([raked, "--baseline", tmp_path / "other_out.json"], "not of this spot"),
                      ([plain, "--baseline", tmp_path / "plain_out.json"], "--baseline applies to postflop spots "
                                                                           "with locks or rake")]:
        assert main(["solve", *map(str, args), "--algorithm", "dcfr", "--max-iters", "5"]) == 2
        err = capsys.readouterr().err
        assert msg in err and err.count("\n") == 1
    none = _solve(raked, "--algorithm", "dcfr", "--max-iters", "5", "--baseline", "none")
    assert "baseline" not in none and "rake_ev_cost" not in none


def test_viewer_and_report_show_the_rake_cost(tmp_path):
    """The page's what-if row is minus the cost (EV gained); a batch of the AA-KK spot on two
    boards reports the hand-computed cost per spot and per texture, in chips and mbb/g."""
    raked = _spec(tmp_path, "raked.json", **AA_KK, **RAKE)
    _solve(raked, "--algorithm", "dcfr", "--max-iters", "300", "--out", tmp_path / "raked_out.json")
    html = page_html([str(tmp_path / "raked_out.json")])
    rows = json.loads(re.search(r'id="treeplex-data">(.*?)</script>', html, re.S).group(1))["whatif"]
    assert len(rows) == 1 and "rake" in rows[0]["what"]
    assert rows[0]["chips"] == pytest.approx([-5, 0], abs=1e-3) and rows[0]["mbb"][0] == pytest.approx(-500, abs=0.1)
    boards = ["Td9d6hQc2s", "Th9c6s4d2h"]
    specs = tmp_path / "specs.jsonl"
    specs.write_text("".join(json.dumps({"game": {"game": "postflop", **AA_KK, **RAKE, "board": b},
                                         "algorithm": "dcfr", "max_iters": 300}) + "\n" for b in boards))
    db = str(tmp_path / "r.sqlite")
    assert run_batch(str(specs), db, workers=1)["done"] == 2
    got = {r["board"]: r for r in spot_rows(db)}
    for b in boards:
        assert got[b]["rake_cost_oop"] == pytest.approx(5, abs=1e-3)
        assert got[b]["rake_cost_ip"] == pytest.approx(0, abs=1e-3)
        assert got[b]["rake_cost_oop_mbb"] == pytest.approx(500, abs=0.1)
        assert "lock_ev_oop" not in got[b]
    text = write_report(db, str(tmp_path / "out"))
    assert "rake_cost_oop" in text and "lock_ev_oop" not in text
    with open(tmp_path / "out" / "textures.csv") as f:
        groups = [g for g in csv.DictReader(f) if g["group_by"] == "texture"]
    assert groups and all(float(g["rake_cost_oop"]) == pytest.approx(5, abs=1e-3) for g in groups)


def test_python_api_records_the_rake_cost_as_the_cli(tmp_path):
    """``tp.solve(problem, ..., whatif=True)`` on the raked AA-KK spot: the CLI's baseline and
    cost, from the same solver and stop rule (the same iterates: equal to rounding), and the
    hand-computed 5 chips."""
    cli = _solve(_spec(tmp_path, "raked.json", **AA_KK, **RAKE), "--algorithm", "dcfr", "--max-iters", "300")
    res = tp.solve(PostflopGame(**AA_KK, **RAKE).problem(), "dcfr", max_iters=300, whatif=True)
    c = res.whatif["rake_ev_cost"]
    assert res.whatif["baseline"]["iterations"] == 300 and res.whatif["baseline"]["algorithm"] == "dcfr"
    assert res.whatif["baseline"]["value"] == pytest.approx(cli["baseline"]["value"], abs=1e-12)
    assert c["chips"] == pytest.approx(cli["rake_ev_cost"]["chips"], abs=1e-12)
    assert c["error_bound_chips"] == pytest.approx(cli["rake_ev_cost"]["error_bound_chips"], abs=1e-12)
    assert c["chips"] == pytest.approx([5, 0], abs=1e-3)
