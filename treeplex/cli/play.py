"""``treeplex play``: duplicate matches between two agents (issue 28, stage 4), hand
histories, and the ACPC protocol over TCP (``--serve PORT``, ``--connect HOST:PORT``)."""

from __future__ import annotations

import argparse
import io
import sys

import numpy as np

from ..errors import InputError
from ..io.files import check_output

AGENTS = ("call, fold, random, human, a blueprint checkpoint BP.npz (with --abstraction), or dl:BP.npz[,k=4]"
          "[,rollouts=N][,hands=N], the depth-limited agent on it (k=1: naive)")


def options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--agent", required=True, metavar="A", help=f"player A: {AGENTS}")
    sp.add_argument("--vs", default=None, metavar="B", help=f"player B: {AGENTS} (not with --serve/--connect)")
    sp.add_argument("--hands", type=int, default=1000, metavar="N", help="duplicate pairs of hands (default 1000)")
    sp.add_argument("--seed", type=int, default=0, help="cards and the agents' random choices (default 0)")
    sp.add_argument("--abstraction", default=None, metavar="ABS.npz", help="the blueprint's abstraction")
    realtime_options(sp)
    sp.add_argument("--aivat", action="store_true",
                    help="also score A by AIVAT (Burch et al. 2018), the value function the blueprint of A "
                         "(else of B): mbb/g and its 95%% CI beside the plain ones (with --vs or --serve)")
    sp.add_argument("--history", default=None, metavar="FILE", help="write ACPC STATE lines, one per hand")
    net = sp.add_mutually_exclusive_group()
    net.add_argument("--serve", type=int, default=None, metavar="PORT",
                     help="deal as an ACPC server on localhost:PORT: A plays here, B is the client that connects")
    net.add_argument("--connect", default=None, metavar="HOST:PORT", help="play A as a client of an ACPC dealer")


def realtime_options(sp: argparse.ArgumentParser) -> None:
    """``--budget P,F,T,R`` (read by :func:`treeplex.play.realtime.parse_budget`) and
    ``--preflop-cache FILE``, the depth-limited agent's."""
    sp.add_argument("--budget", default=None, metavar="P,F,T,R",
                    help="a depth-limited agent's seconds per decision on each street (default 30,3,3,1.5; "
                         "preflop: a solve of the whole preflop, once per new off-tree opponent raise)")
    sp.add_argument("--preflop-cache", default=None, metavar="FILE",
                    help="the depth-limited agent's (--agent's) solved preflops: loaded from this npz if it "
                         "exists, saved to it after each hand that solved one")


def run(args) -> int:
    from ..play.realtime import make_agent, parse_budget

    if args.hands < 1:
        raise InputError(f"--hands must be >= 1, got {args.hands}")
    parse_budget(args.budget)  # a malformed budget is refused whichever agents play
    if args.history:
        check_output(args.history, "--history", {}, regular=True)
    a = make_agent(args.agent, args.abstraction, args.seed, args.budget, preflop_cache=args.preflop_cache)
    table, flops = _table(a)
    if args.aivat and not (args.vs or args.serve is not None):
        raise InputError("--aivat: needs --vs B or --serve PORT (the dealer's side sees every card; a client "
                         "of --connect does not)")
    if args.connect:
        if args.vs:
            raise InputError("--vs: with --connect the dealer chooses the opponent")
        if args.history:
            raise InputError("--history: with --connect the dealer writes the log")
        return _connect(args, a, table)
    if args.serve is None and not args.vs:
        raise InputError("give --vs B (or --serve PORT / --connect HOST:PORT)")
    if args.serve is not None:
        if args.vs:
            raise InputError("--vs: with --serve the opponent is the client that connects")
        return _serve(args, a, table, flops)
    b = make_agent(args.vs, args.abstraction, args.seed + 1, args.budget)
    if a.name == b.name:
        a.name, b.name = a.name + "-A", b.name + "-B"
    t2, f2 = _table(b)
    if t2 != table:
        raise InputError(f"--vs: {args.vs} plays stacks/blinds {t2}, {args.agent} {table}")
    flops = flops if flops is not None else f2
    aivat = _aivat(args, (a, b), flops)
    return _report(args, a, b, table, lambda hist: _match(a, b, args, table, flops, hist, aivat), aivat)


def _aivat(args, agents, flops):
    """The :class:`~treeplex.play.aivat.Aivat` of ``--aivat`` (None without): its value function
    the blueprint of the first agent that has one."""
    if not args.aivat:
        return None
    from ..play.aivat import Aivat

    bp = next((ag.bp for ag in agents if getattr(ag, "bp", None) is not None), None)
    if bp is None:
        raise InputError("--aivat: needs a blueprint or dl: agent on either side (its blueprint is the value function)")
    return Aivat(bp, flops, seed=args.seed)


