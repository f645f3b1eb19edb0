"""``treeplex solve GAME``: an equilibrium, exact (LP) or by an iterative solver, with its gap,
exploitability, times and strategies; optionally the trace, the profile and checkpoints."""

from __future__ import annotations

import argparse
import json

import numpy as np
import sys
import time

from ..core.memory import limit_bytes, lp_default, lp_fits, show
from ..errors import InputError
from ..games import load_game, problem_for
from ..io.files import check_output
from ..model.metrics import to_mbb
from ..run.targets import HELP as TARGET_HELP, ITERATIVE_DEFAULT, POKER_DEFAULT, iterative_default, target_gap
from .common import add_memory_arg, add_range_args, overrides, parse_params


def options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("game")
    add_solver_args(sp)
    add_range_args(sp)
    add_memory_arg(sp)
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--no-strategies", action="store_true")
    sp.add_argument("--lazy", action="store_true",
                    help="mccfr-es or mccfr-os without compiling the game: infosets allocated on first visit "
                         "(treeplex.run.lazy_sampling; --param evaluation=auto|exact|sampled, br_iters, playouts, "
                         "report_every)")


def add_solver_args(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--algorithm", default=None,
                    help=f"lp (exact) or an iterative solver; default: lp, or {ITERATIVE_DEFAULT} ({POKER_DEFAULT} on "
                         "river and postflop spots) when a stop "
                         "rule (--target, --max-iters, --time-limit) or --checkpoint/--resume/--restart is given, "
                         "or when the LP would not fit --max-memory or has more than 1,000,000 nonzeros "
                         "(postflop and river spots)")
    sp.add_argument("--target", default=None, help=TARGET_HELP)
    sp.add_argument("--max-iters", type=int, default=None)
    sp.add_argument("--time-limit", type=float, default=None, help="seconds of solver time")
    sp.add_argument("--check-every", type=int, default=None, help="iterations between gap checks")
    sp.add_argument("--threads", type=int, default=None, help="threads for the products and passes (default: all cores)")
    sp.add_argument("--backend", default=None, metavar="NAME",
                    help="where the solver's passes run: numba (default), array (level-vectorized NumPy) "
                         "or gpu (the same on CuPy and a CUDA device: pip install 'treeplex[gpu]')")
    sp.add_argument("--trace", default=None, help="write the trace to this CSV file")
    sp.add_argument("--out", default=None, help="write the strategy profile here (behavioral, JSON; see --format)")
    sp.add_argument("--out-streets", type=int, default=None, metavar="N",
                    help="postflop: write the nodes of the first N streets to --out (default 1; every "
                         "street multiplies the nodes by the number of cards dealt)")
    sp.add_argument("--format", choices=["treeplex", "openspiel"], default="treeplex",
                    help="--out format: treeplex JSON (default), or for openspiel: games an OpenSpiel "
                         "TabularPolicy (.pkl: pickled; .json: {game, policy: {infostate: [[action, prob]]}})")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar")
    sp.add_argument("--checkpoint", default=None, metavar="FILE", help="save the run here at every gap check")
    sp.add_argument("--resume", default=None, metavar="FILE", help="continue the run saved in this checkpoint")
    sp.add_argument("--restart", action="store_true", help="restart from the average whenever its gap halves")
    sp.add_argument("--report", choices=["average", "current", "best"], default=None,
                    help="strategy to report and stop on: the average (default), the current iterate, "
                         "or the better of the two")
    sp.add_argument("--warm-start", default=None, metavar="FILE",
                    help="start from this strategy profile (--out file; for openspiel: games also an "
                         "OpenSpiel policy .pkl/.json)")
    sp.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="solver parameter, repeatable (e.g. alpha=2.3, alternating=false, eta=10)")
    sp.add_argument("--refine", choices=["efpe"], default=None,
                    help="efpe: approximate extensive-form perfect equilibrium, an equilibrium of the "
                         "xi-perturbed game (with lp, egt, egt-as or the regret-matching CFR family)")
    sp.add_argument("--xi", type=float, default=None,
                    help="with --refine efpe: every action is played with probability >= XI (default 0.01)")
    sp.add_argument("--lock", action="append", default=[], metavar="NODE:PLAYER:A=P,...[:HANDS]",
                    help="postflop: lock PLAYER's strategy at NODE (a history as treeplex show prints it), "
                         "e.g. x-b20:1:f=0.8,c=0.2 or x-b20:1:f=1:AA,KK; repeatable; added to the spec's locks")
    sp.add_argument("--baseline", default=None, metavar="FILE|none",
                    help="postflop with locks (or rake): the spot's solution without its locks (without rake), a "
                         "solve --out file, to compare against (and spread frequency locks from); default: solve "
                         "it first with the same solver and stop rule; none: no baseline (no frequency locks then)")
    sp.add_argument("--infoset-regret", action="store_true",
                    help="also report the infoset regrets (max, and the full list with --json)")


