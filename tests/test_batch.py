"""treeplex batch / report / --flops: rows against direct solves, resume, failures, a SIGKILL of
the driver, flop counts from combinatorics, and the report against the stored solutions."""

import csv
import hashlib
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time

import numba
import pytest

import treeplex as tp
from treeplex.scale.batch import load_strategy, read_rows, run_batch, solver_version
from treeplex.cli import main
from treeplex.scale.flops import TEXTURES, flop_subset, texture, write_flop_specs
from treeplex.scale.report import write_report
from treeplex.model.strategy import profile_dict

FLOP = {"board": "KsQhTd", "pot": 20, "stack": 30, "deck": "TJQKA", "bet": "a",
        "range0": "AsKh,QdJd,TsTc", "range1": "AcAd,JsTs,KdQs"}
SPOTS = [
    {"game": "kuhn"},
    {"game": FLOP, "algorithm": "cfr+", "max_iters": 30},
    {"game": "postflop(board=KsQhTd,pot=20,stack=30,deck='TJQKA',bet='a')", "range0": "AsKh,QdJd,TsTc",
     "range1": "AcAd,JsTs,KdQs", "algorithm": "cfr+", "target": "2%pot", "weight": 3},
    {"game": "nosuchgame"},
]


def _write_specs(path, spots):
    path.write_text("".join(json.dumps(s) + "\n" for s in spots))
    return str(path)


