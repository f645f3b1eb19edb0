"""``treeplex depth-limited --game "nlfh52(...)"``: one depth-limited solve on the public tree x
hands engine (:mod:`.nlfh52`), its cost, and its exact exploitability in the real game.

Steps: the blueprint (``--blueprint``: a CFR-family solver for some iterations, or the LP);
the chooser's k continuation strategies (``--method``: bias or self-generative) and their leaf
table; the depth-limited subgame at ``--at`` for ``--searcher``, solved by ``--solver``, with
the resolve gadget at an inner node (the chooser's alt: its best-response value against the
searcher's blueprint; ``--no-root-safety``: without); the searcher's strategy in the real
game (the subgame's preflop play, its blueprint in the flop, the blueprint above ``--at``).

Printed, all in chips and mbb/g (player 0's payoff; exploitability = gap / 2):

- ``dl_*``: the profile (searcher: depth-limited, other: blueprint), its value, both best
  responses, gap and gap / 2; ``blueprint_*``: the same of the blueprint profile;
- ``*_worst_case``: what the searcher's strategy wins against a best response (the one-sided
  measure the paper's Figure 1 plots, as an exploitability when ``--exact`` gives the game's
  value);
- ``composed_value``: the subgame solution's value in the real game (both players' subgame
  play, the chooser's chosen continuations), which equals ``subgame_value_unweakened`` (the
  solution's value with the weakening undone; ``weakening``: what it took off each
  continuation, chips per pair) at the root.
"""

from __future__ import annotations

import time

from ..errors import InputError, check_params, defaults_of
from ..games import parse_game_name
from ..model.metrics import to_mbb
from ..poker.nlfh import frac_label
from ..poker.nlfh52 import NLFH52
from .offtree52 import Translator, dl_response, offtree_game, rpat_response
from .nlfh52 import (LeafValues52, View52, bias_table52, build_subgame, check_pipeline_memory, check_table_memory,
                     compose, compute_blueprint52, evaluate_full, root_alt, self_generative_table52, solve_subgame52,
                     subtree)


UNITS = "chips, player 0's payoff; exploitability = gap / 2 (chips); mbb/g = 1000 x chips / big blind"


def _blueprint_spec(text: str) -> tuple[str, dict]:
    if text.strip().lower() == "lp":
        return "lp", {}
    name, _, iters = text.partition(":")
    try:
        n = int(iters)
    except ValueError:
        n = 0
    if not name or n < 1:
        raise InputError(f"--blueprint must be SOLVER:ITERATIONS (e.g. dcfr:100) or lp, got {text!r}")
    return name.strip(), {"max_iters": n}


def round2_kw(args, big_blind: float) -> dict:
    """The flop re-solve's options (:func:`.offtree52.dl_response`'s ``round2_kw``) of
    ``--round2-iters``, ``--round2-warm``, ``--round2-budget`` and ``--round2-target-mbb``
    (gap / 2 in mbb/g of the game: a target gap of 2 x MBB x big blind / 1000 chips)."""
    kw = {"prior_weight": args.round2_warm or 0.0}
    if args.round2_target_mbb is not None:
        kw["target_gap"] = 2 * args.round2_target_mbb * big_blind / 1000
    if args.round2_iters is not None:
        kw["max_iters"] = args.round2_iters
    if args.round2_budget is not None:
        kw["budget"] = args.round2_budget
    return kw


def check_round2_budget(args) -> None:
    """Refuse a ``--round2-budget`` that is not a positive number of seconds, or with maxmargin,
    and a ``--round2-target-mbb`` that is not positive."""
    b, t = args.round2_budget, args.round2_target_mbb
    if b is not None and not b > 0:
        raise InputError(f"--round2-budget must be a positive number of seconds, got {b}")
    if t is not None and not t > 0:
        raise InputError(f"--round2-target-mbb must be a positive number, got {t}")
    if b is not None and "maxmargin" in ([args.round2] if isinstance(args.round2, str) else list(args.round2 or [])):
        raise InputError("--round2-budget: the Maxmargin re-solve is not made line by line (safe or unsafe only)")


def round2_text(res, warm: float) -> str:
    """How the flop was re-solved: DCFR's iterations (by line: those of the line that took the
    longest, and its seconds) and from where."""
    from .offtree52 import ByLine

    start = f" from the blueprint's flop (prior weight {warm:g})" if warm else ""
    if isinstance(res, ByLine):
        return (f"line by line, {len(res.lines)} lines, dcfr{start}, the longest {max(res.seconds):.2f} s for "
                f"{res.iterations} iterations")
    return f"dcfr {res.iterations} iterations{start}"


