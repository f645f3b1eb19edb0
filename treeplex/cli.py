"""Command line: ``treeplex info|solve|export GAME``.

GAME is a built-in name with optional parameters (``leduc(ranks=5)``) or a path to a Gambit
``.efg`` file. Errors are one line on stderr: exit code 2 for bad input, 1 for internal errors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from .compile import compile_game
from .errors import GameError, InputError
from .games import make_game
from .metrics import to_mbb


def load_game(spec: str):
    """A built-in game name or a ``.efg`` path."""
    if spec.endswith(".efg") or os.path.isfile(spec):
        from .efg import read_efg

        if not os.path.isfile(spec):
            raise GameError(f"no such file: {spec}")
        return read_efg(spec)
    return make_game(spec)


def load_problem(spec: str):
    game = load_game(spec)
    problem = compile_game(game)
    if spec.endswith(".efg"):
        problem.name = spec
    return problem


# ------------------------------------------------------------------ commands


def cmd_info(args) -> int:
    p = load_problem(args.game)
    info = {
        "game": p.name,
        **{k: v for k, v in p.stats.items() if k != "compile_seconds"},
        "infosets": [p.X.n_infosets, p.Y.n_infosets],
        "sequences": [p.X.n_seqs, p.Y.n_seqs],
        "nonzeros": p.A.nnz,
        "operator_bytes": p.A.nbytes,
        "compile_seconds": p.stats["compile_seconds"],
    }
    if args.json:
        print(json.dumps(info))
        return 0
    print(f"game              {p.name}")
    print(f"histories         {p.stats['histories']}")
    print(f"terminals         {p.stats['terminals']}")
    print(f"chance nodes      {p.stats['chance_nodes']}")
    print(f"decision nodes    {p.stats['decision_nodes']}")
    print(f"infosets          player 0: {p.X.n_infosets}   player 1: {p.Y.n_infosets}")
    print(f"sequences         player 0: {p.X.n_seqs}   player 1: {p.Y.n_seqs}")
    print(f"nonzeros of A     {p.A.nnz}")
    print(f"compile time      {p.stats['compile_seconds']:.3f} s")
    return 0


def add_solver_args(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--algorithm", default="lp", help="lp (exact, default) or an iterative solver")
    sp.add_argument("--target", type=float, default=None, help="stop when the saddle-point gap <= GAP")
    sp.add_argument("--max-iters", type=int, default=None)
    sp.add_argument("--time-limit", type=float, default=None, help="seconds of solver time")
    sp.add_argument("--check-every", type=int, default=None, help="iterations between gap checks")
    sp.add_argument("--trace", default=None, help="write the trace to this CSV file")
    sp.add_argument("--out", default=None, help="write the strategy profile (behavioral, JSON) here")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar")


def cmd_solve(args) -> int:
    from .driver import solve, write_trace
    from .strategy import profile_dict, save_profile

    t0 = time.perf_counter()
    p = load_problem(args.game)
    compile_seconds = time.perf_counter() - t0
    show_bar = not args.no_progress and not args.json and sys.stderr.isatty()
    res = solve(
        p, args.algorithm, target_gap=args.target, max_iters=args.max_iters, time_limit=args.time_limit,
        check_every=args.check_every, progress=show_bar,
    )
    if args.trace:
        write_trace(res.trace, args.trace, {"game": p.name, "algorithm": res.algorithm})
    if args.out:
        save_profile(args.out, p, res.x, res.y, algorithm=res.algorithm)
    out = {
        "game": p.name,
        "algorithm": res.algorithm,
        "value": res.value,
        "gap": res.gap,
        "exploitability": res.exploitability,
        "br_value_player0": res.evaluation.br0,
        "br_value_player1": res.evaluation.br1,
        "payoff_unit": p.payoff_unit,
        "iterations": res.iterations,
        "gradients": res.gradients,
        "seconds": res.seconds,
        "check_seconds": res.check_seconds,
        "compile_seconds": compile_seconds,
        "stopped_by": res.stopped_by,
    }
    if p.big_blind:
        out["exploitability_mbb_per_game"] = to_mbb(res.exploitability, p.big_blind)
    if not args.no_strategies:
        out["strategies"] = profile_dict(p, res.x, res.y)
    if args.json:
        print(json.dumps(out))
        return 0
    unit = p.payoff_unit
    print(f"game            {p.name}")
    print(f"algorithm       {res.algorithm}  ({res.iterations} iterations, {res.gradients} gradients, "
          f"stopped by {res.stopped_by})")
    print(f"value           {res.value:.10g} {unit} (player 0's expected payoff)")
    print(f"gap             {res.gap:.4e} {unit} (saddle-point gap = sum of both best-response gains)")
    expl = f"{res.exploitability:.4e} {unit} (gap / 2)"
    if p.big_blind:
        expl += f" = {to_mbb(res.exploitability, p.big_blind):.4g} mbb/g"
    print(f"exploitability  {expl}")
    print(f"time            {res.seconds:.3f} s solve, {compile_seconds:.3f} s compile, "
          f"{res.check_seconds:.3f} s gap checks")
    if not args.no_strategies:
        for player, strat in out["strategies"].items():
            print(f"\n{player} (behavioral: infoset -> action probabilities)")
            for key, probs in strat.items():
                print(f"  {key:24s} " + "  ".join(f"{a}={q:.4f}" for a, q in probs.items()))
    return 0


def cmd_export(args) -> int:
    from .efg import write_efg

    game = load_game(args.game)
    text = write_efg(game, title=getattr(game, "name", args.game))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="treeplex", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sp = sub.add_parser("info", help="print the game's sizes")
    sp.add_argument("game")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_info)
    sp = sub.add_parser("solve", help="compute an equilibrium")
    sp.add_argument("game")
    add_solver_args(sp)
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--no-strategies", action="store_true")
    sp.set_defaults(func=cmd_solve)
    sp = sub.add_parser("export", help="write the game in another format")
    sp.add_argument("game")
    sp.add_argument("--format", choices=["efg"], default="efg")
    sp.add_argument("-o", "--output", default=None)
    sp.set_defaults(func=cmd_export)
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (InputError, FileNotFoundError, IsADirectoryError, PermissionError) as e:
        print(f"treeplex: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("treeplex: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - last line of defence: one line, exit 1
        print(f"treeplex: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
