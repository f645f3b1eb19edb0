"""The GPU measures (issue 30): time per iteration and time to target on the device (the
``gpu`` backend: the array backend on CuPy, float64 and float32 storage) against numba on
this machine's CPU cores (all of them) and OpenSpiel's C++ CFR+ where pyspiel imports.

    python3 benchmarks/gpu.py --out DIR [--budget 330] [--games leduc,liars_dice]
        [--spots RIVER-E2,TURN,FLOP-FAST] [--sweep 50,100,200,400,700,1000] [--block 0.5] [--limit 20]
        [--runners numba:float64,gpu:float64,gpu:float32]

Problems: Leduc and liar's dice 1x6 (OpenSpiel's games walked through pyspiel, so that its
CFR+ runs the same game; Leduc falls back to treeplex's own without pyspiel, liar's dice is
skipped), CFR+; the river Endgame-2-size instance (``RIVER-E2``: 921 x 947 hands) and the
postflop spots of ``benchmarks/postflop.py`` (``TURN``, ``FLOP-FAST``, ``FLOP-FULL``: the
largest defined spot), built in-process, DCFR (the poker default). On the device the poker
operators' products run there (:mod:`treeplex.poker.device_operator`); CSR games move A once.

Per iteration: the median of three timed blocks of about ``--block`` seconds of ``step()``
after two warm-up steps (numba compiles there), the device synchronized before each clock
read. To target: ``treeplex.solve`` to the target gap, capped at ``--limit`` seconds of
solver time: solver seconds (gap checks excluded) and the wall time of the call (checks
included; on the device the checks also wait for the queued work). Targets: gap <= 1e-3 (Leduc) or
1e-2 (liar's dice) of max |A_ij|; exploitability 1 mbb/g (RIVER-E2); exploitability 0.3% of
the pot (postflop spots, as ``benchmarks/postflop.py``). Crossover: DCFR per iteration, numba
against the device, on generated river spots of ``--sweep`` hands per player; the crossover
is the smallest size from which the device is faster at every larger size measured.

``--budget``: seconds for the whole run; a measure that would not fit prints
"skipped: budget" and the run goes on to the next. Writes ``gpu.md`` (the tables) and
``gpu.json`` (every number) into ``--out``. Without a device the gpu rows print
"skipped: no GPU"; no device number is ever estimated.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from postflop import SPOTS  # noqa: E402

from treeplex.model.compile import compile_game  # noqa: E402
from treeplex.run.driver import make_solver, solve  # noqa: E402
from treeplex.errors import InputError  # noqa: E402

OPENSPIEL = {"leduc": "leduc_poker", "liars_dice": "liars_dice(numdice=1,dice_sides=6)"}
REL_TARGET = {"leduc": 1e-3, "liars_dice": 1e-2}
RUNNERS = (("numba", "float64"), ("gpu", "float64"), ("gpu", "float32"))


def log(*a) -> None:
    print(*a, flush=True)


class Budget:
    def __init__(self, seconds: float):
        self.end = time.perf_counter() + seconds

    def left(self) -> float:
        return self.end - time.perf_counter()

    def fits(self, need: float, what: str) -> bool:
        if self.left() < need:
            log(f"  {what}: skipped: budget ({self.left():.0f} s left, needs ~{need:.0f} s)")
            return False
        return True


def device_info():
    """(None, device name) with CuPy and a device, else (reason, None)."""
    try:
        from treeplex.backends.array_backend import _cupy

        cp = _cupy()
        props = cp.cuda.runtime.getDeviceProperties(0)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        return None, f"{name}, {props['totalGlobalMem'] / 2**30:.0f} GiB, CuPy {cp.__version__}"
    except InputError as e:
        return str(e), None


def sync(backend: str) -> None:
    if backend == "gpu":
        import cupy

        cupy.cuda.Device().synchronize()


def build(name: str):
    """(problem, target gap, algorithm, description)."""
    if name in OPENSPIEL:
        try:
            import pyspiel  # noqa: F401

            from treeplex.games import load_game

            p = compile_game(load_game("openspiel:" + OPENSPIEL[name]))
        except ImportError:
            if name != "leduc":
                raise
            import treeplex as tp

            p = compile_game(tp.make_game("leduc"))
        return p, REL_TARGET[name] * p.A.max_abs_entry(), "cfr+", name
    if name == "RIVER-E2" or name.startswith("RIVER-N"):
        from treeplex.poker.river import PAPER_ENDGAMES, generated_endgame

        spec = PAPER_ENDGAMES[2]
        hands = spec["hands"] if name == "RIVER-E2" else (int(name[7:]),) * 2
        p = generated_endgame(spec["pot"], hands, seed=2).problem()
        return p, 2.0 * p.big_blind / 1000.0, "dcfr", f"river {hands[0]}x{hands[1]} hands"
    from treeplex.poker.postflop import load_postflop_spec

    spec = dict(SPOTS[name][0])
    p = load_postflop_spec(spec).problem()
    return p, 2 * 0.003 * spec["pot"], "dcfr", f"postflop {spec['board']}"


def reset(p, host_A) -> None:
    """The problem back to its host operator and no backend (each runner starts fresh)."""
    p.A = host_A
    p._backend = None


def per_iteration(p, host_A, alg, backend, dtype, block: float) -> float:
    reset(p, host_A)
    p.use_backend(backend)
    s = make_solver(p, alg, storage=dtype)
    for _ in range(2):
        s.step()
    sync(backend)
    t0, n = time.perf_counter(), 0
    while n < 2 or time.perf_counter() - t0 < block / 4:
        s.step()
        n += 1
        if n % 8 == 0:
            sync(backend)
    sync(backend)
    size = max(2, int(4 * n * (block / 4) / max(time.perf_counter() - t0, 1e-9)) // 4 or 2)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(size):
            s.step()
        sync(backend)
        times.append((time.perf_counter() - t0) / size)
    return statistics.median(times)


def to_target(p, host_A, alg, backend, dtype, target, limit):
    reset(p, host_A)
    t0 = time.perf_counter()
    res = solve(p, alg, target_gap=target, time_limit=limit, backend=backend, storage=dtype)
    wall = time.perf_counter() - t0
    return {"reached": bool(res.gap <= target), "solver_s": res.seconds, "wall_s": wall, "iterations": res.iterations,
            "gap": float(res.gap), "jit_s": res.jit_seconds, "check_s": res.check_seconds}


def openspiel_runs(name, target, block, limit):
    import pyspiel

    game = pyspiel.load_game(OPENSPIEL[name])
    s = pyspiel.CFRPlusSolver(game)
    s.evaluate_and_update_policy()
    t0, n = time.perf_counter(), 0
    while n < 2 or time.perf_counter() - t0 < block:
        s.evaluate_and_update_policy()
        n += 1
    per_it = (time.perf_counter() - t0) / n
    s = pyspiel.CFRPlusSolver(game)
    spent, it, step = 0.0, 0, 10
    while spent < limit:
        t0 = time.perf_counter()
        for _ in range(step):
            s.evaluate_and_update_policy()
        spent += time.perf_counter() - t0
        it += step
        if pyspiel.nash_conv(game, s.average_policy()) <= target:
            return per_it, {"reached": True, "solver_s": spent, "wall_s": None, "iterations": it}
        step = min(2 * step, 200)
    return per_it, {"reached": False, "solver_s": spent, "wall_s": None, "iterations": it}


def gpu_memory() -> float | None:
    try:
        import cupy

        return cupy.get_default_memory_pool().total_bytes() / 2**20
    except Exception:
        return None


def run_problem(name, args, budget, no_gpu, rows) -> None:
    est_build = {"FLOP-FAST": 40.0, "FLOP-FULL": 90.0}.get(name, 5.0)
    if not budget.fits(est_build + 4 * args.block, f"{name} (build)"):
        rows.append({"problem": name, "skipped": "budget"})
        return
    t0 = time.perf_counter()
    try:
        p, target, alg, desc = build(name)
    except ImportError as e:
        log(f"  {name}: skipped: {e}")
        rows.append({"problem": name, "skipped": str(e)})
        return
    host_A = p.A
    try:
        _measure(name, p, host_A, target, alg, desc, t0, args, budget, no_gpu, rows)
    finally:
        reset(p, host_A)
        del p, host_A
        free_device()


def free_device() -> None:
    """Drop the device arrays of the last problem (the next may need the memory)."""
    import gc

    gc.collect()
    try:
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()
    except Exception:
        pass


def _measure(name, p, host_A, target, alg, desc, t0, args, budget, no_gpu, rows) -> None:
    """Per iteration and to target for each of ``args.runners``, then OpenSpiel's C++ where it applies."""
    log(f"\n== {name} ({desc}): {p.X.n_seqs:,} x {p.Y.n_seqs:,} sequences, operator {type(host_A).__name__}, "
        f"built in {time.perf_counter() - t0:.1f} s; {alg}; target gap {target:.4g}")
    base = {"problem": name, "desc": desc, "seqs": [p.X.n_seqs, p.Y.n_seqs], "algorithm": alg, "target_gap": target,
            "operator": type(host_A).__name__}
    for backend, dtype in args.runners:
        row = dict(base, runner=backend, dtype=dtype)
        rows.append(row)
        label = f"{backend} {dtype}"
        if backend == "gpu" and no_gpu:
            row["skipped"] = "no GPU"
            log(f"  {label}: skipped: no GPU")
            continue
        if not budget.fits(8 * args.block, f"{label} per iteration"):
            row["skipped"] = "budget"
            continue
        try:
            row["ms_per_iter"] = 1000 * per_iteration(p, host_A, alg, backend, dtype, args.block)
            if backend == "gpu":
                row["gpu_pool_mib"] = gpu_memory()
        except Exception as e:  # a device out of memory, say: recorded, the run goes on
            row["error"] = f"{type(e).__name__}: {e}"
            log(f"  {label}: error: {row['error']}")
            continue
        log(f"  {label}: {row['ms_per_iter']:.3f} ms/iter")
        limit = min(args.limit, budget.left() - 15)
        # gap checks come on top of solver time: on big spots they cost about as much again
        if limit < 2 or not budget.fits(limit * (3 if sum(base["seqs"]) > 5e6 else 1.5), f"{label} to target"):
            continue
        try:
            row["to_target"] = to_target(p, host_A, alg, backend, dtype, target, limit)
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {e}"
            log(f"  {label}: error: {row['error']}")
            continue
        t = row["to_target"]
        log(f"  {label}: to target {'%.2f s' % t['solver_s'] if t['reached'] else '> %.0f s (gap %.3g)' % (limit, t['gap'])}"
            f" solver, {t['wall_s']:.2f} s wall, {t['iterations']} iterations")
    if name in OPENSPIEL:
        row = dict(base, runner="openspiel", dtype="float64")
        rows.append(row)
        try:
            import pyspiel  # noqa: F401
        except ImportError:
            row["skipped"] = "no pyspiel"
            log("  openspiel: skipped: no pyspiel")
            return
        limit = min(args.limit, budget.left() - 15)
        if limit < 2 or not budget.fits(limit, "openspiel"):
            row["skipped"] = "budget"
            return
        per_it, tt = openspiel_runs(name, target, args.block, limit)
        row["ms_per_iter"], row["to_target"] = 1000 * per_it, tt
        log(f"  openspiel C++ CFR+: {1000 * per_it:.3f} ms/iter, to target "
            f"{'%.2f s' % tt['solver_s'] if tt['reached'] else '> %.0f s' % limit}, {tt['iterations']} iterations")