def run52(args) -> dict:
    name, params = parse_game_name(args.game)
    check_params(defaults_of(NLFH52), params, "nlfh52")
    if args.k < 1:
        raise InputError(f"--k must be at least 1 (values per leaf state), got {args.k}")
    args.blueprint = args.blueprint or "dcfr:100"
    if args.round2_iters is None and args.round2_budget is None:
        args.round2_iters = 500
    if args.round2_iters is not None and args.round2_iters < 1:
        raise InputError(f"--round2-iters must be at least 1, got {args.round2_iters}")
    args.round2_warm = 0.0 if args.round2_warm is None else args.round2_warm
    if not args.round2_warm >= 0:
        raise InputError(f"--round2-warm must be at least 0 (0: a cold start), got {args.round2_warm}")
    check_round2_budget(args)
    if args.round2 not in (None, "none") and args.bet is None:
        raise InputError(f"--round2 {args.round2}: without --bet, nlfh52's searcher keeps its blueprint in the flop "
                         "(--round2 none)")
    bp_solver, bp_kw = _blueprint_spec(args.blueprint)
    game = NLFH52(**params)
    game.problem(max_memory=args.max_memory)
    check_pipeline_memory(game, args.max_memory)
    view = View52(game)
    roots = {game.tree.history[v]: v for v in range(view.P)}
    if args.at not in roots:
        raise InputError(f"--at {args.at!r}: not a preflop decision node of {game.name} (e.g. "
                         f"{', '.join(repr(h) for h in list(roots)[:4])})")
    root = roots[args.at]
    if args.bet is not None:
        searcher = 1 - int(game.tree.actor[root])  # the responder
        if args.searcher is not None and args.searcher != searcher:
            raise InputError(f"--searcher {args.searcher}: after an off-tree bet at {args.at!r} the responder, "
                             f"player {searcher}, solves")
    else:
        searcher = 1 if args.searcher is None else args.searcher
    chooser = 1 - searcher
    need = check_table_memory(view, args.k, args.max_memory)
    sub_kw = {} if args.solver == "lp" else (
        {"max_iters": args.subgame_iters} if args.subgame_iters
        else {"target_gap": 1e-4 * game.big_blind, "max_iters": 20_000})

    if args.bet is not None:
        offtree_game(game, params, args.at, args.bet)  # refuse a bad size before any solving

    t0 = time.perf_counter()
    bp = compute_blueprint52(view, bp_solver, **bp_kw)
    t1 = time.perf_counter()
    lv = LeafValues52(view, bp.b)
    if args.method == "bias":
        table = bias_table52(lv, chooser, args.k, args.max_memory)
    else:
        table = self_generative_table52(lv, chooser, args.k, solver=args.solver, max_memory=args.max_memory,
                                        **sub_kw)[0]
    t2 = time.perf_counter()
    if args.bet is not None:
        return _offtree(args, params, game, view, bp, (bp_solver, bp_kw), lv, table, t2 - t1, sub_kw, t0)
    reach = view.reach_to(root, bp.b) if root else None
    safe = root != 0 and not args.no_root_safety
    alt = root_alt(lv, chooser, root, reach) if safe else None
    sub = build_subgame(view, table, root, reach, alt=alt)
    sol = solve_subgame52(sub, args.solver, **sub_kw)
    true = build_subgame(view, table.unweakened(), root, sub.reach, alt=sub.alt).problem
    true_value = float(sol.plans[0] @ true.A.matvec(sol.plans[1], count=False)) / sub.weight
    both = compose(sol, bp.b)
    dl = list(bp.b)
    dl[searcher] = both[searcher]
    ev_dl, ev_bp, ev_both = evaluate_full(view, dl), evaluate_full(view, bp.b), evaluate_full(view, both)
    bb = game.big_blind

    def worst(ev):
        return ev.br1 if searcher == 0 else ev.br0

    out = {
        "game": game.name,
        "root": args.at or "(start)",
        "root_gadget": safe,
        "searcher": searcher,
        "method": args.method,
        "k": table.k,
        "blueprint": f"{bp_solver} {bp.iterations} iterations, {bp.seconds:.2f} s",
        "blueprint_gap": bp.gap,
        "blueprint_exploitability_mbb": to_mbb(bp.gap / 2, bb),
        "full_game_sequences": list(game.problem().n_seqs),
        "subgame_sequences": list(sub.problem.n_seqs),
        "subgame_nonzeros": sub.problem.A.nnz,
        "leaves_x_orbits": f"{len(sub.lb)} x {view.O}",
        "leaf_table_bytes": table.nbytes,
        "leaf_table_estimate_bytes": need,
        "leaf_table_seconds": round(t2 - t1, 3),
        "subgame_solver": args.solver,
        "subgame_solve_seconds": round(sol.seconds, 3),
        "units": UNITS,
        "subgame_value": sol.value,
        "subgame_gap": sol.gap,
        "weakening": [round(x, 9) for x in table.shifts],
        "subgame_value_unweakened": true_value,
        "composed_value": ev_both.value if root == 0 else None,
        "dl_value": ev_dl.value,
        "dl_br0": ev_dl.br0,
        "dl_br1": ev_dl.br1,
        "dl_gap": ev_dl.gap,
        "dl_exploitability": ev_dl.exploitability,
        "dl_exploitability_mbb": to_mbb(ev_dl.exploitability, bb),
        "blueprint_value": ev_bp.value,
        "blueprint_profile_gap": ev_bp.gap,
        "blueprint_profile_exploitability_mbb": to_mbb(ev_bp.exploitability, bb),
        "dl_worst_case": worst(ev_dl),
        "blueprint_worst_case": worst(ev_bp),
        "seconds": round(time.perf_counter() - t0, 3),
    }
    if args.exact:
        import treeplex as tp

        v = tp.solve_lp(game.problem()).value
        sign = 1.0 if searcher == 0 else -1.0
        out["game_value"] = v
        for key in ("dl", "blueprint"):
            loss = sign * (v - out[f"{key}_worst_case"])
            out[f"{key}_searcher_exploitability"] = loss
            out[f"{key}_searcher_exploitability_mbb"] = to_mbb(loss, bb)
    return out


