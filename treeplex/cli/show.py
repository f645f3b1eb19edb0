"""``treeplex show FILE [NODE]``: a node of a saved poker solution as 13x13 grids of action frequencies."""

from __future__ import annotations

import argparse


def options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("file", help="a solution written by solve --out (postflop or river)")
    sp.add_argument("node", nargs="?", default=None, help="node number or history, e.g. x-b20 (default: root)")
    sp.add_argument("--max-memory", default=None, metavar="SIZE",
                    help="refuse a file estimated to need more to read (default: the memory available)")


def run(args) -> int:
    from ..poker.show import find_node, format_node, load_solution

    data = load_solution(args.file, args.max_memory)
    print(format_node(data, find_node(data, args.node)))
    return 0
