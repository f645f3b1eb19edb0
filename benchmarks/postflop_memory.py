"""Peak memory of a postflop spot's solve, stage by stage, on the default path (the fused
engine from 5e7 sequences): the public tree, the sequence-form problem, the solver, two
iterations, a check, the starting street's strategies and EVs (what ``--out`` and the
summary print: on the fused engine read from the solver's state), and the average plans
(float64: what reading ``Result.x`` costs).

    .venv/bin/python benchmarks/postflop_memory.py --spot FLOP-FAST [--threads 2] [--param compression=16]

Prints max RSS (``resource.getrusage``) after each stage; a stage's growth is its memory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from postflop import SPOTS  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spot", default="TURN", choices=sorted(SPOTS))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--param", action="append", default=[], help="solver parameter NAME=VALUE (e.g. compression=16)")
    args = ap.parse_args()
    params = {k: json.loads(v) if v not in ("true", "false") else v == "true"
              for k, v in (p.split("=", 1) for p in args.param)}
    import numba

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    from treeplex.poker.postflop import load_postflop_spec
    from treeplex.run.driver import make_solver

    def stage(name: str) -> None:
        print(f"{name:<34} max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:8.0f} MB", flush=True)

    stage("interpreter and imports")
    game = load_postflop_spec(dict(SPOTS[args.spot][0]))
    game.build_tree()
    stage("public tree")
    problem = game.problem()
    stage(f"problem ({sum(problem.n_seqs):,} sequences; treeplexes deferred)")
    solver = make_solver(problem, "dcfr", **params)
    stage(f"solver ({'fused engine' if solver.engine is not None else 'sequence form'})")
    for i in (1, 2):
        solver.step()
        stage(f"iteration {i}")
    ev = solver.evaluate_profile("average")
    stage("a check" if ev is not None else "a check (fused only: skipped)")
    profile = solver.profile("average")
    if profile is not None:  # the fused engine: the CLI reads the profile from the solver's state
        game.strategy_dict(None, None, profile=profile)
        stage("the starting street's strategies and EVs (--out, the summary; from the solver's state)")
    x, y = solver.average()
    stage("average plans (float64: what reading res.x costs)")
    if profile is None:
        game.strategy_dict(x, y)
        stage("the starting street's strategies and EVs (--out, the summary)")


if __name__ == "__main__":
    main()
