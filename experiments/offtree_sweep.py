"""Off-tree opening sizes across each bracket: depth-limited (k values per leaf) against RPAT.

    .venv/bin/python experiments/offtree_sweep.py                    # small NLFH member, 10 sizes
    .venv/bin/python experiments/offtree_sweep.py --sizes 0.6 0.9 3 --k 1 8

The setting of ``depth_limited_nlfh.py`` (same game, blueprint and exact exploitability), with
one blueprint and one leaf table for every size. For each off-tree opening size x (between two
of the abstraction's raises), player 1 responds by RPAT and by depth-limited solving with k
self-generative values per leaf, the leaves after the bet mixing the two bracketing sizes'
values by the paper's plain average (1/2 each), by RPAT's f(x) and 1 - f(x), or half-way
between the two (``leaf_weighting``: "average", "rpat", "blend"). Round 2 is safe with the
step-1 gifts (``respond_to_offtree``'s defaults). Writes ``sweep.md`` and ``sweep.json``
under ``--out``, with each weighting's mean over each bracket.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from treeplex.model.compile import compile_game
from treeplex.depth_limited.blueprint import compute_blueprint
from treeplex.depth_limited.evaluation import exploitability, plan_of
from treeplex.depth_limited.index import NLFHIndex
from treeplex.depth_limited.leaves import WEIGHTINGS, LeafEvaluator
from treeplex.depth_limited.nested import respond_to_offtree
from treeplex.depth_limited.sets import bias_table, self_generative_table
from treeplex.depth_limited.translation import rpat_bracket, rpat_plan
from treeplex.errors import InputError
from treeplex.poker.nlfh import NLFH, frac_label
from treeplex.model.strategy import behavioral_from_dict

SIZES = [0.6, 0.7, 0.8, 0.9, 0.95, 1.5, 3, 6, 12, 20]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--stack", type=int, default=5000)
    ap.add_argument("--sizes", type=float, nargs="+", default=SIZES)
    ap.add_argument("--k", type=int, nargs="+", default=[1, 4, 8])
    ap.add_argument("--method", choices=["self-generative", "bias"], default="self-generative")
    ap.add_argument("--weightings", nargs="+", choices=WEIGHTINGS, default=list(WEIGHTINGS))
    ap.add_argument("--out", default="out/offtree_sweep")
    args = ap.parse_args(argv)
    params = dict(ranks=args.ranks, suits=2, hole=1, flop=1, stack=args.stack, bets="0.5,1,allin")
    G = NLFH(**params)
    for x in args.sizes:
        try:
            rpat_bracket(G.root, x)
        except InputError as e:
            print(f"offtree_sweep: error: --sizes {x:g}: {e}", file=sys.stderr)
            return 2
    os.makedirs(args.out, exist_ok=True)
    t0 = time.perf_counter()
    log = lambda *a: print(f"[{time.perf_counter() - t0:7.1f} s]", *a, flush=True)  # noqa: E731
    bp = compute_blueprint(G, min_iters=1000, target_mbb=1.0)
    log(f"blueprint {bp.iterations} iterations, {bp.exploitability_mbb:.3f} mbb/g")
    ev = LeafEvaluator(bp.index)
    kmax = max(args.k)
    table = (bias_table(ev, 0, bp.b, kmax) if args.method == "bias"
             else self_generative_table(ev, 0, bp.b, kmax)[0])
    log(f"{args.method} leaf table, k = {kmax}")
    rows = []
    for x in args.sizes:
        Gx, after, Px, x_bp, info, rpat = offtree_game(params, G, bp, x)
        row = {"size": x, "f": info["f"], "below": info["A"], "above": info["B"], "rpat": rpat, "dl": {}}
        for w in args.weightings:
            for k in args.k:
                try:
                    resp = respond_to_offtree(bp, table.first(k), Gx, after, leaf_weighting=w)
                except InputError as e:  # e.g. an LP refusal: record it and go on with the sweep
                    log(f"x = {x:g}, {w} k={k}: refused: {e}")
                    row["dl"][f"{w} k={k}"] = None
                    continue
                d1 = dict(bp.dicts[1])
                d1.update(resp.strategy)
                row["dl"][f"{w} k={k}"] = exploitability(Px, x_bp, plan_of(Px, 1, d1), bp.game.big_blind)[0]
        rows.append(row)
        log(f"x = {x:g} (f = {row['f']:.3f} to {row['below']}): RPAT {row['rpat']:.2f}; "
            + ", ".join(f"{n} {fmt(v)}" for n, v in row["dl"].items()))
        write(args, G, bp, rows)
    return 0


def offtree_game(params: dict, G, bp, x: float):
    """The game with an off-tree first bet of ``x`` pot: (game, node after the bet, its
    problem, player 0's blueprint plan there, RPAT's bracket info, RPAT's exploitability in
    mbb/g against the blueprint)."""
    Gx = NLFH(**params, off_tree={"": (x,)})
    after = Gx.root.child(frac_label(x))
    Px = compile_game(Gx)
    x_bp = plan_of(Px, 0, bp.dicts[0])
    idx = NLFHIndex(Gx, Px)
    y_rpat, info = rpat_plan(Px.Y, idx.parse, bp.dicts[1], G, after, behavioral_from_dict(Px.Y, bp.dicts[1], 1))
    return Gx, after, Px, x_bp, info, exploitability(Px, x_bp, y_rpat, G.big_blind)[0]


def fmt(v) -> str:
    return "refused" if v is None else f"{v:.2f}"


def write(args, G, bp, rows) -> None:
    names = list(rows[0]["dl"])
    lines = [f"Game: {G.name}; blueprint {bp.exploitability_mbb:.3f} mbb/g; {args.method} values; "
             f"exploitability of player 1's response in mbb/g", "",
             "| size (x pot) | RPAT f | RPAT | " + " | ".join(names) + " |", "|---|---|---|" + "---|" * len(names)]
    for r in rows:
        lines.append(f"| {r['size']:g} | {r['f']:.3f} | {r['rpat']:.2f} | "
                     + " | ".join(fmt(r['dl'][n]) for n in names) + " |")
    # each bracket's mean (sizes between the same two raises), and how many sizes beat RPAT
    groups = {}
    for r in rows:
        groups.setdefault((r["below"], r["above"]), []).append(r)
    lines += ["", "| bracket | sizes | RPAT mean | " + " | ".join(f"{n} mean (<= RPAT)" for n in names) + " |",
              "|---|---|---|" + "---|" * len(names)]
    for (a, b), rs in groups.items():
        cells = []
        for n in names:
            vals = [r["dl"][n] for r in rs if r["dl"][n] is not None]
            wins = sum(r["dl"][n] is not None and r["dl"][n] <= r["rpat"] + 1e-6 for r in rs)
            cells.append(f"{sum(vals) / len(vals):.2f} ({wins}/{len(rs)})" if vals else "refused")
        lines.append(f"| {a}-{b} | {len(rs)} | {sum(r['rpat'] for r in rs) / len(rs):.2f} | " + " | ".join(cells) + " |")
    with open(os.path.join(args.out, "sweep.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out, "sweep.json"), "w") as f:
        json.dump({"game": G.name, "method": args.method, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
