"""``treeplex blueprint train|match``: the HUNL blueprint by external-sampling MCCFR over an
abstraction (issue 28, stage 2), and duplicate play between two blueprints."""

from __future__ import annotations

import argparse

from ..errors import InputError
from ..io.files import check_output


def options(sp: argparse.ArgumentParser) -> None:
    sub = sp.add_subparsers(dest="action", required=True)
    t = sub.add_parser("train", help="MCCFR over the abstract HUNL game; resumable")
    t.add_argument("--abstraction", required=True, metavar="ABS.npz", help="from treeplex abstraction build")
    t.add_argument("-o", "--output", required=True, help="the blueprint .npz (a checkpoint too: --resume takes it)")
    t.add_argument("--iterations", type=int, default=None, metavar="N", help="stop at N iterations in all")
    t.add_argument("--time-limit", type=float, default=None, metavar="S", help="stop after S seconds of this run")
    t.add_argument("--checkpoint", default=None, metavar="FILE", help="save the state here every --checkpoint-every")
    t.add_argument("--checkpoint-every", type=float, default=600.0, metavar="S")
    t.add_argument("--resume", default=None, metavar="FILE", help="continue from this checkpoint (checked)")
    t.add_argument("--bets", default=None, help="pot fractions per round, '/'-separated "
                                                "(default 0.5,1,allin/0.5,1,allin/1,allin/1,allin)")
    t.add_argument("--max-raises", type=int, default=None, help="bets/raises per round (default 3)")
    for name, help in (("seed", "random seed (default 0)"),
                       ("discount-every", "iterations per linear-CFR discount (default 1000000)"),
                       ("discount-until", "no discount after this many iterations (default 40000000)"),
                       ("prune-after", "prune from this iteration on (default 20000000)")):
        t.add_argument(f"--{name}", type=int, default=None, help=help)
    t.add_argument("--prune-share", type=float, default=None, help="share of pruned traversals (default 0.95)")
    t.add_argument("--max-memory", default=None, metavar="SIZE", help="refuse a blueprint estimated above SIZE")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    m = sub.add_parser("match", help="duplicate play of blueprint A against B: A's mbb/g with a 95%% interval")
    m.add_argument("a", metavar="A.npz")
    m.add_argument("b", metavar="B.npz")
    m.add_argument("--abstraction", required=True, metavar="ABS.npz")
    m.add_argument("--deals", type=int, default=10000)
    m.add_argument("--seed", type=int, default=1)


def _trainer(abstraction: str, config_kw: dict, params_kw: dict, resume: str | None, max_memory=None):
    from ..abstraction.build import load
    from ..blueprint.game import BettingTree, Config
    from ..blueprint.train import Params, RealDeals, Trainer, read_checkpoint

    deals = RealDeals(load(abstraction), abstraction)
    config, params = {}, {}
    if resume:
        meta, _ = read_checkpoint(resume)
        config = {k: v for k, v in meta.get("config", {}).items() if k in Config.__dataclass_fields__}
        params = {k: v for k, v in meta.get("params", {}).items() if k in Params.__dataclass_fields__}
    config.update({k: v for k, v in config_kw.items() if v is not None})
    params.update({k: v for k, v in params_kw.items() if v is not None})
    try:
        tree = BettingTree(Config(**config), deals.buckets)
        trainer = Trainer(tree, deals, Params(**params), max_memory=max_memory)
    except TypeError as e:
        raise InputError(f"{resume}: bad settings in the checkpoint ({e})") from None
    if resume:
        trainer.load(resume)
    return trainer


def run(args) -> int:
    if args.action == "match":
        return _match(args)
    from ..core.memory import show
    from ..blueprint.train import memory_estimate

    check_output(args.output, "-o", {args.abstraction: "the abstraction"}, regular=True)
    if args.checkpoint:
        check_output(args.checkpoint, "--checkpoint", {args.abstraction: "the abstraction"}, regular=True)
    if args.iterations is None and args.time_limit is None:
        raise InputError("blueprint train: give --iterations N or --time-limit S (or both)")
    if args.iterations is not None and args.iterations < 0:
        raise InputError(f"--iterations must be >= 0, got {args.iterations}")
    if args.time_limit is not None and not args.time_limit > 0:
        raise InputError(f"--time-limit must be a positive number of seconds, got {args.time_limit}")
    if not args.checkpoint_every > 0:
        raise InputError(f"--checkpoint-every must be a positive number of seconds, got {args.checkpoint_every}")
    tr = _trainer(args.abstraction, {"bets": args.bets, "max_raises": args.max_raises},
                  {"seed": args.seed, "discount_every": args.discount_every, "discount_until": args.discount_until,
                   "prune_after": args.prune_after, "prune_share": args.prune_share}, args.resume, args.max_memory)
    t = tr.tree
    print(f"blueprint: {t.n_nodes:,} betting nodes, {t.n_infosets:,} infosets, {t.n_slots:,} infoset-actions, "
          f"buckets {'/'.join(map(str, t.buckets))}, {len(tr.deals.flops):,} flops dealt; "
          f"{show(memory_estimate(t))} (R int32 + S float32: 8 B per infoset-action)"
          + (f"; resumed at iteration {tr.iterations:,}" if args.resume else ""))
    r = tr.train(args.iterations, args.time_limit, progress=not args.quiet, checkpoint=args.checkpoint,
                 checkpoint_every=args.checkpoint_every)
    tr.save(args.output)
    print(f"wrote {args.output}: {r['iterations']:,} iterations ({r['this_run']:,} in this run, "
          f"{r['iterations_per_second']:,.0f} it/s over {r['seconds']:.1f} s), preflop R+/T {r['quality_mbb']:.2f} mbb, "
          f"{r['actions_pruned']:,} actions pruned")
    return 0


def _match(args) -> int:
    from ..blueprint.train import head_to_head

    if args.deals < 2:
        raise InputError(f"--deals must be >= 2, got {args.deals}")
    a = _trainer(args.abstraction, {}, {}, args.a)
    b = _trainer(args.abstraction, {}, {}, args.b)
    if b.tree.digest() != a.tree.digest():
        raise InputError(f"{args.b}: another betting tree than {args.a}'s; blueprints must share it")
    r = head_to_head(a.tree, a.deals, a.S, b.S, args.deals, args.seed)
    print(f"{args.a} ({a.iterations:,} iterations) vs {args.b} ({b.iterations:,}): "
          f"{r['mbb']:+.1f} ± {r['ci95']:.1f} mbb/g (95% CI, {r['deals']:,} duplicate deals)")
    return 0
