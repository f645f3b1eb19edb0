"""``treeplex info GAME``: the game's sizes."""

from __future__ import annotations

import argparse
import json

from ..errors import InputError
from ..games import load_game, problem_for
from .common import add_memory_arg, add_range_args, overrides

_STAT_KEYS = {"histories", "terminals", "chance_nodes", "decision_nodes", "constant_sum", "compile_seconds"}


def options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("game")
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--count", action="store_true",
                    help="count the game's sizes without building it (games that count themselves: nlfh52)")
    add_range_args(sp)
    add_memory_arg(sp)


def run(args) -> int:
    if args.count:
        return _count(args)
    game = load_game(args.game, **overrides(args))
    if any(lk["kind"] == "frequency" for lk in getattr(game, "locks", None) or ()):
        game = game.unlocked()  # the same sizes; frequency locks need the baseline, which solve computes
    p = problem_for(game, args.game, args.max_memory)
    info = {
        "game": p.name,
        **{k: v for k, v in p.stats.items() if k != "compile_seconds"},
        "infosets": [p.X.n_infosets, p.Y.n_infosets],
        "sequences": list(p.n_seqs),
        "nonzeros": p.A.nnz,
        "operator_bytes": p.A.nbytes,
        "treeplex_bytes": p.X.nbytes + p.Y.nbytes,
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
    print(f"sequences         player 0: {p.n_seqs[0]}   player 1: {p.n_seqs[1]}")
    print(f"nonzeros of A     {p.A.nnz}")
    for k, v in p.stats.items():  # game-specific sizes (river: hands, betting sequences, leaves)
        if k not in _STAT_KEYS:
            print(f"{k.replace('_', ' '):17s} {v}")
    print(f"memory            operator {p.A.nbytes} bytes, treeplexes {info['treeplex_bytes']} bytes")
    print(f"compile time      {p.stats['compile_seconds']:.3f} s")
    return 0


def _count(args) -> int:
    """``--count``: the sizes a game counts before it is built (public nodes, sequences, memory)."""
    from ..core.memory import show

    game = load_game(args.game, **overrides(args))
    if not hasattr(game, "sizes"):
        raise InputError(f"--count: {args.game} does not count its sizes before building; leave --count out")
    sizes = {"game": game.name, **game.sizes()}
    if args.json:
        print(json.dumps(sizes))
        return 0
    for k, v in sizes.items():
        if isinstance(v, dict):
            v = ", ".join(f"{a} {b:,}" for a, b in v.items())
        elif isinstance(v, list):
            v = f"player 0: {v[0]:,}   player 1: {v[1]:,}   total {sum(v):,}"
        elif isinstance(v, int):
            v = f"{v:,}" + (f" ({show(v)})" if k.endswith("_bytes") else "")
        print(f"{k.replace('_', ' '):26s} {v}")
    return 0