def _table(agent):
    from ..play.engine import Table

    bp = getattr(agent, "bp", None)
    return (bp.table, bp.flops) if bp is not None else (Table(), None)


def _match(a, b, args, table, flops, hist, aivat=None):
    from ..play.match import duplicate_match

    return duplicate_match(a, b, args.hands, args.seed, table, flops, hist, allin_ev=True, aivat=aivat)


def _report(args, a, b, table, play, aivat=None) -> int:
    """Run ``play(history sink)`` and print A's result (and its AIVAT score, from ``aivat``);
    ``b`` is B's agent or its name."""
    from ..io.files import atomic_write

    log = io.StringIO() if args.history else None  # the hands' STATE lines, written at the end
    r = play(log)
    if aivat is not None:
        r["aivat"].update(blueprint=aivat.bp.path, seconds=aivat.seconds)
    if args.history:
        atomic_write(args.history, lambda f: f.write(log.getvalue().encode()))
    print(f"{a.name} vs {getattr(b, 'name', b)}: {r['mbb']:+.1f} ± {r['ci95']:.1f} mbb/g for {a.name} (95% CI, normal over "
          f"{r['pairs']:,} duplicate pairs = {2 * r['pairs']:,} hands; blinds {table.small_blind}/{table.big_blind})"
          + (f"; wrote {args.history}" if args.history else ""))
    if "adjusted" in r:
        _adjusted(r)
    if "aivat" in r:
        v = r["aivat"]
        print(f"  AIVAT (v: blueprint {v['blueprint']}'s expected values; known policies: the blueprint and dl: "
              f"agents): {v['mbb']:+.1f} ± {v['ci95']:.1f} mbb/g; {v['seconds'] / (2 * v['pairs']):.3f} s per hand")
    report_agents((a,) if isinstance(b, str) else (a, b))
    return 0


def report_agents(agents) -> None:
    """Per agent that keeps them: its seconds per decision on each street (mean, median, max and
    the number of decisions: the depth-limited agent's real-time cost), and its decisions off its tree."""
    from ..play.agents import STREETS

    for ag in agents:
        times = getattr(ag, "times", None)
        if times is not None:
            print(f"  {ag.name}: seconds per decision, mean/median/max (decisions): " + ", ".join(
                f"{s} {np.mean(t):.2f}/{np.median(t):.2f}/{max(t):.2f} ({len(t):,})"
                for s, t in zip(STREETS, times) if t))
        pre = getattr(ag, "preflop_times", None)
        if pre is not None and (pre["solved"] or pre["cached"]):
            print(f"  {ag.name}: preflop cache: {ag.stats['preflop_solves']:,} solves, {ag.stats['preflop_loads']:,} "
                  f"loads; seconds per preflop decision off the blueprint's tree, mean (decisions): "
                  + ", ".join(f"{k} {np.mean(t):.2f} ({len(t):,})" for k, t in pre.items() if t))
        st = getattr(ag, "stats", None)
        if st and "safe_solves" in st and getattr(ag, "safe", False):
            print(f"  {ag.name}: {st['safe_solves']:,} turn/river spots solved safely (a resolve gadget with the "
                  "previous spot's values as alts), the rest of them unsafely")
        if st and (st["off_tree"] or st["unreached"]):
            print(f"  {ag.name}: {st['off_tree']:,} of {st['decisions']:,} decisions off its tree, "
                  f"{st['unreached']:,} in classes its abstraction did not reach (checked or called)")


def _adjusted(r) -> None:
    a = r["adjusted"]
    print(f"  all-in adjusted (called all-ins score their equity over the cards to come): {a['mbb']:+.1f} ± "
          f"{a['ci95']:.1f} mbb/g")


def _serve(args, a, table, flops) -> int:
    from ..play.acpc import serve

    aivat = _aivat(args, (a,), flops)
    return _report(args, a, "client", table, lambda hist: serve(args.serve, a, args.hands, args.seed, table, flops,
                                                                hist, log=sys.stderr, aivat=aivat), aivat)


def _connect(args, a, table) -> int:
    from ..play.acpc import connect

    host, _, port = args.connect.rpartition(":")
    try:
        port = int(port)
    except ValueError:
        raise InputError(f"--connect {args.connect!r}: expected HOST:PORT") from None
    r = connect(host or "localhost", port, a, table)
    print(f"{a.name} as an ACPC client: {r['hands']:,} hands, {r['chips']:+,} chips "
          f"({r['mbb']:+.1f} mbb/g, not duplicate)")
    return 0
