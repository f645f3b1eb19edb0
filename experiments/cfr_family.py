"""The CFR family side by side on one game: gap of the average and of the current iterate.

    .venv/bin/python experiments/cfr_family.py leduc [--iters 20000] [--restart]

Runs every regret-minimization solver (cfr, cfr-rm+, cfr+, lcfr, dcfr, pcfr+, pdcfr+, hedge,
dual-averaging) for ``--iters`` iterations with default parameters; ``--restart`` adds the
driver's restarting option (restart from the average whenever its gap halves) for the RM+
variants. Writes one trace per run, convergence.png (gap vs iterations and vs gradient
computations, average solid, current iterate dashed) and table.md (final gaps, iterations
and solver seconds to gap 1e-3 and 1e-6) under out/cfr_family/GAME/ and prints their paths.
Gaps are checked on the driver's geometric schedule, so "iterations to reach" are upper
bounds within ~10%.
"""

from __future__ import annotations

import argparse
import os

from treeplex.model.compile import compile_game
from treeplex.run.driver import solve
from treeplex.games import make_game
from treeplex.io.plot import plot_traces
from treeplex.run.progress import write_trace

ALGORITHMS = ["cfr", "cfr-rm+", "cfr+", "lcfr", "dcfr", "pcfr+", "pdcfr+", "hedge", "dual-averaging"]
RESTARTED = ["cfr+", "dcfr", "pcfr+"]
TARGETS = (1e-3, 1e-6)


def first(trace, key, target):
    row = next((r for r in trace if r["gap_average"] <= target), None)
    return f"{row[key]:.0f}" if key == "iteration" and row else (f"{row[key]:.3f}" if row else "-")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game", nargs="?", default="leduc")
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--restart", action="store_true")
    ap.add_argument("--out", default=None, help="output folder (default out/cfr_family/GAME)")
    args = ap.parse_args(argv)
    p = compile_game(make_game(args.game))
    folder = args.out or os.path.join("out", "cfr_family", args.game.replace("(", "_").replace(")", "").replace("=", ""))
    os.makedirs(folder, exist_ok=True)
    runs = [(a, False) for a in ALGORITHMS] + ([(a, True) for a in RESTARTED] if args.restart else [])
    lines = [f"# CFR family on {args.game}, {args.iters} iterations", "",
             "| algorithm | gap (average) | gap (current) | iterations to 1e-3 | seconds to 1e-3 "
             "| iterations to 1e-6 | seconds to 1e-6 |", "|---|---|---|---|---|---|---|"]
    paths = []
    for a, restart in runs:
        label = a + (" restarted" if restart else "")
        res = solve(p, a, max_iters=args.iters, restart=restart)
        path = os.path.join(folder, label.replace(" ", "_") + ".csv")
        write_trace(res.trace, path, {"game": args.game, "algorithm": label.replace(" ", "_")})
        paths.append(path)
        last = res.trace[-1]
        lines.append(f"| {label} | {res.gap:.3e} | {last['gap_current']:.3e} | "
                     + " | ".join(f"{first(res.trace, 'iteration', t)} | {first(res.trace, 'seconds', t)}"
                                  for t in TARGETS) + " |")
        print(lines[-1], flush=True)
    png = plot_traces(paths, os.path.join(folder, "convergence.png"), current=True,
                      title=f"CFR family on {args.game}")
    table = os.path.join(folder, "table.md")
    with open(table, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(png)
    print(table)


if __name__ == "__main__":
    main()
