"""Command line: ``treeplex info|solve|export GAME``, ``treeplex plot TRACE.csv ...``, ``treeplex show|view FILE``, ``treeplex batch|report``.

GAME is a built-in name with optional parameters (``leduc(ranks=5)``), an OpenSpiel game
(``openspiel:liars_dice(numdice=1,dice_sides=6)``, needs ``treeplex[openspiel]``),
``river(pot=2100,board=AsKd7h2c3s,abstraction=libratus)`` with ``--range0/--range1``), a path
to a Gambit ``.efg`` file, or a river endgame ``.json`` spec. Errors are one line on stderr: exit code 2 for bad input, 1 for internal errors.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import time

# One BLAS thread unless the user chose otherwise: treeplex's products are sparse, numba's or
# small, and OpenBLAS starting a thread per core cost 0.1 s of CPU and 0.02-0.04 s of wall
# time in every command on the 2-core machine (``import numpy``: 0.10-0.13 s wall against
# 0.11-0.18 s). Set here, before the first import of numpy; a library user's process is left alone.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from ..errors import InputError, OneLineParser, guarded
from ..io.files import check_output
from ..games import load_game, load_problem, problem_for
from ..core.memory import limit_bytes, lp_default, lp_fits, show
from ..model.metrics import to_mbb
from ..run.targets import HELP as TARGET_HELP, ITERATIVE_DEFAULT, target_gap


def _poker_units(x: float, p, mbb_format: str) -> str:
    """`` = x mbb/g`` where the game has a big blind, and `` = x% of the pot`` where it has a pot."""
    text = f" = {to_mbb(x, p.big_blind):{mbb_format}} mbb/g" if p.big_blind else ""
    return text + (f" = {100 * x / p.stats['pot']:.4g}% of the pot" if "pot" in p.stats else "")


def set_threads(n: int) -> None:
    """Numba's thread count for this process (1 .. the cores numba started with)."""
    import numba

    if not 1 <= n <= numba.config.NUMBA_NUM_THREADS:
        raise InputError(f"--threads must be between 1 and {numba.config.NUMBA_NUM_THREADS}, got {n}")
    numba.set_num_threads(n)


def _overrides(args) -> dict:
    return {k: v for k in ("range0", "range1") if (v := getattr(args, k, None)) is not None}


# ------------------------------------------------------------------ commands


def cmd_info(args) -> int:
    p = load_problem(args.game, args.max_memory, **_overrides(args))
    info = {
        "game": p.name,
        **{k: v for k, v in p.stats.items() if k != "compile_seconds"},
        "infosets": [p.X.n_infosets, p.Y.n_infosets],
        "sequences": [p.X.n_seqs, p.Y.n_seqs],
        "nonzeros": p.A.nnz,
        "operator_bytes": p.A.nbytes,
        "treeplex_bytes": p.X.nbytes + p.Y.nbytes,
        "compile_seconds": p.stats["compile_seconds"],
    }
    if args.json:
        print(json.dumps(info))
        return 0
    print(f"game              {p.name}")
    print(f"histories         {p.stats['histories']}")
    print(f"terminals         {p.stats['terminals']}")
    print(f"chance nodes      {p.stats['chance_nodes']}")
    print(f"decision nodes    {p.stats['decision_nodes']}")
    print(f"infosets          player 0: {p.X.n_infosets}   player 1: {p.Y.n_infosets}")
    print(f"sequences         player 0: {p.X.n_seqs}   player 1: {p.Y.n_seqs}")
    print(f"nonzeros of A     {p.A.nnz}")
    for k, v in p.stats.items():  # game-specific sizes (river: hands, betting sequences, leaves)
        if k not in _STAT_KEYS:
            print(f"{k.replace('_', ' '):17s} {v}")
    print(f"memory            operator {p.A.nbytes} bytes, treeplexes {info['treeplex_bytes']} bytes")
    print(f"compile time      {p.stats['compile_seconds']:.3f} s")
    return 0


