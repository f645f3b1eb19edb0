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
from ..poker.nlfh52 import NLFH52
from .nlfh52 import (View52, LeafValues52, bias_table52, build_subgame, compose, compute_blueprint52, evaluate_full,
                     root_alt, self_generative_table52, solve_subgame52, table_bytes)


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


def run52(args) -> dict:
    name, params = parse_game_name(args.game)
    check_params(defaults_of(NLFH52), params, "nlfh52")
    if args.bet is not None:
        raise InputError("--bet: off-tree bets on nlfh52 are not implemented yet; nlfh52 solves the depth-limited "
                         "subgame at --at inside the abstraction")
    if args.k < 1:
        raise InputError(f"--k must be at least 1 (values per leaf state), got {args.k}")
    if args.round2 != "safe":
        raise InputError("--round2: nlfh52's subgame keeps the searcher's blueprint in the flop (no flop re-solving "
                         "yet)")
    bp_solver, bp_kw = _blueprint_spec(args.blueprint)
    game = NLFH52(**params)
    game.problem(max_memory=args.max_memory)
    view = View52(game)
    roots = {game.tree.history[v]: v for v in range(view.P)}
    if args.at not in roots:
        raise InputError(f"--at {args.at!r}: not a preflop decision node of {game.name} (e.g. "
                         f"{', '.join(repr(h) for h in list(roots)[:4])})")
    root, searcher = roots[args.at], args.searcher
    chooser = 1 - searcher
    need = table_bytes(view, args.k)
    from .nlfh52 import check_table_memory

    check_table_memory(view, args.k, args.max_memory)
    sub_kw = {} if args.solver == "lp" else (
        {"max_iters": args.subgame_iters} if args.subgame_iters
        else {"target_gap": 1e-4 * game.big_blind, "max_iters": 20_000})

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
    reach = view.reach_to(root, bp.b) if root else None
    safe = root != 0 and not args.no_root_safety
    alt = root_alt(lv, chooser, root, reach) if safe else None
    sub = build_subgame(view, table, root, reach, alt=alt)
    if "target_gap" in sub_kw:  # the solver's gap is the unnormalized one: the target per unit of root weight
        sub_kw = dict(sub_kw, target_gap=sub_kw["target_gap"] * sub.weight)
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
