"""Cost of one iteration of EGT/as (and EGT, mirror prox) against one CFR+ iteration.

    .venv/bin/python benchmarks/egt_speed.py [GAME] [--blocks 15] [--iters 300]

The EGT paper (section 7) and the EFPE paper (footnote 1) note that exp() in the treeplex
passes is cheap next to gradient computations; the target here is an EGT/as iteration at
most about 2x a CFR+ iteration on Leduc. The machine is shared and noisy, so the algorithms
run in interleaved blocks and the table gives medians and the median of per-block ratios.
Each row also shows the gradient computations per iteration and the time one product takes.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from treeplex.model.compile import compile_game
from treeplex.run.driver import make_solver
from treeplex.games import make_game

ALGORITHMS = ("cfr+", "egt-as", "egt", "mirror-prox")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game", nargs="?", default="leduc")
    ap.add_argument("--blocks", type=int, default=15)
    ap.add_argument("--iters", type=int, default=300, help="iterations per timed block")
    args = ap.parse_args(argv)

    p = compile_game(make_game(args.game))
    solvers = {a: make_solver(p, a) for a in ALGORITHMS}
    for s in solvers.values():  # compile and warm up
        for _ in range(30):
            s.step()
    times: dict[str, list[float]] = {a: [] for a in ALGORITHMS}
    grads = {a: 0 for a in ALGORITHMS}
    for _ in range(args.blocks):
        for a, s in solvers.items():
            g0 = s.gradients
            t0 = time.perf_counter()
            for _ in range(args.iters):
                s.step()
            times[a].append((time.perf_counter() - t0) / args.iters)
            grads[a] += s.gradients - g0
    y = p.Y.uniform()
    t0 = time.perf_counter()
    for _ in range(2000):
        p.A.matvec(y, count=False)
    product = (time.perf_counter() - t0) / 2000

    base = times["cfr+"]
    print(f"game {p.name}: {p.X.n_seqs} + {p.Y.n_seqs} sequences, {p.A.nnz} nonzeros; "
          f"one product A y: {product * 1e6:.1f} us")
    print(f"{'algorithm':12s} {'us/iter (median)':>17s} {'ratio to cfr+':>14s} {'gradients/iter':>15s}")
    for a in ALGORITHMS:
        ratio = statistics.median(t / b for t, b in zip(times[a], base))
        print(f"{a:12s} {np.median(times[a]) * 1e6:17.1f} {ratio:14.2f} "
              f"{grads[a] / (args.blocks * args.iters):15.2f}")


if __name__ == "__main__":
    main()
