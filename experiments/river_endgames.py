"""Figures 2 and 3 of the EGT paper (Kroer, Farina & Sandholm 2018, section 7) on two generated
river endgames with the Libratus abstraction.

    .venv/bin/python experiments/river_endgames.py [--gradients 4000] [--out out/river_endgames]

Endgames: Endgame-2-sized (pot 2100, 921 / 947 hands: 139,993 / 143,945 sequences) and
Endgame-7-sized (pot 3750, 467 / 935 hands: 42,965 / 86,021 sequences), stacks 20,000, big
blind 100; boards and range weights are random with fixed seeds (Libratus's are not public,
see :func:`treeplex.poker.river.generated_endgame`).

Algorithms: CFR(RM), CFR(RM+), CFR+, EGT, EGT/as (the paper's five), plus DCFR and PCFR+.
Every run gets the same budget of gradient computations (products A y or A^T x); the y axis
is the saddle-point gap (sum of both players' regrets) in mbb, as in the paper.

- figure2.png: gap against iterations, one panel per endgame;
- figure3.png: gap against gradient computations;
- <endgame>_<algorithm>.csv traces and summary.txt (iterations / gradients to reach 100, 10
  and 1 mbb), all in the output folder it prints.

EGT's mu is tuned as the solver does by default (a few 20-iteration trial runs, not charged
to the run, as in the paper's plots).
"""

from __future__ import annotations

import argparse
import csv
import os


from treeplex.run.driver import gradient_grid, make_solver
from treeplex.model.metrics import evaluate, to_mbb
from treeplex.poker.river import PAPER_ENDGAMES, generated_endgame

ALGORITHMS = {  # registry name -> label (the paper's names where it has them)
    "cfr": "CFR(RM)",
    "cfr-rm+": "CFR(RM+)",
    "cfr+": "CFR+",
    "egt": "EGT",
    "egt-as": "EGT/as",
    "dcfr": "DCFR",
    "pcfr+": "PCFR+",
}
GOALS_MBB = (100.0, 10.0, 1.0)


def run(problem, algorithm: str, budget: int, n_points: int = 40) -> list[dict]:
    """Step the solver until ``budget`` gradient computations; evaluate on a log grid."""
    solver = make_solver(problem, algorithm)
    rows = []
    for seconds in gradient_grid(solver, budget, n_points):
        gap = evaluate(problem, *solver.average()).gap
        rows.append({"iteration": solver.iteration, "gradients": solver.gradients, "seconds": seconds,
                     "gap_chips": gap, "gap_mbb": to_mbb(gap, problem.big_blind)})
    return rows


def first_reaching(rows, goal_mbb, key):
    row = next((r for r in rows if r["gap_mbb"] <= goal_mbb), None)
    return str(row[key]) if row else "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gradients", type=int, default=4000, help="budget of gradient computations per run")
    ap.add_argument("--out", default="out/river_endgames")
    ap.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS))
    ap.add_argument("--endgames", nargs="+", type=int, default=[2, 7])
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results = {}
    lines = []
    for e in args.endgames:
        spec = PAPER_ENDGAMES[e]
        game = generated_endgame(spec["pot"], spec["hands"], seed=e)
        p = game.problem()
        head = (f"Endgame {e}: {p.name}, {p.X.n_seqs} / {p.Y.n_seqs} sequences, {p.stats['leaves']:,} leaves, "
                f"load average {os.getloadavg()[0]:.2f}")
        print(head, flush=True)
        lines += [head, f"{'algorithm':10s} {'iters':>6s} {'grads':>6s} {'seconds':>8s} {'gap mbb':>9s}   "
                        + "   ".join(f"it/grads to {g:g} mbb" for g in GOALS_MBB)]
        for alg in args.algorithms:
            rows = run(p, alg, args.gradients)
            results[e, alg] = rows
            with open(os.path.join(args.out, f"endgame{e}_{alg}.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)
            last = rows[-1]
            reach = "   ".join(f"{first_reaching(rows, g, 'iteration'):>6s}/{first_reaching(rows, g, 'gradients'):<6s}"
                               for g in GOALS_MBB)
            line = (f"{ALGORITHMS[alg]:10s} {last['iteration']:6d} {last['gradients']:6d} {last['seconds']:8.1f} "
                    f"{last['gap_mbb']:9.3f}   {reach}")
            print(line, flush=True)
            lines.append(line)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    plot(results, args)
    print(f"wrote {args.out}/figure2.png, figure3.png, summary.txt and the CSV traces")


def plot(results, args):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for fig_name, key, xlabel in (("figure2", "iteration", "iterations"),
                                  ("figure3", "gradients", "gradient computations")):
        fig, axes = plt.subplots(1, len(args.endgames), figsize=(6 * len(args.endgames), 4.5), squeeze=False)
        for ax, e in zip(axes[0], args.endgames):
            for alg in args.algorithms:
                rows = results[e, alg]
                ax.loglog([r[key] for r in rows], [r["gap_mbb"] for r in rows], label=ALGORITHMS[alg])
            ax.axhline(1.0, color="gray", lw=0.8, ls=":")
            ax.set_title(f"Endgame {e} (generated, pot {PAPER_ENDGAMES[e]['pot']})")
            ax.set_xlabel(xlabel)
            ax.set_ylabel("sum of regrets (gap), mbb")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, f"{fig_name}.png"), dpi=120)
        plt.close(fig)


if __name__ == "__main__":
    main()
