"""Command line: ``treeplex info|solve|export GAME``, ``treeplex plot TRACE.csv ...``, ``treeplex show|view FILE``, ``treeplex batch|report``.

GAME is a built-in name with optional parameters (``leduc(ranks=5)``), an OpenSpiel game
(``openspiel:liars_dice(numdice=1,dice_sides=6)``, needs ``treeplex[openspiel]``),
``river(pot=2100,board=AsKd7h2c3s,abstraction=libratus)`` with ``--range0/--range1``), a path
to a Gambit ``.efg`` file, or a river endgame ``.json`` spec. Errors are one line on stderr: exit code 2 for bad input, 1 for internal errors.

Each subcommand is a module of this package with ``options(sp)`` (its arguments) and
``run(args)``; ``common.py`` holds what several of them share.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# One BLAS thread unless the user chose otherwise: treeplex's products are sparse, numba's or
# small, and OpenBLAS starting a thread per core cost 0.1 s of CPU and 0.02-0.04 s of wall
# time in every command on the 2-core machine (``import numpy``: 0.10-0.13 s wall against
# 0.11-0.18 s). Set here, before the first import of numpy; a library user's process is left alone.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from ..errors import OneLineParser, guarded

# name: (module of treeplex.cli holding the subcommand's ``options(sp)`` and ``run(args)``, help);
# a module is imported only when its subcommand runs or its options are built
COMMANDS = {
    "info": ("info", "print the game's sizes"),
    "solve": ("solve", "compute an equilibrium"),
    "plot": ("plot", "draw gap vs iterations and vs gradient computations from traces"),
    "depth-limited": ("depth_limited", "respond to an off-tree bet by depth-limited nested solving and state its cost"),
    "show": ("show", "print a node of a saved poker solution: 13x13 grids of action frequencies"),
    "view": ("view", "show a saved solution in the browser: tree, 13x13 grids, comparison"),
    "batch": ("batch", "solve many spots (a JSONL file of specs) into a SQLite table; or write the specs of a set "
                       "of flops"),
    "report": ("report", "per-spot root strategy, EVs and equities of a batch, by board texture"),
    "split-solve": ("split_solve", "solve one postflop spot split across workers (chance subtrees below the first "
                                   "deal); prints bytes per iteration and memory per worker"),
    "export": ("export", "write the game in another format"),
    "abstraction": ("abstraction", "card abstraction for hold'em: hand indexer, equities, EMD buckets "
                                   "(abstraction build)"),
    "blueprint": ("blueprint", "HUNL blueprint by external-sampling MCCFR over an abstraction (blueprint train); "
                               "duplicate play between blueprints (blueprint match)"),
    "play": ("play", "duplicate matches between agents (blueprint, calling station, random, human), hand "
                     "histories, the ACPC protocol"),
    "lbr": ("lbr", "local best response against a blueprint: a lower bound on its exploitability in mbb/g"),
}


def _module(command: str):
    """The module of subcommand ``command``, imported now."""
    return importlib.import_module(f"{__name__}.{COMMANDS[command][0]}")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. With ``command``, only that subcommand's options are built
    (the others are listed with their help): argparse takes about 10 ms for all of them, and
    only that subcommand's module is imported."""
    ap = OneLineParser(prog="treeplex", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for name, (_, help) in COMMANDS.items():
        sp = sub.add_parser(name, help=help, add_help=name != "depth-limited")  # that one parses its own
        if command in (None, name):
            _module(name).options(sp)
    return ap


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["depth-limited"]:  # its own parser takes every option after the name
        return _module("depth-limited").run(argparse.Namespace(args=argv[1:]))
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    return guarded(_module(args.command).run, args)
