"""The off-tree response's real-time cost per decision on nlfh52: the preflop solve, then the flop re-solve line by line.

    .venv/bin/python benchmarks/flop_resolve_lines.py --game "nlfh52(stack=5000, flops=S8)" --blueprint-cache out/bp_s8_50bb.npz

The pipeline of ``experiments/depth_limited_nlfh.py --game nlfh52(...) --round2 safe`` for one
off-tree size and a bias table of ``--k`` values, timed as play meets it. The first decision
is the response to the bet: the depth-limited preflop subgame (its seconds). The next comes
when the preflop has ended on one line (a call that deals the flop): the safe re-solve of
the flop below that line alone. The lines do not interact (each gadget and infoset is below
one line, tests/test_depth_limited52.py), so that re-solve gives the strategy the
experiment's re-solve of every line at once gives there; this times each line's, in DCFR
runs ``W:N`` (N iterations from a prior of weight W, 0: cold, ``offtree52.flop_prior``) or
``W:Ts`` (until T seconds from the start of its build, the time budget of
``--round2-budget``), on the fused walk (``poker/fused_lines.py``) or, with ``:streets``
after it, on the streets operator's products (the sequence form, as before the thirteenth
session: the before/after pair in one run), and reports its gap / 2 (the line's part of the whole game's gap, in
mbb/g) and its seconds (build, solve and one gap check). The blueprint is
read from ``--blueprint-cache`` (the experiment's ``--blueprint-cache`` file) or computed
(``--bp-iters`` DCFR iterations, saved there).
"""

import argparse
import resource
import time

import numpy as np

from treeplex.depth_limited.nlfh52 import (LeafValues52, View52, bias_table52, cached_blueprint52,
                                           check_pipeline_memory)
from treeplex.depth_limited.offtree52 import (Translator, dl_response, flop_alts, offtree_game, offtree_table,
                                              safe_flop_resolve)
