"""Node locking's cost: the TURN spot of ``benchmarks/postflop.py`` solved locked and unlocked.

    PYTHONPATH=. .venv/bin/python benchmarks/locks.py [--rounds 2] [--algorithm dcfr]

In one process (kernels compiled first by a 2-iteration run of each), rounds of paired solves
to exploitability <= 0.5% of the starting pot (gap / 2 / pot; the locked game's gap for the
locked spot): the unlocked TURN, then TURN with IP's turn check-back node locked
(``x``: x 70%, b20 30%, every hand) and IP's river node after check-check locked to check on
every river card (``x-x/x``). Both without isomorphism (locks turn it off; on this board it
changes nothing). ``--kinds`` adds ``weighted`` (the same two locks on every IP hand at weight
0.5: the lower-bounded regret update) and ``frequency`` (``x`` as a range-wide frequency x 70%,
b20 30%, spread from the unlocked spot's DCFR solution to 0.5% of the pot, solved before the
rounds). Prints iterations, solver seconds and seconds per iteration, and each ratio to the
unlocked spot's seconds per iteration.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import treeplex as tp  # noqa: E402
from treeplex.poker.postflop import load_postflop_spec  # noqa: E402
from treeplex.run.targets import target_gap  # noqa: E402

from postflop import SPOTS  # noqa: E402

LOCKS = [{"node": "x", "player": 1, "strategy": {"x": 0.7, "b20": 0.3}},
         {"node": "x-x/x", "player": 1, "strategy": {"x": 1.0}}]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--algorithm", default="dcfr")
    ap.add_argument("--kinds", default="locked", help="comma-separated: locked, weighted, frequency")
    args = ap.parse_args()
    spec = dict(SPOTS["TURN"][0])
    problems = {"unlocked": load_postflop_spec({**spec, "isomorphism": False}).problem()}
    kinds = args.kinds.split(",")
    if "locked" in kinds:
        problems["locked"] = load_postflop_spec({**spec, "locks": LOCKS}).problem()
    if "weighted" in kinds:
        half = ",".join(f"{t}:0.5" for t in spec["range1"].split(","))
        problems["weighted"] = load_postflop_spec({**spec, "locks": [{**lk, "hands": half} for lk in LOCKS]}).problem()
    if "frequency" in kinds:
        g = load_postflop_spec({**spec, "locks": [{"node": "x", "player": 1, "frequency": {"x": 0.7, "b20": 0.3}}]})
        base = tp.solve(g.unlocked().problem(), args.algorithm, target_gap=target_gap("0.5%pot", problems["unlocked"]))
        g.set_baseline(base.x, base.y)
        problems["frequency"] = g.problem()
    for p in problems.values():
        tp.solve(p, args.algorithm, max_iters=2)  # compile
    per = {k: [] for k in problems}
    for r in range(args.rounds):
        for name, p in problems.items():
            res = tp.solve(p, args.algorithm, target_gap=target_gap("0.5%pot", p))
            per[name].append(res.seconds / res.iterations)
            print(f"round {r + 1} {name:9s} {res.iterations:4d} it  {res.seconds:7.3f} s  "
                  f"{1000 * res.seconds / res.iterations:7.2f} ms/it  exploitability "
                  f"{100 * res.exploitability / p.stats['pot']:.3f}% pot", flush=True)
    for name in per:
        if name != "unlocked":
            print(f"{name} / unlocked seconds per iteration: {sum(per[name]) / sum(per['unlocked']):.3f}")


if __name__ == "__main__":
    main()
