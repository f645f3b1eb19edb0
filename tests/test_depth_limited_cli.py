"""``python -m treeplex.depth_limited``: states the cost of a subgame solve; bad input exits 2."""

import json
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
])
def test_bad_input_is_one_line_exit_2(args, msg):
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    p = subprocess.run([sys.executable, "-m", "treeplex.depth_limited", "--game", GAME, *args]
                       if "--game" not in args else [sys.executable, "-m", "treeplex.depth_limited", *args],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 2 and msg in p.stderr and len(p.stderr.strip().splitlines()) == 1