from treeplex.errors import InputError
from treeplex.games import parse_game_name
from treeplex.model.metrics import to_mbb
from treeplex.poker.nlfh52 import NLFH52


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def parse_run(text: str) -> tuple[float, dict, str]:
    """W:N or W:Ts, then optionally :streets -> (W, the re-solve's stop rule and engine, a column title)."""
    parts = text.split(":")
    streets = len(parts) == 3 and parts[2] == "streets"
    try:
        if len(parts) != 2 + streets:
            raise ValueError
        w, n = float(parts[0]), parts[1]
        rule = {"budget": float(n[:-1])} if n.endswith("s") else {"max_iters": int(n)}
    except ValueError:
        raise InputError(f"--runs {text!r}: expected W:N or W:Ts (prior weight, iterations or seconds), e.g. 0:200, "
                         "10:100 or 0:30s, then optionally :streets") from None
    if not (w >= 0 and all(v > 0 for v in rule.values())):
        raise InputError(f"--runs {text!r}: the weight must be >= 0, the iterations and seconds > 0")
    if streets:
        rule["fused"] = False
    return w, rule, f"W={w:g}, " + (f"{n[:-1]} s" if "budget" in rule else f"{n} it") + \
        (", streets" if streets else ", fused")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="nlfh52(stack=5000, flops=S8)")
    ap.add_argument("--blueprint-cache", default=None, metavar="FILE.npz")
    ap.add_argument("--bp-iters", type=int, default=1000, help="DCFR iterations of a blueprint not in the cache")
    ap.add_argument("--offtree", type=float, default=0.75)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--runs", nargs="+", default=["0:200", "0:30s"],
                    help="W:N: N DCFR iterations, prior weight W; W:Ts: until T seconds")
    args = ap.parse_args(argv)
    runs = [parse_run(r) for r in args.runs]
    name, params = parse_game_name(args.game)
    G = NLFH52(**params)
    check_pipeline_memory(G)
    G.problem()
    view = View52(G)
    t0 = time.perf_counter()
    bp = cached_blueprint52(view, args.blueprint_cache, max_iters=args.bp_iters)
    bb = G.big_blind
    mbb = lambda chips: to_mbb(chips, bb)  # noqa: E731
    print(f"{G.name}: blueprint {bp.iterations} DCFR iterations, {mbb(bp.gap / 2):.3f} mbb/g "
          f"({time.perf_counter() - t0:.1f} s to read or make)", flush=True)
    lv = LeafValues52(view, bp.b, keep_strategies=False)
    table_g = bias_table52(lv, 0, args.k)
    gx, bet, after = offtree_game(G, params, "", args.offtree)
    gx.problem()
    vx = View52(gx)
    tr = Translator(view, vx, bet)
    bx = [tr.behavioral(p, bp.b[p]) for p in (0, 1)]
    lv.best_response(0)  # a blueprint quantity (every response's root gadget reads it), made once
    t0 = time.perf_counter()
    b1, info = dl_response(tr, table_g, lv, bx, bet, after, safe=True, round2="none", solver="dcfr",
                           target_gap=bb / 1000, max_iters=1500)
    pre = time.perf_counter() - t0
    sol = info["solution"]
    print(f"decision 1, the response to the {args.offtree:g}-pot bet: {pre:.2f} s (the depth-limited subgame "
          f"{sol.seconds:.2f} s, {sol.iterations} DCFR iterations, {[int(n) for n in info['subgame'].problem.n_seqs]} "
          "sequences)", flush=True)
    lines = [e["id"] for e in vx.lines if tr.after_bet(gx.betting.node(e["history"]))]
    alts = flop_alts(vx, offtree_table(tr, table_g, LeafValues52(vx, bx), after)[0], sol, b1, lines)
    lock = [bx[0], b1]
    history = {e["id"]: e["history"] for e in vx.lines}
    t0 = time.perf_counter()
    gx.fused_tree()
    print(f"(the fused walk's tree of the game with the bet, built once for every line: "
          f"{time.perf_counter() - t0:.2f} s, peak RSS {peak_rss_mb():,.0f} MB)")
    t0 = time.perf_counter()
    for w in (0.0, 1.0):  # numba's compile, on both engines
        safe_flop_resolve(vx, lock, lines[-1:], 0, alts, "dcfr", warm=w, max_iters=2, check_every=2)
    print(f"(the re-solve's first runs, 2 iterations of one line cold and warm, compile: "
          f"{time.perf_counter() - t0:.2f} s)")
    head = "| line | sequences | " + " | ".join(f"{title}: s, iterations, gap/2 mbb/g" for _, _, title in runs) + " |"
    print("\ndecision 2, the flop after the line the preflop ended on, re-solved safely:\n")
    print(head)
    print("|" + "---|" * (2 + len(runs)))
    secs = np.zeros((len(lines), len(runs)))
    gaps = np.zeros((len(lines), len(runs)))
    for i, line in enumerate(lines):
        cells, size = [], None
        for j, (w, rule, _) in enumerate(runs):
            t0 = time.perf_counter()
            stop = {"max_iters": rule["max_iters"], "check_every": rule["max_iters"]} if "max_iters" in rule else \
                {"deadline": t0 + rule["budget"], "check_every": 10**9}
            engine = {"fused": rule["fused"]} if "fused" in rule else {}
            sf = safe_flop_resolve(vx, lock, [line], 0, alts, "dcfr", warm=w, **stop, **engine)
            secs[i, j] = time.perf_counter() - t0
            gaps[i, j] = mbb(sf.res.gap / 2)
            size = [int(T.n_seqs) for T in sf.problem.treeplexes]
            cells.append(f"{secs[i, j]:.2f}, {sf.res.iterations}, {gaps[i, j]:.3f}")
            del sf
        print(f"| {history[line]} | {size[0]:,} + {size[1]:,} | " + " | ".join(cells) + " |", flush=True)
    print("| all lines (sum) | | " + " | ".join(f"{secs[:, j].sum():.2f}, , {gaps[:, j].sum():.3f}"
                                                for j in range(len(runs))) + " |")
    print(f"\npeak RSS {peak_rss_mb():,.0f} MB; per decision: the response {pre:.2f} s; "
          "the flop re-solve of one line, median and largest: " +
          "; ".join(f"{title}: {np.median(secs[:, j]):.2f} s and {secs[:, j].max():.2f} s"
                    for j, (_, _, title) in enumerate(runs)))


if __name__ == "__main__":
    try:
        main()
    except InputError as e:
        raise SystemExit(f"error: {e}")
