"""``treeplex report RESULTS.sqlite``: a batch's root strategies, EVs and equities by board texture."""

from __future__ import annotations

import argparse


def options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("db", metavar="RESULTS.sqlite")
    sp.add_argument("-o", "--output", default=None, metavar="DIR",
                    help="write DIR/report.csv, DIR/textures.csv and DIR/report.png (default: print only)")


def run(args) -> int:
    from ..scale.report import write_report

    print(write_report(args.db, args.output))
    return 0
