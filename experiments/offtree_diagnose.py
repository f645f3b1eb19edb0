"""Why depth-limited solving loses near all-in in the off-tree sweep: measurements.

    .venv/bin/python experiments/offtree_diagnose.py --sizes 0.75 3 6 12 20

Same game, blueprint and self-generative leaf table as ``offtree_sweep.py`` (both cached
under ``--out`` so that reruns skip the two minutes of CFR+). For each off-tree opening size
x, and each leaf after the bet:

- the stack-to-pot ratio (SPR, chips behind / pot) at the leaf and at the two bracketing
  leaves whose values are borrowed (scaled by the pot ratio, appendix A);
- how much of the borrowed values' spread lies outside what the real leaf allows: at a
  leaf with pot P and B chips behind, player 0's net result per state lies in
  [-(P/2 + B), P/2 + B]; a value scaled from a deeper leaf can exceed it;
- the responder's first-round play right after the bet (fold / call / raise, weighted by its
  reach and the deal) under depth-limited solving with k values and under the reference
  that solves the whole rest of the game after the bet (``depth_limit=False``);
- exploitability (mbb/g) of each response.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from treeplex.model.compile import compile_game
from treeplex.depth_limited.blueprint import Blueprint, compute_blueprint
from treeplex.depth_limited.evaluation import exploitability, plan_of
from treeplex.depth_limited.index import NLFHIndex
from treeplex.depth_limited.leaves import (LeafEvaluator, LeafTable, bracket, first_offtree, leaf_nodes, off_label,
                                           offtree_leaf_values)
from treeplex.depth_limited.nested import respond_to_offtree
from treeplex.depth_limited.nlfh_subgames import reach
from treeplex.depth_limited.sets import self_generative_table
from treeplex.depth_limited.translation import translate
from treeplex.poker.nlfh import NLFH
from treeplex.model.strategy import behavioral_dict

from offtree_sweep import offtree_game  # noqa: E402  (this folder)


def cached_blueprint(G: NLFH, path: str) -> Blueprint:
    problem = compile_game(G)
    if os.path.exists(path):
        z = np.load(path)
        plans = (z["x"], z["y"])
        b = tuple(T.behavioral_from_plan(x) for T, x in zip(problem.treeplexes, plans))
        dicts = tuple(behavioral_dict(T, x) for T, x in zip(problem.treeplexes, plans))
        return Blueprint(G, problem, NLFHIndex(G, problem), plans, b, dicts, float(z["mbb"]), int(z["iters"]),
                         0.0, 0.0)
    bp = compute_blueprint(G, min_iters=1000, target_mbb=1.0, problem=problem)
    np.savez(path, x=bp.plans[0], y=bp.plans[1], mbb=bp.exploitability_mbb, iters=bp.iterations)
    return bp


def cached_table(ev: LeafEvaluator, bp: Blueprint, k: int, path: str) -> LeafTable:
    if os.path.exists(path):
        z = np.load(path, allow_pickle=True)
        if z["values"].shape[0] >= k:
            return LeafTable(bp.game, 0, dict(ev.row), z["values"][:k], list(z["names"][:k]))
    table = self_generative_table(ev, 0, bp.b, k)[0]
    np.savez(path, values=table.values, names=np.array(table.names, dtype=object))
    return table


def spr(node) -> float:
    g = node.game
    return (g.stack - max(node.contrib)) / node.pot


def first_round_mix(strategy: dict, G, after, holes, w_resp) -> dict:
    """Responder's fold / call / raise frequencies at ``after`` (weights w_resp[h])."""
    names = [G.cards_name(c) for c in holes]
    tot = {"f": 0.0, "c": 0.0, "raise": 0.0}
    for h, n in enumerate(names):
        probs = strategy.get(f"{n}||{after.hist_str}")
        if probs is None or w_resp[h] == 0:
            continue
        for a, p in probs.items():
            tot[a if a in ("f", "c") else "raise"] += w_resp[h] * p
    s = sum(tot.values())
    return {a: v / s for a, v in tot.items()} if s > 0 else tot


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[0.75, 3, 6, 12, 20])
    ap.add_argument("--k", type=int, nargs="+", default=[1, 4, 8])
    ap.add_argument("--weighting", default="average")
    ap.add_argument("--out", default="out/offtree_diag")
    ap.add_argument("--no-reference", action="store_true")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    params = dict(ranks=8, suits=2, hole=1, flop=1, stack=5000, bets="0.5,1,allin")
    G = NLFH(**params)
    t0 = time.perf_counter()
    log = lambda *a: print(f"[{time.perf_counter() - t0:7.1f} s]", *a, flush=True)  # noqa: E731
    bp = cached_blueprint(G, os.path.join(args.out, "blueprint.npz"))
    log(f"blueprint {bp.exploitability_mbb:.3f} mbb/g")
    ev = LeafEvaluator(bp.index)
    table = cached_table(ev, bp, max(args.k), os.path.join(args.out, "sg_table.npz"))
    log(f"table k = {table.k}")
    holes = bp.index.holes
    results = []
    for x in args.sizes:
        Gx, after, Px, x_bp, info, rpat = offtree_game(params, G, bp, x)
        row = {"x": x, "f": info["f"], "rpat": rpat, "leaves": []}
        # leaves: SPR and value bounds
        lv = offtree_leaf_values(table, after, args.weighting)
        for leaf in leaf_nodes(after):
            off = first_offtree(leaf, G)
            srcs = []
            xx = off.fraction_of(off.raise_to_of(off_label(leaf, off)))
            for lab, w in bracket(translate(off, G), xx, args.weighting):
                dst = translate(leaf, G, substitute=(off, lab))
                srcs.append((dst.hist_str, round(spr(dst), 2), round(leaf.contrib[0] / dst.contrib[0], 3), w))
            v = lv[leaf.id]
            bound = leaf.pot / 2 + (G.stack - max(leaf.contrib))
            mask = bp.index.deal > 0
            vals = v[:, mask]
            row["leaves"].append({"leaf": leaf.hist_str, "spr": round(spr(leaf), 2), "from": srcs,
                                  "bound": bound, "max_abs": float(np.abs(vals).max()),
                                  "frac_out": float((np.abs(vals) > bound + 1e-9).mean()),
                                  "spread_k": float((vals.max(0) - vals.min(0)).mean())})
        r_resp = reach(bp.dicts[1], G, G.root, 1, holes)
        w_resp = bp.index.deal.sum(axis=0) * r_resp
        # depth-limited responses
        row["dl"] = {}
        for k in args.k:
            resp = respond_to_offtree(bp, table.first(k), Gx, after, leaf_weighting=args.weighting)
            d1 = dict(bp.dicts[1]); d1.update(resp.strategy)
            e, evl = exploitability(Px, x_bp, plan_of(Px, 1, d1), G.big_blind)
            row["dl"][k] = {"mbb": e, "mix": first_round_mix(resp.strategy, Gx, after, holes, w_resp)}
        if not args.no_reference:
            resp = respond_to_offtree(bp, None, Gx, after, depth_limit=False)
            d1 = dict(bp.dicts[1]); d1.update(resp.strategy)
            e, _ = exploitability(Px, x_bp, plan_of(Px, 1, d1), G.big_blind)
            row["to_end"] = {"mbb": e, "mix": first_round_mix(resp.strategy, Gx, after, holes, w_resp)}
        results.append(row)
        log(json.dumps(row, default=float))
        with open(os.path.join(args.out, f"diag_{args.weighting}.json"), "w") as f:
            json.dump(results, f, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
