"""Figures 2 and 3 of Kroer, Farina & Sandholm (2017) on Leduc 5: approximate EFPE by EGT
on xi-perturbed treeplexes, against unperturbed EGT and CFR+.

    .venv/bin/python experiments/efpe_leduc5.py [--traversals 30000] [--variant egt|egt-as]

- x axis: tree traversals = gradient computations (products A y or A^T x; EGT makes 3 per
  iteration, EGT/as 3 + 2 per backtrack, CFR+ 2, one per player);
- figure 2: sum of both players' regrets in the unperturbed game (the saddle-point gap);
- figure 3: the maximum infoset regret (section 4, :mod:`treeplex.refine.infoset_regret`).

The overall DGF weight is tuned once at xi = 0 as in section 4 (the best of 1, 0.1, 0.05,
0.01, 0.005 on the first 20 iterations, in units of max |A_ij|); every perturbed run starts
from the same mu. Also checks that the largest infoset regret any strategy can cause in
Leduc 5 is 22 (the paper's bound). Writes CSV traces, figure2.png, figure3.png and a
summary to the output folder it prints (default out/efpe_leduc5).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import time

import numpy as np

from treeplex import compile_game, make_game
from treeplex.run.driver import gradient_grid, make_solver
from treeplex.model.metrics import evaluate
from treeplex.model.metrics import perturbed_gap
from treeplex.refine.efpe import make_efpe_solver, perturbation
from treeplex.refine.infoset_regret import InfosetRegret
from treeplex.refine.lp import solve_lp_perturbed

XIS = (0.1, 0.05, 0.01, 0.005, 0.001)


def largest_infoset_regret(ir: InfosetRegret) -> tuple[float, float]:
    """(upper bound over all profiles, largest regret a pure witness profile attains)."""
    bound = ir.bound()
    attained = 0.0
    for pl in range(2):
        for j in np.argsort(-bound[pl])[:20]:
            x, y = ir.worst_case(pl, int(j))
            attained = max(attained, ir(x, y).regret[pl][j])
    return max(b.max() for b in bound), attained


def run(problem, solver, ir, budget: int, n_points: int = 60) -> list[dict]:
    """Step ``solver`` until ``budget`` traversals; evaluate on a log grid of traversal counts."""
    rows = []
    lower = getattr(solver, "lower", None)
    for seconds in gradient_grid(solver, budget, n_points, first=6):
        x, y = solver.average()
        ev = evaluate(problem, x, y)
        rows.append({
            "traversals": solver.gradients,
            "iteration": solver.iteration,
            "seconds": seconds,
            "value": ev.value,
            "gap": ev.gap,
            "max_infoset_regret": ir(x, y).max,
            "gap_perturbed": perturbed_gap(problem, lower, x, y) if lower is not None else float("nan"),
        })
    return rows


def at(rows: list[dict], traversals: float, key: str) -> float:
    """Value of ``key`` at the last checkpoint with at most ``traversals`` traversals."""
    ok = [r for r in rows if r["traversals"] <= traversals]
    return ok[-1][key] if ok else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traversals", type=int, default=30000)
    ap.add_argument("--variant", choices=["egt", "egt-as"], default="egt")
    ap.add_argument("--out", default="out/efpe_leduc5")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    game = make_game("leduc(ranks=5)")
    problem = compile_game(game)
    ir = InfosetRegret(problem)
    bound, attained = largest_infoset_regret(ir)
    print(f"Leduc 5: {problem.stats['histories']} histories, {problem.X.n_infosets}+{problem.Y.n_infosets} infosets")
    print(f"largest infoset regret any profile can cause: upper bound {bound:g}, attained by a pure profile "
          f"{attained:g} (paper: 22)")

    plain = make_solver(problem, args.variant)  # tunes the DGF weight at xi = 0
    print(f"{args.variant}: tuned weight {plain.mu_scale:g} x max|A_ij| -> mu = ({plain.mu_x:.4g}, {plain.mu_y:.4g})")
    mu = (plain.mu_x, plain.mu_y)
    # solvers count traversals on the shared operator from their construction: build each just before its run
    runs = {"cfr+": lambda: make_solver(problem, "cfr+"), args.variant: lambda: make_solver(problem, args.variant, mu=mu)}
    for xi in XIS:
        runs[f"{args.variant}({xi:g})"] = lambda xi=xi: make_efpe_solver(problem, args.variant, xi, mu=mu)
    runs["cfr+(0.01)"] = lambda: make_efpe_solver(problem, "cfr+", 0.01)  # the second route (ICML 2017)
    traces = {}
    for name, build in runs.items():
        t0 = time.perf_counter()
        traces[name] = run(problem, build(), ir, args.traversals)
        last = traces[name][-1]
        print(f"  {name:14s} {last['traversals']:6d} traversals {time.perf_counter() - t0:6.1f} s   "
              f"gap {last['gap']:.3e}   max infoset regret {last['max_infoset_regret']:.3e}")
        with open(os.path.join(args.out, f"{name}.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(last))
            w.writeheader()
            w.writerows(traces[name])

    summary = _summary(traces, args.variant, args.traversals)
    summary["routes_at_xi_0.01"] = _compare_routes(problem, runs, traces, args.variant)
    summary.update(bound=bound, attained=attained, tuned_weight=plain.mu_scale, variant=args.variant)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    _plot(traces, args.out)
    print(f"wrote {args.out}/figure2.png, figure3.png, summary.json and one CSV per run")
    return 0


def _summary(traces: dict, variant: str, budget: int) -> dict:
    common = min(t[-1]["traversals"] for t in traces.values())
    ref = f"{variant}(0.01)"
    mir = {n: at(t, common, "max_infoset_regret") for n, t in traces.items()}
    gap = {n: at(t, common, "gap") for n, t in traces.items()}
    print(f"\nat {common} traversals (every run):")
    print(f"  {'run':14s} {'gap (unperturbed)':>18s} {'max infoset regret':>19s}")
    for n in traces:
        print(f"  {n:14s} {gap[n]:18.3e} {mir[n]:19.3e}")
    ratios = {"cfr+": mir["cfr+"] / mir[ref], variant: mir[variant] / mir[ref]}
    print(f"max infoset regret, CFR+ / {ref}: {ratios['cfr+']:.1f}x;  {variant} / {ref}: {ratios[variant]:.1f}x")
    # figure 2's claim: small xi tracks unperturbed EGT until it bottoms out
    print(f"\ngap ratio to unperturbed {variant} (figure 2):")
    marks = [int(m) for m in np.geomspace(30, budget, 7)]
    print("  " + f"{'traversals':14s}" + "".join(f"{m:>9d}" for m in marks))
    track = {}
    for xi in XIS:
        n = f"{variant}({xi:g})"
        track[n] = [at(traces[n], m, "gap") / at(traces[variant], m, "gap") for m in marks]
        print(f"  {n:14s}" + "".join(f"{r:9.2f}" for r in track[n]))
    return {"common_traversals": common, "gap": gap, "max_infoset_regret": mir, "ratios_vs_xi_0.01": ratios,
            "gap_ratio_marks": marks, "gap_ratio_to_unperturbed": track}


def _compare_routes(problem, runs, traces, variant) -> dict:
    """Smoothing (EGT) and perturbed CFR+ at xi = 0.01 against the exact perturbed LP."""
    exact = solve_lp_perturbed(problem, *perturbation(problem, 0.01))
    out = {"lp_value": exact.value}
    print(f"\nxi = 0.01, both routes vs the exact perturbed LP (value {exact.value:.6f}):")
    for name in (f"{variant}(0.01)", "cfr+(0.01)"):
        last = traces[name][-1]
        out[name] = {k: last[k] for k in ("value", "gap_perturbed", "gap", "max_infoset_regret")}
        print(f"  {name:14s} value {last['value']:.6f}, gap in Gamma_xi {last['gap_perturbed']:.2e}, "
              f"unperturbed gap {last['gap']:.4e}, max infoset regret {last['max_infoset_regret']:.4f}")
    return out


def _plot(traces: dict, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for key, fname, label in (("gap", "figure2.png", "sum of regrets, unperturbed game"),
                              ("max_infoset_regret", "figure3.png", "maximum infoset regret")):
        fig, ax = plt.subplots(figsize=(6, 4.2))
        for name, rows in traces.items():
            ax.plot([r["traversals"] for r in rows], [r[key] for r in rows], label=name,
                    linestyle="--" if name.startswith("cfr+") else "-")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("tree traversals")
        ax.set_ylabel(label)
        ax.set_title(f"Leduc 5: {label}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out, fname), dpi=120)
        plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
