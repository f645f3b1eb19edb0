"""Seconds per solver iteration on a postflop spot, the warm inner loop only (no start-up,
no checks): ``step()`` timed after 3 warm-up iterations, median and minimum.

    .venv/bin/python benchmarks/postflop_step.py --spot TURN [--threads 1] [--iters 6] [--param fused=true]

Run it alternately with two settings (threads, ``fused``, ``compression=16``) for a paired ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from postflop import SPOTS  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spot", default="TURN", choices=sorted(SPOTS))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=6)
    ap.add_argument("--algorithm", default="dcfr")
    ap.add_argument("--param", action="append", default=[], help="solver parameter NAME=VALUE (fused=true, compression=16)")
    args = ap.parse_args()
    import numba
    import numpy as np

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    from treeplex.poker.postflop import load_postflop_spec
    from treeplex.run.driver import make_solver

    params = {k: json.loads(v) for k, v in (p.split("=", 1) for p in args.param)}
    solver = make_solver(load_postflop_spec(dict(SPOTS[args.spot][0])).problem(), args.algorithm, **params)
    for _ in range(3):
        solver.step()
    times = []
    for _ in range(args.iters):
        t = time.perf_counter()
        solver.step()
        times.append(time.perf_counter() - t)
    path = "fused" if getattr(solver, "engine", None) is not None else "sequence form"
    print(f"{args.spot} {path} {args.algorithm} {params} threads={args.threads}: "
          f"median {1e3 * np.median(times):.1f} ms, min {1e3 * min(times):.1f} ms per iteration")


if __name__ == "__main__":
    main()
