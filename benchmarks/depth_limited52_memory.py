"""Memory of depth-limited solving on nlfh52, phase by phase, per full-layout sequence.

    .venv/bin/python benchmarks/depth_limited52_memory.py --game "nlfh52(stack=1000, flops=S8)"

The pipeline of ``experiments/depth_limited_nlfh.py --game nlfh52(...)`` for one off-tree size
and one k (the blueprint only a few DCFR iterations: memory does not depend on how long it
runs). For each phase: the resident memory after it, its peak while it ran (sampled every 10
ms: :func:`treeplex.core.memory.measured`) and both divided by the game's full-layout sequences (both players,
``treeplex info GAME --count``), so that a larger game's need can be read off before it is run.
``--top N``: also the N source lines that hold the most memory allocated in each phase and still
held after it (tracemalloc: numpy's arrays, not numba's). Linux only (reads /proc).
"""

import argparse
import tracemalloc

from treeplex.core.memory import measured, rss
from treeplex.depth_limited.nlfh52 import (LeafValues52, View52, bias_table52, check_pipeline_memory,
                                           compute_blueprint52, evaluate_full, self_generative_table52)
from treeplex.depth_limited.offtree52 import Translator, dl_response, offtree_game
from treeplex.games import parse_game_name
from treeplex.poker.nlfh52 import NLFH52


def rss_mb() -> float:
    return rss() / 2**20


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="nlfh52(stack=1000, flops=S8)")
    ap.add_argument("--offtree", type=float, default=0.75)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--bp-iters", type=int, default=10)
    ap.add_argument("--round2", default="safe", choices=["none", "unsafe", "safe"])
    ap.add_argument("--round2-iters", type=int, default=20, help="DCFR iterations of the flop re-solve (the "
                                                                   "experiment's: 200)")
    ap.add_argument("--top", type=int, default=0, help="the N allocating lines of each phase (slower)")
    args = ap.parse_args(argv)
    name, params = parse_game_name(args.game)
    state = {}
    n_full = [0]

    def build():
        G = NLFH52(**params)
        G.problem()
        check_pipeline_memory(G)
        n_full[0] = sum(G.sizes()["sequences_full_layout"])
        state["view"] = View52(G)

    def blueprint():
        state["bp"] = compute_blueprint52(state["view"], "dcfr", max_iters=args.bp_iters)

    def bias():
        state["lv"] = LeafValues52(state["view"], state["bp"].b, keep_strategies=False)  # as the experiment
        state["bias"] = bias_table52(state["lv"], 0, args.k)

    def self_generative():
        state["sg"] = self_generative_table52(state["lv"], 0, args.k, solver="dcfr", max_iters=20)[0]

    def offtree():
        gx, bet, after = offtree_game(state["view"].game, params, "", args.offtree)
        gx.problem()
        vx = View52(gx)
        tr = Translator(state["view"], vx, bet)
        bx = [tr.behavioral(p, state["bp"].b[p]) for p in (0, 1)]
        state.update(vx=vx, tr=tr, bx=bx, bet=bet, after=after)

    def response():
        s = state
        b, _ = dl_response(s["tr"], s["sg"], s["lv"], s["bx"], s["bet"], s["after"], safe=True, round2=args.round2,
                           solver="dcfr", round2_kw={"max_iters": args.round2_iters}, max_iters=50)
        s["profile"] = list(s["bx"])
        s["profile"][1] = b

    def exploitability():
        evaluate_full(state["vx"], state["profile"])

    phases = [("game, problem and view", build), (f"blueprint ({args.bp_iters} DCFR iterations)", blueprint),
              (f"leaf values, bias table k = {args.k}", bias), (f"self-generative table k = {args.k}", self_generative),
              (f"off-tree game {args.offtree:g} pot, its view, translation", offtree),
              (f"one response (round 2 {args.round2})", response), ("its exploitability (best responses)", exploitability)]
    base = rss_mb()
    print(f"{args.game}: start {base:.0f} MB")
    print(f"{'phase':<44} {'s':>7} {'RSS after':>10} {'peak':>8} {'B/seq after':>12} {'B/seq peak':>11}")
    if args.top:
        tracemalloc.start()
    for label, fn in phases:
        before = tracemalloc.take_snapshot() if args.top else None
        _, sec, peak = measured(fn)
        peak, after = peak / 2**20, rss_mb()
        per = lambda mb: (mb - base) * 2**20 / n_full[0]  # noqa: E731
        print(f"{label:<44} {sec:7.1f} {after:8.0f} MB {peak:6.0f} MB {per(after):12.0f} {per(peak):11.0f}", flush=True)
        if args.top:
            for d in tracemalloc.take_snapshot().compare_to(before, "lineno")[:args.top]:
                f = d.traceback[0]
                print(f"    {d.size_diff / 2**20:+8.1f} MB  {f.filename.split('treeplex/')[-1]}:{f.lineno}")
    print(f"full-layout sequences (both players): {n_full[0]:,}")


if __name__ == "__main__":
    main()
