"""Rake's cost and effect: the TURN spot of ``benchmarks/postflop.py`` solved raked and unraked.

    PYTHONPATH=. .venv/bin/python benchmarks/rake.py [--rounds 3] [--rake 0.05] [--cap 3] [--fused]

In one process (kernels compiled first by a 2-iteration run of each), rounds of paired runs,
alternating which goes first: ``--iters`` iterations with no gap check before the last
(seconds per iteration: the solver's own work), then a solve to exploitability <= 0.5% of the
starting pot (gap / 2 / pot; the raked spot's Nash gap). Prints each run, the medians and the
ratio raked / unraked of the per-iteration medians, then the root's and IP's first node's
range frequencies (``--out``'s ``frequencies``) of the last to-target solutions, and the raked
solution's values (player 0's, player 1's, the expected rake). ``--fused`` runs both on the
fused engine (``fused=true``) instead of the sequence form. ``--steps N`` instead runs four
solvers side by side (sequence form and fused engine, unraked and raked; 5 warm-up
iterations each) and times N single iterations of each, interleaved (the order rotates every
round), printing the medians and the raked / unraked ratios: the least noisy per-iteration
comparison on a shared machine.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import treeplex as tp  # noqa: E402
from treeplex.poker.postflop import load_postflop_spec  # noqa: E402
from treeplex.run.targets import target_gap  # noqa: E402

from postflop import SPOTS  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--rake", type=float, default=0.05)
    ap.add_argument("--cap", type=float, default=3.0, help="rake cap in big blinds (TURN: big blind 10 chips)")
    ap.add_argument("--algorithm", default="dcfr")
    ap.add_argument("--fused", action="store_true")
    ap.add_argument("--steps", type=int, default=0, help="time N interleaved single iterations instead of solving")
    args = ap.parse_args()
    spec = dict(SPOTS["TURN"][0])
    problems = {"unraked": load_postflop_spec(spec).problem(),
                "raked": load_postflop_spec({**spec, "rake": args.rake, "rake_cap": args.cap}).problem()}
    if args.steps:
        return steps(problems, args.algorithm, args.steps)
    kw = {"fused": True} if args.fused else {"fused": False}
    for p in problems.values():
        tp.solve(p, args.algorithm, max_iters=2, **kw)  # compile
    per = {k: [] for k in problems}
    last = {}
    for r in range(args.rounds):
        for name in (list(problems) if r % 2 == 0 else list(problems)[::-1]):
            p = problems[name]
            fixed = tp.solve(p, args.algorithm, max_iters=args.iters, check_every=args.iters, **kw)
            per[name].append(fixed.seconds / fixed.iterations)
            res = tp.solve(p, args.algorithm, target_gap=target_gap("0.5%pot", p), **kw)
            last[name] = res
            print(f"round {r + 1} {name:8s} {args.iters} it {1000 * fixed.seconds / fixed.iterations:7.2f} ms/it;  "
                  f"to 0.5% pot: {res.iterations:4d} it {res.seconds:7.3f} s, exploitability "
                  f"{100 * res.exploitability / p.stats['pot']:.3f}% pot", flush=True)
    med = {k: statistics.median(v) for k, v in per.items()}
    print(f"medians: unraked {1000 * med['unraked']:.2f} ms/it, raked {1000 * med['raked']:.2f} ms/it; "
          f"raked / unraked {med['raked'] / med['unraked']:.3f}")
    for name, res in last.items():
        nodes = problems[name].game.strategy_dict(res.x, res.y)["nodes"]
        for nd in nodes[:2]:
            freq = "  ".join(f"{a} {100 * f:5.1f}%" for a, f in zip(nd["actions"], nd["frequencies"]))
            print(f"{name:8s} node {nd['history'] or '<root>':6s} (player {nd['player']}): {freq}")
    ev = last["raked"].evaluation
    print(f"raked solution: value p0 {ev.value:.4f}, p1 {ev.value1:.4f}, expected rake {ev.rake:.4f} chips; "
          f"unraked value p0 {last['unraked'].value:.4f} chips")


def steps(problems: dict, algorithm: str, n: int) -> None:
    """Medians of n interleaved single iterations of each (path, spot) solver."""
    from treeplex.run.driver import make_solver

    solvers = {(path, name): make_solver(p, algorithm, fused=path == "fused")
               for path in ("sequence form", "fused") for name, p in problems.items()}
    for s in solvers.values():
        for _ in range(5):
            s.step()
    times = {k: [] for k in solvers}
    keys = list(solvers)
    for i in range(n):
        for k in keys[i % len(keys):] + keys[:i % len(keys)]:
            t0 = time.perf_counter()
            solvers[k].step()
            times[k].append(time.perf_counter() - t0)
    for path in ("sequence form", "fused"):
        a, b = (statistics.median(times[path, k]) for k in ("unraked", "raked"))
        print(f"{path:13s}: median of {n} iterations: unraked {1000 * a:.2f} ms, raked {1000 * b:.2f} ms; "
              f"raked / unraked {b / a:.3f}")


if __name__ == "__main__":
    main()
