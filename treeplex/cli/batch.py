"""``treeplex batch SPECS.jsonl``: many spots into a SQLite table; or ``--flops``: write the specs of a set of flops."""

from __future__ import annotations

import argparse
import sys

from ..errors import InputError
from ..io.files import check_output


def options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("specs", nargs="?", default=None, metavar="SPECS.jsonl",
                    help="one spot per line: {\"game\": ..., \"target\": ..., ...} (see treeplex.scale.batch)")
    sp.add_argument("--db", default="results.sqlite", help="SQLite file of results (default results.sqlite)")
    sp.add_argument("--engine", choices=["local", "ray"], default="local",
                    help="local: a process pool here (default); ray: Ray (pip install 'treeplex[distributed]')")
    sp.add_argument("--address", default=None, help="with --engine ray: a running cluster (default: start a local one)")
    sp.add_argument("--workers", type=int, default=None, help="spots solved at once (default: the CPUs)")
    sp.add_argument("--threads", type=int, default=1, help="numba threads per worker (default 1)")
    sp.add_argument("--spot-time-limit", type=float, default=None, metavar="SECONDS",
                    help="wall-clock limit of one spot, building its tree included: past it the spot is failed "
                         "and its worker ended (default: a spot's time_limit plus max(60 s, time_limit); else none)")
    sp.add_argument("--parquet", default=None, metavar="DIR", help="also write DIR/spots.parquet (needs pyarrow)")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar")
    sp.add_argument("--flops", default=None, metavar="SUBSET",
                    help="write specs instead: all (the 1,755 suit-isomorphic flops) or a texture class "
                         "(paired, monotone, two-tone, rainbow) or a high card (A-high ... 2-high); see treeplex.scale.flops")
    sp.add_argument("--template", default=None, metavar="SPEC.json",
                    help="with --flops: a postflop spec (or a batch line) whose board is replaced")
    sp.add_argument("-o", "--output", default=None, metavar="SPECS.jsonl", help="with --flops: the specs file")


def run(args) -> int:
    if args.flops is not None:
        return _write_flop_specs(args)
    if args.template or args.output:
        raise InputError("--template and -o go with --flops (to write specs), not with a batch run")
    if args.specs is None:
        raise InputError("give SPECS.jsonl to solve, or --flops SUBSET --template SPEC.json -o SPECS.jsonl")
    from ..scale.batch import run_batch

    check_output(args.db, "--db", inputs={args.specs: "the specs file"})
    show_bar = not args.no_progress and sys.stderr.isatty()
    c = run_batch(args.specs, args.db, engine=args.engine, workers=args.workers, address=args.address,
                  threads=args.threads, parquet=args.parquet, progress=show_bar,
                  spot_time_limit=args.spot_time_limit)
    for e in c["errors"][:10]:
        print(f"treeplex: spot failed: {e}", file=sys.stderr)
    print(f"{c['spots']} spots ({c['unique']} distinct): {c['done']} solved, {c['failed']} failed, "
          f"{c['skipped']} already done -> {args.db}" + (f", {c['parquet']}" if "parquet" in c else ""))
    return 0


def _write_flop_specs(args) -> int:
    from ..scale.flops import write_flop_specs

    if args.specs is not None:
        raise InputError("--flops writes specs: give --template SPEC.json -o SPECS.jsonl, not a specs file to solve")
    if not args.template or not args.output:
        raise InputError("--flops needs --template SPEC.json and -o SPECS.jsonl")
    check_output(args.output, "-o", inputs={args.template: "the template"})
    n = write_flop_specs(args.flops, args.template, args.output)
    print(f"wrote {n} specs ({args.flops} flops) to {args.output}")
    return 0
