"""``python -m treeplex.depth_limited``: states the cost of a subgame solve; bad input exits 2."""

import json
import math
import os
import subprocess
import sys

import pytest

from treeplex.depth_limited.__main__ import main

GAME = "nlfh(ranks=3, suits=2, hole=1, flop=1, stack=1000)"


def test_cost_report(capsys):
    assert main(["--game", GAME, "--bet", "0.75", "--method", "bias", "--k", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # the cost of the solve is stated: time, size and the leaf-table memory (k x leaf states x 8 B
    # for the subgame's own table)
    assert out["depth_limited_solve_seconds"] > 0 and out["depth_limited_histories"] > 0
    leaves, k = (int(v) for v in out["leaf_states_x_k"].split(" x "))
    assert k == 2 and out["subgame_leaf_table_bytes"] > 0
    assert out["leaf_table_bytes_all_leaves"] % (2 * 8) == 0
    assert out["exploitability_mbb"] >= 0.0


@pytest.mark.parametrize("args,msg", [
    (["--bet", "1"], "in the abstraction"),
    (["--at", "c,x"], "nobody acts"),
    (["--game", "kuhn"], "nlfh"),
    (["--at", "zz"], "unknown action"),
    (["--round2-iters", "0"], "--round2-iters: only on"),  # it was silently ignored
    (["--round2-warm", "10"], "--round2-warm: only on"),
    (["--round2-budget", "10"], "--round2-budget: only on"),
    (["--round2-target-mbb", "1"], "--round2-target-mbb: only on"),
    (["--blueprint", "lp", "--exact"], "--blueprint, --exact: only on"),
    (["--round2", "none"], "--round2 none: the nlfh(...) games solve the second round"),
    (["--round2", "maxmargin"], "none and maxmargin are for --game"),
])
def test_bad_input_is_one_line_exit_2(args, msg):
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    p = subprocess.run([sys.executable, "-m", "treeplex.depth_limited", "--game", GAME, *args]
                       if "--game" not in args else [sys.executable, "-m", "treeplex.depth_limited", *args],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 2 and msg in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_readme_command_on_a_small_deck():
    """The README's ``treeplex depth-limited --bet 0.75 --k 8`` (it crashed on main, issue 27),
    on a 4-rank deck. The response only changes play after the off-tree bet, which the
    blueprint never makes: the bettor's best response in the game with the bet is at least
    its best response in the abstraction, and the responder's against the blueprint is the
    same, so the printed exploitability is at least the blueprint's (both gap / 2, mbb/g)."""
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    game = "nlfh(ranks=4, suits=2, hole=1, flop=1, stack=1000)"
    p = subprocess.run([sys.executable, "-m", "treeplex.cli", "depth-limited", "--bet", "0.75", "--k", "8",
                        "--game", game], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    out = dict(line.split(None, 1) for line in p.stdout.splitlines())
    assert out["off_tree_bet"].startswith("p0.75 at ''")
    assert out["leaf_states_x_k"].endswith(" x 8")
    e, bp = float(out["exploitability_mbb"]), float(out["blueprint_mbb"])
    assert 0.0 <= bp <= 1.0  # compute_blueprint's target
    assert math.isfinite(e) and e >= bp - 1e-3  # both printed to 4 decimals