def _offtree(args, params, game, view, bp, bp_spec, lv, table, table_seconds, sub_kw, t0) -> dict:
    """``--bet``: the off-tree response by RPAT and by depth-limited solving, and the lower
    bound, each as the exact exploitability (gap / 2) of the profile in the game with the bet."""
    from ..model.metrics import evaluate

    gx, bet, after = offtree_game(game, params, args.at, args.bet)
    vx = View52(gx)
    tr = Translator(view, vx, bet)
    bettor = int(gx.tree.actor[bet])
    responder = 1 - bettor
    bx = [tr.behavioral(p, bp.b[p]) for p in (0, 1)]
    Px = gx.problem()
    bb = game.big_blind
    plan, info = rpat_response(tr, responder, bp.b[responder], after)
    plans = [vx.plan(0, bx[0]), vx.plan(1, bx[1])]
    plans[responder] = plan
    ev_rpat = evaluate(Px, *plans)
    t2 = time.perf_counter()
    round2 = args.round2 or "unsafe"
    b_resp, info2 = dl_response(tr, table, lv, bx, bet, after, safe=not args.no_root_safety, round2=round2,
                                solver=args.solver, round2_kw=round2_kw(args, game.big_blind), **sub_kw)
    sol, sub = info2["solution"], info2["subgame"]
    t3 = time.perf_counter()
    prof = list(bx)
    prof[responder] = b_resp
    ev_dl = evaluate_full(vx, prof)
    bp_solver, bp_kw = bp_spec
    lower = compute_blueprint52(vx, bp_solver, **bp_kw)
    to_end = sequences_below(vx, after)
    return {
        "game": game.name,
        "off_tree_bet": f"{frac_label(args.bet)} at {args.at or '(start)'} by player {bettor}",
        "bracket": f"{info['below']} / {info['above']} (RPAT f = {info['f']:.4f})",
        "responder": responder,
        "method": args.method,
        "k": table.k,
        "root_gadget": not args.no_root_safety,
        "round2": round2 if info2["round2"] is None else
        f"{round2}: {round2_text(info2['round2'], args.round2_warm)}, locked gap {info2['round2'].gap:.2e}"
        + (f", {info2['safe_flop'].gadget} gadget kept" if round2 == "maxmargin" else ""),
        "blueprint": f"{bp_solver} {bp.iterations} iterations, {bp.seconds:.2f} s",
        "blueprint_exploitability_mbb": to_mbb(bp.gap / 2, bb),
        "leaf_table_bytes": table.nbytes,
        "leaf_table_seconds": round(table_seconds, 3),
        "subgame_sequences": list(sub.problem.n_seqs),
        "subgame_to_the_end_sequences": to_end,
        "subgame_solve_seconds": round(sol.seconds, 3),
        "response_seconds": round(t3 - t2, 3),
        "units": UNITS,
        "rpat_gap": ev_rpat.gap,
        "rpat_exploitability": ev_rpat.exploitability,
        "rpat_exploitability_mbb": to_mbb(ev_rpat.exploitability, bb),
        "dl_gap": ev_dl.gap,
        "dl_exploitability": ev_dl.exploitability,
        "dl_exploitability_mbb": to_mbb(ev_dl.exploitability, bb),
        "lower_bound_gap": lower.gap,
        "lower_bound_exploitability": lower.gap / 2,
        "lower_bound_exploitability_mbb": to_mbb(lower.gap / 2, bb),
        "lower_bound": f"{bp_solver} {lower.iterations} iterations with the bet in the abstraction",
        "seconds": round(time.perf_counter() - t0, 3),
    }


def sequences_below(view, node: int) -> list[int]:
    """Per player, the solver-layout sequences of the nodes below ``node`` to the end of the
    game (the subgame solved to the end instead of to the flop)."""
    t = view.tree
    pre = set(subtree(view, node))
    lines = {e["id"] for e in view.ends if e["v"] in pre and e["line"]}
    out = [0, 0]
    for v in range(t.n_nodes):
        if v in pre or (view.line_of_node[v] in lines):
            p = int(t.actor[v])
            out[p] += view.solver_seqs(p, v)[1]
    return out
