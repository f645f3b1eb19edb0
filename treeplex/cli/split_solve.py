"""``treeplex split-solve SPEC.json``: one postflop spot split across workers."""

from __future__ import annotations

import argparse
import json
import os

from ..errors import InputError
from ..model.metrics import to_mbb
from ..run.targets import HELP as TARGET_HELP, target_gap
from .common import parse_params


def options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("spec", metavar="SPEC.json", help="a postflop spec (flop or turn; solved without isomorphism)")
    sp.add_argument("--workers", type=int, default=2, help="parts, one worker each (default 2)")
    sp.add_argument("--engine", choices=["local", "process", "ray"], default="process",
                    help="process: one process per worker here (default); local: in this process; "
                         "ray: Ray actors (pip install 'treeplex[distributed]')")
    sp.add_argument("--address", default=None, help="with --engine ray: a running cluster (default: start a local one)")
    sp.add_argument("--algorithm", default="cfr+", help="a CFR-family algorithm (default cfr+)")
    sp.add_argument("--max-iters", type=int, default=1000, help="iterations (default 1000)")
    sp.add_argument("--target", default=None, help=TARGET_HELP)
    sp.add_argument("--check-every", type=int, default=50, help="iterations between gap checks with --target")
    sp.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="solver parameter, repeatable")
    sp.add_argument("--threads", type=int, default=1, help="numba threads per worker (process and ray engines; default 1)")
    sp.add_argument("--max-memory", default=None, metavar="SIZE",
                    help="per worker: refuse a split whose largest part is estimated to need more (e.g. 4G)")
    sp.add_argument("--json", action="store_true")


def run(args) -> int:
    """One postflop spot over --workers parts (:mod:`treeplex.scale.split`): the usual result plus
    bytes per iteration and memory per worker."""
    from types import SimpleNamespace

    from ..core.memory import show
    from ..scale.split import load_split_game, split_solve

    if not os.path.isfile(args.spec):
        raise InputError(f"no such file: {args.spec}")
    try:
        with open(args.spec) as f:
            spec = json.load(f)
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(f"{args.spec}: cannot parse ({e})") from None
    if not isinstance(spec, dict):
        raise InputError(f"{args.spec}: a postflop spec is a JSON object")
    spec = {k: v for k, v in spec.items() if k != "game"}
    if args.workers < 1:
        raise InputError(f"--workers must be at least 1, got {args.workers}")
    game = load_split_game(spec)
    goal = target_gap(args.target, SimpleNamespace(big_blind=game.big_blind, stats={"pot": game.pot}, name=game.name))
    params = parse_params(args.param)
    res = split_solve(spec, args.workers, args.max_iters, goal, args.check_every, algorithm=args.algorithm,
                      engine=args.engine, address=args.address, max_memory=args.max_memory, threads=args.threads,
                      **params)
    res["game"] = game.name
    res["exploitability_mbb"] = to_mbb(res["exploitability"], game.big_blind)
    if args.json:
        print(json.dumps(res))
        return 0
    print(f"{game.name}: {res['algorithm']}, {res['iterations']} iterations in {res['seconds']:.2f} s "
          f"({1000 * res['seconds_per_iteration']:.1f} ms each; setup {res['setup_seconds']:.1f} s)")
    print(f"value {res['value']:.6g} chips, gap {res['gap']:.4g}, exploitability {res['exploitability']:.4g} chips "
          f"({res['exploitability_mbb']:.4g} mbb/g)")
    sent = res["bytes_sent"] / max(1, res["iterations"])
    print(f"bytes per iteration {res['bytes_per_iteration']:,} (root entries per worker {res['boundary_entries']}); "
          f"measured {sent:,.0f} (gap checks included)")
    print("memory per worker: " + ", ".join(f"{show(b)} (estimate {show(e)})" for b, e in
                                            zip(res["worker_bytes"], res["worker_estimate_bytes"])))
    return 0
