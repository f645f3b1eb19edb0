"""Cold and warm start of the ``treeplex`` command, in a fresh virtual environment.

    python benchmarks/cold_start.py                 # new venv in a temp dir (pip install of this checkout)
    python benchmarks/cold_start.py --venv DIR      # reuse DIR (created and installed on first use)
    python benchmarks/cold_start.py --here          # this interpreter and checkout, numba's cache in a temp dir

Every "first" run starts with numba's cache of the installed package emptied (what a fresh
install has); "warm" runs follow it. Each run is its own process, timed by wall clock from
spawn to exit, with its CPU time and peak resident memory (``wait4``: CPU time is the
steadier figure on a shared machine); ``seconds`` and ``jit_seconds``
come from the command's own ``--json`` output. The table compares with issue 14's targets:

- first ``treeplex solve leduc --algorithm cfr+ --max-iters 1000``: <= 1.5 s wall;
- first README river solve: <= 2x the warm one;
- first README postflop solve: <= 2x the warm one (issue 26, item 6);
- warm ``treeplex solve kuhn`` and a small river spot: <= 0.3 s wall.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LEDUC = ["solve", "leduc", "--algorithm", "cfr+", "--max-iters", "1000"]
RIVER = ["solve", "river(pot=2100,board=Qs9h7d4c2s,abstraction=libratus)", "--range0", "22+,A2s+,KTs+,ATo+",
         "--range1", "TT-22,A9s-A2s,KQs,QJs,JTs", "--algorithm", "cfr+", "--target", "1mbb"]
SPOT = ["solve", "river(pot=1000,board=KsQd7h4c2s,abstraction=fcpa)", "--range0", "AA,KK,QQ,AKs,76s",
        "--range1", "JJ,TT,AQs,KQs,98s", "--algorithm", "cfr+", "--target", "1%pot"]
KUHN = ["solve", "kuhn"]
POSTFLOP = ["solve", "postflop(board=QsJh2h8c,pot=180,stack=910,bet=52%,raise=2.5x)", "--range0", "66+,AJo+",
            "--range1", "QQ-22,ATo+", "--target", "0.5%pot", "--out", "turn.json"]


def make_venv(path: str) -> str:
    """``path``/bin/treeplex, creating the venv and installing this checkout if needed."""
    exe = os.path.join(path, "bin", "treeplex")
    if not os.path.exists(exe):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "venv", path], check=True)
        subprocess.run([os.path.join(path, "bin", "pip"), "install", "-q", REPO], check=True)
        print(f"venv {path}: created and installed in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return exe


def clear_jit_cache(root: str) -> int:
    """Delete numba's cache files below ``root`` (a glob: the installed treeplex, or numba's
    cache folder); returns how many."""
    files = [f for ext in ("nbi", "nbc") for f in glob.glob(f"{root}/**/*.{ext}", recursive=True)]
    for f in files:
        os.remove(f)
    return len(files)


def run(exe: list[str], args: list[str], env=None) -> dict:
    """Wall seconds, peak RSS (MB) and the --json fields of one process (``exe``: the command)."""
    json_args = args + ["--json", "--no-strategies"] if args[0] == "solve" else args
    t0 = time.perf_counter()
    p = subprocess.Popen([*exe, *json_args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         cwd=tempfile.gettempdir(), env=env)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise RuntimeError(f"{' '.join(args)} failed (status {status})")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024, **json.loads(out)}


def row(label, r, target=""):
    print(f"| {label} | {r['wall']:.2f} s | {r['cpu']:.2f} s | {r.get('seconds', 0):.3f} s | "
          f"{r.get('jit_seconds', 0):.2f} s | {r['rss_mb']:.0f} MB | {target} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv", default=None, help="virtual environment to use (created if missing); default: a new temp one")
    ap.add_argument("--repeat", type=int, default=3, help="warm runs per command (median reported)")
    ap.add_argument("--no-river", action="store_true", help="skip the README river solve")
    ap.add_argument("--no-postflop", action="store_true", help="skip the README postflop solve (the longest)")
    ap.add_argument("--here", action="store_true",
                    help="run this checkout with this interpreter, numba's cache in a temp dir, instead of a venv")
    args = ap.parse_args()
    venv = args.venv or tempfile.mkdtemp(prefix="treeplex-cold-")
    if args.here:  # this checkout first on the path, numba's cache in the temp dir
        env, cache = dict(os.environ, PYTHONPATH=REPO, NUMBA_CACHE_DIR=venv), venv
        exe = [sys.executable, "-m", "treeplex.cli"]
    else:
        env, exe, cache = None, [make_venv(venv)], f"{venv}/lib/python*/site-packages/treeplex"

    def warm(cmd):
        runs = [run(exe, cmd, env) for _ in range(args.repeat)]
        return min(runs, key=lambda r: abs(r["wall"] - statistics.median(x["wall"] for x in runs)))

    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; venv {venv}\n")
    print("| run | wall (process) | CPU (process) | seconds (solve) | jit_seconds | peak RSS | target |")
    print("|---|---|---|---|---|---|---|")
    n = clear_jit_cache(cache)
    first = run(exe, LEDUC, env)
    row(f"first `{' '.join(LEDUC)}` (cache emptied: {n} files)", first,
        f"≤ 1.5 s wall: {'met' if first['wall'] <= 1.5 else 'not met'}")
    row("  same, warm", warm(LEDUC))
    w = warm(KUHN)
    row("warm `treeplex solve kuhn`", w, f"≤ 0.3 s wall: {'met' if w['wall'] <= 0.3 else 'not met'}")
    w = warm(SPOT)
    row("warm small river spot (fcpa, 5 hands each)", w, f"≤ 0.3 s wall: {'met' if w['wall'] <= 0.3 else 'not met'}")
    for name, cmd, skip in (("river", RIVER, args.no_river), ("postflop", POSTFLOP, args.no_postflop)):
        if skip:
            continue
        clear_jit_cache(cache)
        first = run(exe, cmd, env)
        w = warm(cmd)
        ratio = first["wall"] / w["wall"]
        row(f"first README {name} solve (cache emptied)", first,
            f"≤ 2x warm: {ratio:.1f}x, {'met' if ratio <= 2 else 'not met'}")
        row("  same, warm", w)
    if args.venv is None:
        shutil.rmtree(venv, ignore_errors=True)


if __name__ == "__main__":
    main()