_STAT_KEYS = {"histories", "terminals", "chance_nodes", "decision_nodes", "constant_sum", "compile_seconds"}


def add_solver_args(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--algorithm", default=None,
                    help=f"lp (exact) or an iterative solver; default: lp, or {ITERATIVE_DEFAULT} when a stop "
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
    sp.add_argument("--infoset-regret", action="store_true",
                    help="also report the infoset regrets (max, and the full list with --json)")


def add_memory_arg(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--max-memory", default=None, metavar="SIZE",
                    help="refuse games (and the LP) estimated to need more (e.g. 4G; default: the available memory)")


def add_range_args(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--range0", default=None, help="river: player 0's range, Pio style ('QQ-88,AKs,AA:0.5')")
    sp.add_argument("--range1", default=None, help="river: player 1's range")




def _parse_value(text: str):
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def solver_params(args, problem, game=None) -> dict:
    """``solve()`` keyword arguments from the solver flags, ``algorithm`` included."""
    iterative = any(v is not None for v in (args.target, args.max_iters, args.time_limit, args.checkpoint,
                                            args.resume)) or args.restart
    default = None if args.resume else (ITERATIVE_DEFAULT if iterative else "lp")  # resume: the checkpoint's
    params = {"algorithm": default if args.algorithm is None else args.algorithm}
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise InputError(f"--param {item!r}: expected KEY=VALUE")
        params[key.strip()] = _parse_value(value)
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


def cmd_solve(args) -> int:
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
    with JitClock() as jit:
        game = load_game(args.game, **_overrides(args))
        p = problem_for(game, args.game, args.max_memory)
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
            raise InputError(f"{why}; use an iterative solver (--algorithm {ITERATIVE_DEFAULT} --target GAP)")
        if args.algorithm is None:
            fits, why = lp_default(p, args.max_memory)
        if not fits:
            params["algorithm"] = ITERATIVE_DEFAULT
            notes["note"] = (f"{why}: solved by {ITERATIVE_DEFAULT} instead (1000 iterations unless "
                             f"--target, --max-iters or --time-limit says otherwise)")
    stop = dict(target_gap=target_gap(args.target, p), max_iters=args.max_iters, time_limit=args.time_limit,
                check_every=args.check_every, progress=show_bar, report=args.report or "average")
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
    if args.out and args.format == "openspiel":
        from ..io.openspiel import save_policy

        _write(failed, args.out, lambda: save_policy(args.out, game, p, res.x, res.y))
    elif args.out:
        _write(failed, args.out, lambda: save_solution(args.out, p.solution(res.x, res.y, **out_streets), **meta))
    _print_result(args, game, p, res, {**refined, **notes}, compile_seconds, jit.seconds, stop["target_gap"])
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
        "sequences": [p.X.n_seqs, p.Y.n_seqs],
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
    out.update(refined)
    if args.refine or args.infoset_regret:
        from ..refine.cli import infoset_regret_report

        out.update(infoset_regret_report(p, res.x, res.y, full=args.infoset_regret))
    if not args.no_strategies:
        out["strategies"] = p.strategy_dict(res.x, res.y)
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
    print(f"gap             {res.gap:.4e} {unit} (saddle-point gap = sum of both best-response gains)")
    print(f"exploitability  {res.exploitability:.4e} {unit} (gap / 2){_poker_units(res.exploitability, p, '.4g')}")
    if args.refine or args.infoset_regret:
        from ..refine.cli import print_refinement

        print_refinement(out, unit)
    print(f"time            {res.seconds:.3f} s solve, {compile_seconds:.3f} s compile, "
          f"{res.check_seconds:.3f} s gap checks, {out['jit_seconds']:.3f} s JIT (numba)")
    if not args.no_strategies:
        print("\n" + p.summary(res.x, res.y))


def cmd_plot(args) -> int:
    from ..io.plot import check_image_name, plot_traces

    check_output(args.output, "-o", inputs={t: "a trace to draw" for t in args.traces})
    check_image_name(args.output)

    print(plot_traces(args.traces, args.output, labels=args.label, current=args.current, title=args.title,
                      x=tuple(k.strip() for k in args.x.split(",") if k.strip())))
    return 0


def cmd_export(args) -> int:
    from ..io.efg import efg_lines

    if args.output:
        check_output(args.output, "-o", inputs={args.game: "the game file"})
    game = load_game(args.game)
    lines = efg_lines(game, title=game.name)
    if not args.output:
        sys.stdout.writelines(lines)
        return 0
    try:  # streamed: a large game is never held as text
        with open(args.output, "w", encoding="utf-8") as f:
            f.writelines(lines)
    except OSError as e:
        raise InputError(f"cannot write {args.output} ({e.strerror or e})") from None
    return 0


def cmd_show(args) -> int:
    from ..poker.show import find_node, format_node, load_solution

    data = load_solution(args.file, args.max_memory)
    print(format_node(data, find_node(data, args.node)))
    return 0


def cmd_view(args) -> int:
    from ..viewer import page_html, serve

    html = page_html([args.file] + ([args.compare] if args.compare else []), args.max_memory)
    if args.html:
        with open(args.html, "w") as f:
            f.write(html)
        print(f"wrote {args.html} ({len(html.encode()) / 1024:.0f} KiB)")
        return 0
    serve(html, open_browser=not args.no_open, port=args.port)
    return 0


def cmd_batch(args) -> int:
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


def cmd_report(args) -> int:
    from ..scale.report import write_report

    print(write_report(args.db, args.output))
    return 0


def cmd_split_solve(args) -> int:
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
    params = {}
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise InputError(f"--param {item!r}: expected KEY=VALUE")
        params[key.strip()] = _parse_value(value)
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


def cmd_depth_limited(args) -> int:
    from ..depth_limited.__main__ import main as depth_limited_main

    return depth_limited_main(args.args)


def _info_options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("game")
    sp.add_argument("--json", action="store_true")
    add_range_args(sp)
    add_memory_arg(sp)


def _solve_options(sp: argparse.ArgumentParser) -> None:
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


def _plot_options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("traces", nargs="+", help="trace CSV files written by solve --trace")
    sp.add_argument("-o", "--output", default="convergence.png", help="image file (default convergence.png)")
    sp.add_argument("--label", action="append", default=None, help="legend label per trace, in order")
    sp.add_argument("--current", action="store_true", help="also draw the gap of the current iterate")
    sp.add_argument("--title", default=None)
    sp.add_argument("--x", default="iteration,gradients",
                    help="trace columns on the horizontal axes, comma-separated, one panel each: iteration, "
                         "gradients, seconds, nodes_touched, samples (default iteration,gradients)")


def _depth_limited_options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("args", nargs=argparse.REMAINDER, help="see treeplex depth-limited --help")


def _show_options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("file", help="a solution written by solve --out (postflop or river)")
    sp.add_argument("node", nargs="?", default=None, help="node number or history, e.g. x-b20 (default: root)")
    sp.add_argument("--max-memory", default=None, metavar="SIZE",
                    help="refuse a file estimated to need more to read (default: the memory available)")


def _view_options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("file", help="a solution written by solve --out (postflop, river or any game's profile)")
    sp.add_argument("--compare", default=None, metavar="B.json", help="a second solution of the same game to compare")
    sp.add_argument("--html", default=None, metavar="OUT.html", help="write the page to this file instead of serving it")
    sp.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    sp.add_argument("--no-open", action="store_true", help="do not open a browser, only print the address")
    sp.add_argument("--max-memory", default=None, metavar="SIZE",
                    help="refuse a file estimated to need more to read and show (default: the memory available)")


def _batch_options(sp: argparse.ArgumentParser) -> None:
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


def _report_options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("db", metavar="RESULTS.sqlite")
    sp.add_argument("-o", "--output", default=None, metavar="DIR",
                    help="write DIR/report.csv, DIR/textures.csv and DIR/report.png (default: print only)")


def _split_solve_options(sp: argparse.ArgumentParser) -> None:
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


def _export_options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("game")
    sp.add_argument("--format", choices=["efg"], default="efg")
    sp.add_argument("-o", "--output", default=None)


def cmd_abstraction(args) -> int:
    from ..abstraction.build import build

    if args.buckets.count(",") != 2 or not all(b.strip().isdigit() for b in args.buckets.split(",")):
        raise InputError(f"--buckets: need three counts FLOP,TURN,RIVER such as 200,200,200, got {args.buckets!r}")
    check_output(args.output, "-o")
    r = build(args.output, [int(b) for b in args.buckets.split(",")], flops=args.flops, seed=args.seed,
              max_memory=args.max_memory, progress=not args.quiet)
    print(f"wrote {args.output}: {r['flops']} canonical flops in {r['seconds_pass']:.1f} s, clustering "
          f"{r['seconds_cluster']:.1f} s; classes reached: " + ", ".join(f"{s} {n:,}" for s, n in r["reached"].items()))
    return 0


def _abstraction_options(sp: argparse.ArgumentParser) -> None:
    sub = sp.add_subparsers(dest="action", required=True)
    b = sub.add_parser("build", help="equities, histograms and k-means (EMD) buckets per street; resumable")
    b.add_argument("--buckets", default="200,200,200", metavar="FLOP,TURN,RIVER")
    b.add_argument("-o", "--output", required=True, help="the .npz to write (OUT.parts/ holds the resumable state)")
    b.add_argument("--flops", type=int, default=None, metavar="K",
                   help="only K of the 1,755 canonical flops, seeded (classes not reached get no bucket)")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--max-memory", default=None, metavar="SIZE", help="refuse a build estimated above SIZE (4G)")
    b.add_argument("--quiet", action="store_true", help="no progress bar")


# name: (help, options, handler)
COMMANDS = {
    "info": ("print the game's sizes", _info_options, cmd_info),
    "solve": ("compute an equilibrium", _solve_options, cmd_solve),
    "plot": ("draw gap vs iterations and vs gradient computations from traces", _plot_options, cmd_plot),
    "depth-limited": ("respond to an off-tree bet by depth-limited nested solving and state its cost",
                      _depth_limited_options, cmd_depth_limited),
    "show": ("print a node of a saved poker solution: 13x13 grids of action frequencies", _show_options, cmd_show),
    "view": ("show a saved solution in the browser: tree, 13x13 grids, comparison", _view_options, cmd_view),
    "batch": ("solve many spots (a JSONL file of specs) into a SQLite table; or write the specs of a set of flops",
              _batch_options, cmd_batch),
    "report": ("per-spot root strategy, EVs and equities of a batch, by board texture", _report_options, cmd_report),
    "split-solve": ("solve one postflop spot split across workers (chance subtrees below the first deal); prints "
                    "bytes per iteration and memory per worker", _split_solve_options, cmd_split_solve),
    "export": ("write the game in another format", _export_options, cmd_export),
    "abstraction": ("card abstraction for hold'em: hand indexer, equities, EMD buckets (abstraction build)",
                    _abstraction_options, cmd_abstraction),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. With ``command``, only that subcommand's options are built
    (the others are listed with their help): argparse takes about 10 ms for all of them."""
    ap = OneLineParser(prog="treeplex", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for name, (help, options, handler) in COMMANDS.items():
        sp = sub.add_parser(name, help=help, add_help=name != "depth-limited")  # that one parses its own
        if command in (None, name):
            options(sp)
        sp.set_defaults(func=handler)
    return ap


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["depth-limited"]:  # its own parser takes every option after the name
        return cmd_depth_limited(argparse.Namespace(args=argv[1:]))
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    return guarded(args.func, args)
