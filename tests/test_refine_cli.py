"""``treeplex solve --refine efpe --xi XI`` and ``--infoset-regret``.

Expected numbers by hand: in Kuhn at xi = 0.01 the largest infoset regret of the exact
perturbed equilibrium is player 1's with K facing a bet, forced to fold with 0.01: folding
loses 1 where calling wins 2, so 0.01 * 3. In the threat game (tests/test_infoset_regret.py)
the plain LP concedes (regret 5) and the refined solution's largest regret is player 0's
xi (6 - 5 xi) (tests/test_efpe.py).
"""

import json

import pytest
from test_infoset_regret import threat_game

from treeplex.cli import main
from treeplex.io.efg import write_efg


def run_cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_refine_efpe_json_and_text(capsys):
    code, out, _ = run_cli(capsys, "solve", "kuhn", "--refine", "efpe", "--xi", "0.01", "--json", "--no-strategies")
    assert code == 0
    d = json.loads(out)
    assert d["refine"] == "efpe" and d["xi"] == 0.01 and d["algorithm"] == "lp/efpe"
    assert d["gap_perturbed"] == pytest.approx(0.0, abs=1e-9)
    assert d["gap"] > 1e-3  # the perturbed equilibrium is not an equilibrium of the unperturbed game
    assert d["max_infoset_regret"] == pytest.approx(0.03, abs=1e-9)
    assert d["max_infoset_regret_at"] == {"player": 1, "infoset": "K:b"}
    assert "infoset_regrets" not in d
    code, out, _ = run_cli(capsys, "solve", "kuhn", "--refine", "efpe", "--algorithm", "cfr+", "--max-iters", "300",
                           "--no-strategies")
    assert code == 0 and "unperturbed game" in out and "infoset regret  max" in out


def test_infoset_regret_flag_on_plain_and_refined_runs(capsys, tmp_path):
    path = tmp_path / "threat.efg"
    write_efg(threat_game(), str(path))
    _, out, _ = run_cli(capsys, "solve", str(path), "--json", "--infoset-regret")
    plain = json.loads(out)
    assert plain["gap"] == pytest.approx(0.0, abs=1e-9)
    assert plain["max_infoset_regret"] == pytest.approx(5.0)  # HiGHS's vertex concedes: 5 given up
    assert len(plain["infoset_regrets"]) == 2
    _, out, _ = run_cli(capsys, "solve", str(path), "--json", "--infoset-regret", "--refine", "efpe")
    refined = json.loads(out)
    assert refined["max_infoset_regret"] == pytest.approx(0.01 * (6 - 5 * 0.01), abs=1e-9)
    assert refined["strategies"]["player1"]["1:P1"]["punish"] == pytest.approx(0.99, abs=1e-9)


@pytest.mark.parametrize("argv, message", [
    (["kuhn", "--xi", "0.1"], "--xi needs --refine efpe"),
    (["kuhn", "--refine", "efpe", "--xi", "0.5"], "infoset 'J:' (2 actions): n*xi = 2*0.5 = 1 >= 1"),
    (["kuhn", "--refine", "efpe", "--algorithm", "mirror-prox"], "not 'mirror-prox'"),
    (["kuhn", "--refine", "efpe", "--algorithm", "cfr+", "--restart", "--max-iters", "5"], "does not support --restart"),
])
def test_refine_errors(capsys, argv, message):
    code, _, err = run_cli(capsys, "solve", *argv)
    assert code == 2 and message in err and err.count("\n") == 1