def _hash(spec):
    return hashlib.sha256(json.dumps(spec, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    d = tmp_path_factory.mktemp("batch")
    specs = _write_specs(d / "specs.jsonl", SPOTS)
    db = str(d / "results.sqlite")
    counts = run_batch(specs, db, workers=2)
    return specs, db, counts


def _direct(spot):
    """The same spot solved here, without treeplex.scale.batch, on one thread as the workers (the
    threaded operator's partial sums change the iterates by rounding)."""
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return _solve_direct(spot)
    finally:
        numba.set_num_threads(threads)


def _solve_direct(spot):
    if isinstance(spot["game"], dict):
        game = tp.load_game("postflop", **{k: v for k, v in spot["game"].items()})
    else:
        game = tp.load_game(spot["game"], **{k: spot[k] for k in ("range0", "range1") if k in spot})
    p = game.problem()
    if "target" in spot:
        gap = 2 * float(spot["target"].rstrip("%pot")) / 100 * p.stats["pot"]
        res = tp.solve(p, spot["algorithm"], target_gap=gap)
    elif "max_iters" in spot:
        res = tp.solve(p, spot["algorithm"], max_iters=spot["max_iters"])
    else:
        res = tp.solve(p, "lp")
    return p, res


def test_rows_equal_direct_solves(batch):
    _, db, counts = batch
    assert (counts["done"], counts["failed"], counts["skipped"]) == (3, 1, 0)
    rows = {r["hash"]: r for r in read_rows(db)}
    assert len(rows) == 4
    for spot in SPOTS[:3]:
        row = rows[_hash(spot)]
        assert row["status"] == "done" and row["error"] is None
        assert json.loads(row["spec"]) == spot
        p, res = _direct(spot)
        assert row["value"] == pytest.approx(res.value, abs=1e-9)
        assert row["gap"] == pytest.approx(res.gap, abs=1e-9)
        assert row["exploitability"] == pytest.approx(res.gap / 2, abs=1e-9)
        assert row["iterations"] == res.iterations
        assert row["solver_version"] == solver_version() != "unknown"
        sol = load_strategy(row["strategy"])
        assert sol["value"] == pytest.approx(res.value, abs=1e-9)
        direct = p.solution(res.x, res.y)
        if "nodes" in direct:  # poker: per-hand strategy at every betting node
            assert [n["history"] for n in sol["nodes"]] == [n["history"] for n in direct["nodes"]]
            assert sol["nodes"][0]["frequencies"] == pytest.approx(direct["nodes"][0]["frequencies"], abs=1e-9)
            assert sol["nodes"][0]["hands"] == direct["nodes"][0]["hands"]
        else:
            assert sol["strategies"] == profile_dict(p, res.x, res.y) == direct["strategies"]


def test_failed_spot_is_recorded(batch):
    _, db, _ = batch
    row = next(r for r in read_rows(db) if r["hash"] == _hash(SPOTS[3]))
    assert row["status"] == "failed"
    assert "unknown game 'nosuchgame'" in row["error"] and "\n" not in row["error"]
    assert row["value"] is None and row["strategy"] is None


def test_resume_skips_done_spots(batch, tmp_path):
    specs, db, _ = batch
    again = run_batch(specs, db, workers=1)
    assert (again["done"], again["failed"], again["skipped"]) == (0, 1, 3)  # a failed spot is tried again
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*), COUNT(DISTINCT hash) FROM spots").fetchone() == (4, 4)


def test_report_equals_stored_solutions(batch, tmp_path):
    _, db, _ = batch
    text = write_report(db, str(tmp_path))
    assert "rainbow" in text and os.path.getsize(tmp_path / "report.png") > 0
    with open(tmp_path / "report.csv") as f:
        rows = {r["spot"]: r for r in csv.DictReader(f)}
    for spot in SPOTS[1:3]:
        row = rows[_hash(spot)[:12]]
        p, res = _direct(spot)
        root = p.strategy_dict(res.x, res.y)["nodes"][0]
        assert float(row["oop_ev"]) == pytest.approx(res.value + 10, abs=1e-6)  # value + pot/2
        assert float(row["oop_ev"]) == pytest.approx(root["range_ev"], abs=1e-6)
        assert float(row["ip_ev"]) == pytest.approx(10 - res.value, abs=1e-6)
        assert float(row["oop_equity"]) == pytest.approx(root["range_equity"], abs=1e-9)
        assert float(row["oop_equity"]) + float(row["ip_equity"]) == pytest.approx(1.0)
        assert float(row["freq_x"]) == pytest.approx(root["frequencies"][0], abs=1e-9)
        assert float(row["freq_b30"]) == pytest.approx(root["frequencies"][1], abs=1e-9)
        assert row["texture"] == "rainbow" and row["high_card"] == "K-high"
    assert rows[_hash(SPOTS[0])[:12]]["oop_ev"] == ""  # kuhn: no root EVs
    with open(tmp_path / "textures.csv") as f:
        rainbow = next(r for r in csv.DictReader(f) if r["class"] == "rainbow")
    a, b = (float(rows[_hash(s)[:12]]["oop_ev"]) for s in SPOTS[1:3])
    assert float(rainbow["oop_ev"]) == pytest.approx((1 * a + 3 * b) / 4)  # weighted by "weight"


def test_sigkill_of_the_driver_loses_and_duplicates_nothing(tmp_path):
    """Kill the driver once a spot is committed, rerun: every spot exactly once, the rows
    committed before the kill untouched."""
    spots = [{"game": "leduc", "algorithm": "cfr+", "max_iters": 3000 + i} for i in range(6)]
    specs = _write_specs(tmp_path / "specs.jsonl", spots)
    db = str(tmp_path / "r.sqlite")
    proc = subprocess.Popen([sys.executable, "-m", "treeplex.cli", "batch", specs, "--db", db, "--workers", "1",
                             "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        before = []
        for _ in range(1200):  # until a spot is committed (or the driver ended)
            if os.path.exists(db):
                try:
                    with sqlite3.connect(db) as c:
                        before = c.execute("SELECT hash, value, finished_at FROM spots").fetchall()
                except sqlite3.OperationalError:
                    before = []
            if before or proc.poll() is not None:
                break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the pool's workers, orphaned by the kill
        except ProcessLookupError:
            pass
    with sqlite3.connect(db) as c:
        at_kill = c.execute("SELECT hash, value, finished_at FROM spots").fetchall()
    assert 1 <= len(at_kill) < len(spots)
    counts = run_batch(specs, db, workers=2)
    assert counts["skipped"] == len(at_kill) and counts["done"] == len(spots) - len(at_kill)
    with sqlite3.connect(db) as c:
        after = c.execute("SELECT hash, value, finished_at FROM spots").fetchall()
        assert c.execute("SELECT COUNT(*) FROM spots WHERE status = 'done'").fetchone() == (len(spots),)
    assert sorted(h for h, _, _ in after) == sorted(_hash(s) for s in spots)
    assert set(at_kill) <= set(after)


def test_flop_counts():
    flops = flop_subset("all")
    assert len(flops) == 1755
    assert sum(w for _, w in flops) == math.comb(52, 3)
    c = math.comb(13, 3)
    expected = {"paired": 13 * 12 * 2 + 13, "monotone": c, "two-tone": 3 * c, "rainbow": c}
    counts = {t: len(flop_subset(t)) for t in TEXTURES}
    assert counts == expected and sum(counts.values()) == 1755
    assert sum(len(flop_subset(f"{r}-high")) for r in "AKQJT98765432") == 1755
    assert texture("Kh7d2c") == "rainbow" and texture("7s7h2d") == "paired" and texture("QsJs2h") == "two-tone"


def test_spot_sizes_and_the_order_of_a_pool():
    """spot_size counts the boards the public tree deals (suit isomorphisms included); a pool
    takes spots of unknown size first, then the largest."""
    from treeplex.scale.batch import Spot, longest_first, spot_size
    from treeplex.poker.postflop import PostflopGame

    for board in ("KsQhTd", "KsKhTd", "KsQsTs", "KsQhTdJc"):
        spec = {"game": {**FLOP, "board": board, "range1": "AA,JsTs,KdQs"}}
        game = PostflopGame(**spec["game"])
        assert spot_size(spec) == sum(len(h) for h in game.hands) * len(game.tree.boards)
    assert spot_size(SPOTS[2]) == spot_size({"game": FLOP})  # the postflop(...) name and its overrides
    assert spot_size({"game": "kuhn"}) is None and spot_size({"game": {"board": "Xx"}}) is None
    spots = [Spot(i, s, str(i)) for i, s in enumerate([{"game": {**FLOP, "board": "KsQhTdJc"}}, SPOTS[0],
                                                        {"game": FLOP}, SPOTS[3]])]
    assert [s.line for s in longest_first(spots)] == [1, 3, 2, 0]


def test_flop_specs_from_template(tmp_path):
    template = tmp_path / "t.json"
    template.write_text(json.dumps({"game": "postflop", **FLOP, "board": "2c3c4c"}))
    out = tmp_path / "flops.jsonl"
    assert write_flop_specs("monotone", str(template), str(out)) == math.comb(5, 3)  # deck TJQKA: 5 ranks
    lines = [json.loads(t) for t in out.read_text().splitlines()]
    assert all(texture(s["game"]["board"]) == "monotone" and s["weight"] == 4 for s in lines)
    assert {k: v for k, v in lines[0]["game"].items() if k != "board"} == {k: v for k, v in FLOP.items()
                                                                            if k != "board"}


def test_cli_errors_are_one_line(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"game": "kuhn"}\n{"game": "kuhn", "iters": 3}\n')
    assert main(["batch", str(bad), "--db", str(tmp_path / "r.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 2: unknown keys ['iters']" in err
    good = _write_specs(tmp_path / "good.jsonl", [{"game": "kuhn"}])
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    assert main(["batch", good, "--db", str(tmp_path / "r.sqlite"), "--parquet", str(tmp_path / "pq")]) == 2
    assert "needs pyarrow" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "none.sqlite")]) == 2
    assert main(["batch", "--flops", "striped", "--template", str(bad), "-o", str(tmp_path / "o.jsonl")]) == 2


def test_parquet_table(batch, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    specs, db, _ = batch
    run_batch(specs, db, workers=1, parquet=str(tmp_path))
    table = pq.read_table(tmp_path / "spots.parquet").to_pylist()
    assert sorted(r["hash"] for r in table) == sorted(r["hash"] for r in read_rows(db))


def test_ray_engine_on_a_local_cluster(tmp_path):
    pytest.importorskip("ray")
    spots = SPOTS[:2]
    db = str(tmp_path / "r.sqlite")
    counts = run_batch(_write_specs(tmp_path / "s.jsonl", spots), db, engine="ray", workers=2)
    assert (counts["done"], counts["failed"]) == (2, 0)
    rows = {r["hash"]: r for r in read_rows(db)}
    for spot in spots:
        _, res = _direct(spot)
        assert rows[_hash(spot)]["value"] == pytest.approx(res.value, abs=1e-9)


# ------------------------------------------------------------------ the per-spot watchdog (issue 31, High 3)

CLI = [sys.executable, "-m", "treeplex.cli"]
ENV = {**os.environ, "PYTHONPATH": os.getcwd()}


def _workers_of(pid: int) -> list[int]:
    """The spawn worker processes whose parent is ``pid`` (not the resource tracker)."""
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    cmd = f.read()
            except (OSError, IndexError, ValueError):
                continue
            if ppid == pid and b"spawn_main" in cmd:
                found.append(int(d))
    return found


def test_a_spot_past_its_wall_clock_limit_fails_and_the_batch_goes_on(tmp_path):
    """A spot that would run for ever (10^9 CFR iterations, no time_limit) is ended at
    --spot-time-limit and recorded failed with one line; the other worker's spot is solved."""
    specs = _write_specs(tmp_path / "s.jsonl", [{"game": "leduc", "algorithm": "cfr", "max_iters": 10**9},
                                                {"game": "kuhn"}])
    db = str(tmp_path / "r.sqlite")
    out = subprocess.run(CLI + ["batch", specs, "--db", db, "--workers", "2", "--spot-time-limit", "15"],
                         capture_output=True, text=True, timeout=600, env=ENV)
    assert out.returncode == 0, out.stderr
    rows = {json.loads(r["spec"])["game"]: r for r in read_rows(db)}
    assert rows["kuhn"]["status"] == "done" and abs(rows["kuhn"]["value"] + 1 / 18) < 1e-6
    assert rows["leduc"]["status"] == "failed" and "wall-clock limit of 15 s" in rows["leduc"]["error"]
    assert "line 1: ran past its wall-clock limit" in out.stderr and "1 solved, 1 failed" in out.stdout


def test_killing_one_worker_fails_only_its_spot(tmp_path):
    """SIGKILL of one of two busy workers (as the kernel's OOM killer would): its spot is
    failed as 'the worker died', the other worker's spot is solved, the driver exits 0."""
    specs = _write_specs(tmp_path / "s.jsonl", [{"game": "leduc", "algorithm": a, "time_limit": 10}
                                                for a in ("cfr", "cfr+")])
    db = str(tmp_path / "r.sqlite")
    proc = subprocess.Popen(CLI + ["batch", specs, "--db", db, "--workers", "2", "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        for _ in range(1200):
            workers = _workers_of(proc.pid)
            if len(workers) == 2 or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert len(workers) == 2
        os.kill(workers[0], signal.SIGKILL)
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    status = sorted((r["status"], r["error"] or "") for r in read_rows(db))
    assert [s for s, _ in status] == ["done", "failed"]
    assert "the worker died (killed by signal 9" in status[1][1]
    assert "1 solved, 1 failed" in out


def test_spot_time_limit_arguments(tmp_path, capsys):
    specs = _write_specs(tmp_path / "s.jsonl", [{"game": "kuhn"}])
    for bad in ("0", "-1", "inf", "nan"):
        assert main(["batch", specs, "--db", str(tmp_path / "r.sqlite"), "--spot-time-limit", bad]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--spot-time-limit must be a positive number" in err
    assert not os.path.exists(tmp_path / "r.sqlite")


def test_flop_template_by_name_keeps_pot_stack_and_sizes(tmp_path):
    """A batch line whose game is a postflop(...) name: every key but the board is kept (pot,
    stack and sizes used to be dropped, so every spot failed), and the specs solve."""
    name = "postflop(board=2c3c4c,pot=20,stack=30,deck='TJQKA',bet='50%',raise='2x')"
    template = tmp_path / "t.json"
    template.write_text(json.dumps({"game": name, "range0": FLOP["range0"], "range1": FLOP["range1"],
                                    "algorithm": "cfr+", "max_iters": 5}))
    out = tmp_path / "flops.jsonl"
    assert write_flop_specs("monotone", str(template), str(out)) == math.comb(5, 3)
    lines = [json.loads(t) for t in out.read_text().splitlines()]
    want = {"pot": 20, "stack": 30, "deck": "TJQKA", "bet": "50%", "raise": "2x"}
    assert all({k: s["game"][k] for k in want} == want and s["max_iters"] == 5 for s in lines)
    with open(out) as f:
        one = tmp_path / "one.jsonl"
        one.write_text(f.readline())
    c = run_batch(str(one), str(tmp_path / "r.sqlite"), workers=1)
    assert c["done"] == 1, c["errors"]


@pytest.mark.parametrize("template, needle", [
    ({"game": "postflop", "board": "2c3c4c", "stack": 30}, "no pot"),
    ({"board": "2c3c4c"}, "no pot and no stack"),
    ({"game": "postflop(board=2c3c4c,pot=20)"}, "no stack"),
    ({"game": "leduc", "pot": 3}, "must be a postflop spec")])
def test_flop_template_without_pot_or_stack_is_refused(tmp_path, capsys, template, needle):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(template))
    assert main(["batch", "--flops", "monotone", "--template", str(path), "-o", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err


@pytest.mark.parametrize("line, needle", [
    ('{"game": "kuhn", "range0": "\\ud800"}', "a string holds a lone surrogate escape"),
    ('{"game": "kuhn", "weight": -3}', "weight must be >= 0, got -3"),
    ('{"game": "kuhn", "max_iters": -5}', "max_iters must be >= 1"),
    ('{"game": "kuhn", "time_limit": 0}', "time_limit must be > 0")])
def test_bad_spot_values_are_refused(tmp_path, capsys, line, needle):
    specs = tmp_path / "s.jsonl"
    specs.write_text(line + "\n")
    assert main(["batch", str(specs), "--db", str(tmp_path / "r.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "s.jsonl line 1: " + needle in err


def test_report_refuses_a_corrupt_strategy_blob(tmp_path, capsys):
    db = str(tmp_path / "r.sqlite")
    run_batch(_write_specs(tmp_path / "s.jsonl", [{"game": "kuhn"}]), db, workers=1)
    with sqlite3.connect(db) as c:
        c.execute("UPDATE spots SET strategy = x'00112233'")
    assert main(["report", db]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "its stored strategy is corrupt" in err
