"""The Ray paths from the CLI on one local 2-CPU cluster: a batch, its report, and one spot
split across actors. Skipped without Ray; CI installs it (extra ``distributed``) and runs
this file in a second step of ``.ci/run``, after the README's test command."""

from __future__ import annotations

import json

import pytest

ray = pytest.importorskip("ray")

from test_batch import SPOTS, _write_specs  # noqa: E402
from test_split import SPEC  # noqa: E402

from treeplex.cli import main  # noqa: E402
from treeplex.scale.split import SplitSolver  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """One local cluster of 2 CPUs for the module (each engine uses a running cluster and
    leaves it running)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


def test_batch_and_report_on_ray(tmp_path, capsys):
    db = str(tmp_path / "r.sqlite")
    specs = _write_specs(tmp_path / "s.jsonl", SPOTS)
    assert main(["batch", specs, "--db", db, "--engine", "ray", "--workers", "2"]) == 0
    capsys.readouterr()
    assert main(["batch", specs, "--db", db, "--engine", "ray", "--workers", "2"]) == 0  # resumed: all skipped
    assert main(["report", db, "-o", str(tmp_path / "rep")]) == 0
    out = capsys.readouterr().out
    assert "postflop" in out or "KsQhTd" in out
    assert (tmp_path / "rep").is_dir() and any((tmp_path / "rep").iterdir())


def test_split_solve_on_ray_actors_equals_local(tmp_path, capsys):
    path = tmp_path / "spot.json"
    path.write_text(json.dumps({"game": "postflop", **SPEC}))
    assert main(["split-solve", str(path), "--workers", "2", "--engine", "ray", "--max-iters", "5", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    local = SplitSolver(SPEC, 2, engine="local")
    for _ in range(5):
        local.step()
    assert res["iterations"] == 5 and res["gap"] == local.evaluate().gap
    assert ray.is_initialized()  # the engine used the running cluster and left it


def test_a_spot_past_its_wall_clock_limit_fails_on_ray_too(tmp_path, capsys):
    """issue 31: --spot-time-limit on the Ray engine: a spot that would run for ever (10^9 CFR
    iterations) is cancelled at its limit (ray.cancel(force=True)) and recorded failed with one
    line; the other spot is solved and the batch exits 0."""
    from treeplex.scale.batch import read_rows

    specs = _write_specs(tmp_path / "s.jsonl", [{"game": "leduc", "algorithm": "cfr", "max_iters": 10**9},
                                                {"game": "kuhn"}])
    db = str(tmp_path / "r.sqlite")
    assert main(["batch", specs, "--db", db, "--engine", "ray", "--workers", "2", "--spot-time-limit", "20"]) == 0
    out, err = capsys.readouterr()
    rows = {json.loads(r["spec"])["game"]: r for r in read_rows(db)}
    assert rows["kuhn"]["status"] == "done" and abs(rows["kuhn"]["value"] + 1 / 18) < 1e-6
    assert rows["leduc"]["status"] == "failed"
    assert "wall-clock limit of 20 s (its Ray task was cancelled)" in rows["leduc"]["error"]
    assert "1 solved, 1 failed" in out