def set_threads(n: int) -> None:
    """Numba's thread count for this process (1 .. the cores numba started with)."""
    import numba

    if not 1 <= n <= numba.config.NUMBA_NUM_THREADS:
        raise InputError(f"--threads must be between 1 and {numba.config.NUMBA_NUM_THREADS}, got {n}")
    numba.set_num_threads(n)


def solver_params(args, problem, game=None) -> dict:
    """``solve()`` keyword arguments from the solver flags, ``algorithm`` included."""
    iterative = any(v is not None for v in (args.target, args.max_iters, args.time_limit, args.checkpoint,
                                            args.resume)) or args.restart
    default = None if args.resume else (iterative_default(problem) if iterative else "lp")  # resume: the checkpoint's
    params = {"algorithm": default if args.algorithm is None else args.algorithm}
    params.update(parse_params(args.param))
    if args.warm_start:
        from ..io.profiles import load_profile

        params["prior"] = load_profile(args.warm_start, problem, game)
    for flag in ("checkpoint", "resume", "restart"):
        if getattr(args, flag):
            params[flag] = getattr(args, flag)
    return params


def _out_streets(args, problem) -> dict:
    """``strategy_dict`` keywords for ``--out-streets N`` (postflop games only), the ``--out``
    file's size checked against ``--max-memory`` before the solve (postflop)."""
    streets = {}
    if args.out_streets is not None:
        if "streets" not in problem.strategy_options:
            raise InputError("--out-streets applies to postflop games only")
        if args.out_streets < 1:
            raise InputError(f"--out-streets must be at least 1, got {args.out_streets}")
        streets = {"streets": args.out_streets}
    if args.out and "streets" in problem.strategy_options:
        need, nodes = problem.game.out_bytes(**streets)
        limit, what = limit_bytes(args.max_memory)
        if limit is not None and need > limit:
            raise InputError(f"--out: {nodes:,} nodes with their hands' strategies need about {show(need)} to write, "
                             f"above {show(limit)} ({what}); save fewer streets (--out-streets)")
    return streets


