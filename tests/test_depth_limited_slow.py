"""The Figure-1 experiment end to end on the small member (slow: TREEPLEX_SLOW=1, ~3 minutes).

The paper (Brown, Sandholm & Amos 2018, Figure 1) saw: one state value is worse than RPAT;
more values are better than RPAT. We assert what our run reproduces (see the report for what
it does not): k = 1 is worse than RPAT, k = 16 self-generative values beat RPAT, and the safe
subgame solved to the end after the bet (the exact best response-minimizing subtree strategy)
bounds every method from below.
"""

import json
import os
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_figure1_small_member(tmp_path):
    root = os.path.dirname(os.path.dirname(__file__))
    subprocess.run([sys.executable, os.path.join(root, "experiments", "depth_limited_nlfh.py"), "--k", "1", "16",
                    "--arena-pairs", "0", "--out", str(tmp_path)], check=True, cwd=root)
    r = json.load(open(tmp_path / "results.json"))
    dl = {(row["method"], row["k"]): row["exploitability_mbb"] for row in r["rows"]}
    assert r["blueprint_mbb"] < 1.0
    assert dl[("self-generative", 1)] > r["rpat_mbb"] and dl[("bias", 1)] > r["rpat_mbb"]
    assert dl[("self-generative", 16)] < r["rpat_mbb"]
    assert all(r["solve_to_end_mbb"] <= v + 1e-6 for v in list(dl.values()) + [r["rpat_mbb"]])


@pytest.mark.slow
def test_offtree_sweep_near_allin_does_not_lose_to_rpat(tmp_path):
    # The off-tree sweep's second bracket near all-in (6, 12, 20 pot; all-in = 24.5 pot) with
    # the plain average and k = 8 self-generative values: before the round-2 gifts the 12-pot
    # response was 15.73 mbb/g against RPAT's 1.00; with them every size is at or below RPAT.
    root = os.path.dirname(os.path.dirname(__file__))
    subprocess.run([sys.executable, os.path.join(root, "experiments", "offtree_sweep.py"), "--sizes", "6", "12", "20",
                    "--k", "8", "--weightings", "average", "--out", str(tmp_path)], check=True, cwd=root)
    rows = json.load(open(tmp_path / "sweep.json"))["rows"]
    assert [r["size"] for r in rows] == [6, 12, 20]
    assert all(r["dl"]["average k=8"] <= r["rpat"] + 0.01 for r in rows), rows
