"""Postflop spots of the multi-street engine, timed as a user runs them: one CLI process each.

    .venv/bin/python benchmarks/postflop.py                        # RIVER and TURN
    .venv/bin/python benchmarks/postflop.py --spots RIVER,TURN,FLOP-FAST --threads 2,1

Each spot is solved with DCFR (the poker default, as in postflop-solver) to exploitability
<= 0.3% of the starting pot (exploitability = gap / 2; poker solvers' unit: gap / 2 / pot).
From the run's trace it reports the solver seconds and iterations where exploitability first
fell to <= 0.5% and to <= 0.3% of the pot (checks are every few iterations, so this is the
first *checked* iteration below), the time per iteration, the process's wall time (start-up,
numba compile or cache load, tree building, solve, gap checks, output) and its peak memory.

The anchor is postflop-solver (Rust, DCFR), measured on a 24-thread i7-13700K by a public
benchmark note: RIVER 0.004 s, TURN 0.168 s and 32 MB, FLOP-FAST 11.4 s and 0.97 GB,
FLOP-FULL 41.5 s and 3.8 GB, all to 0.5% pot. No postflop-solver installs from a package
registry here, so it cannot run in the same table; its numbers are quoted, not measured.
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

OOP_WIDE = "JJ-22,AJs-A2s,K2s+,Q2s+,J2s+,T4s+,95s+,84s+,74s+,63s+,53s+,43s,AQo-A2o,K5o+,Q7o+,J8o+,T8o+,98o,87o"
IP_WIDE = "22+,A2s+,K2s+,Q2s+,J4s+,T6s+,96s+,86s+,75s+,65s,54s,A2o+,K8o+,Q9o+,J9o+,T9o"
OOP_FLOP = "66+,A8s+,A5s-A4s,AJo+,K9s+,KQo,QTs+,JTs,96s+,85s+,75s+,65s,54s"
IP_FLOP = "QQ-22,AQs-A2s,ATo+,K5s+,KJo+,Q8s+,J8s+,T7s+,96s+,86s+,75s+,64s+,53s+"

SPOTS = {
    "RIVER": ({"game": "postflop", "board": "Td9d6hQc2s", "pot": 100, "stack": 100, "range0": OOP_WIDE,
               "range1": IP_WIDE, "bet": "33%,75%,a", "raise": "2.5x"}, "0.004 s, 50 it"),
    "TURN": ({"game": "postflop", "board": "Td9d6hQc", "pot": 60, "stack": 140, "range0": OOP_WIDE,
              "range1": IP_WIDE, "bet": "33%,75%", "raise": "2.5x", "add_allin_threshold": 1.5,
              "force_allin_threshold": 0.15}, "0.168 s, 60 it, 32 MB"),
    "FLOP-FAST": ({"game": "postflop", "board": "QsJh2h", "pot": 180, "stack": 910, "range0": OOP_FLOP,
                   "range1": IP_FLOP, "bet": "52%", "raise": "2.5x", "add_allin_threshold": 1.0,
                   "force_allin_threshold": 0.15}, "11.4 s, 80 it, 0.97 GB"),
    "FLOP-FULL": ({"game": "postflop", "board": "QsJh2h", "pot": 180, "stack": 910, "range0": OOP_FLOP,
                   "range1": IP_FLOP, "bet": "33%,75%", "raise": "2.5x", "add_allin_threshold": 1.0,
                   "force_allin_threshold": 0.15}, "41.5 s, 3.8 GB"),
}

WRAP = ("import resource, subprocess, sys, time; t = time.perf_counter(); r = subprocess.run(sys.argv[1:]); "
        "print(r.returncode, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def run_spot(name: str, threads: int, storage: str, work: str) -> dict:
    spec, _ = SPOTS[name]
    path = os.path.join(work, f"{name}.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    trace = os.path.join(work, f"{name}-{threads}.csv")
    gap = 2 * 0.003 * spec["pot"]
    cmd = [sys.executable, "-m", "treeplex.cli", "solve", path, "--algorithm", "dcfr", "--target", repr(gap),
           "--threads", str(threads), "--trace", trace, "--json", "--no-strategies", "--no-progress",
           "--param", f"storage={storage}"]
    out = subprocess.run([sys.executable, "-c", WRAP, *cmd], capture_output=True, text=True)
    lines = out.stdout.strip().splitlines()
    if not lines or not lines[-1].split()[0] == "0":
        return {"spot": name, "error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    rc, wall, rss_kb = lines[-1].split()
    res = json.loads(lines[-2])
    with open(trace) as f:
        rows = [r for r in csv.DictReader(row for row in f if not row.startswith("#"))]
    row = {"spot": name, "threads": threads, "wall_s": float(wall), "peak_mb": int(rss_kb) / 1024,
           "compile_s": res["compile_seconds"], "check_s": res["check_seconds"], "iterations": res["iterations"],
           "ms_per_iter": 1000 * res["seconds"] / max(res["iterations"], 1)}
    for pct in (0.5, 0.3):
        hit = next((r for r in rows if float(r["gap_average"]) / 2 / spec["pot"] <= pct / 100), None)
        row[f"it_{pct}"] = int(hit["iteration"]) if hit else None
        row[f"s_{pct}"] = float(hit["seconds"]) if hit else None
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spots", default="RIVER,TURN", help=f"comma-separated, from {', '.join(SPOTS)}")
    ap.add_argument("--threads", default="2,1", help="thread counts to run each spot with")
    ap.add_argument("--storage", default="float64", choices=["float64", "float32"])
    args = ap.parse_args()
    names = [s.strip().upper() for s in args.spots.split(",")]
    for s in names:
        if s not in SPOTS:
            sys.exit(f"unknown spot {s!r}; choose from {', '.join(SPOTS)}")
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}; storage {args.storage}; DCFR; "
          "exploitability = gap/2, in % of the starting pot")
    head = (f"{'spot':10s} {'thr':>3s} {'it@0.5%':>8s} {'s@0.5%':>8s} {'it@0.3%':>8s} {'s@0.3%':>8s} "
            f"{'ms/it':>8s} {'checks s':>8s} {'compile s':>9s} {'wall s':>8s} {'peak MB':>8s}  postflop-solver (24 thr)")
    print(head)
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            for threads in (int(t) for t in args.threads.split(",")):
                t0 = time.perf_counter()
                r = run_spot(name, threads, args.storage, work)
                if "error" in r:
                    print(f"{name:10s} {threads:>3d} error after {time.perf_counter() - t0:.1f} s: {r['error']}")
                    continue

                def f(v, fmt):
                    return format(v, fmt) if v is not None else "-"

                print(f"{name:10s} {threads:>3d} {f(r['it_0.5'], '8d')} {f(r['s_0.5'], '8.3f')} "
                      f"{f(r['it_0.3'], '8d')} {f(r['s_0.3'], '8.3f')} {r['ms_per_iter']:8.1f} {r['check_s']:8.2f} "
                      f"{r['compile_s']:9.2f} {r['wall_s']:8.2f} {r['peak_mb']:8.0f}  {SPOTS[name][1]}", flush=True)


if __name__ == "__main__":
    main()
