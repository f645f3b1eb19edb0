"""Node locking's cost: the TURN spot of ``benchmarks/postflop.py`` solved locked and unlocked.

    PYTHONPATH=. .venv/bin/python benchmarks/locks.py [--rounds 2] [--algorithm dcfr] [--threads 2] [--memory]

In one process (kernels compiled first by a 2-iteration run of each), rounds of paired solves
to exploitability <= 0.5% of the starting pot (gap / 2 / pot; the locked game's gap for the
locked spot): the unlocked TURN, then TURN with IP's turn check-back node locked
(``x``: x 70%, b20 30%, every hand) and IP's river node after check-check locked to check on
every river card (``x-x/x``). Both without isomorphism (locks turn it off; on this board it
changes nothing). ``--kinds`` adds ``weighted`` (the same two locks on every IP hand at weight
0.5: the lower-bounded regret update) and ``frequency`` (``x`` as a range-wide frequency x 70%,
b20 30%, spread from the unlocked spot's DCFR solution to 0.5% of the pot, solved before the
rounds). Prints iterations, solver seconds and seconds per iteration, each ratio to the
unlocked spot's seconds per iteration, and the medians of the per-round ratios (solver seconds
to 0.5% and seconds per iteration). Each spot runs where ``fused=None`` puts it (TURN: the
fused engine, which plays plain and weighted locks), as printed.
``--memory`` adds one CLI process per spot (``benchmarks/postflop.py``'s peak RSS; the locked
one with ``--lock ... --baseline none``) and the bytes of the fused engine's lock blocks.
``--mixed`` locks both nodes to mixtures of all three actions instead: the plain locks leave
b45 after a check unreached (subtrees the walk then skips), the mixed ones change no reach to 0,
so their ratio is the walk's own cost of a lock. ``--steps N`` adds the medians of N
interleaved single iterations of each (after 5 warm-up iterations each, the order rotating):
iteration pairs seconds apart, which a shared machine's load changes less than whole solves.
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import treeplex as tp  # noqa: E402
from treeplex.poker.postflop import load_postflop_spec  # noqa: E402
from treeplex.run.driver import make_solver  # noqa: E402
from treeplex.run.targets import target_gap  # noqa: E402

from postflop import SPOTS, run_cli  # noqa: E402

LOCKS = [{"node": "x", "player": 1, "strategy": {"x": 0.7, "b20": 0.3}},
         {"node": "x-x/x", "player": 1, "strategy": {"x": 1.0}}]
MIXED = [{"node": "x", "player": 1, "strategy": {"x": 0.5, "b20": 0.3, "b45": 0.2}},  # every action played:
         {"node": "x-x/x", "player": 1, "strategy": {"x": 0.6, "b20": 0.3, "b45": 0.1}}]  # no subtree left unreached


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--algorithm", default="dcfr")
    ap.add_argument("--kinds", default="locked", help="comma-separated: locked, weighted, frequency")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--memory", action="store_true", help="peak RSS of one CLI solve of each (plain locks)")
    ap.add_argument("--mixed", action="store_true",
                    help="lock both nodes to mixtures of every action (x 50%%, b20 30%%, b45 20%%; x 60%%, b20 30%%, "
                         "b45 10%%), so that no subtree goes unreached: the walk's own cost of a lock")
    ap.add_argument("--steps", type=int, default=0, help="also time N interleaved single iterations of each")
    args = ap.parse_args()
    locks = MIXED if args.mixed else LOCKS
    import numba

    numba.set_num_threads(args.threads)
    spec = dict(SPOTS["TURN"][0])
    problems = {"unlocked": load_postflop_spec({**spec, "isomorphism": False}).problem()}
    kinds = args.kinds.split(",")
    if "locked" in kinds:
        problems["locked"] = load_postflop_spec({**spec, "locks": locks}).problem()
    if "weighted" in kinds:
        half = ",".join(f"{t}:0.5" for t in spec["range1"].split(","))
        problems["weighted"] = load_postflop_spec({**spec, "locks": [{**lk, "hands": half} for lk in locks]}).problem()
    if "frequency" in kinds:
        g = load_postflop_spec({**spec, "locks": [{"node": "x", "player": 1, "frequency": {"x": 0.7, "b20": 0.3}}]})
        base = tp.solve(g.unlocked().problem(), args.algorithm, target_gap=target_gap("0.5%pot", problems["unlocked"]))
        g.set_baseline(base.x, base.y)
        problems["frequency"] = g.problem()
    engine = {}
    for name, p in problems.items():
        tp.solve(p, args.algorithm, max_iters=2)  # compile
        engine[name] = "fused" if make_solver(p, args.algorithm).engine is not None else "sequence form"
    per, secs = {k: [] for k in problems}, {k: [] for k in problems}
    print(f"{args.algorithm}, {args.threads} threads, load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    for r in range(args.rounds):
        for name, p in (problems.items() if r % 2 == 0 else reversed(problems.items())):  # the order alternates
            res = tp.solve(p, args.algorithm, target_gap=target_gap("0.5%pot", p))
            per[name].append(res.seconds / res.iterations)
            secs[name].append(res.seconds)
            print(f"round {r + 1} {name:9s} {res.iterations:4d} it  {res.seconds:7.3f} s  "
                  f"{1000 * res.seconds / res.iterations:7.2f} ms/it  exploitability "
                  f"{100 * res.exploitability / p.stats['pot']:.3f}% pot  ({engine[name]})", flush=True)
    for name in per:
        if name != "unlocked" and args.rounds:
            ratio = [a / b for a, b in zip(per[name], per["unlocked"])]
            total = [a / b for a, b in zip(secs[name], secs["unlocked"])]
            print(f"{name} / unlocked seconds per iteration: {sum(per[name]) / sum(per['unlocked']):.3f} "
                  f"(sums); medians of the per-round ratios: per iteration {statistics.median(ratio):.3f}, "
                  f"solver seconds to 0.5% {statistics.median(total):.3f}")
    if args.steps:
        steps(problems, args.algorithm, args.steps)
    if args.memory:
        import tempfile

        tree = load_postflop_spec({**spec, "locks": locks}).fused_tree()
        locked = problems.get("locked") or load_postflop_spec({**spec, "locks": locks}).problem()
        tree.set_locks(locked.locks)
        print(f"lock blocks: {tree.static[15].nbytes / 2 ** 20:.2f} MB at {(tree.static[14] >= 0).sum()} nodes")
        texts = [f"{lk['node']}:1:" + ",".join(f"{a}={q}" for a, q in lk["strategy"].items()) for lk in locks]
        with tempfile.TemporaryDirectory() as work:
            for name, extra in (("unlocked", []), ("locked", [a for t in texts for a in ("--lock", t)]
                                                   + ["--baseline", "none"])):
                r = run_cli({**spec, "isomorphism": False}, args.threads, args.algorithm,
                            2 * 0.005 * spec["pot"], work, name, extra)
                print(f"CLI {name:9s} peak RSS {r['peak_mb']:.0f} MB, {r['res']['iterations']} it, "
                      f"{r['res']['seconds']:.2f} s" if "error" not in r else f"CLI {name}: {r['error']}", flush=True)


def steps(problems: dict, algorithm: str, n: int) -> None:
    """Medians of n interleaved single iterations of each spot's solver (wall and CPU time)."""
    import time

    solvers = {name: make_solver(p, algorithm) for name, p in problems.items()}
    for s in solvers.values():
        for _ in range(5):
            s.step()
    wall, cpu = {k: [] for k in solvers}, {k: [] for k in solvers}
    keys = list(solvers)
    for i in range(n):
        for k in keys[i % len(keys):] + keys[:i % len(keys)]:
            t0, c0 = time.perf_counter(), time.process_time()
            solvers[k].step()
            wall[k].append(time.perf_counter() - t0)
            cpu[k].append(time.process_time() - c0)
    for k in keys:
        w, c = statistics.median(wall[k]), statistics.median(cpu[k])
        w0, c0 = statistics.median(wall["unlocked"]), statistics.median(cpu["unlocked"])
        print(f"{k:9s} median of {n} single iterations: {1000 * w:7.2f} ms wall, {1000 * c:7.2f} ms CPU; "
              f"/ unlocked: {w / w0:.3f} wall, {c / c0:.3f} CPU")


if __name__ == "__main__":
    main()
