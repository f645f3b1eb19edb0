"""Time per iteration and peak memory of a DCFR solve of ``nlfh52(...)`` on the fused engine or
the sequence form, stage by stage: the public tree, the problem, the solver, each iteration,
a check (the fused engine's best-response walk, or the products' evaluation), the result's
average plans.

    .venv/bin/python benchmarks/nlfh52.py --game "nlfh52(stack=1000, flops=S64)" --fused true --iters 3
    .venv/bin/python benchmarks/nlfh52.py --game "nlfh52(stack=1000, flops=S64)" --fused false --iters 3

Prints max RSS (``resource.getrusage``) after each stage (a stage's growth is its memory), the
seconds of each iteration and their median. One process per path: max RSS never goes down.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="nlfh52(stack=1000, flops=S64)")
    ap.add_argument("--fused", choices=("true", "false"), default="true")
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--algorithm", default="dcfr")
    args = ap.parse_args()
    import numba

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    from treeplex.games import make_game
    from treeplex.model.metrics import evaluate
    from treeplex.run.driver import make_solver

    def stage(name: str) -> None:
        print(f"{name:<44} max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:8.0f} MB", flush=True)

    stage("interpreter and imports")
    game = make_game(args.game)
    s = game.sizes()
    print(f"{game.name}: {sum(s['sequences']):,} sequences ({sum(s['sequences_full_layout']):,} full layout); "
          f"estimates: fused {s['memory_fused_bytes'] / 2**30:.2f} GiB, "
          f"sequence form {s['memory_sequence_form_bytes'] / 2**30:.2f} GiB", flush=True)
    t0 = time.perf_counter()
    game.build_tree()
    stage(f"public tree ({time.perf_counter() - t0:.1f} s)")
    t0 = time.perf_counter()
    problem = game.problem()
    stage(f"problem ({time.perf_counter() - t0:.1f} s)")
    t0 = time.perf_counter()
    solver = make_solver(problem, args.algorithm, fused=args.fused == "true")
    solver.step()  # the first iteration compiles (or loads) the kernels
    stage(f"solver and iteration 1 ({'fused engine' if solver.engine is not None else 'sequence form'}, "
          f"{time.perf_counter() - t0:.1f} s)")
    times = []
    for i in range(2, args.iters + 2):
        t0 = time.perf_counter()
        solver.step()
        times.append(time.perf_counter() - t0)
        stage(f"iteration {i} ({times[-1]:.2f} s)")
    t0 = time.perf_counter()
    ev = solver.evaluate_profile("average")
    if ev is None:
        ev = evaluate(problem, *solver.average())
    stage(f"a check ({time.perf_counter() - t0:.2f} s; gap {ev.gap:.4g} chips)")
    solver.average()
    stage("average plans (float64)")
    print(f"median s/iteration over iterations 2-{args.iters + 1}: {statistics.median(times):.3f}")


if __name__ == "__main__":
    main()
