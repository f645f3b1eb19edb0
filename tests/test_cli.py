"""The command line: JSON shape, printed units, exit codes and one-line errors."""

import json
import subprocess
import sys

import pytest

from treeplex.cli import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_solve_json_shape(capsys):
    code, out, _ = run_cli(capsys, "solve", "kuhn", "--json")
    assert code == 0
    d = json.loads(out)
    for key in ("game", "algorithm", "value", "gap", "exploitability", "iterations", "gradients",
                "seconds", "compile_seconds", "strategies"):
        assert key in d
    assert d["value"] == pytest.approx(-1 / 18, abs=1e-9)  # Kuhn (1950)
    assert d["exploitability"] == pytest.approx(d["gap"] / 2)
    assert set(d["strategies"]) == {"player0", "player1"}
    assert d["strategies"]["player0"]["K:pb"] == pytest.approx({"p": 0.0, "b": 1.0}, abs=1e-9)


def test_solve_no_strategies(capsys):
    _, out, _ = run_cli(capsys, "solve", "rps_plus", "--json", "--no-strategies")
    assert "strategies" not in json.loads(out)


def test_solve_text_names_units(capsys):
    code, out, _ = run_cli(capsys, "solve", "kuhn")
    assert code == 0
    assert "player 0's expected payoff" in out and "gap / 2" in out and "saddle-point gap" in out
    assert "-0.05555555556" in out


def test_info(capsys):
    code, out, _ = run_cli(capsys, "info", "leduc", "--json")
    d = json.loads(out)
    assert d["infosets"] == [144, 144] and d["sequences"] == [337, 337] and d["terminals"] == 1116
    code, out, _ = run_cli(capsys, "info", "leduc")
    assert "nonzeros of A" in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["solve", "nosuchgame"], "unknown game"),
        (["solve", "missing.efg"], "no such file"),
        (["solve", "leduc(ranks=0)"], "ranks"),
        (["solve", "kuhn", "--algorithm", "nope"], "unknown algorithm"),
    ],
)
def test_bad_input_exit_2_one_line(capsys, argv, needle):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_subprocess_error_has_no_traceback(tmp_path):
    bad = tmp_path / "bad.efg"
    bad.write_text('EFG 2 R "x" { "a" "b" }\np "" 1 1 "i" { "l" "r" 0\n')
    r = subprocess.run([sys.executable, "-m", "treeplex.cli", "solve", str(bad)], capture_output=True, text=True)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "bad.efg:" in r.stderr


def test_depth_limited_subcommand_forwards_and_validates(capsys):
    code, _, err = run_cli(capsys, "depth-limited", "--bet", "-1")
    assert code == 2 and "--bet must be a positive pot fraction" in err


def test_missing_open_spiel_gives_install_hint(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel -> ImportError
    assert main(["solve", "openspiel:kuhn_poker"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "treeplex: error: OpenSpiel games need open_spiel: pip install 'treeplex[openspiel]'"
