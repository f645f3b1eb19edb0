"""Respond to one off-tree bet by depth-limited nested solving, and state what it cost.

    python -m treeplex.depth_limited --bet 0.75
    python -m treeplex.depth_limited --game "nlfh(ranks=4, suits=2, hole=1, flop=1, stack=5000)" \\
        --at "p0.5" --bet 2 --method bias --k 4 --json

The game (an ``nlfh(...)`` spec; default: the built-in small member) is solved by CFR+ on its
abstraction (the blueprint). The player to act at history ``--at`` then makes the off-tree
raise ``--bet`` (x pot); the other player responds with a depth-limited subgame (leaves at
the end of the first round, k values per leaf from ``--method``) and subgame solving of the
second round. Prints the cost of the solves (seconds, histories, leaf-table bytes) and the
exact exploitability of the resulting strategy in the game where the bet is available.
Bad input: one line on stderr, exit code 2.

On ``--game "nlfh52(...)"`` (the public tree x hands engine, 2 hole cards, a 3-card flop)
the command solves the depth-limited subgame at the preflop node ``--at`` (default: the
start of the game) for player ``--searcher``, with the leaves at the flop and k values per
leaf infoset (:mod:`.nlfh52`), and prints the exact exploitability of the result in the real
game. With ``--bet`` the player to act at ``--at`` makes that off-tree raise instead, and
the other responds by RPAT and by depth-limited solving (:mod:`.offtree52`); the lower bound is
the blueprint of the game with the bet in the abstraction.
"""

from __future__ import annotations

import json
import math
import sys
import time

from ..model.compile import compile_game
from ..errors import InputError, check_params, defaults_of
from ..games import parse_game_name
from ..poker.nlfh import NLFH, SMALL, frac_label
from .blueprint import compute_blueprint
from .evaluation import exploitability, plan_of
from .leaves import LeafEvaluator
from .nested import respond_to_offtree
from .sets import bias_table, self_generative_table


def main(argv=None) -> int:
    from ..errors import OneLineParser, guarded

    ap = OneLineParser(prog="treeplex depth-limited", description=__doc__.split("\n")[0])
    ap.add_argument("--game", default=None, help="nlfh(...) spec; default: the small member " + str(SMALL))
    ap.add_argument("--at", default="", help="history where the off-tree bet is made (default: the first action)")
    ap.add_argument("--bet", type=float, default=None, help="the off-tree raise, x pot (default 0.75; not on nlfh52)")
    ap.add_argument("--method", choices=["bias", "self-generative"], default="self-generative")
    ap.add_argument("--k", type=int, default=8, help="values per leaf state")
    ap.add_argument("--round2", choices=["safe", "maxmargin", "unsafe", "none"], default=None,
                    help="the second round after the leaves: safe (default; nlfh52: resolve gadgets with the step-1 "
                         "gifts) or unsafe subgame solving, none (nlfh52: the blueprint; the default without --bet, "
                         "unsafe with it); nlfh52 with --bet only: maxmargin (the Maxmargin gadget where it holds "
                         "every bettor hand to its alt, else the resolve gadget)")
    ap.add_argument("--no-root-safety", action="store_true", help="no resolve gadget at the subgame's root")
    ap.add_argument("--solver", default="lp", help="subgame solver: lp (exact) or a registered one (cfr+)")
    ap.add_argument("--json", action="store_true")
    g52 = ap.add_argument_group("nlfh52 (the public tree x hands engine)")
    g52.add_argument("--searcher", type=int, choices=[0, 1], default=None,
                     help="the player who solves the subgame; the other chooses among the k values (default 1; "
                          "with --bet: the responder)")
    g52.add_argument("--blueprint", default=None,
                     help="the blueprint: SOLVER:ITERATIONS (a CFR-family solver) or lp (default dcfr:100)")
    g52.add_argument("--subgame-iters", type=int, default=None,
                     help="iterations of a CFR-family --solver on the subgame (default: to a gap of "
                          "1e-4 big blinds, at most 20,000)")
    g52.add_argument("--round2-iters", type=int, default=None,
                     help="DCFR iterations of the flop re-solve after --bet (--round2 safe or unsafe; default 500)")
    g52.add_argument("--round2-budget", type=float, default=None, metavar="SECONDS",
                     help="re-solve the flop after --bet line by line, as play would once the preflop has ended on "
                          "one, each in at most SECONDS (with --round2-iters: whichever comes first; not maxmargin)")
    g52.add_argument("--round2-target-mbb", type=float, default=None, metavar="MBB",
                     help="stop the flop re-solve (each line's, with --round2-budget) once its gap / 2 is at most "
                          "MBB mbb/g of the game")
    g52.add_argument("--round2-warm", type=float, default=None, metavar="W",
                     help="start the flop re-solve from the blueprint's flop play with prior weight W (unified "
                          "view's warm start; 3 measured best at 50 BB; default 0: cold)")
    g52.add_argument("--exact", action="store_true", help="also the game's exact value (the LP: small decks only)")
    g52.add_argument("--max-memory", default=None, help="refuse leaf tables above this size (default: the memory "
                                                        "available)")
    return guarded(_run_and_print, ap.parse_args(argv))


