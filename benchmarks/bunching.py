"""The cost of bunching: TURN of ``benchmarks/postflop.py`` solved with and without the folded
ranges of a 6-max table (UTG, HJ, CO and BTN fold; the blinds play), one CLI process each.

    .venv/bin/python benchmarks/bunching.py                 # 2 rounds, 2 threads, DCFR to 0.5% of the pot
    .venv/bin/python benchmarks/bunching.py --rounds 1 --threads 1
    .venv/bin/python benchmarks/bunching.py --rounds 1 --engine both   # also both spots with fused=true

Each row: iterations and solver seconds where the checked exploitability first fell to <= 0.5%
of the pot, ms per iteration, the build (tree, problem: for the bunched spot the bunching
tables and the per-board weight matrices), wall time, peak RSS, and the value (OOP's EV in
chips and mbb/g at the spot's big blind, 10 chips). The opening ranges are illustrative 6-max
ranges (``OPEN``); each player folds what it does not open (``{"open": [...]}``). ``--engine``
picks where both spots run: ``sequence`` (``fused=false``, the default), ``fused``
(``fused=true``: a bunched spot's fused walk evaluates every hand pair at each terminal,
:func:`treeplex.poker.fused.bunched_values`) or ``both``.
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from postflop import SPOTS, run_cli  # noqa: E402

OPEN = ["22+,A2s+,K9s+,Q9s+,J9s+,T9s,98s,87s,76s,65s,ATo+,KJo+",  # UTG
        "22+,A2s+,K8s+,Q8s+,J8s+,T8s+,97s+,86s+,75s+,65s,54s,A9o+,KTo+,QTo+,JTo",  # HJ
        "22+,A2s+,K5s+,Q7s+,J7s+,T7s+,96s+,85s+,75s+,64s+,54s,A7o+,K9o+,Q9o+,J9o+,T9o",  # CO
        "22+,A2s+,K2s+,Q4s+,J6s+,T6s+,96s+,85s+,74s+,64s+,53s+,43s,A2o+,K8o+,Q9o+,J9o+,T9o"]  # BTN


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--algorithm", default="dcfr")
    ap.add_argument("--engine", choices=("sequence", "fused", "both"), default="sequence")
    args = ap.parse_args()
    engines = ("sequence", "fused") if args.engine == "both" else (args.engine,)
    spec = SPOTS["TURN"][0]
    gap = 2 * 0.005 * spec["pot"]
    bb = spec.get("big_blind", 10)
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}; TURN, {args.algorithm}, "
          f"{args.threads} threads, to exploitability <= 0.5% of the pot")
    print(f"{'spot':13s} {'round':>5s} {'iters':>6s} {'s@0.5%':>8s} {'ms/it':>8s} {'build s':>8s} {'wall s':>8s} "
          f"{'peak MB':>8s} {'value':>9s} {'mbb/g':>9s}")
    with tempfile.TemporaryDirectory() as work:
        for rnd in range(args.rounds):
            for tag, s, eng in [(t, s, e) for e in engines for t, s in
                                (("plain", spec), ("bunched", {**spec, "bunching": {"open": OPEN}}))]:
                extra = ("--param", f"fused={'true' if eng == 'fused' else 'false'}")
                r = run_cli(s, args.threads, args.algorithm, gap, work, tag, extra)
                tag = f"{tag}/{eng[:5]}"
                if "error" in r:
                    print(f"{tag:13s} {rnd:>5d} error: {r['error']}", flush=True)
                    continue
                res, rows = r["res"], r["rows"]
                hit = next((w for w in rows if float(w["gap_average"]) / 2 / spec["pot"] <= 0.005), None)
                print(f"{tag:13s} {rnd:>5d} {int(hit['iteration']) if hit else -1:6d} "
                      f"{float(hit['seconds']) if hit else float('nan'):8.2f} "
                      f"{1000 * res['seconds'] / max(res['iterations'], 1):8.1f} {res['compile_seconds']:8.2f} "
                      f"{r['wall']:8.2f} {r['peak_mb']:8.0f} {res['value']:9.4f} {1000 * res['value'] / bb:9.1f}",
                      flush=True)


if __name__ == "__main__":
    main()
