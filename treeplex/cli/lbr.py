"""``treeplex lbr``: local best response against a blueprint or the depth-limited agent (issue 28,
stage 5), in duplicate: LBR's winnings in mbb/g with a 95% interval, a lower bound on the
opponent's exploitability; for the depth-limited agent also its seconds per decision per street."""

from __future__ import annotations

import argparse
import io

from ..errors import InputError
from .play import realtime_options


def options(sp: argparse.ArgumentParser) -> None:
    who = sp.add_mutually_exclusive_group(required=True)
    who.add_argument("--blueprint", default=None, metavar="BP.npz", help="the blueprint LBR plays against")
    who.add_argument("--agent", default=None, metavar="dl:BP.npz",
                     help="the depth-limited agent on a blueprint, dl:BP.npz[,k=4][,rollouts=N][,hands=N] "
                          "(as play's --agent; with --budget)")
    who.add_argument("--opponent", choices=("call", "fold"), default=None,
                     help="a fixed opponent instead (calling station or folder): checks with closed forms")
    sp.add_argument("--abstraction", default=None, metavar="ABS.npz", help="the blueprint's abstraction")
    realtime_options(sp)
    sp.add_argument("--hands", type=int, default=1000, metavar="N", help="duplicate pairs of hands (default 1000)")
    sp.add_argument("--rollouts", type=int, default=200, metavar="R",
                    help="board runouts sampled for LBR's equity before the turn (default 200)")
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--history", default=None, metavar="FILE", help="write ACPC STATE lines, one per hand")


def run(args) -> int:
    from ..io.files import atomic_write, check_output
    from ..play.agents import Blueprint, BlueprintAgent, CallingStation, Folder
    from ..play.engine import Table
    from ..play.lbr import AgentModel, BlueprintModel, DepthLimitedModel, LBRAgent
    from ..play.match import duplicate_match
    from ..play.realtime import make_agent, parse_budget
    from .play import _adjusted, report_agents

    if args.hands < 2:
        raise InputError(f"--hands must be >= 2, got {args.hands}")
    if args.rollouts < 1:
        raise InputError(f"--rollouts must be >= 1, got {args.rollouts}")
    parse_budget(args.budget)  # a malformed budget is refused whichever opponent plays
    if args.history:
        check_output(args.history, "--history", {}, regular=True)
    if args.agent:
        if not args.agent.startswith("dl:"):
            raise InputError(f"--agent {args.agent!r}: expected dl:BP.npz[,k=4][,rollouts=N][,hands=N] "
                             "(a blueprint: --blueprint BP.npz; a calling station or folder: --opponent)")
        opp = make_agent(args.agent, args.abstraction, args.seed + 1, args.budget, preflop_cache=args.preflop_cache)
        model, table, flops = DepthLimitedModel(opp), opp.bp.table, opp.bp.flops
    elif args.preflop_cache:
        raise InputError("--preflop-cache: only with --agent dl:BP.npz")
    elif args.blueprint:
        if not args.abstraction:
            raise InputError("--blueprint needs --abstraction ABS.npz")
        bp = Blueprint(args.blueprint, args.abstraction)
        opp, model, table, flops = BlueprintAgent(bp, args.seed + 1), BlueprintModel(bp), bp.table, bp.flops
    else:
        opp = CallingStation() if args.opponent == "call" else Folder()
        model, table, flops = AgentModel(opp), Table(), None
    lbr = LBRAgent(model, args.rollouts, args.seed, flops)
    log = io.StringIO() if args.history else None  # the hands' STATE lines, written at the end
    r = duplicate_match(lbr, opp, args.hands, args.seed, table, flops, log,
                        allin_ev=True)
    if args.history:
        atomic_write(args.history, lambda f: f.write(log.getvalue().encode()))
    print(f"LBR vs {opp.name}: {r['mbb']:+.1f} ± {r['ci95']:.1f} mbb/g for LBR (95% CI, normal over {r['pairs']:,} "
          f"duplicate pairs); a lower bound on {opp.name}'s exploitability (= gap/2) in mbb/g")
    _adjusted(r)
    report_agents((opp,))
    return 0
