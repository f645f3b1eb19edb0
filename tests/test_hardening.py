"""Issue 18: bad input is refused in one line (exit 2), crafted files do not crash, results are not lost."""

import json

import pytest

from treeplex.cli import main
from treeplex.compile import compile_game
from treeplex.errors import GameError
from treeplex.game import ExplicitGame, chance, decision, terminal


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def refused(capsys, *argv, needle=""):
    """Run the CLI, assert a one-line refusal with exit 2 that contains ``needle``; return it."""
    code, _, err = run_cli(capsys, *argv)
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert needle in err, err
    return err


EFG = 'EFG 2 R "x" {{ "a" "b" }}\np "" 1 1 "i" {{ "l" "r" }} 0\nt "" 1 "o1" {{ {u} }}\nt "" 2 "o2" {{ -1 1 }}\n'
CHANCE_EFG = 'EFG 2 R "x" {{ "a" "b" }}\nc "" 1 "" {{ "h" {p} "t" 1/2 }} 0\nt "" 1 "o1" {{ 1 -1 }}\nt "" 2 "o2" {{ -1 1 }}\n'


# ------------------------------------------------------------ 1. non-finite numbers


@pytest.mark.parametrize("text, line", [
    (EFG.format(u="1 1e999"), 3),  # was accepted as zero-sum: u0 + u1 = inf never differs from inf
    (EFG.format(u="-1e999 1"), 3),
    (EFG.format(u="1 " + "9" * 400 + "/1"), 3),  # a fraction that overflows a float
    (CHANCE_EFG.format(p="1e999"), 2),
])
def test_efg_non_finite_refused_with_line(tmp_path, capsys, text, line):
    f = tmp_path / "g.efg"
    f.write_text(text)
    err = refused(capsys, "solve", f, needle=f"g.efg:{line}:")
    assert "not a finite number" in err


@pytest.mark.parametrize("payoff", [(1.0, float("inf")), (float("nan"), 1.0), float("inf"), float("nan")])
def test_rules_game_non_finite_payoff_refused(payoff):
    game = ExplicitGame(decision(0, "i", {"l": terminal(payoff), "r": terminal((-1.0, 1.0))}))
    with pytest.raises(GameError, match="not finite"):
        compile_game(game)


def test_rules_game_nan_probability_refused():
    game = ExplicitGame(chance([("h", float("nan"), terminal(1.0)), ("t", 0.5, terminal(-1.0))]))
    with pytest.raises(GameError, match="probability nan"):
        compile_game(game)


@pytest.mark.parametrize("text, needle", [
    ('{"pot": NaN, "board": "AsKd7h2c3s"}', "NaN is not finite"),
    ('{"pot": 1e999, "board": "AsKd7h2c3s"}', "1e999 is not finite"),
    ('{"pot": Infinity, "board": "AsKd7h2c3s"}', "Infinity is not finite"),
    ('{"pot": 100, "board": "AsKd7h2c3s", "range0": {"AA": -Infinity}}', "not finite"),
    ("[1, 2]", "is a JSON object"),
    ("{", "bad JSON"),
])
def test_json_spec_refused(tmp_path, capsys, text, needle):
    f = tmp_path / "spec.json"
    f.write_text(text)
    refused(capsys, "info", f, needle=needle)


@pytest.mark.parametrize("edit, needle", [
    (lambda s: s["player0"].__setitem__("J:", {"p": "x", "b": 0.5}), "not a number"),
    (lambda s: s["player0"].__setitem__("J:", [0.5, 0.5]), "expected {action: probability}"),
    (lambda s: s.__setitem__("player0", [1]), "not a strategy file"),
])
def test_warm_start_bad_values_refused(tmp_path, capsys, edit, needle):
    out = tmp_path / "k.json"
    assert main(["solve", "kuhn", "--out", str(out), "--no-strategies"]) == 0
    d = json.loads(out.read_text())
    edit(d["strategies"])
    out.write_text(json.dumps(d))
    refused(capsys, "solve", "kuhn", "--algorithm", "cfr+", "--max-iters", 5, "--warm-start", out, needle=needle)


def test_warm_start_nan_refused(tmp_path, capsys):
    f = tmp_path / "w.json"
    f.write_text('{"player0": {"J:": {"p": NaN, "b": 1}}, "player1": {}}')
    refused(capsys, "solve", "kuhn", "--algorithm", "cfr+", "--max-iters", 5, "--warm-start", f, needle="not finite")


def test_directory_as_game_file(tmp_path, capsys):
    refused(capsys, "info", tmp_path, needle="is a directory")


# ------------------------------------------------------------ 2. LP exactness


def _kuhn_with_payoff(tmp_path, big: str):
    """Kuhn with the first terminal's payoffs at (-big, big)."""
    text = (tmp_path / "kuhn.efg")
    assert main(["export", "kuhn", "-o", str(text)]) == 0
    s = text.read_text()
    t = s.replace('t "" 1 "" { -1, 1 }', f't "" 1 "" {{ -{big}, {big} }}', 1)
    assert t != s
    f = tmp_path / f"kuhn{big}.efg"
    f.write_text(t)
    return f


@pytest.mark.parametrize("big", ["1e12", "1e16"])
def test_lp_refuses_payoff_ranges_it_cannot_resolve(tmp_path, capsys, big):
    # was: 1e12 reported gap 0.056 as "exact"; 1e16 ended in exit 1 (HiGHS model error)
    refused(capsys, "solve", _kuhn_with_payoff(tmp_path, big), needle="the LP cannot resolve these payoffs")


def test_lp_large_payoffs_within_range_exact(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "solve", _kuhn_with_payoff(tmp_path, "1e8"), "--json", "--no-strategies")
    d = json.loads(out)
    assert code == 0 and d["stopped_by"] == "exact"
    assert d["gap"] <= 1e-9 * 1e8 / 6
    assert d["value"] == pytest.approx(d["br_value_player0"], abs=1e-9 * 1e8)


def test_lp_never_exact_above_tolerance(monkeypatch):
    import treeplex.lp as lp
    from treeplex import make_game, solve

    calls = []
    real = lp._solve_side
    monkeypatch.setattr(lp, "_solve_side", lambda *a: calls.append(a[-1]) or real(*a))
    monkeypatch.setattr(lp, "EXACT_GAP", -1.0)  # no profile can meet it
    res = solve(compile_game(make_game("kuhn")), "lp")
    assert res.stopped_by == "lp-approximate"
    assert calls == [None, None, lp.TIGHT, lp.TIGHT]  # polished once with tight tolerances
    monkeypatch.setattr(lp, "EXACT_GAP", 1e-9)
    assert solve(compile_game(make_game("kuhn")), "lp").stopped_by == "exact"
