"""Compile time and memory of the sequence-form compiler as the tree grows.

    .venv/bin/python benchmarks/compile_speed.py [--ranks 5 10 16 24]

Leduc with R ranks has about 9381 * (R/5)^3 histories; R = 24 gives about 10^6. The table
shows time per history (should stay flat: compile is linear) and the peak Python memory of
the compile (tracemalloc) per history, and the bytes of the compiled structures.
"""

import argparse
import time
import tracemalloc

from treeplex import compile_game, make_game


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, nargs="+", default=[5, 10, 16, 24])
    args = ap.parse_args()
    print(f"{'game':18s} {'histories':>10s} {'seconds':>8s} {'us/history':>10s} {'peak MB':>8s} "
          f"{'B/history':>9s} {'seqs':>12s} {'nnz':>9s} {'A+X+Y MB':>8s}")
    for r in args.ranks:
        game = make_game(f"leduc(ranks={r})")
        t0 = time.perf_counter()
        p = compile_game(game)
        sec = time.perf_counter() - t0
        tracemalloc.start()  # second compile, for memory only (tracemalloc slows it down)
        compile_game(game)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        h = p.stats["histories"]
        size = (p.A.nbytes + p.X.nbytes + p.Y.nbytes) / 1e6
        print(f"{p.name:18s} {h:10d} {sec:8.2f} {sec / h * 1e6:10.2f} {peak / 1e6:8.1f} {peak / h:9.0f} "
              f"{p.X.n_seqs:>5d}+{p.Y.n_seqs:<6d} {p.A.nnz:9d} {size:8.1f}")
    print("seconds: plain compile; peak MB: Python heap peak of a second compile under tracemalloc")


if __name__ == "__main__":
    main()
