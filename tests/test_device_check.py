"""``benchmarks/device_check.sh`` (issue 30's device run) at small sizes where this machine
is: it must finish with status 0, write its logs and the benchmark's table and JSON into OUT,
and skip the device parts cleanly when there is no device; a broken interpreter fails it
loudly."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "device_check.sh")


def _run(tmp_path, **env):
    e = dict(os.environ, OUT=str(tmp_path / "out"), WHEELS=str(tmp_path / "no-wheels"), PYTHON=sys.executable,
             TOTAL="90", GAMES="leduc", SPOTS="RIVER-N30", SWEEP="", LIMIT="1", BLOCK="0.05", TEST_TIMEOUT="60")
    e.update(env)
    return subprocess.run(["bash", SCRIPT], capture_output=True, text=True, env=e, timeout=300)


def test_device_check_runs_and_writes_its_results(tmp_path):
    r = _run(tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = tmp_path / "out"
    assert {"tests.log", "bench.log", "gpu.md", "gpu.json"} <= set(os.listdir(out))
    data = json.loads((out / "gpu.json").read_text())
    rows = {(x["problem"], x.get("runner"), x.get("dtype")): x for x in data["rows"]}
    for problem in ("leduc", "RIVER-N30"):
        assert rows[problem, "numba", "float64"]["ms_per_iter"] > 0
    try:
        import cupy

        has_gpu = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        has_gpu = False
    if not has_gpu:
        assert rows["leduc", "gpu", "float64"]["skipped"] == "no GPU"
        assert "skipped: no GPU" in (out / "gpu.md").read_text()
        assert "skipped" in (out / "tests.log").read_text()


@pytest.mark.parametrize("env, status", [({"PYTHON": "false"}, 4), ({"OUT": ""}, 1)])
def test_device_check_fails_loudly(tmp_path, env, status):
    r = _run(tmp_path, **env)
    assert r.returncode == status
    assert "FAILED" in r.stdout or "OUT" in r.stderr