def sweep(args, budget, no_gpu, rows) -> dict | None:
    """DCFR per iteration, numba against the device float64, on river spots of growing size."""
    from treeplex.poker.river import generated_endgame

    log("\n== crossover sweep: generated river spots, DCFR per iteration, numba vs device (float64)")
    if no_gpu:
        log("  skipped: no GPU")
        return None
    out = []
    for n in (int(v) for v in args.sweep.split(",") if v):
        if not budget.fits(10 * args.block + 5, f"sweep {n} hands"):
            break
        p = generated_endgame(2100, (n, n), seed=5).problem()
        host = p.A
        r = {"hands": n, "seqs": [p.X.n_seqs, p.Y.n_seqs], "operator_method": getattr(host, "method", None)}
        for backend in ("numba", "gpu"):
            r[backend] = 1000 * per_iteration(p, host, "dcfr", backend, "float64", args.block / 2)
        reset(p, host)
        free_device()
        r["device_faster"] = r["gpu"] < r["numba"]
        out.append(r)
        rows.append(dict(problem=f"sweep-{n}", **r))
        log(f"  {n:5d} hands ({p.X.n_seqs:,} seqs): numba {r['numba']:.3f} ms/iter, device {r['gpu']:.3f} ms/iter"
            f" -> {'device' if r['device_faster'] else 'numba'} faster")
    cross = None
    for i, r in enumerate(out):
        if all(q["device_faster"] for q in out[i:]):
            cross = r["hands"]
            break
    log(f"  crossover: {'device faster from %d hands per player on' % cross if cross else 'not reached in the sweep'}")
    return {"points": out, "crossover_hands": cross}


