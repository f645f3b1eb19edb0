"""``treeplex depth-limited ...``: :mod:`treeplex.depth_limited`'s command, which parses its own options."""

from __future__ import annotations

import argparse


def options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("args", nargs=argparse.REMAINDER, help="see treeplex depth-limited --help")


def run(args) -> int:
    from ..depth_limited.__main__ import main as depth_limited_main

    return depth_limited_main(args.args)
