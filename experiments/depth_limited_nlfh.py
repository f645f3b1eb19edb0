"""Figure 1 of Brown, Sandholm & Amos (2018), "Depth-limited solving", on a small NLFH.

    .venv/bin/python experiments/depth_limited_nlfh.py            # about 5 minutes on 2 busy cores (--arena-pairs 0)
    .venv/bin/python experiments/depth_limited_nlfh.py --ranks 13 --arena-pairs 0 --out out/dl_r13  # 8 min
    .venv/bin/python experiments/depth_limited_nlfh.py --game "nlfh52(stack=1000, flops=S8)" --out out/dl52

``--game nlfh52(...)`` (or ``nlfh-50-s64``, the issue's NLFH-50/S64) runs the figure on the
52-card public tree x hands engine (:func:`main52`): two hole cards, a three-card flop, five-card
showdowns. There the blueprint is DCFR to ``--target-mbb`` (at most ``--max-iters``), the
subgames are solved by DCFR (the LP refuses 52-card payoffs), the flop after the bet is played
by the bracketing sizes' translated blueprints half and half (``--round2 none``; ``unsafe``
re-solves it, one locked solve of the whole game per point; ``safe`` the same with the bettor's
hands behind resolve gadgets, each held to its step-1 leaf value plus its gift), and there is
no arena.

The blueprint is CFR+ on the abstraction {0.5, 1} x pot + all-in (both rounds), run to below
1 mbb/g. Player 0 (P1, the small blind) then opens with an off-tree bet of ``--offtree`` x pot
(default 0.75). Player
1's response is computed by

- depth-limited solving after the bet (leaves at the end of the first round, the k values
  averaged from the leaves after the 0.5 and 1 bets, root safety gadget), then safe subgame
  solving of the rest of the game at each leaf; k in {1, 2, 4, 8, 16} state values, the
  opponent's continuation strategies built by the *bias* and the *self-generative* methods;
- RPAT (randomized pseudo-harmonic action translation);
- and, for reference, one safe subgame solved to the end of the game after the bet (the best
  response possible while the blueprint is kept everywhere else).

The lower bound is CFR+ (same stopping rule) on the game with the off-tree size in the
abstraction. Every
exploitability is exact (best responses in the game where the off-tree bet is available), in
mbb/g = 1000 x (gap / 2) / big blind. The arena then plays the depth-limited agent (it also
bets the off-tree size itself, by a depth-limited solve at the start of the game) against the
blueprint-with-RPAT agent in duplicate hands.

``--offtree`` must lie strictly between two of the abstraction's opening raises (with the
default bets: above 0.5 pot, not 1 pot, and below all-in); other sizes are refused in one
line (exit 2) before any solving.

Writes ``table.md``, ``results.json`` and ``figure1.png`` under ``--out`` (default
``out/depth_limited_nlfh``) and prints the paths; on nlfh52 also each size's ``rows.json``
before its lower bound (a second blueprint, the longest step).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from treeplex.model.compile import compile_game
from treeplex.depth_limited.arena import Agent, exact_match_value, play_duplicate
from treeplex.depth_limited.blueprint import compute_blueprint
from treeplex.depth_limited.evaluation import exploitability, plan_of
from treeplex.depth_limited.index import NLFHIndex
from treeplex.depth_limited.leaves import LeafEvaluator
from treeplex.depth_limited.nested import respond_to_offtree, solve_own_offtree
from treeplex.depth_limited.sets import bias_table, self_generative_table
from treeplex.depth_limited.translation import rpat_bracket, rpat_plan
from treeplex.errors import InputError
from treeplex.poker.nlfh import NLFH, frac_label
from treeplex.model.strategy import behavioral_from_dict


def offtree_size(G: NLFH, Gx: NLFH, size: float) -> float:
    """The off-tree opening's pot fraction in chips (``size`` rounded to a chip), checked to lie
    strictly between two of ``G``'s opening raises; else a one-line :class:`InputError`."""
    label = frac_label(size)
    if label in G.root.actions:
        raise InputError(f"--offtree {size:g}: that size is in the abstraction (bets {G.bets_spec!r})")
    to = Gx.root.raise_sizes().get(label)
    if not size > 0 or to is None or to in G.root.raise_sizes().values():
        raise InputError(f"--offtree {size:g}: not a raise of its own at the first action (it is not positive, or "
                         f"it rounds to the chips of a raise the abstraction has, to the minimum raise or to all-in)")
    x = Gx.root.fraction_of(to)
    try:
        rpat_bracket(G.root, x)
    except InputError as e:
        raise InputError(f"--offtree {size:g} (a raise to {to} chips): {e}") from None
    return x


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--game", default=None, help="nlfh52(...) or nlfh-50-s64: the 52-card engine (main52)")
    ap.add_argument("--max-iters", type=int, default=2000, help="nlfh52: blueprint DCFR iterations at most")
    ap.add_argument("--round2", choices=list(FLOP_NAMES), nargs="+", default=["none"],
                    help="nlfh52: the flop after the bet, one row set each (none: the translated blueprints; "
                         "re-solved unsafely or safely, with the resolve gadgets and the step-1 gifts; maxmargin: safely, with "
                         "the Maxmargin gadget and the same alts)")
    ap.add_argument("--round2-iters", type=int, default=None,
                    help="nlfh52: DCFR iterations of the flop re-solve (default 500 without --round2-budget)")
    ap.add_argument("--round2-budget", type=float, default=None, metavar="SECONDS",
                    help="nlfh52: the flop re-solved line by line, as play meets it, each in at most SECONDS")
    ap.add_argument("--round2-target-mbb", type=float, default=None, metavar="MBB",
                    help="nlfh52: each re-solve (each line's, with --round2-budget) stops once its gap / 2 is at "
                         "most MBB mbb/g of the game")
    ap.add_argument("--round2-warm", type=float, default=0.0, metavar="W",
                    help="nlfh52: the flop re-solve starts from the blueprint's flop play with prior weight W (0: cold)")
    ap.add_argument("--subgame-target-mbb", type=float, default=0.1,
                    help="nlfh52: each depth-limited subgame solved by DCFR to this gap (mbb/g of its root's pairs)")
    ap.add_argument("--subgame-iters", type=int, default=20_000, help="nlfh52: and at most this many iterations")
    ap.add_argument("--blueprint-cache", default=None, metavar="FILE.npz",
                    help="nlfh52: read the blueprint from FILE if it is there (same game), else save it there")
    ap.add_argument("--blueprint-checkpoint", default=None, metavar="FILE",
                    help="nlfh52: save the blueprint's DCFR run here at every gap check, and continue the run "
                         "saved there if FILE exists (a blueprint that takes hours survives a stop)")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--suits", type=int, default=2)
    ap.add_argument("--hole", type=int, default=1)
    ap.add_argument("--flop", type=int, default=1)
    ap.add_argument("--stack", type=int, default=5000, help="chips; blinds are 50/100")
    ap.add_argument("--bets", default="0.5,1,allin", help="the abstraction, pot fractions")
    ap.add_argument("--offtree", type=float, default=0.75, help="player 0's off-tree opening bet, x pot")
    ap.add_argument("--also", type=float, nargs="+", default=None,
                    help="nlfh52: more off-tree sizes (held out) with the same blueprint and leaf tables")
    ap.add_argument("--k", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    ap.add_argument("--min-iters", type=int, default=1000, help="CFR+ iterations at least (the paper: 1000)")
    ap.add_argument("--target-mbb", type=float, default=1.0, help="and until this exploitability")
    ap.add_argument("--subgame-solver", default="lp", help="lp (exact) or a registered solver, e.g. cfr+")
    ap.add_argument("--unsafe", action="store_true", help="also unsafe second-round solving and no root gadget")
    ap.add_argument("--arena-pairs", type=int, default=20000, help="duplicate pairs of hands (0: no arena)")
    ap.add_argument("--arena-k", type=int, default=16)
    ap.add_argument("--skip-solve-to-end", action="store_true",
                    help="skip the reference that solves the rest of the game after the bet exactly (one LP of "
                         "the whole subgame: minutes from 12 ranks on)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="out/depth_limited_nlfh")
    args = ap.parse_args(argv)
    if args.game is not None:
        try:
            return main52(args)
        except InputError as e:
            print(f"depth_limited_nlfh: error: {e}", file=sys.stderr)
            return 2
    t_all = time.perf_counter()
    params = dict(ranks=args.ranks, suits=args.suits, hole=args.hole, flop=args.flop, stack=args.stack, bets=args.bets)
    try:
        G = NLFH(**params)
        Gx = NLFH(**params, off_tree={"": (args.offtree,)})
        offtree_size(G, Gx, args.offtree)
    except InputError as e:
        print(f"depth_limited_nlfh: error: {e}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    after = Gx.root.child(frac_label(args.offtree))
    xs = f"{args.offtree:g}"
    bb = G.big_blind
    log = lambda *a: print(f"[{time.perf_counter() - t_all:7.1f} s]", *a, flush=True)  # noqa: E731

    bp = compute_blueprint(G, min_iters=args.min_iters, target_mbb=args.target_mbb)
    log(f"game {G.name}: {bp.problem.stats['histories']} histories; blueprint CFR+ {bp.iterations} iterations, "
        f"{bp.seconds:.1f} s, exploitability {bp.exploitability_mbb:.3f} mbb/g in the abstraction")
    Px = compile_game(Gx)
    lb = compute_blueprint(Gx, min_iters=args.min_iters, target_mbb=args.target_mbb, problem=Px)
    log(f"lower bound ({xs} in the abstraction): {lb.exploitability_mbb:.3f} mbb/g, {lb.iterations} iterations")
    x_bp = plan_of(Px, 0, bp.dicts[0])

    def expl(response: dict) -> float:
        d1 = dict(bp.dicts[1])
        d1.update(response)
        return exploitability(Px, x_bp, d1, bb)[0]

    idx_x = NLFHIndex(Gx, Px)
    y_rpat, rpat_info = rpat_plan(Px.Y, idx_x.parse, bp.dicts[1], G, after, behavioral_from_dict(Px.Y, bp.dicts[1], 1))
    rpat = exploitability(Px, x_bp, y_rpat, bb)[0]
    log(f"RPAT: {rpat:.2f} mbb/g (f = {rpat_info['f']:.4f} to {rpat_info['A']}, else {rpat_info['B']})")
    full_mbb = None
    if not args.skip_solve_to_end:
        full = respond_to_offtree(bp, None, Gx, after, depth_limit=False, solver=args.subgame_solver)
        full_mbb = expl(full.strategy)
        log(f"safe subgame solved to the end after the bet: {full_mbb:.2f} mbb/g, {full.first_round['histories']} "
            f"histories, {full.seconds:.2f} s")

    ev = LeafEvaluator(bp.index)
    kmax = max(args.k)
    t0 = time.perf_counter()
    tables = {"bias": bias_table(ev, 0, bp.b, kmax)}
    t1 = time.perf_counter()
    tables["self-generative"], sg_log = self_generative_table(ev, 0, bp.b, kmax, solver=args.subgame_solver)
    t2 = time.perf_counter()
    log(f"leaf tables, k = {kmax}: bias {t1 - t0:.1f} s, self-generative {t2 - t1:.1f} s; "
        f"{tables['bias'].nbytes / 1024:.0f} KiB each ({len(ev.leaves)} leaves x {bp.index.n_holes}^2 hole pairs)")

    variants = [("safe", True)] + ([("unsafe", True), ("safe", False)] if args.unsafe else [])
    rows = []
    for method, table in tables.items():
        for k in args.k:
            for round2, root_safety in variants:
                resp = respond_to_offtree(bp, table.first(k), Gx, after, round2=round2, root_safety=root_safety,
                                          solver=args.subgame_solver)
                m = expl(resp.strategy)
                rows.append({"method": method, "k": k, "round2": round2, "root_safety": root_safety,
                             "exploitability_mbb": m, **resp.cost_summary()})
                log(f"{method:16s} k={k:2d} round 2 {round2:6s} root gadget {root_safety!s:5s}: {m:8.2f} mbb/g   "
                    f"DL solve {rows[-1]['depth_limited_seconds']:.2f} s, leaf table "
                    f"{rows[-1]['leaf_table_bytes'] / 1024:.1f} KiB, {rows[-1]['second_round_subgames']} flop "
                    f"subgames {rows[-1]['second_round_seconds']:.2f} s")

    arena = None
    if args.arena_pairs:
        arena = run_arena(args, G, Gx, Px, idx_x, bp, ev, tables["self-generative"], x_bp, y_rpat, after, lb, log)

    results = {"game": G.name, "offtree": args.offtree, "blueprint_mbb": bp.exploitability_mbb,
               "blueprint_iterations": bp.iterations, "lower_bound_mbb": lb.exploitability_mbb,
               "rpat_mbb": rpat, "rpat": rpat_info, "solve_to_end_mbb": full_mbb, "rows": rows,
               "self_generative_log": sg_log, "arena": arena, "seconds": time.perf_counter() - t_all}
    write_outputs(args, results)
    return 0


def run_arena(args, G, Gx, Px, idx_x, bp, ev, table_p0, x_bp, y_rpat, after, lb, log) -> dict:
    """Duplicate matches between the depth-limited agent, the blueprint-with-RPAT agent and a
    prober of the off-tree size, with the exact expected values."""
    k = args.arena_k
    resp = respond_to_offtree(bp, table_p0.first(k), Gx, after, solver=args.subgame_solver)
    d1 = dict(bp.dicts[1])
    d1.update(resp.strategy)
    table_p1, _ = self_generative_table(ev, 1, bp.b, k, solver=args.subgame_solver)
    own, costs = solve_own_offtree(bp, table_p1, Gx, solver=args.subgame_solver)
    # the prober: the lower bound's strategy with every opening raise of the two bracketing sizes
    # (0.5 and 1 pot for 0.75) moved to the off-tree size
    prober = f"{args.offtree:g}-prober"
    (_, la), (_, lb) = rpat_bracket(G.root, offtree_size(G, Gx, args.offtree))
    probe = {key: dict(p) for key, p in lb.dicts[0].items()}
    for key, p in probe.items():
        if key.endswith("||"):
            p[after.label] += p.pop(la, 0.0) + p.pop(lb, 0.0)
    agents = {
        "depth-limited": (plan_of(Px, 0, own), plan_of(Px, 1, d1)),
        "blueprint+RPAT": (x_bp, y_rpat),
        prober: (plan_of(Px, 0, probe), lb.plans[1]),
    }
    seqs = (idx_x.node[0] == Gx.root.id) & (idx_x.label[0] == after.label)
    p_open = {n: float(sum(idx_x.chance_of_hole(0)[idx_x.hole[0][s]] * a[0][s] for s in seqs.nonzero()[0]))
              for n, a in agents.items()}
    log(f"P(open {args.offtree:g} pot) as player 0: " + ", ".join(f"{n} {p:.3f}" for n, p in p_open.items()))
    out = []
    for a, b in [("depth-limited", "blueprint+RPAT"), ("depth-limited", prober), ("blueprint+RPAT", prober)]:
        t0 = time.perf_counter()
        res = play_duplicate(Gx, Agent.from_plans(a, Px, *agents[a]), Agent.from_plans(b, Px, *agents[b]),
                             args.arena_pairs, seed=args.seed)
        exact = exact_match_value(Px, agents[a], agents[b], G.big_blind)
        log(f"arena: {res.line()}; exact {exact:+.1f} mbb/g; {time.perf_counter() - t0:.1f} s")
        out.append({"a": a, "b": b, "pairs": res.pairs, "mbb": res.mbb, "ci95": res.ci95, "exact_mbb": exact})
    return {"k": k, "matches": out, "p_open_offtree": p_open,
            "own_solve_seconds": sum(c["build_seconds"] + c["solve_seconds"] for c in costs)}


GAME_ALIASES = {"nlfh-50-s64": "nlfh52(stack=5000, flops=S64)"}  # the issue's NLFH-50/S64


def _measured(fn):
    """(fn(), its seconds, the rise of this process's resident memory in MB at its peak while fn
    ran over before it): :func:`treeplex.core.memory.measured`, sampled every 20 ms."""
    from treeplex.core.memory import measured, rss

    start = rss()
    out, seconds, peak = measured(fn, 0.02)
    return out, seconds, (peak - start) / 2**20


def _by_line_rows(res, vx, mbb) -> list[dict] | None:
    """Per line of a flop re-solved line by line (``--round2-budget``): its history, seconds
    (wall, all in), the gap checks' seconds of them (after the deadline: play skips them), DCFR
    iterations and gap / 2 in mbb/g of the game (None otherwise)."""
    from treeplex.depth_limited.offtree52 import ByLine

    if not isinstance(res, ByLine):
        return None
    hist = {e["id"]: e["history"] for e in vx.lines}
    return [{"line": hist[l], "seconds": s, "check_seconds": r.check_seconds, "iterations": r.iterations,
             "gap_mbb": mbb(r.gap / 2)}
            for l, s, r in zip(res.lines, res.seconds, res.results)]


def _gadget_slack(sf, mbb) -> dict | None:
    """How tight the safe flop re-solve's gadgets are in its solution: of the gadgets with a
    nonzero alt (``reached``), how many have the chooser's best "enter" value at its alt, to
    1e-6 of the largest |alt| (``binding``), and the sums of both, in mbb/g of the game. A
    gadget with enter < alt constrains nothing: the other player's play below it may be any
    that keeps it there, all equally good in the re-solve (None without a safe re-solve)."""
    import numpy as np

    if sf is None:
        return None
    A = sf.problem.A
    ev = sf.enter_values(sf.res.y if A.chooser == 0 else sf.res.x)
    sign = 1.0 if A.chooser == 0 else -1.0  # the chooser's own sense: it wants sign * value high
    reached = np.abs(sf.alt) > 0
    tol = 1e-6 * max(float(np.abs(sf.alt).max(initial=0.0)), 1e-300)
    binding = reached & (sign * (ev - sf.alt) >= -tol)
    return {"gadget": sf.gadget, "reached": int(reached.sum()),
            "binding": int(binding.sum()), "alt_mbb": mbb(float(sf.alt[reached].sum())),
            "enter_mbb": mbb(float(ev[reached].sum()))}


def _rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main52(args) -> int:
    """Figure 1 on nlfh52: the blueprint, RPAT, the lower bound and the depth-limited response
    for every k and set, each as the exact exploitability (gap / 2 of the profile in the game
    with the bet, full best responses) in mbb/g; plus the costs (blueprint time and peak memory,
    leaf tables, one depth-limited solve, the subgame's size against solving to the end).
    ``--also X ...``: more off-tree sizes with the same blueprint and leaf tables (the tables
    are the abstraction's, independent of the size), each written under ``OUT/offtree_X``."""
    from treeplex.errors import check_params, defaults_of
    from treeplex.games import parse_game_name
    from treeplex.model.metrics import to_mbb
    from treeplex.poker.nlfh52 import NLFH52
    from treeplex.depth_limited.nlfh52 import (LeafValues52, View52, bias_table52, cached_blueprint52,
                                               check_pipeline_memory, self_generative_table52)
    from treeplex.depth_limited.offtree52 import offtree_game
    from treeplex.depth_limited.run52 import check_round2_budget

    spec = GAME_ALIASES.get(args.game, args.game)
    name, params = parse_game_name(spec)
    if name != "nlfh52":
        raise InputError(f"--game {args.game!r}: the 52-card figure runs on nlfh52(...) or nlfh-50-s64")
    check_params(defaults_of(NLFH52), params, "nlfh52")
    if args.round2_iters is None and args.round2_budget is None:
        args.round2_iters = 500
    if args.round2_iters is not None and args.round2_iters < 1:
        raise InputError(f"--round2-iters must be at least 1, got {args.round2_iters}")
    if not args.round2_warm >= 0:
        raise InputError(f"--round2-warm must be at least 0 (0: a cold start), got {args.round2_warm}")
    check_round2_budget(args)
    t_all = time.perf_counter()
    log = lambda *a: print(f"[{time.perf_counter() - t_all:7.1f} s]", *a, flush=True)  # noqa: E731
    G = NLFH52(**params)
    check_pipeline_memory(G)  # before anything is built; the games with the bets are counted in
    sizes = [args.offtree] + list(args.also or [])
    games = {x: offtree_game(G, params, "", x) for x in sizes}  # refuse a bad size before any solving
    bb = G.big_blind
    mbb = lambda chips: to_mbb(chips, bb)  # noqa: E731
    G.problem()  # the solver's layout (the orbit reduction) before the view reads it
    view = View52(G)
    bp_kw = {"target_gap": 2 * args.target_mbb * bb / 1000, "max_iters": args.max_iters}
    sub_kw = {"target_gap": args.subgame_target_mbb * bb / 1000, "max_iters": args.subgame_iters}
    rss0 = _rss_mb()
    ck = {}
    if args.blueprint_checkpoint:
        resume = os.path.exists(args.blueprint_checkpoint)
        ck = {"checkpoint": args.blueprint_checkpoint, "resume": args.blueprint_checkpoint if resume else None}
        log(f"blueprint checkpoint {args.blueprint_checkpoint}: " + ("continuing its run" if resume else "new run"))
    bp = cached_blueprint52(view, args.blueprint_cache, **bp_kw, **ck)
    rss_bp = _rss_mb()
    seqs = [int(n) for n in G.problem().n_seqs]
    log(f"game {G.name}: {seqs} sequences; blueprint DCFR {bp.iterations} iterations, {bp.seconds:.1f} s, peak RSS "
        f"{rss_bp:.0f} MB ({rss_bp - rss0:+.0f} MB), exploitability {mbb(bp.gap / 2):.3f} mbb/g in the abstraction")
    bettor = int(G.tree.actor[0])  # the first action's player makes the off-tree raise; it chooses at the leaves
    lv = LeafValues52(view, bp.b, keep_strategies=False)  # the responses need the tables' values only
    kmax = max(args.k)
    t0 = time.perf_counter()
    tables = {"bias": bias_table52(lv, bettor, min(kmax, 16))}
    t1 = time.perf_counter()
    tables["self-generative"], sg_log = self_generative_table52(lv, bettor, kmax, solver="dcfr", **sub_kw)
    t2 = time.perf_counter()
    log(f"leaf tables, k = {kmax}: bias {t1 - t0:.1f} s, self-generative {t2 - t1:.1f} s (leaf values "
        f"{tables['self-generative'].seconds:.1f} s of it); {tables['bias'].nbytes / 2**20:.1f} MiB each "
        f"({len(view.lines)} leaves x {view.O}^2 hand orbits x k)")
    lv.best_response(bettor)
    t3 = time.perf_counter()
    log(f"the bettor's best-response leaf values (a blueprint quantity; every root gadget's alts read them): "
        f"{t3 - t2:.1f} s")
    costs = {"sequences": seqs, "blueprint_seconds": bp.seconds, "blueprint_iterations": bp.iterations,
             "blueprint_peak_rss_mb": rss_bp, "rss_before_blueprint_mb": rss0, "bias_table_seconds": t1 - t0,
             "self_generative_table_seconds": t2 - t1, "best_response_values_seconds": t3 - t2,
             "leaf_values_seconds": tables["self-generative"].seconds + tables["bias"].seconds,
             "leaf_table_bytes_k16": tables["bias"].nbytes, "round2": args.round2,
             "round2_iters": args.round2_iters, "round2_warm": args.round2_warm, "round2_budget": args.round2_budget,
             "round2_target_mbb": args.round2_target_mbb,
             "subgame_target_mbb": args.subgame_target_mbb, "subgame_iters": args.subgame_iters}
    for x in sizes:
        out = args.out if len(sizes) == 1 else os.path.join(args.out, f"offtree_{x:g}")
        os.makedirs(out, exist_ok=True)
        res = offtree_rows52(args, x, games[x], view, bp, lv, tables, bp_kw, sub_kw, mbb, log, out)
        res.update({"game": G.name, "blueprint_mbb": mbb(bp.gap / 2), "blueprint_iterations": bp.iterations,
                    "blueprint_solver": "DCFR", "solve_to_end_mbb": None, "self_generative_log": sg_log,
                    "arena": None, "seconds": time.perf_counter() - t_all, "round2_main": args.round2[0]})
        res["costs"].update(costs, peak_rss_mb=_rss_mb())
        write_outputs(args, res, out)
    return 0


def offtree_rows52(args, x, game_x, view, bp, lv, tables, bp_kw, sub_kw, mbb, log, out) -> dict:
    """One off-tree size on nlfh52: RPAT, the depth-limited rows, then the lower bound (a second
    blueprint: last, so that a long run stopped there has its rows in the log and in
    ``out/rows.json``, written before it)."""
    from treeplex.model.metrics import evaluate
    from treeplex.depth_limited.nlfh52 import View52, compute_blueprint52, evaluate_full
    from treeplex.depth_limited.offtree52 import Translator, dl_response, rpat_response
    from treeplex.depth_limited.run52 import round2_kw, round2_text, sequences_below

    gx, bet, after = game_x
    gx.problem()  # the solver's layout before the view reads it
    vx = View52(gx)
    tr = Translator(view, vx, bet)
    responder = 1 - int(gx.tree.actor[bet])
    bx = [tr.behavioral(p, bp.b[p]) for p in (0, 1)]
    plan, rinfo = rpat_response(tr, responder, bp.b[responder], after)
    plans = [vx.plan(0, bx[0]), vx.plan(1, bx[1])]
    plans[responder] = plan
    rpat = mbb(evaluate(gx.problem(), *plans).exploitability)
    log(f"{x:g} pot: RPAT {rpat:.3f} mbb/g (f = {rinfo['f']:.4f} to {rinfo['below']}, else {rinfo['above']})")
    to_end = [int(n) for n in sequences_below(vx, after)]
    log(f"{x:g} pot: the subgame after the bet solved to the end: {to_end} sequences")
    rows = []
    for method, table in tables.items():
        for k in args.k:
            if k > table.k:
                continue
            for r2 in args.round2:
                (b_resp, info), seconds, rise = _measured(lambda: dl_response(
                    tr, table.first(k), lv, bx, bet, after, safe=True, round2=r2, solver="dcfr",
                    round2_kw=round2_kw(args, vx.game.big_blind), **sub_kw))
                prof = list(bx)
                prof[responder] = b_resp
                m = mbb(evaluate_full(vx, prof).exploitability)
                sub, res2 = info["subgame"], info["round2"]
                rows.append({"method": method, "k": k, "round2": r2, "root_safety": True,
                             "exploitability_mbb": m, "response_seconds": seconds, "response_rss_rise_mb": rise,
                             "subgame_solve_seconds": info["solution"].seconds,
                             "subgame_iterations": info["solution"].iterations,
                             "subgame_sequences": [int(n) for n in sub.problem.n_seqs],
                             "round2_gap_mbb": None if res2 is None else mbb(res2.gap / 2),
                             "step1_seconds": info["step1_seconds"],
                             "round2_lines": _by_line_rows(res2, vx, mbb),
                             "gadgets": _gadget_slack(info.get("safe_flop"), mbb)})
                log(f"{x:g} pot: {method:16s} k={k:2d} flop {r2:6s}: {m:8.3f} mbb/g   response {seconds:.2f} s "
                    f"(to the flop {info['step1_seconds']:.2f} s), peak RSS +{rise:.0f} MB "
                    f"(subgame {info['solution'].seconds:.2f} s, {info['solution'].iterations} iterations, "
                    f"{rows[-1]['subgame_sequences']} sequences" + ("" if res2 is None else
                    f"; flop re-solve {round2_text(res2, args.round2_warm)}, locked gap / 2 {mbb(res2.gap / 2):.3f} mbb/g") +
                    ("" if rows[-1]["gadgets"] is None else "; {gadget} gadgets binding {binding}/{reached}, bettor's alts "
                     "{alt_mbb:.2f} mbb/g against its enter values {enter_mbb:.2f}".format(**rows[-1]["gadgets"])) + ")")
                del b_resp, info, prof, sub, res2  # before the next response: at S64 two at once did not fit in 23 GB
    with open(os.path.join(out, "rows.json"), "w") as f:  # a run stopped in the lower bound keeps them
        json.dump({"game": gx.name, "offtree": x, "rpat_mbb": rpat, "rows": rows}, f, indent=1)
    log(f"wrote {os.path.join(out, 'rows.json')} (the rows; the lower bound next)")
    lower = compute_blueprint52(vx, "dcfr", **bp_kw)  # last: a long run stopped before it keeps its rows
    lb = mbb(lower.gap / 2)
    log(f"{x:g} pot: lower bound ({x:g} in the abstraction) {lb:.3f} mbb/g, {lower.iterations} iterations, "
        f"{lower.seconds:.1f} s")
    return {"offtree": x, "lower_bound_mbb": lb, "rpat_mbb": rpat, "rpat": dict(rinfo), "rows": rows,
            "costs": {"lower_bound_seconds": lower.seconds, "lower_bound_iterations": lower.iterations,
                      "subgame_to_the_end_sequences": to_end}}


FLOP_NAMES = {"none": "blueprint flop", "unsafe": "unsafe flop", "safe": "safe flop",  # --round2 (nlfh52)
              "maxmargin": "maxmargin flop"}


def variant_name(row, main: str = "safe") -> str:
    """``self-generative`` for the main variant (root gadget, the flop after the bet as ``main``:
    safe subgame solving on the toy decks, the first ``--round2`` on nlfh52), else with a suffix."""
    extra = ([] if row["root_safety"] else ["no root gadget"]) + \
        ([FLOP_NAMES[row["round2"]]] if row["round2"] != main else [])
    return row["method"] + (f" ({', '.join(extra)})" if extra else "")


def write_outputs(args, results, out=None):
    out = out or args.out
    path_json = os.path.join(out, "results.json")
    with open(path_json, "w") as f:
        json.dump(results, f, indent=1)
    main = results.get("round2_main", "safe")
    names = list(dict.fromkeys(variant_name(r, main) for r in results["rows"]))
    lines = [f"Game: {results['game']}; off-tree opening bet {results['offtree']} x pot; exploitability in mbb/g",
             "", "| k | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for k in sorted({r["k"] for r in results["rows"]}):
        vals = {variant_name(r, main): r["exploitability_mbb"] for r in results["rows"] if r["k"] == k}
        lines.append(f"| {k} | " + " | ".join(f"{vals[n]:.3f}" for n in names) + " |")
    lines += ["", f"- RPAT: {results['rpat_mbb']:.3f}",
              f"- lower bound ({results['offtree']:g} in the abstraction): {results['lower_bound_mbb']:.3f}",
              "- safe subgame solved to the end after the bet: " + ("not run" if results["solve_to_end_mbb"] is None
                                                                      else f"{results['solve_to_end_mbb']:.2f}"),
              f"- blueprint in its own abstraction: {results['blueprint_mbb']:.3f} "
              f"({results['blueprint_iterations']} {results.get('blueprint_solver', 'CFR+')} iterations)"]
    c = results.get("costs")
    if c:
        sub = next(r["subgame_sequences"] for r in results["rows"]) if results["rows"] else None
        lines += [f"- costs: blueprint {c['blueprint_seconds']:.0f} s, peak RSS {c['blueprint_peak_rss_mb']:.0f} MB "
                  f"({c['sequences'][0]:,} + {c['sequences'][1]:,} sequences); leaf values {c['leaf_values_seconds']:.0f} s "
                  f"in all; the depth-limited subgame {sub} sequences against {c['subgame_to_the_end_sequences']} "
                  f"solved to the end; the flop after the bet: {', '.join(c['round2'])} (first: the main rows; a re-solve: "
                  + (f"{c['round2_iters']} DCFR iterations)" if c.get("round2_budget") is None else
                     f"line by line, {c['round2_budget']:g} s each" + (f", at most {c['round2_iters']} DCFR iterations)"
                                                                       if c["round2_iters"] else ")"))]
        for r2 in c["round2"]:
            rs = [r for r in results["rows"] if r["round2"] == r2]
            if rs:
                lines.append(f"- one response, flop {r2}: {min(r['response_seconds'] for r in rs):.1f}–"
                             f"{max(r['response_seconds'] for r in rs):.1f} s, peak RSS +"
                             f"{min(r['response_rss_rise_mb'] for r in rs):.0f}–"
                             f"{max(r['response_rss_rise_mb'] for r in rs):.0f} MB over the process before it")
    if results["arena"]:
        lines += ["", f"Arena (k = {results['arena']['k']}), duplicate hands, row agent's winnings in mbb/g:", "",
                  "| match | sampled (95% CI) | exact |", "|---|---|---|"]
        for m in results["arena"]["matches"]:
            lines.append(f"| {m['a']} vs {m['b']} | {m['mbb']:+.1f} +- {m['ci95']:.1f} ({2 * m['pairs']} hands) "
                         f"| {m['exact_mbb']:+.1f} |")
    path_md = os.path.join(out, "table.md")
    with open(path_md, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    path_png = os.path.join(out, "figure1.png")
    plot(results, path_png)
    print(f"wrote {path_md}, {path_json}, {path_png}")


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.2))
    colors = {"self-generative": "C0", "bias": "C1"}
    r2 = results.get("round2_main", "safe")
    for name in dict.fromkeys(variant_name(r, r2) for r in results["rows"]):
        pts = sorted((r["k"], r["exploitability_mbb"]) for r in results["rows"] if variant_name(r, r2) == name)
        method = name.split(" (")[0]
        main = name == method
        ax.plot(*zip(*pts), "o-" if main else "o:", color=colors[method], lw=2 if main else 1,
                alpha=1 if main else 0.5, ms=5 if main else 3, label=f"depth-limited, {name}")
    ax.axhline(results["rpat_mbb"], color="C3", ls="--", label="action translation (RPAT)")
    if results["solve_to_end_mbb"] is not None:
        ax.axhline(results["solve_to_end_mbb"], color="C2", ls="-.", label="safe subgame solved to the end")
    ax.axhline(results["lower_bound_mbb"], color="k", ls="--", lw=1,
               label=f"{results['offtree']:g} in the abstraction (lower bound)")
    ks = sorted({r["k"] for r in results["rows"]})
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.set_xlabel("number of values per leaf state (k)")
    ax.set_ylabel("exploitability (mbb/g)")
    ax.set_title(f"Response to an off-tree {results['offtree']:g}-pot opening bet, {results['game']}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=150)


if __name__ == "__main__":
    sys.exit(main())