def markdown(rows, sweep_res, header) -> str:
    lines = [header, "", "| problem | sequences | runner | storage | ms/iter | to target: solver s | wall s | iterations "
             "| note |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["problem"].startswith("sweep-"):
            continue
        seqs = "x".join(f"{s:,}" for s in r.get("seqs", [])) or "-"
        t = r.get("to_target") or {}
        tt = ("%.2f" % t["solver_s"] if t.get("reached") else "> %.0f" % t["solver_s"]) if t else "-"
        wall = "%.2f" % t["wall_s"] if t.get("wall_s") is not None else "-"
        note = r.get("skipped") and f"skipped: {r['skipped']}" or r.get("error", "")
        ms = "%.3f" % r["ms_per_iter"] if "ms_per_iter" in r else "-"
        lines.append(f"| {r['problem']} | {seqs} | {r.get('runner', '-')} | {r.get('dtype', '-')} | {ms} | {tt} | {wall} "
                     f"| {t.get('iterations', '-')} | {note} |")
    if sweep_res:
        lines += ["", "Crossover (DCFR per iteration, float64, generated river spots):", "",
                  "| hands/player | sequences | numba ms/iter | device ms/iter |", "|---|---|---|---|"]
        for r in sweep_res["points"]:
            lines.append(f"| {r['hands']} | {r['seqs'][0]:,} x {r['seqs'][1]:,} | {r['numba']:.3f} | {r['gpu']:.3f} |")
        c = sweep_res["crossover_hands"]
        lines += ["", f"Crossover: {'device faster from %d hands per player' % c if c else 'not reached'}."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="directory for gpu.md and gpu.json")
    ap.add_argument("--budget", type=float, default=330.0, help="seconds for the whole run")
    ap.add_argument("--games", default="leduc,liars_dice")
    ap.add_argument("--spots", default="RIVER-E2,TURN", help="from RIVER-E2, RIVER-N<hands>, " + ", ".join(SPOTS))
    ap.add_argument("--sweep", default="50,100,200,400,700,1000", help="hands per player of the crossover sweep")
    ap.add_argument("--block", type=float, default=0.5, help="seconds of one timed block")
    ap.add_argument("--limit", type=float, default=20.0, help="cap on each time-to-target run (solver s)")
    ap.add_argument("--runners", default=",".join(f"{b}:{d}" for b, d in RUNNERS),
                    help="backend:storage pairs measured on each problem (a subset of the default)")
    args = ap.parse_args(argv)
    args.runners = [tuple(r.strip().split(":", 1)) for r in args.runners.split(",") if r.strip()]
    if not args.runners or any(r not in RUNNERS for r in args.runners):
        ap.error(f"--runners: each of {', '.join(f'{b}:{d}' for b, d in RUNNERS)}")
    budget = Budget(args.budget)
    os.makedirs(args.out, exist_ok=True)
    import numba

    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    no_gpu, dev = device_info()
    header = (f"Device: {dev or 'none (' + no_gpu + ')'}; CPU: {os.cpu_count()} cores ({platform.processor() or platform.machine()}), "
              f"numba {numba.__version__} on {numba.get_num_threads()} threads; numpy {np.__version__}; "
              f"budget {args.budget:.0f} s")
    log(header)
    rows: list[dict] = []
    names = [g for g in args.games.split(",") if g] + [s.strip().upper() for s in args.spots.split(",") if s.strip()]
    small = [n for n in names if n in OPENSPIEL or n == "RIVER-E2" or n == "TURN"]
    large = [n for n in names if n not in small]
    for n in names:
        if n not in OPENSPIEL and n not in SPOTS and n != "RIVER-E2" and not n.startswith("RIVER-N"):
            ap.error(f"unknown problem {n!r}")
    sweep_res = None

    def save() -> str:  # after every problem, so that a run cut short keeps what it measured
        with open(os.path.join(args.out, "gpu.json"), "w") as f:
            json.dump({"header": header, "rows": rows, "sweep": sweep_res, "args": vars(args)}, f, indent=1,
                      default=str)
        md = markdown(rows, sweep_res, header)
        with open(os.path.join(args.out, "gpu.md"), "w") as f:
            f.write(md)
        return md

    for name in small:
        run_problem(name, args, budget, no_gpu, rows)
        save()
    sweep_res = sweep(args, budget, no_gpu, rows) if args.sweep else None
    save()
    for name in large:
        run_problem(name, args, budget, no_gpu, rows)
        save()
    log("\n" + save())
    log(f"wrote {os.path.join(args.out, 'gpu.md')} and gpu.json; {budget.left():.0f} s of the budget left")
    errors = [r for r in rows if "error" in r]
    for r in errors:
        log(f"ERROR: {r['problem']} {r.get('runner', '')} {r.get('dtype', '')}: {r['error']}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