def run(args) -> int:
    if args.lazy:
        from ..run.lazy_sampling import cmd_lazy

        return cmd_lazy(args, solver_params)
    from ..run.driver import solve
    from ..run.progress import write_trace
    from ..model.strategy import save_solution

    files = [(args.game, "the game file"), (args.warm_start, "the --warm-start file"),
             (args.resume, "the --resume file"), (args.checkpoint, "the --checkpoint file"),
             (args.out, "the --out file"), (args.trace, "the --trace file")]
    for flag in ("out", "trace", "checkpoint"):
        path = getattr(args, flag)
        if path is not None:  # each output must be none of the run's other files (--checkpoint may be --resume's)
            others = {p: w for p, w in files if w != f"the --{flag} file"
                      and not (flag == "checkpoint" and w == "the --resume file")}
            check_output(path, f"--{flag}", inputs=others, regular=flag == "checkpoint")
    from ..core.jit import JitClock

    if args.threads is not None:
        set_threads(args.threads)
    t0 = time.perf_counter()
    extra = {}
    if args.lock:
        from ..poker.locks import parse_lock_text

        if not args.game.endswith((".json", ".toml")):
            raise InputError("--lock applies to postflop spec files (.json, .toml)")
        extra["locks"] = [parse_lock_text(t) for t in args.lock]
    from ..run.whatif import baseline_for, baseline_game, is_locked, is_raked, record

    with JitClock() as jit:
        game = load_game(args.game, **overrides(args), **extra)
        locked = is_locked(game)
        whatif = locked or is_raked(game)  # a locked or raked spot: compared with its baseline
        if args.baseline is not None and not whatif:
            raise InputError("--baseline applies to postflop spots with locks or rake")
        baseline = None
        if whatif and args.baseline not in (None, "none"):
            baseline = baseline_for(game, args.baseline, max_memory=args.max_memory)
        unsolved = whatif and args.baseline is None  # the baseline is solved below, without the locks (rake)
        p = problem_for(baseline_game(game) if unsolved else game, args.game, args.max_memory)
    compile_seconds = time.perf_counter() - t0 - jit.seconds
    if getattr(args, "backend", None):
        p.use_backend(args.backend)
    out_streets = _out_streets(args, p)
    show_bar = not args.no_progress and not args.json and sys.stderr.isatty()
    params = solver_params(args, p, game)
    if args.format == "openspiel" and game.spiel_game is None:
        raise InputError(f"--format openspiel needs an OpenSpiel game (openspiel:NAME), not {args.game!r}")
    notes = {}
    if params["algorithm"] == "lp":
        fits, why = lp_fits(p, args.max_memory)
        if not fits and args.algorithm is not None:
            raise InputError(f"{why}; use an iterative solver (--algorithm {iterative_default(p)} --target GAP)")
        if args.algorithm is None:
            fits, why = lp_default(p, args.max_memory)
        if not fits:
            params["algorithm"] = iterative_default(p)
            notes["note"] = (f"{why}: solved by {params['algorithm']} instead (1000 iterations unless "
                             f"--target, --max-iters or --time-limit says otherwise)")
    stop = dict(target_gap=target_gap(args.target, p), max_iters=args.max_iters, time_limit=args.time_limit,
                check_every=args.check_every, progress=show_bar, report=args.report or "average")
    if unsolved and (args.checkpoint or args.resume):
        raise InputError("--checkpoint and --resume with locks or rake need --baseline FILE or --baseline none "
                         "(they would save the baseline's run)")
    if unsolved:  # the spot without locks (rake) first, with the same solver and stop rule: the baseline
        baseline = baseline_for(game, None, lambda q: solve(q, params["algorithm"], **stop,
                                                            **{k: v for k, v in params.items() if k != "algorithm"}),
                                problem=p)
        t1 = time.perf_counter()
        with JitClock() as jit2:
            p = game.problem(args.max_memory)
        compile_seconds += time.perf_counter() - t1 - jit2.seconds
        if getattr(args, "backend", None):
            p.use_backend(args.backend)
    if args.refine:
        from ..refine.cli import solve_refined

        res, refined = solve_refined(args, p, params, stop)
    elif args.xi is not None:
        raise InputError("--xi needs --refine efpe")
    else:
        res, refined = solve(p, params.pop("algorithm"), **stop, **params), {}
    failed = []  # files that could not be written: the result is printed all the same
    if args.trace:
        _write(failed, args.trace, lambda: write_trace(res.trace, args.trace, {"game": p.name,
                                                                              "algorithm": res.algorithm}))
    meta = {"algorithm": res.algorithm, "value": res.value, "gap": res.gap,
            "exploitability": res.exploitability, "payoff_unit": p.payoff_unit, "iterations": res.iterations}
    if p.general_sum:
        meta.update(value_player1=res.evaluation.value1, expected_rake=res.evaluation.rake)
    if locked:
        meta["locks"] = game.locks
    if baseline is not None:
        meta.update(record(p, res, baseline))
    if args.out and args.format == "openspiel":
        from ..io.openspiel import save_policy

        _write(failed, args.out, lambda: save_policy(args.out, game, p, res.x, res.y))
    elif args.out:
        x, y, kw = res.profile_args(p)
        _write(failed, args.out, lambda: save_solution(args.out, p.solution(x, y, **out_streets, **kw), **meta))
    whatif = {k: meta[k] for k in ("baseline", "lock_ev_gain", "rake_ev_cost") if k in meta}
    _print_result(args, game, p, res, {**refined, **notes, **whatif}, compile_seconds, jit.seconds,
                  stop["target_gap"])
    if failed:
        print(f"treeplex: error: the result is printed above, but {'; '.join(failed)}", file=sys.stderr)
        return 2
    return 0


