"""Issue 31, the items a second pass closed: time limits inside a lazy traversal, the
history estimate that refuses before it allocates, viewer files that would render blank,
the exact LP on large postflop spots, memory guards, and the Ray batch watchdog."""

import pytest

from test_hardening import refused


# ------------------------------------------------------------ 2. the history estimate stops early


class _Counted:
    """A rules game that counts the states it hands out."""

    def __init__(self, game):
        self.game, self.applied = game, 0

    def initial_state(self):
        return _CountedState(game=self, s=self.game.initial_state())


class _CountedState:
    def __init__(self, game, s):
        self.g, self.s = game, s

    def __getattr__(self, name):
        return getattr(self.s, name)

    def apply(self, a):
        self.g.applied += 1
        return _CountedState(self.g, self.s.apply(a))


def test_chess_history_estimate_stops_after_a_bounded_walk():
    pytest.importorskip("pyspiel")
    from treeplex.core.memory import PROBE_AFTER, count_histories
    from treeplex.games import load_game

    game = _Counted(load_game("openspiel:chess"))
    n, how = count_histories(game, cap=2**31 / 120)
    assert how == "about" and n > 1e100
    # the exact walk stopped at PROBE_AFTER visits, the random paths at their step cap
    assert game.applied <= PROBE_AFTER + 100_000


def test_chess_info_refused_from_the_estimate(capsys):
    pytest.importorskip("pyspiel")
    # was: grew to 4.7 GB (the walk's stack held ~30 states per depth) before refusing
    refused(capsys, "info", "openspiel:chess", "--max-memory", "2G",
            needle="openspiel:chess: about")


def test_exact_counts_unchanged_by_the_probe(monkeypatch):
    from treeplex import make_game
    from treeplex.core import memory
    from treeplex.model.compile import compile_game

    # the random paths, asked early, must not stop a count that is under the cap
    monkeypatch.setattr(memory, "PROBE_AFTER", 10)
    for spec in ("leduc(ranks=13,suited=True)", "kuhn", "leduc(ranks=5)"):
        g = make_game(spec)
        exact = compile_game(g).stats["histories"]
        n, how = memory.count_histories(g, cap=2 * exact)
        assert how == "exact" and n == pytest.approx(exact, rel=0.05), spec


# ------------------------------------------------------------ 1. --lazy honors --time-limit inside a traversal

BIG_TRAVERSAL = "openspiel:liars_dice(numdice=3)"  # ~19,000 nodes per iteration, well above TICK


def _cli(*argv, timeout=300, **kw):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.getcwd(), "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "treeplex.cli", *argv], capture_output=True, text=True,
                          timeout=timeout, env=env, **kw)


def test_lazy_time_limit_cuts_the_first_traversal():
    pytest.importorskip("pyspiel")
    r = _cli("solve", BIG_TRAVERSAL, "--lazy", "--time-limit", "0.001")  # timeout: the hang guard
    assert r.returncode == 0, r.stderr
    assert "stopped         time limit inside a traversal" in r.stdout and "(0 complete)" in r.stdout, r.stdout
    assert "quality         not estimated: time limit inside a traversal before the first iteration" in r.stdout
    r = _cli("solve", BIG_TRAVERSAL, "--lazy", "--time-limit", "0.001", "--json")
    import json

    d = json.loads(r.stdout)
    assert d["stopped_by"] == "time limit inside a traversal" and d["iterations"] == 0
    assert d["quality"]["measure"] == "none"


def test_a_cut_iteration_is_dropped():
    pytest.importorskip("pyspiel")
    import math

    from treeplex.games import load_game
    from treeplex.run.lazy_sampling import LazyMCCFR, Stopped

    a, b = LazyMCCFR(load_game(BIG_TRAVERSAL), seed=3), LazyMCCFR(load_game(BIG_TRAVERSAL), seed=3)
    a.deadline = -math.inf
    with pytest.raises(Stopped):
        a.step()
    assert a.iteration == 0 and a.nodes_touched == 0 and a.samples == 0
    a.deadline = None
    a.step()
    b.step()
    assert a.nodes_touched == b.nodes_touched
    for ta, tb in zip(a.tables, b.tables):  # the same regrets at every infoset the full iteration reached
        for key, j in tb.index.items():
            i = ta.index[key]
            assert list(ta.R[ta.start[i]:ta.end[i]]) == list(tb.R[tb.start[j]:tb.end[j]]), key
        assert not ta.v.any() and not ta.mark.any()


