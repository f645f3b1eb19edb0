"""Postflop spots of the multi-street engine, timed as a user runs them: one CLI process each.

    .venv/bin/python benchmarks/postflop.py                        # RIVER and TURN, 1 and 2 threads
    .venv/bin/python benchmarks/postflop.py --spots RIVER,TURN,FLOP-FAST --threads 2,1

Each spot is solved with DCFR (the poker default, as in postflop-solver; ``--algorithm``
picks another, e.g. ``dcfr-ps``, postflop-solver's own schedule) to exploitability <= 0.5% of
the starting pot (exploitability = gap / 2; poker solvers' unit: gap / 2 / pot). One table:
iterations and solver seconds where the checked exploitability first fell to <= 0.5% of the
pot, time per iteration, the share of the run's time in exploitability checks and in
building (tree, problem), the process's peak RSS and the solver's memory = peak RSS minus a
no-op run's on the same path (the interpreter, numba and its kernels: a 2-hand river spot,
1 iteration, on the sequence form or on the fused engine), and
that memory per hand-action (sequence). postflop-solver's column is issue 26's, measured
from its source on this 2-core machine in the same hour as that issue's figures (RIVER was
not measured there); no postflop-solver installs from a package registry here.
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

OOP_WIDE = "JJ-22,AJs-A2s,K2s+,Q2s+,J2s+,T4s+,95s+,84s+,74s+,63s+,53s+,43s,AQo-A2o,K5o+,Q7o+,J8o+,T8o+,98o,87o"
IP_WIDE = "22+,A2s+,K2s+,Q2s+,J4s+,T6s+,96s+,86s+,75s+,65s,54s,A2o+,K8o+,Q9o+,J9o+,T9o"
OOP_FLOP = "66+,A8s+,A5s-A4s,AJo+,K9s+,KQo,QTs+,JTs,96s+,85s+,75s+,65s,54s"
IP_FLOP = "QQ-22,AQs-A2s,ATo+,K5s+,KJo+,Q8s+,J8s+,T7s+,96s+,86s+,75s+,64s+,53s+"

SPOTS = {
    "RIVER": ({"game": "postflop", "board": "Td9d6hQc2s", "pot": 100, "stack": 100, "range0": OOP_WIDE,
               "range1": IP_WIDE, "bet": "33%,75%,a", "raise": "2.5x"}, "-"),
    "TURN": ({"game": "postflop", "board": "Td9d6hQc", "pot": 60, "stack": 140, "range0": OOP_WIDE,
              "range1": IP_WIDE, "bet": "33%,75%", "raise": "2.5x", "add_allin_threshold": 1.5,
              "force_allin_threshold": 0.15}, "1.5-1.9 s, 60 it, 37 MB peak"),
    "FLOP-FAST": ({"game": "postflop", "board": "QsJh2h", "pot": 180, "stack": 910, "range0": OOP_FLOP,
                   "range1": IP_FLOP, "bet": "52%", "raise": "2.5x", "add_allin_threshold": 1.0,
                   "force_allin_threshold": 0.15}, "~77 s, 80 it, 0.96 GB"),
    "FLOP-FULL": ({"game": "postflop", "board": "QsJh2h", "pot": 180, "stack": 910, "range0": OOP_FLOP,
                   "range1": IP_FLOP, "bet": "33%,75%", "raise": "2.5x", "add_allin_threshold": 1.0,
                   "force_allin_threshold": 0.15}, "(3.8 GB published)"),
}

WRAP = ("import resource, subprocess, sys, time; t = time.perf_counter(); r = subprocess.run(sys.argv[1:]); "
        "print(r.returncode, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


NOOP = {"game": "postflop", "board": "Td9d6hQc2s", "pot": 100, "stack": 100, "range0": "AsKs", "range1": "QhQd"}


def run_cli(spec: dict, threads: int, algorithm: str, gap: float | None, work: str, tag: str, extra=()) -> dict:
    """One CLI solve in a fresh process: (rc, wall seconds, peak RSS in MB, its --json, its trace rows)."""
    path = os.path.join(work, f"{tag}.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    trace = os.path.join(work, f"{tag}-{threads}.csv")
    stop = ["--target", repr(gap)] if gap is not None else ["--max-iters", "1"]
    cmd = [sys.executable, "-m", "treeplex.cli", "solve", path, "--algorithm", algorithm, *stop,
           "--threads", str(threads), "--trace", trace, "--json", "--no-strategies", "--no-progress", *extra]
    out = subprocess.run([sys.executable, "-c", WRAP, *cmd], capture_output=True, text=True)
    lines = out.stdout.strip().splitlines()
    if not lines or not lines[-1].split()[0] == "0":
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    rc, wall, rss_kb = lines[-1].split()
    with open(trace) as f:
        rows = [r for r in csv.DictReader(row for row in f if not row.startswith("#"))]
    return {"wall": float(wall), "peak_mb": int(rss_kb) / 1024, "res": json.loads(lines[-2]), "rows": rows}


def fused(seqs: int, extra) -> bool:
    """Whether a spot of ``seqs`` sequences runs on the fused engine with the CLI's ``extra``."""
    from treeplex.poker.postflop import FUSED_MIN_SEQS

    if "fused=false" in extra or "fused=true" in extra:
        return "fused=true" in extra
    return seqs >= FUSED_MIN_SEQS or any(a.startswith("compression=") and a != "compression=0" for a in extra)