def _write(failed: list, path: str, write) -> None:
    """Run ``write()``; on an OS error note which file failed in ``failed``."""
    try:
        write()
    except OSError as e:
        failed.append(f"cannot write {path} ({e.strerror or e})")


def _print_result(args, game, p, res, refined: dict, compile_seconds: float, jit_seconds: float,
                  target: float | None) -> None:
    """The result of ``solve``: one JSON object (``--json``) or readable lines; ``jit_seconds``
    is numba's time while loading the game (the solve's own is in ``res``)."""
    out = {
        "game": p.name,
        "algorithm": res.algorithm,
        "value": res.value,
        "gap": res.gap,
        "exploitability": res.exploitability,
        "br_value_player0": res.evaluation.br0,
        "br_value_player1": res.evaluation.br1,
        "payoff_unit": p.payoff_unit,
        "iterations": res.iterations,
        "gradients": res.gradients,
        "sequences": list(p.n_seqs),
        "seconds": res.seconds,
        "check_seconds": res.check_seconds,
        "compile_seconds": compile_seconds,
        "jit_seconds": jit_seconds + res.jit_seconds,
        "stopped_by": res.stopped_by,
    }
    if target is not None:
        out["target_gap"] = target
    if p.big_blind:
        out["exploitability_mbb_per_game"] = to_mbb(res.exploitability, p.big_blind)
    if "pot" in p.stats:  # poker solvers' unit: exploitability over the starting pot
        out["exploitability_pct_pot"] = 100 * res.exploitability / p.stats["pot"]
    if p.general_sum:  # a raked spot: value is player 0's own payoff; player 1's and the rake beside it
        out["value_player1"] = res.evaluation.value1
        out["expected_rake"] = res.evaluation.rake
    if p.locks is not None:
        out.update(_lock_report(p, res))
    out.update(refined)
    if args.refine or args.infoset_regret:
        from ..refine.cli import infoset_regret_report

        out.update(infoset_regret_report(p, res.x, res.y, full=args.infoset_regret))
    if not args.no_strategies:
        x, y, kw = res.profile_args(p)
        out["strategies"] = p.strategy_dict(x, y, **kw)
    if args.json:
        print(json.dumps(out))
        return
    unit = p.payoff_unit
    print(f"game            {p.name}")
    if "note" in out:
        print(f"note            {out['note']}")
    print(f"algorithm       {res.algorithm}  ({res.iterations} iterations, {res.gradients} gradients, "
          f"stopped by {res.stopped_by})")
    print(f"value           {res.value:.10g} {unit} (player 0's expected payoff){_poker_units(res.value, p, '.6g')}")
    if p.general_sum:
        print(f"value p1        {out['value_player1']:.10g} {unit} (player 1's own expected payoff)"
              f"{_poker_units(out['value_player1'], p, '.6g')}")
        print(f"rake            {out['expected_rake']:.10g} {unit} (expected rake = -(value + value p1); "
              "the game is general-sum)")
        print(f"gap             {res.gap:.4e} {unit} (Nash gap = sum of both players' best-response gains)")
    else:
        print(f"gap             {res.gap:.4e} {unit} (saddle-point gap = sum of both best-response gains)")
    print(f"exploitability  {res.exploitability:.4e} {unit} (gap / 2){_poker_units(res.exploitability, p, '.4g')}")
    if p.locks is not None:
        _print_locks(out, p)
    if "lock_ev_gain" in out or "rake_ev_cost" in out:
        _print_whatif(out, p)
    if args.refine or args.infoset_regret:
        from ..refine.cli import print_refinement

        print_refinement(out, unit)
    print(f"time            {res.seconds:.3f} s solve, {compile_seconds:.3f} s compile, "
          f"{res.check_seconds:.3f} s gap checks, {out['jit_seconds']:.3f} s JIT (numba)")
    if not args.no_strategies:
        x, y, kw = res.profile_args(p)
        print("\n" + p.summary(x, y, **kw))