def test_lazy_ctrl_c_stops_like_the_time_limit():
    pytest.importorskip("pyspiel")
    import os
    import signal
    import subprocess
    import sys
    import time

    env = {**os.environ, "PYTHONPATH": os.getcwd(), "PYTHONUNBUFFERED": "1"}
    p = subprocess.Popen([sys.executable, "-m", "treeplex.cli", "solve", "openspiel:chess", "--lazy",
                          "--max-iters", "1000000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    try:
        assert p.stdout.readline().startswith("game            openspiel:chess")
        time.sleep(1.0)  # inside the first traversal (not a threshold: any moment after the header will do)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
    finally:
        p.kill()
    assert p.returncode == 0, err
    assert "stopped         interrupted" in out and "quality         not estimated: interrupted" in out, out


# ------------------------------------------------------------ 4. the exact LP is no default on big spots

README_SPOT = {"game": "postflop", "board": "Ah8d5c2s", "pot": 550, "stack": 1200,
               "range0": "99-22,A5s-A2s,K9s+,QTs+,87s,76s", "range1": "AA-TT,AJs+,KQs,AQo+",
               "sizes": {"turn": {"bet": "50%,a", "raise": "2.5x"},
                         "river": {"bet": "50%,125%,a", "raise": "100%,a", "donk": "33%"}},
               "add_allin_threshold": 1.5, "force_allin_threshold": 0.15}
SMALL_SPOT = "postflop(board=KsQhTd9c8s,pot=20,stack=30,bet=a)"


def test_docs_spot_is_above_the_lp_default(tmp_path):
    import json

    from treeplex.core.memory import LP_DEFAULT_NNZ, lp_default
    from treeplex.games import load_problem

    path = tmp_path / "spot.json"  # docs/guide/poker.md's spec: the exact LP took > 150 s and 2 GB
    path.write_text(json.dumps(README_SPOT))
    p = load_problem(str(path))
    ok, why = lp_default(p, None)
    assert p.A.nnz > LP_DEFAULT_NNZ and not ok and "--algorithm lp asks for it" in why


def test_no_stop_rule_on_a_big_spot_runs_iterative(capsys, monkeypatch):
    import json

    from test_hardening import run_cli
    from treeplex.core import memory

    code, out, _ = run_cli(capsys, "solve", SMALL_SPOT, "--range0", "AA,KK", "--range1", "QQ,JJ", "--json",
                           "--no-strategies")
    assert code == 0 and json.loads(out)["algorithm"] == "lp"  # small: still the exact LP by default
    monkeypatch.setattr(memory, "LP_DEFAULT_NNZ", 10)
    code, out, _ = run_cli(capsys, "solve", SMALL_SPOT, "--range0", "AA,KK", "--range1", "QQ,JJ", "--json",
                           "--no-strategies", "--max-iters", "1")
    assert code == 0 and json.loads(out)["algorithm"] == "dcfr-ps"  # a stop rule: iterative (a spot's default)
    code, out, _ = run_cli(capsys, "solve", SMALL_SPOT, "--range0", "AA,KK", "--range1", "QQ,JJ", "--json",
                           "--no-strategies")
    d = json.loads(out)
    assert code == 0 and d["algorithm"] == "dcfr-ps" and "the exact LP on" in d["note"], d.get("note")
    code, out, _ = run_cli(capsys, "solve", SMALL_SPOT, "--range0", "AA,KK", "--range1", "QQ,JJ", "--json",
                           "--no-strategies", "--algorithm", "lp")
    assert code == 0 and json.loads(out)["algorithm"] == "lp"  # asked for: still exact


# ------------------------------------------------------------ 5. memory guards: lazy tables, --out, view, NLFH


def test_lazy_tables_stop_before_passing_max_memory():
    pytest.importorskip("pyspiel")
    import json

    r = _cli("solve", BIG_TRAVERSAL, "--lazy", "--max-iters", "1000000", "--max-memory", "2M", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["stopped_by"] == "memory limit" and d["memory"]["bytes"] <= 2 * 2**20
    r = _cli("solve", BIG_TRAVERSAL, "--lazy", "--max-iters", "1000000", "--max-memory", "2M")
    assert "stopped         memory limit: the tables' next growth" in r.stdout and "above" not in r.stderr


FLOP = ["postflop(board=KsQhTd,pot=20,stack=30,bet=50%,raise=2x,deck=TJQKA)", "--range0", "JJ-TT,AK",
        "--range1", "AA-QQ,KQ"]  # tests/test_viewer.py's short-deck flop


def test_out_on_a_big_postflop_spot_is_refused_before_the_solve(capsys, tmp_path):
    out = tmp_path / "o.json"
    # 3 streets: 12,456 nodes x hands, about 150 MB of strategies; the spot itself fits 100M
    err = refused(capsys, "solve", *FLOP, "--max-iters", "3", "--out-streets", "3", "--out", str(out),
                  "--max-memory", "100M", needle="--out: 12,456 nodes with their hands' strategies need about")
    assert "save fewer streets (--out-streets)" in err and not out.exists()
    from test_hardening import run_cli

    code, _, _ = run_cli(capsys, "solve", *FLOP, "--max-iters", "3", "--out-streets", "2", "--out", str(out),
                         "--max-memory", "100M", "--no-strategies")
    assert code == 0 and out.exists()


def test_view_and_show_check_the_file_size_before_reading(capsys, tmp_path):
    from test_hardening import run_cli
    from treeplex.model.strategy import READ_BYTES_PER_FILE_BYTE

    sol = tmp_path / "s.json"
    assert run_cli(capsys, "solve", *FLOP, "--max-iters", "3", "--out", str(sol), "--no-strategies")[0] == 0
    limit = READ_BYTES_PER_FILE_BYTE * sol.stat().st_size - 1  # one byte short
    for argv in (["view", str(sol), "--html", str(tmp_path / "p.html")], ["show", str(sol)]):
        refused(capsys, *argv, "--max-memory", str(limit), needle="solution file needs about")
        assert run_cli(capsys, *argv, "--max-memory", str(limit + 1))[0] == 0


def test_nlfh_refused_from_its_estimate(capsys):
    # a rules NLFH goes through the same walk (check_compile): refused from the count, not after building
    err = refused(capsys, "info", "nlfh(ranks=6,suits=4,hole=2,flop=3,stack=2000)", "--max-memory", "1G",
                  needle="histories, about")
    assert "above 1 GB (--max-memory)" in err
