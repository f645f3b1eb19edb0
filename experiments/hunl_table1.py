"""Table 1 of Brown, Sandholm & Amos (2018), "Depth-limited solving", §6.2, on our blueprint:
the blueprint, naive depth-limited solving (k = 1) and the full method (k = 4) against the
blueprint, on the same cards, scored by AIVAT.

    .venv/bin/python experiments/hunl_table1.py --abstraction abs.npz --blueprint bp.npz --pairs 300

The paper plays its agents against other bots (Baby Tartanian8, Slumbot); here the opponent is
the blueprint itself (``--vs``, default ``--blueprint``). Each row is ``duplicate_match`` with
the same ``--seed``, so every row is dealt the same cards and the differences between rows are
paired over the deals. AIVAT's value function is the blueprint's (``play.aivat``); its terms
have mean 0, so the AIVAT column estimates the same quantity as the plain one with a smaller
variance (Burch et al. 2018, §4). Intervals: mean ± 1.96 s / sqrt(n) over the pairs, in mbb/g
for the row's agent (positive: it wins). Also the standard deviation per pair of the plain and
AIVAT results and of the row's agent's gain over the blueprint in AIVAT's terms (where the
variance AIVAT leaves is). Writes ``table1.md`` and ``table1.json`` under ``--out`` and prints
their paths.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np

from treeplex.play.aivat import Aivat
from treeplex.play.match import duplicate_match
from treeplex.play.realtime import make_agent

ROWS = (("blueprint (no real-time solving)", "{bp}"), ("naive depth-limited solving (k = 1)", "dl:{bp},k=1"),
        ("depth-limited solving (k = 4)", "dl:{bp},k=4"))


def paired(x, y, big_blind: int) -> tuple[float, float]:
    """mean and 95% half-width of x - y over the pairs, in mbb/g."""
    d = np.asarray(x) - np.asarray(y)
    scale = 1000.0 / big_blind
    return float(d.mean() * scale), float(1.96 * d.std(ddof=1) / math.sqrt(len(d)) * scale)


def a_gain(parts) -> np.ndarray:
    """Per duplicate pair, A's gain over the blueprint at its decisions (``Aivat.parts``, in
    player 0's chips: A is player 0 in a pair's first hand, player 1 in its second), A's chips."""
    g = np.array([(q["gain0"], -q["gain1"]) for q in parts]).reshape(-1, 2, 2)
    return (g[:, 0, 0] + g[:, 1, 1]) / 2


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--abstraction", required=True)
    ap.add_argument("--blueprint", required=True, help="the agents' blueprint (and the value function)")
    ap.add_argument("--vs", default=None, help="the opponent (default: the blueprint)")
    ap.add_argument("--pairs", type=int, default=300, help="duplicate pairs per row")
    ap.add_argument("--budget", default="0,1,1,0.5", help="the depth-limited agents' seconds per street")
    ap.add_argument("--agent-options", default="", help="appended to the dl: specs, e.g. ',rollouts=500'")
    ap.add_argument("--seed", type=int, default=4)
    ap.add_argument("--out", default="out/hunl_table1")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    rows = []
    for label, spec in ROWS:
        spec = spec.format(bp=args.blueprint) + (args.agent_options if spec.startswith("dl:") else "")
        a = make_agent(spec, args.abstraction, args.seed, args.budget)
        b = make_agent(args.vs or args.blueprint, args.abstraction, args.seed + 1)
        a.name, b.name = a.name + "-A", b.name + "-B"
        aivat = Aivat(a.bp, a.bp.flops, seed=args.seed, gains=True)
        t0 = time.perf_counter()
        r = duplicate_match(a, b, args.pairs, args.seed, a.bp.table, a.bp.flops, allin_ev=True, aivat=aivat)
        wall = time.perf_counter() - t0
        gain = a_gain(aivat.parts)
        times = getattr(a, "times", None)
        rows.append({"row": label, "agent": spec, "plain": [r["mbb"], r["ci95"]],
                     "adjusted": [r["adjusted"]["mbb"], r["adjusted"]["ci95"]],
                     "aivat": [r["aivat"]["mbb"], r["aivat"]["ci95"]], "wall_s": wall,
                     "decision_s": None if times is None else [float(np.mean(t)) if t else None for t in times],
                     "per_pair": {**r["per_pair"], "gain": gain.tolist()}})
        print(f"{label}: AIVAT {r['aivat']['mbb']:+.1f} ± {r['aivat']['ci95']:.1f} mbb/g, plain "
              f"{r['mbb']:+.1f} ± {r['ci95']:.1f} ({wall:.0f} s)", flush=True)

    bb = a.bp.table.big_blind
    diffs = [(f"{rows[i]['row']} − {rows[j]['row']}", *paired(rows[i]["per_pair"][kind], rows[j]["per_pair"][kind], bb))
             for i, j in ((2, 1), (2, 0), (1, 0)) for kind in ("aivat",)]
    lines = [f"{args.pairs} duplicate pairs per row against {args.vs or args.blueprint}, seed {args.seed}, budget "
             f"{args.budget} (seconds per street), the same cards in every row. mbb/g for the row's agent ± 95% CI.", "",
             "| agent | AIVAT | plain | all-in adjusted | wall | s per flop / turn / river decision |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        d = r["decision_s"]
        per = "–" if d is None else " / ".join("–" if x is None else f"{x:.2f}" for x in d[1:])
        lines.append(f"| {r['row']} | {r['aivat'][0]:+.0f} ± {r['aivat'][1]:.0f} | {r['plain'][0]:+.0f} ± "
                     f"{r['plain'][1]:.0f} | {r['adjusted'][0]:+.0f} ± {r['adjusted'][1]:.0f} | {r['wall_s']:.0f} s | {per} |")
    lines += ["", "Paired differences (AIVAT, same deals):", "", "| difference | mbb/g ± 95% CI |", "|---|---|"]
    lines += [f"| {name} | {m:+.0f} ± {h:.0f} |" for name, m, h in diffs]
    sd = lambda x: float(np.std(x, ddof=1) * 1000 / bb)  # noqa: E731  per pair, mbb/g
    lines += ["", "Where AIVAT's variance is (standard deviation per pair, mbb/g): the score is v(root) plus the "
              "row's agent's gain over the blueprint at its decisions in v's terms, sum_a pi(a) v(h a) - v(h) "
              "(v knows both hands), plus the rest (play.aivat's module doc):", "",
              "| agent | plain | AIVAT | its gain | AIVAT − gain |", "|---|---|---|---|---|"]
    for r in rows:
        pp = r["per_pair"]
        lines.append(f"| {r['row']} | {sd(pp['plain']):.0f} | {sd(pp['aivat']):.0f} | {sd(pp['gain']):.0f} | "
                     f"{sd(np.subtract(pp['aivat'], pp['gain'])):.0f} |")
    md, js = os.path.join(args.out, "table1.md"), os.path.join(args.out, "table1.json")
    with open(md, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(js, "w") as f:
        json.dump({"args": vars(args), "rows": rows, "differences": diffs}, f, indent=1)
    print("\n".join(lines))
    print(f"wrote {md} and {js}")


if __name__ == "__main__":
    main()