def _lock_report(p, res) -> dict:
    """Node locks: the locked infosets per player, and each player's gain by a best response
    that ignores the locks against the other's strategy (:func:`treeplex.model.metrics.lock_gains`)."""
    from ..model.metrics import lock_gains

    game = p.game
    if game.fused_by_default():
        tree = game.fused_tree()  # a spot the fused engine runs: two walks, not the sequence form's products
        tree.set_locks(p.locks)
        gains, counts = tree.lock_gains(res.x, res.y), tree.locked_infosets()
    else:
        gains = lock_gains(p, res.x, res.y)
        counts = [0 if lk is None else len(np.unique(T.seq_infoset[np.flatnonzero(lk.lower)]))
                  for lk, T in zip(p.locks, p.treeplexes)]
    return {"locked_infosets": counts, "lock_gain_player0": gains[0], "lock_gain_player1": gains[1]}


def _print_locks(out: dict, p) -> None:
    unit = p.payoff_unit
    locked = [q for q in (0, 1) if out["locked_infosets"][q]]
    who = " and ".join(f"player {q} plays its locks at {out['locked_infosets'][q]:,} infosets" for q in locked)
    print(f"locks           {who}: value, gap and exploitability above are the locked game's "
          "(best responses play the locks)")
    for q in (0, 1):
        g = out[f"lock_gain_player{q}"]
        what = ("would gain by leaving its locks" if q in locked
                else f"gains against player {1 - q}'s locked strategy (its exploitability share)")
        print(f"lock gain p{q}    {g:.4e} {unit}{_poker_units(g, p, '.4g')}: player {q} {what}, "
              "best response with no lock minus the value")


def _print_whatif(out: dict, p) -> None:
    """The baseline and what the what-if changes for each player (:mod:`treeplex.run.whatif`):
    the EV gained from the locks, or what the rake costs (a raked spot without locks)."""
    locks = "lock_ev_gain" in out
    b, g = out["baseline"], out["lock_ev_gain" if locks else "rake_ev_cost"]
    label, without, meaning = (("lock EV", "locks", "EV locked minus baseline") if locks else
                               ("rake cost", "rake", "own EV without rake minus with it"))
    where = b["file"] or f"solved first: {b['algorithm']}, {b['iterations']} iterations"
    print(f"baseline        value {b['value']:.10g} {p.payoff_unit}, gap {b['gap']:.4e} (the spot without {without}; "
          f"{where})")
    for q in (0, 1):
        print(f"{f'{label} p{q}':16s}{g['chips'][q]:+.6g} {p.payoff_unit}{_poker_units(g['chips'][q], p, '+.6g')}: "
              f"player {q}'s {meaning} (within {g['error_bound_chips']:.3g}: the two gaps)")


def _poker_units(x: float, p, mbb_format: str) -> str:
    """`` = x mbb/g`` where the game has a big blind, and `` = x% of the pot`` where it has a pot."""
    text = f" = {to_mbb(x, p.big_blind):{mbb_format}} mbb/g" if p.big_blind else ""
    return text + (f" = {100 * x / p.stats['pot']:.4g}% of the pot" if "pot" in p.stats else "")
