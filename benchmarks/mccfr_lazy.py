"""Lazy-mode MCCFR (issue 13) on a game too large to compile: memory growth and the sampled
best-response lower bound against time.

    .venv/bin/python benchmarks/mccfr_lazy.py [GAME] [--time-limit 240] [--seed 1] [--evals 4]
                                              [--br-iters 300] [--playouts 2000] [--out out/mccfr_lazy.png]

GAME defaults to ``openspiel:liars_dice(numdice=2,dice_sides=6)`` (two dice per player: the
betting tree alone has 2^24 sequences per roll, far beyond this machine's memory once
compiled). External-sampling MCCFR runs in lazy storage (:mod:`treeplex.run.lazy_sampling`) for
``--time-limit`` seconds of solver time; every ``--report`` seconds a row records iterations,
traversals, nodes touched, infosets and actions allocated, the table's bytes and the
process's peak RSS. At ``--evals`` geometric points the sampled BR lower bound on the
exploitability of the average strategy is computed (``--br-iters`` learning traversals per
player, ``--playouts`` playouts each; its time is not solver time). A table and a figure
(``--out``: infosets and MiB against seconds; the bound with +-2 s.e. against seconds), and
the rows as CSV beside the figure.
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import time

import numpy as np

from treeplex.games import load_game
from treeplex.run.lazy_sampling import LazyMCCFR
from treeplex.core.memory import COMPILE_BYTES_PER_HISTORY, estimate_histories


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game", nargs="?", default="openspiel:liars_dice(numdice=2,dice_sides=6)")
    ap.add_argument("--time-limit", type=float, default=240.0, help="solver seconds (default 240)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--report", type=float, default=15.0, help="seconds between memory rows")
    ap.add_argument("--evals", type=int, default=4, help="points (geometric in time) with the sampled bound")
    ap.add_argument("--br-iters", type=int, default=300)
    ap.add_argument("--playouts", type=int, default=2000)
    ap.add_argument("--out", default="out/mccfr_lazy.png")
    args = ap.parse_args(argv)

    game = load_game(args.game)
    n, exact = estimate_histories(game, cap=1e12)
    print(f"game {game.name}: {'' if exact else 'at least '}{n:.3g} histories, about "
          f"{n * COMPILE_BYTES_PER_HISTORY / 2**30:.3g} GiB to compile (machine: "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB): not compiled")
    solver = LazyMCCFR(game, seed=args.seed)
    evals = list(np.geomspace(args.time_limit / 8, args.time_limit, args.evals)) if args.evals else []
    rows, seconds, next_row, wall0 = [], 0.0, 0.0, time.perf_counter()
    hdr = (f"{'solver s':>8} {'iters':>7} {'traversals':>10} {'nodes':>11} {'infosets':>10} {'actions':>10} "
           f"{'table MiB':>9} {'B/infoset':>9} {'B/action':>8} {'RSS MiB':>8}  sampled BR lower bound (+-1 s.e.)")
    print(hdr)
    while True:
        t0 = time.perf_counter()
        solver.step()
        seconds += time.perf_counter() - t0
        done = seconds >= args.time_limit
        do_eval = bool(evals) and (seconds >= evals[0] or done)
        if seconds >= next_row or done or do_eval:
            m = solver.memory()
            row = {"seconds": round(seconds, 2), "iterations": solver.iteration, "samples": solver.samples,
                   "nodes_touched": solver.nodes_touched, "infosets": m["infosets"], "actions": m["actions"],
                   "table_bytes": m["bytes"], "bytes_per_infoset": round(m["bytes_per_infoset"], 1),
                   "bytes_per_action": round(m["bytes"] / max(m["actions"], 1), 1), "rss_mib": round(rss_mib(), 1)}
            bound = ""
            if do_eval:
                while evals and evals[0] <= seconds:
                    evals.pop(0)
                t1 = time.perf_counter()
                q = solver.sampled_bound(args.br_iters, args.playouts)
                row.update(exploitability_lb=q["exploitability_lb"], stderr=q["stderr"],
                           br_value_player0=q["br_value_player0"], br_value_player1=q["br_value_player1"],
                           eval_seconds=round(time.perf_counter() - t1, 1))
                bound = f"{q['exploitability_lb']:.4f} +- {q['stderr']:.4f}  ({row['eval_seconds']} s)"
            rows.append(row)
            print(f"{row['seconds']:8.1f} {row['iterations']:7d} {row['samples']:10d} {row['nodes_touched']:11d} "
                  f"{row['infosets']:10d} {row['actions']:10d} {row['table_bytes'] / 2**20:9.1f} "
                  f"{row['bytes_per_infoset']:9.0f} {row['bytes_per_action']:8.1f} {row['rss_mib']:8.0f}  {bound}",
                  flush=True)
            next_row = seconds + args.report
        if done:
            break
    print(f"wall {time.perf_counter() - wall0:.0f} s; measure: sampled BR lower bound (learned best responses, "
          f"{args.br_iters} traversals per player, {args.playouts} playouts each): the exact exploitability is "
          f"at least this, in expectation")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    path = os.path.splitext(args.out)[0] + ".csv"
    cols = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    _plot(rows, game.name, args.out)
    print(f"wrote {args.out} and {path}")


def _plot(rows, name, out) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    s = [r["seconds"] for r in rows]
    ax1.plot(s, [r["infosets"] for r in rows], "o-", label="infosets allocated")
    ax1.set_xlabel("solver seconds")
    ax1.set_ylabel("infosets")
    ax1b = ax1.twinx()
    ax1b.plot(s, [r["table_bytes"] / 2**20 for r in rows], "s--", color="C1", label="table MiB")
    ax1b.set_ylabel("table MiB")
    ax1.set_title("lazy table growth")
    ax1.legend(loc="upper left")
    ax1b.legend(loc="lower right")
    ev = [r for r in rows if "exploitability_lb" in r]
    ax2.errorbar([r["seconds"] for r in ev], [r["exploitability_lb"] for r in ev],
                 yerr=[2 * r["stderr"] for r in ev], fmt="o-", capsize=3)
    ax2.set_xlabel("solver seconds")
    ax2.set_ylabel("exploitability lower bound")
    ax2.set_title("sampled BR lower bound (+-2 s.e.)")
    fig.suptitle(f"{name}: mccfr-es, lazy storage")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
