"""Public-chance sampling (mccfr-pcs) against full-width CFR+ on a postflop spot of
benchmarks/postflop.py: solver seconds to exploitability 1% and 0.5% of the starting pot.

    .venv/bin/python benchmarks/pcs.py --spot TURN --time-limit 60
    .venv/bin/python benchmarks/pcs.py --spot TURN --solvers cfr+,pcs:cfr,pcs:lcfr --seeds 0,1

Each solver runs in this process on one problem built once (``treeplex.run.driver.solve`` with
``--time-limit`` seconds of solver time, gap checks every ``--check-every`` seconds-ish: the
iteration interval is set per solver from a short probe). The times are the solver seconds
(gap checks excluded) at the first check at or below each target, from the trace; ">T" when
the run ended above it. Sampled runs also give the full-product equivalents they computed.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from postflop import SPOTS

from treeplex.run.driver import solve
from treeplex.poker.postflop import load_postflop_spec
from treeplex.solvers import ALGORITHMS

TARGETS = (0.01, 0.005)  # exploitability as a share of the starting pot


def probe(problem, algorithm, params, seconds=1.0) -> float:
    """Seconds per iteration, from a short run (after numba compiles)."""
    s = ALGORITHMS[algorithm](problem, **params)
    s.step()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        s.step()
        n += 1
    return (time.perf_counter() - t0) / n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spot", default="TURN", choices=sorted(SPOTS))
    ap.add_argument("--solvers", default="cfr+,dcfr,pcs:dcfr,pcs:cfr+")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--time-limit", type=float, default=60.0, help="solver seconds per run")
    ap.add_argument("--checks", type=int, default=40, help="about this many gap checks per run")
    args = ap.parse_args(argv)
    spec = dict(SPOTS[args.spot][0])
    spec.pop("game", None)
    t0 = time.perf_counter()
    game = load_postflop_spec(spec)
    problem = game.problem()
    pot = float(game.pot)
    print(f"{args.spot}: {game.name}, sequences {problem.X.n_seqs:,} + {problem.Y.n_seqs:,}, "
          f"built in {time.perf_counter() - t0:.1f} s", flush=True)
    rows = []
    for name in args.solvers.split(","):
        if name.startswith("pcs:"):
            algorithm, variant = "mccfr-pcs", name[4:]
            runs = [(f"mccfr-pcs ({variant})", {"variant": variant, "seed": int(sd)}) for sd in args.seeds.split(",")]
        else:
            algorithm, runs = name, [(name, {})]
        for label, params in runs:
            per_it = probe(problem, algorithm, params)
            every = max(1, int(args.time_limit / args.checks / per_it))
            res = solve(problem, algorithm, target_gap=2 * TARGETS[-1] * pot, time_limit=args.time_limit,
                        check_every=every, **params)
            hit = []
            for share in TARGETS:
                first = next((r for r in res.trace if r["gap_average"] / 2 <= share * pot), None)
                hit.append(f"{first['seconds']:.2f}" if first else f">{args.time_limit:g}")
            last = res.trace[-1]
            prods = last.get("products", last["gradients"])
            per_it = last["seconds"] / max(last["iteration"], 1)  # solver time per iteration over the run
            row = (label, params.get("seed", "-"), *hit, last["iteration"], f"{per_it * 1e3:.3f}", f"{prods:,.0f}",
                   f"{100 * last['gap_average'] / 2 / pot:.3f}")
            rows.append(row)
            print(" | ".join(str(c) for c in row), flush=True)
    print()
    print("| solver | seed | s to 1% pot | s to 0.5% pot | iterations | ms / iteration | products (full equiv.) "
          "| final exploitability (% pot) |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")


if __name__ == "__main__":
    main()
