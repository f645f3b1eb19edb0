"""The GPU backend issue's measures: time per iteration and time to target for CFR+ and EGT,
on the numba backend, the array backend on NumPy (CPU), the array backend on CuPy (``gpu``,
when CuPy and a CUDA device exist) and OpenSpiel's C++ CFR+ (when pyspiel is installed).

    .venv/bin/python benchmarks/gpu.py [--games leduc,liars_dice,river] [--seconds 0.6] [--limit 8]

Games: OpenSpiel's ``leduc_poker`` and ``liars_dice(numdice=1,dice_sides=6)`` walked through
pyspiel (so OpenSpiel's CFR+ runs the same game), and the river Endgame-2-size instance of
:mod:`benchmarks.river` (921 x 947 hands, 140k/144k sequences; its structured operator stays
on the host with every backend: on a device its products copy the vector to the host and
back). Targets are on the saddle-point gap (OpenSpiel: NashConv, the same quantity), relative
to the payoff range max |A_ij| (1e-3 on Leduc, 1e-2 on liar's dice; river: 1 mbb/g of
exploitability).

Per iteration: the median of interleaved timed blocks of about ``--seconds`` each (after a
warm-up that compiles numba). To target: wall time of ``treeplex.solve`` (solver seconds, gap
checks excluded) capped at ``--limit`` seconds; OpenSpiel's is measured the same way, its
NashConv evaluated between untimed blocks. Without a device the gpu columns print
"no GPU: skipped"; no device number is ever estimated.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from treeplex.model.compile import compile_game
from treeplex.run.driver import make_solver, solve
from treeplex.errors import InputError
from treeplex.games import load_game

GAMES = {
    "leduc": "openspiel:leduc_poker",
    "liars_dice": "openspiel:liars_dice(numdice=1,dice_sides=6)",
    "river": None,
}
ALGORITHMS = ("cfr+", "egt")
REL_TARGET = {"leduc": 1e-3, "liars_dice": 1e-2}  # gap / max |A_ij| for the small games


def build(name: str):
    if name == "river":
        from treeplex.poker.river import PAPER_ENDGAMES, generated_endgame

        spec = PAPER_ENDGAMES[2]
        return generated_endgame(spec["pot"], spec["hands"], seed=2).problem()
    return compile_game(load_game(GAMES[name]))


def target_for(name: str, p) -> float:
    if name == "river":
        return 2.0 * p.big_blind / 1000.0  # exploitability (gap / 2) of 1 mbb/g
    return REL_TARGET[name] * p.A.max_abs_entry()


def fresh(name, problem_cache):
    """A problem for one backend (a backend may wrap the operator, so one problem each)."""
    if name not in problem_cache:
        problem_cache[name] = build(name)
    p = problem_cache[name]
    p._backend = None
    return p


def gpu_available() -> str | None:
    try:
        from treeplex.backends.array_backend import _cupy

        _cupy()
        return None
    except InputError as e:
        return str(e)


def per_iteration(runners: dict, seconds: float, blocks: int = 3) -> dict:
    """Median seconds per step() of each runner over interleaved blocks."""
    sizes = {}
    for k, step in runners.items():
        step()
        t0, n = time.perf_counter(), 0
        while time.perf_counter() - t0 < seconds / 4 or n < 2:
            step()
            n += 1
        sizes[k] = max(2, 4 * n)
    out = {k: [] for k in runners}
    for _ in range(blocks):
        for k, step in runners.items():
            t0 = time.perf_counter()
            for _ in range(sizes[k]):
                step()
            out[k].append((time.perf_counter() - t0) / sizes[k])
    return {k: statistics.median(v) for k, v in out.items()}


def openspiel_to_target(game, target: float, limit: float) -> tuple[float | None, int]:
    import pyspiel

    s = pyspiel.CFRPlusSolver(game)
    spent, it, block = 0.0, 0, 10
    while spent < limit:
        t0 = time.perf_counter()
        for _ in range(block):
            s.evaluate_and_update_policy()
        spent += time.perf_counter() - t0
        it += block
        if pyspiel.nash_conv(game, s.average_policy()) <= target:
            return spent, it
        block = min(2 * block, 200)
    return None, it


def fmt_ms(s) -> str:
    return f"{s * 1000:9.3f}" if isinstance(s, float) else f"{s:>9s}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default="leduc,liars_dice,river")
    ap.add_argument("--seconds", type=float, default=0.6, help="length of one timed block")
    ap.add_argument("--limit", type=float, default=8.0, help="cap on each time-to-target run (s)")
    args = ap.parse_args(argv)
    no_gpu = gpu_available()
    backends = ["numba", "array"] + ([] if no_gpu else ["gpu"])
    try:
        import pyspiel
    except ImportError:
        pyspiel = None
    print(f"device: {'no GPU: skipped (' + no_gpu + ')' if no_gpu else 'CuPy + CUDA'}")
    cache: dict = {}
    for name in args.games.split(","):
        t0 = time.perf_counter()
        p = fresh(name, cache)
        target = target_for(name, p)
        print(f"\n== {name}: {p.X.n_seqs} x {p.Y.n_seqs} sequences, operator {type(p.A).__name__} "
              f"({'CSR, on the device for gpu' if p.A.csr is not None else 'structured: host products'}), "
              f"{len(set(p.X.depth.tolist()))}/{len(set(p.Y.depth.tolist()))} depth levels, "
              f"built in {time.perf_counter() - t0:.1f} s; target gap {target:.4g}")
        print(f"{'algorithm':10s} {'runner':22s} {'ms/iter':>9s} {'to target (s)':>14s} {'iters':>7s}")
        for alg in ALGORITHMS:
            params = {"mu": "theory"} if (alg == "egt" and name == "river") else {}
            runners, solvers = {}, {}
            for bk in backends:
                q = fresh(name, cache)
                q.use_backend(bk)
                s = make_solver(q, alg, **params)
                solvers[bk], runners[bk] = s, s.step
            game = None
            if alg == "cfr+" and pyspiel is not None and GAMES[name] is not None:
                game = pyspiel.load_game(GAMES[name][len("openspiel:"):])
                os_solver = pyspiel.CFRPlusSolver(game)
                runners["openspiel"] = os_solver.evaluate_and_update_policy
            times = per_iteration(runners, args.seconds)
            for bk in ["numba", "array", "gpu"]:
                if bk == "gpu" and no_gpu:
                    print(f"{alg:10s} {'gpu (array on CuPy)':22s} {'no GPU: skipped':>9s}")
                    continue
                q = fresh(name, cache)
                q.use_backend(bk)
                res = solve(q, alg, target_gap=target, time_limit=args.limit, **params)
                reached = res.gap <= target
                label = {"numba": "numba (CPU)", "array": "array on NumPy (CPU)", "gpu": "gpu (array on CuPy)"}[bk]
                tt = f"{res.seconds:14.2f}" if reached else f"{'>' + format(args.limit, 'g'):>14s}"
                print(f"{alg:10s} {label:22s} {fmt_ms(times[bk])} {tt} {res.iterations:7d}")
            if game is not None:
                secs, its = openspiel_to_target(game, target, args.limit)
                tt = f"{secs:14.2f}" if secs is not None else f"{'>' + format(args.limit, 'g'):>14s}"
                print(f"{alg:10s} {'OpenSpiel C++ CFR+':22s} {fmt_ms(times['openspiel'])} {tt} {its:7d}")
            elif alg == "cfr+" and GAMES[name] is None:
                print(f"{alg:10s} {'OpenSpiel C++ CFR+':22s} {'n/a':>9s}  (no OpenSpiel equivalent of this instance)")
    print("\ncrossover size (where the device beats numba): needs a device; not measured here")


if __name__ == "__main__":
    main()
