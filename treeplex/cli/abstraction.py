"""``treeplex abstraction build``: hold'em card abstraction (equities, histograms, EMD buckets per street)."""

from __future__ import annotations

import argparse

from ..errors import InputError
from ..io.files import check_output


def options(sp: argparse.ArgumentParser) -> None:
    sub = sp.add_subparsers(dest="action", required=True)
    b = sub.add_parser("build", help="equities, histograms and k-means (EMD) buckets per street; resumable")
    b.add_argument("--buckets", default="200,200,200", metavar="FLOP,TURN,RIVER")
    b.add_argument("-o", "--output", required=True, help="the .npz to write (OUT.parts/ holds the resumable state)")
    b.add_argument("--flops", type=int, default=None, metavar="K",
                   help="only K of the 1,755 canonical flops, seeded (classes not reached get no bucket)")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--max-memory", default=None, metavar="SIZE", help="refuse a build estimated above SIZE (4G)")
    b.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args) -> int:
    from ..abstraction.build import build

    if args.buckets.count(",") != 2 or not all(b.strip().isdigit() for b in args.buckets.split(",")):
        raise InputError(f"--buckets: need three counts FLOP,TURN,RIVER such as 200,200,200, got {args.buckets!r}")
    check_output(args.output, "-o")
    r = build(args.output, [int(b) for b in args.buckets.split(",")], flops=args.flops, seed=args.seed,
              max_memory=args.max_memory, progress=not args.quiet)
    print(f"wrote {args.output}: {r['flops']} canonical flops in {r['seconds_pass']:.1f} s, clustering "
          f"{r['seconds_cluster']:.1f} s; classes reached: " + ", ".join(f"{s} {n:,}" for s, n in r["reached"].items()))
    return 0