def _run_and_print(args) -> int:
    out = run(args)
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key:28s} {value}")
    return 0


_NLFH52_ONLY = ("searcher", "blueprint", "subgame_iters", "round2_iters", "round2_warm", "round2_budget",
                "round2_target_mbb", "max_memory")


def run(args) -> dict:
    params = dict(SMALL)
    if args.game and parse_game_name(args.game)[0] == "nlfh52":
        from .run52 import run52

        return run52(args)
    given = [name for name in _NLFH52_ONLY if getattr(args, name) is not None] + (["exact"] if args.exact else [])
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise InputError(f"{flags}: only on --game \"nlfh52(...)\" (the nlfh(...) games solve each subgame "
                         "with --solver, exactly by default)")
    if args.bet is None:
        args.bet = 0.75
    if args.round2 is None:
        args.round2 = "safe"
    if args.round2 in ("none", "maxmargin"):
        raise InputError(f"--round2 {args.round2}: the nlfh(...) games solve the second round (safe or unsafe); "
                         "none and maxmargin are for --game \"nlfh52(...)\"")
    if args.game:
        name, params = parse_game_name(args.game)
        if name != "nlfh":
            raise InputError(f"--game must be an nlfh(...) spec, got {args.game!r}")
        check_params(defaults_of(NLFH), params, "nlfh")
    if not 0 < args.bet < math.inf:
        raise InputError(f"--bet must be a positive pot fraction, got {args.bet}")
    if args.k < 1:
        raise InputError(f"--k must be at least 1 (values per leaf state), got {args.k}")
    try:
        G = NLFH(**params)
    except TypeError as e:
        raise InputError(f"bad parameters for nlfh: {e}") from None
    node = G.node(args.at)
    if node.kind != "decision":
        raise InputError(f"--at {args.at!r}: nobody acts there (a {node.kind} node)")
    if frac_label(args.bet) in node.actions:
        raise InputError(f"--bet {args.bet}: that size is in the abstraction at {args.at!r}")
    t0 = time.perf_counter()
    bp = compute_blueprint(G)
    Gx = NLFH(**params, off_tree={args.at: (args.bet,)})
    after = Gx.node(args.at).child(frac_label(args.bet))
    opp = node.to_act
    t1 = time.perf_counter()
    table = None
    if after.rnd == 0:
        ev = LeafEvaluator(bp.index)
        if args.method == "bias":
            table = bias_table(ev, opp, bp.b, args.k)
        else:
            table = self_generative_table(ev, opp, bp.b, args.k, solver=args.solver)[0]
    t2 = time.perf_counter()
    resp = respond_to_offtree(bp, table, Gx, after, root_safety=not args.no_root_safety, round2=args.round2,
                              solver=args.solver, depth_limit=after.rnd == 0)
    Px = compile_game(Gx)
    strategies = [dict(bp.dicts[0]), dict(bp.dicts[1])]
    strategies[1 - opp].update(resp.strategy)
    mbb, _ = exploitability(Px, plan_of(Px, 0, strategies[0]), plan_of(Px, 1, strategies[1]), G.big_blind)
    cost = resp.cost_summary()
    return {
        "game": G.name,
        "off_tree_bet": f"{after.label} at {args.at!r} by player {opp} (raise to {after.contrib[opp]} chips)",
        "blueprint_seconds": round(t1 - t0, 3),
        "blueprint_mbb": round(bp.exploitability_mbb, 4),
        "leaf_table_seconds": round(t2 - t1, 3),
        "leaf_table_bytes_all_leaves": table.nbytes if table is not None else 0,
        "subgame_leaf_table_bytes": cost["leaf_table_bytes"],
        "depth_limited_solve_seconds": round(cost["depth_limited_seconds"], 4),
        "depth_limited_histories": cost["depth_limited_histories"],
        "leaf_states_x_k": f"{cost['leaves']} x {cost['k']}",
        "second_round_subgames": cost["second_round_subgames"],
        "second_round_seconds": round(cost["second_round_seconds"], 4),
        "response_total_seconds": round(cost["total_seconds"], 4),
        "exploitability_mbb": round(mbb, 4),
    }


if __name__ == "__main__":
    sys.exit(main())
