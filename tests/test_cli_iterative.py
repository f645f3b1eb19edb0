"""The command line of the iterative solvers: traces, strategy files, plots, kill and resume."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import treeplex as tp
from treeplex.cli import main
from treeplex.run.driver import solve
from treeplex.io.profiles import load_profile
from treeplex.model.strategy import profile_dict


def run_cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def read_trace(path):
    with open(path) as f:
        meta = f.readline()
        return meta, list(csv.DictReader(f))


def test_solve_writes_trace_and_behavioral_strategy(tmp_path, capsys):
    trace, out = str(tmp_path / "run.csv"), str(tmp_path / "s.json")
    code, stdout, _ = run_cli(capsys, "solve", "leduc", "--algorithm", "pcfr+", "--max-iters", "500",
                              "--trace", trace, "--out", out, "--json", "--no-strategies")
    assert code == 0
    d = json.loads(stdout)
    assert d["algorithm"] == "pcfr+" and d["iterations"] == 500 and d["gradients"] == 1000
    assert abs(d["value"] - (-0.0856064)) <= d["gap"]  # Leduc's published value is within the gap
    meta, rows = read_trace(trace)
    assert meta.startswith("# ") and "algorithm=pcfr+" in meta and "game=leduc" in meta
    assert {"iteration", "gradients", "seconds", "gap_average", "gap_current"} <= set(rows[0])
    assert int(rows[-1]["iteration"]) == 500
    # the strategy file is behavioral, by infoset and action label, and is the reported profile
    p = tp.compile_game(tp.make_game("leduc"))
    with open(out) as f:
        strat = json.load(f)["strategies"]
    assert strat["player0"]["K:"].keys() == {"c", "r"}
    x, y = load_profile(out, p)
    assert tp.evaluate(p, x, y).gap == pytest.approx(d["gap"], abs=1e-12)


def test_default_algorithm_is_lp_without_a_stop_rule_else_pdcfr_plus(capsys):
    _, out, _ = run_cli(capsys, "solve", "kuhn", "--json", "--no-strategies")
    assert json.loads(out)["algorithm"] == "lp"
    _, out, _ = run_cli(capsys, "solve", "kuhn", "--max-iters", "10", "--json", "--no-strategies")
    assert json.loads(out)["algorithm"] == "pdcfr+"
    spot = "postflop(board=KsQh9d8c2s,pot=20,stack=30,bet=50%)"  # a poker spot: postflop-solver's schedule
    _, out, _ = run_cli(capsys, "solve", spot, "--range0", "AA,KK", "--range1", "QQ", "--max-iters", "10", "--json",
                        "--no-strategies")
    assert json.loads(out)["algorithm"] == "dcfr-ps"


def test_target_stops_at_the_gap(capsys):
    _, out, _ = run_cli(capsys, "solve", "kuhn", "--algorithm", "cfr+", "--target", "1e-3", "--json",
                        "--no-strategies")
    d = json.loads(out)
    assert d["stopped_by"] == "target" and d["gap"] <= 1e-3


def test_param_and_warm_start_flags(tmp_path, capsys):
    lp_out = str(tmp_path / "lp.json")
    assert run_cli(capsys, "solve", "kuhn", "--out", lp_out, "--no-strategies")[0] == 0
    code, out, _ = run_cli(capsys, "solve", "kuhn", "--algorithm", "dcfr", "--param", "alpha=2",
                           "--param", "alternating=false", "--warm-start", lp_out, "--max-iters", "1",
                           "--json", "--no-strategies")
    assert code == 0 and json.loads(out)["gap"] < 1e-9  # the first iterate played is the LP prior
    code, _, err = run_cli(capsys, "solve", "kuhn", "--algorithm", "dcfr", "--param", "alpah=2")
    assert code == 2 and "has no parameter 'alpah'" in err and err.count("\n") == 1


def test_plot_draws_a_png(tmp_path, capsys):
    paths = []
    for alg in ("cfr+", "egt"):
        paths.append(str(tmp_path / f"{alg}.csv"))
        assert run_cli(capsys, "solve", "kuhn", "--algorithm", alg, "--max-iters", "200", "--trace", paths[-1],
                       "--no-strategies")[0] == 0
    png = str(tmp_path / "conv.png")
    code, out, _ = run_cli(capsys, "plot", *paths, "-o", png, "--current")
    assert code == 0 and out.strip() == png
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    code, _, err = run_cli(capsys, "plot", str(tmp_path / "missing.csv"))
    assert code == 2 and "no such trace file" in err


def test_killed_run_resumes_to_the_same_iterates(tmp_path):
    # A real kill (SIGKILL) of `treeplex solve --checkpoint` mid-way, then --resume.
    n, every = 40000, 200
    ck, trace, out = str(tmp_path / "ck.npz"), str(tmp_path / "run.csv"), str(tmp_path / "s.json")
    args = ["solve", "leduc", "--algorithm", "cfr+", "--max-iters", str(n), "--check-every", str(every)]
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(tp.__file__))}
    proc = subprocess.Popen([sys.executable, "-m", "treeplex.cli", *args, "--checkpoint", ck, "--json",
                             "--no-strategies"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.time() + 120
    while not os.path.exists(ck) and proc.poll() is None and time.time() < deadline:
        time.sleep(0.005)
    time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with np.load(ck) as data:
        saved_at = json.loads(str(data["meta"]))["driver"]["trace"][-1]["iteration"]
    assert 0 < saved_at < n  # killed mid-way

    assert main([*args, "--resume", ck, "--trace", trace, "--out", out, "--json", "--no-strategies"]) == 0
    p = tp.compile_game(tp.make_game("leduc"))
    full = solve(p, "cfr+", max_iters=n, check_every=every)
    with open(out) as f:
        assert json.load(f)["strategies"] == profile_dict(p, full.x, full.y)
    _, rows = read_trace(trace)
    assert [float(r["gap_average"]) for r in rows] == [r["gap_average"] for r in full.trace]
    assert [float(r["gap_current"]) for r in rows] == [r["gap_current"] for r in full.trace]
    assert [int(r["gradients"]) for r in rows] == [r["gradients"] for r in full.trace]