def run_spot(name: str, threads: int, algorithm: str, work: str, base_mb: dict, extra=()) -> dict:
    spec, _ = SPOTS[name]
    r = run_cli(spec, threads, algorithm, 2 * 0.005 * spec["pot"], work, name, extra)
    if "error" in r:
        return {"spot": name, "error": r["error"]}
    res, rows = r["res"], r["rows"]
    hit = next((w for w in rows if float(w["gap_average"]) / 2 / spec["pot"] <= 0.005), None)
    seqs = sum(res["sequences"])
    solver_mb = r["peak_mb"] - base_mb[fused(seqs, extra)]
    return {"spot": name, "threads": threads, "wall_s": r["wall"], "peak_mb": r["peak_mb"], "solver_mb": solver_mb,
            "iterations": int(hit["iteration"]) if hit else None, "s_0.5": float(hit["seconds"]) if hit else None,
            "ms_per_iter": 1000 * res["seconds"] / max(res["iterations"], 1),
            "check_share": res["check_seconds"] / r["wall"], "build_share": res["compile_seconds"] / r["wall"],
            "bytes_per_seq": solver_mb * 2 ** 20 / seqs if seqs else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spots", default="RIVER,TURN", help=f"comma-separated, from {', '.join(SPOTS)}")
    ap.add_argument("--threads", default="1,2", help="thread counts to run each spot with")
    ap.add_argument("--algorithm", default="dcfr")
    ap.add_argument("--param", action="append", default=[], help="solver parameter NAME=VALUE, as the CLI's")
    args = ap.parse_args()
    names = [s.strip().upper() for s in args.spots.split(",")]
    for s in names:
        if s not in SPOTS:
            sys.exit(f"unknown spot {s!r}; choose from {', '.join(SPOTS)}")
    extra = [a for p in args.param for a in ("--param", p)]
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}; {args.algorithm} {' '.join(args.param)}; "
          "exploitability = gap/2, to 0.5% of the starting pot")
    head = (f"{'spot':10s} {'thr':>3s} {'iters':>6s} {'s@0.5%':>8s} {'ms/it':>8s} {'checks':>7s} {'build':>6s} "
            f"{'wall s':>7s} {'peak MB':>8s} {'solver MB':>9s} {'B/seq':>6s}  postflop-solver (2 thr, this machine)")
    with tempfile.TemporaryDirectory() as work:
        base = {}
        for on in (False, True):  # the no-op on each path: the fused engine's kernels are another 8-10 MB
            params = [q for q in args.param if not q.startswith(("fused=", "compression="))] + [f"fused={str(on).lower()}"]
            r = run_cli(NOOP, 1, args.algorithm, None, work, "noop", [a for q in params for a in ("--param", q)])
            if "error" in r:
                sys.exit(f"no-op run failed: {r['error']}")
            base[on] = r["peak_mb"]
        print(f"no-op runs (interpreter, numba, kernels): peak {base[False]:.0f} MB on the sequence form, "
              f"{base[True]:.0f} MB on the fused engine")
        print(head)
        for name in names:
            for threads in (int(t) for t in args.threads.split(",")):
                r = run_spot(name, threads, args.algorithm, work, base, extra)
                if "error" in r:
                    print(f"{name:10s} {threads:>3d} error: {r['error']}", flush=True)
                    continue

                def f(v, fmt):
                    return format(v, fmt) if v is not None else "-"

                print(f"{name:10s} {threads:>3d} {f(r['iterations'], '6d')} {f(r['s_0.5'], '8.3f')} "
                      f"{r['ms_per_iter']:8.1f} {100 * r['check_share']:6.1f}% {100 * r['build_share']:5.1f}% "
                      f"{r['wall_s']:7.2f} {r['peak_mb']:8.0f} {r['solver_mb']:9.0f} {f(r['bytes_per_seq'], '6.1f')}  "
                      f"{SPOTS[name][1]}", flush=True)


if __name__ == "__main__":
    main()
