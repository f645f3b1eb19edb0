"""EGT vs CFR: the EGT paper's figures 2 and 3 (gap against iterations and against gradient
computations) for CFR(RM), CFR(RM+), CFR+, EGT and EGT/as on one game.

    .venv/bin/python experiments/egt_vs_cfr.py leduc [--targets 1e-3 1e-5] [--max-iters N] [--time-limit S]

Algorithms (registry names): cfr = CFR(RM), cfr-rm+ = CFR(RM+), cfr+ = CFR+ (RM+ with linear
averaging), all with alternating updates as in the paper (footnote 1); egt = practical EGT
(tuned initial mu, steps on the player with larger mu, tau = 2/(t+3)); egt-as = EGT/as
(tuned mu, mu balancing, tau halved on failed excessive gap checks). Gradient computations
are products A y or A^T x (section 7): CFR 2 per iteration, EGT 3, EGT/as 3 + 2 per backtrack
(see treeplex.solvers.egt); EGT's mu tuning (5 x 20 iterations) is not in the curves, as in
the papers, but its products are listed in the table.

Each run stops at the smallest target gap, ``--max-iters`` or ``--time-limit`` seconds of
solver time. The gap is checked on the driver's geometric schedule (about every 10% of the
iterations), so "iterations / gradients to reach a gap" are the first check at or below it:
upper bounds within ~10%. Writes the plot, the traces (CSV) and a Markdown table under
out/egt_vs_cfr/ and prints their paths and the table.
"""

from __future__ import annotations

import argparse
import os
import time

from treeplex.model.compile import compile_game
from treeplex.run.driver import make_solver, solve
from treeplex.games import make_game
from treeplex.io.plot import plot_traces
from treeplex.run.progress import write_trace

ALGORITHMS = {"cfr": "CFR(RM)", "cfr-rm+": "CFR(RM+)", "cfr+": "CFR+", "egt": "EGT", "egt-as": "EGT/as"}


def first_reaching(trace: list[dict], target: float) -> dict | None:
    return next((row for row in trace if row["gap_average"] <= target), None)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game", nargs="?", default="leduc")
    ap.add_argument("--targets", type=float, nargs="+", default=[1e-3, 1e-5], help="gaps to report (payoff units)")
    ap.add_argument("--max-iters", type=int, default=1_000_000)
    ap.add_argument("--time-limit", type=float, default=120.0, help="solver seconds per algorithm")
    ap.add_argument("--out", default="out/egt_vs_cfr")
    args = ap.parse_args(argv)

    problem = compile_game(make_game(args.game))
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, problem.name.replace("(", "_").replace(")", "").replace("=", "").replace(",", "_"))
    traces, rows = [], []
    for alg, label in ALGORITHMS.items():
        t0 = time.perf_counter()
        solver = make_solver(problem, alg)
        setup = time.perf_counter() - t0
        res = solve(problem, solver, target_gap=min(args.targets), max_iters=args.max_iters,
                    time_limit=args.time_limit)
        path = f"{stem}_{alg}.csv"
        write_trace(res.trace, path, {"game": problem.name, "algorithm": label})
        traces.append(path)
        row = {"algorithm": label, "iterations": res.iterations, "gradients": res.gradients, "gap": res.gap,
               "seconds": res.seconds, "setup": setup, "tune": getattr(solver, "tune_gradients", 0)}
        for target in args.targets:
            hit = first_reaching(res.trace, target)
            row[target] = (hit["iteration"], hit["gradients"]) if hit else None
        rows.append(row)
        print(f"{label:9s} {res.iterations:8d} iterations  gap {res.gap:.3e}  {res.seconds:6.1f} s", flush=True)

    png = plot_traces(traces, f"{stem}.png", title=f"{problem.name}: EGT vs CFR (EGT paper, figures 2 and 3)")
    table = markdown_table(rows, args.targets, problem.payoff_unit)
    with open(f"{stem}.md", "w") as f:
        f.write(table + "\n")
    print()
    print(table)
    print(f"\nplot: {png}\ntable: {stem}.md\ntraces: {', '.join(traces)}")


def markdown_table(rows: list[dict], targets: list[float], unit: str) -> str:
    head = ["algorithm"]
    for t in targets:
        head += [f"iterations to gap {t:g}", f"gradients to gap {t:g}"]
    head += [f"final gap ({unit})", "iterations run", "solver s", "mu-tuning gradients (not counted)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["algorithm"]]
        for t in targets:
            cells += [str(r[t][0]), str(r[t][1])] if r[t] else ["not reached", "not reached"]
        cells += [f"{r['gap']:.2e}", str(r["iterations"]), f"{r['seconds']:.1f}", str(r["tune"] or "")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
