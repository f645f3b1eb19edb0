"""Libratus-sized river endgame: CFR+ through the structured payoff operator.

    .venv/bin/python benchmarks/river.py [--seed 2] [--target-mbb 1] [--time-limit 600] [--variants dcfr,pdcfr+]
    .venv/bin/python benchmarks/river.py --steady 400   # only: ms per steady-state CFR+ iteration
    .venv/bin/python benchmarks/river.py --check-cost 20   # only: how much a gap check slows the steps after it

The instance is Endgame-2-sized (EGT paper, section 7): pot 2100, stacks 20,000, big blind
100, the Libratus river abstraction, ranges of 921 and 947 hands (random board and weights,
fixed seed) = 139,993 and 143,945 sequences, 203 terminal betting sequences, 162M leaves.

It prints, each with its unit:

1. sizes and memory of the game, and what the explicit matrix would take;
2. one product A y / A^T x with the showdown sweep and with the dense sign matrix;
3. CFR+ run until exploitability (gap / 2) <= --target-mbb mbb/g (the EGT paper's goal of
   1 mbb is on the gap, the sum of both players' regrets: its iteration count is printed
   too): iterations, gradient computations, wall time (solver + gap checks), peak memory;
4. DCFR and PDCFR+ (``--variants``) to the same target: iterations and wall time;
5. the same CFR+ iterations through the explicit CSR matrix of a smaller instance that
   fits in memory (the full one does not fit in 2 GB), for contrast;
6. the OpenSpiel cross-check (universal_poker, fcpa) where pyspiel is installed.

The machine is shared: the load average is printed with the timings. To compare two versions,
run ``--steady`` in two checkouts, alternating, a few rounds each (the median per iteration of
one process is stable; the speed of the machine from one hour to the next is not).
"""

import argparse
import os
import resource
import time

import numpy as np

from treeplex.run.driver import make_solver, solve
from treeplex.model.lp import solve_lp
from treeplex.model.metrics import evaluate, to_mbb
from treeplex.poker.river import PAPER_ENDGAMES, RiverGame, generated_endgame
from treeplex.model.problem import Problem, SparsePayoff


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def per_product_ms(A, x, y, reps=20) -> float:
    A.matvec(y, count=False), A.rmatvec(x, count=False)  # compile
    t = time.perf_counter()
    for _ in range(reps):
        A.matvec(y, count=False)
        A.rmatvec(x, count=False)
    return (time.perf_counter() - t) / (2 * reps) * 1000


def first_below(trace, gap) -> dict | None:
    return next((row for row in trace if row["gap_average"] <= gap), None)


def endgame2(seed: int, **kwargs):
    """The benchmark instance: Endgame-2-sized, generated with ``seed``."""
    spec = PAPER_ENDGAMES[2]
    return generated_endgame(spec["pot"], spec["hands"], seed=seed, **kwargs)


def step_ms(solver, n: int) -> np.ndarray:
    """Milliseconds of each of ``n`` single steps."""
    ms = np.empty(n)
    for k in range(n):
        t = time.perf_counter()
        solver.step()
        ms[k] = 1000 * (time.perf_counter() - t)
    return ms


def steady(args) -> None:
    """Median, quartile and minimum of single CFR+ steps on the benchmark instance."""
    solver = make_solver(endgame2(args.seed).problem(), "cfr+")
    step_ms(solver, 20)  # compile, and leave the uniform start
    ms = step_ms(solver, args.steady)
    print(f"CFR+ steady state, iterations 21-{20 + args.steady}: median {np.median(ms):.3f} ms per iteration "
          f"(quartile {np.percentile(ms, 25):.3f}, min {ms.min():.3f}); {load()}")


def check_cost(args) -> None:
    """Median step time by position after a gap check, and the excess over the last 10."""
    p = endgame2(args.seed).problem()
    solver = make_solver(p, "cfr+")
    step_ms(solver, 300)
    ms = np.empty((args.check_cost, 40))
    check = []
    for row in ms:
        t = time.perf_counter()
        evaluate(p, *solver.average())
        evaluate(p, *solver.current())
        check.append(1000 * (time.perf_counter() - t))
        row[:] = step_ms(solver, 40)
    med = np.median(ms, axis=0)
    print(f"{args.check_cost} checks of CFR+ (average and current) on the Endgame-2 instance; {load()}")
    print(f"check itself: median {np.median(check):.1f} ms")
    print("median step ms at positions 1-40 after a check: " + " ".join(f"{x:.2f}" for x in med))
    print(f"median at positions 31-40: {np.median(ms[:, 30:]):.2f} ms; excess of the 40 steps after a check: "
          f"{(med - np.median(ms[:, 30:])).sum():.1f} ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--target-mbb", type=float, default=1.0, help="stop at exploitability (gap/2) <= this, mbb/g")
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds of solver time at most")
    ap.add_argument("--variants", default="dcfr,pdcfr+", help="comma-separated solvers also timed to the target")
    ap.add_argument("--contrast-hands", type=int, default=300, help="hands per player of the explicit-CSR run")
    ap.add_argument("--contrast-iters", type=int, default=100)
    ap.add_argument("--steady", type=int, default=0, help="only time this many CFR+ iterations after 20")
    ap.add_argument("--check-cost", type=int, default=0, help="only time the 40 steps after each of this many checks")
    args = ap.parse_args()
    if args.steady:
        return steady(args)
    if args.check_cost:
        return check_cost(args)

    spec = PAPER_ENDGAMES[2]
    t0 = time.perf_counter()
    game = endgame2(args.seed)
    p = game.problem()
    build = time.perf_counter() - t0
    st = p.stats
    bb = p.big_blind
    print(f"# {p.name}, seed {args.seed}; {load()}")
    print(f"hands                      {st['hands'][0]} / {st['hands'][1]}")
    print(f"sequences                  {p.X.n_seqs} / {p.Y.n_seqs}   (paper, Endgame 2: 140k / 144k)")
    print(f"terminal betting sequences {st['terminal_betting_sequences']}")
    print(f"leaves                     {st['leaves']:,}   (paper: 176M)")
    print(f"build time                 {build:.2f} s")
    scratch = sum(a.nbytes for a in p.A._partials)
    print(f"operator memory            {(p.A.nbytes - scratch) / 1e6:.2f} MB of tables, plus {scratch / 1e6:.2f} MB of "
          f"per-thread scratch (8 B per sequence and thread)")
    tree_bytes = p.X.nbytes + p.Y.nbytes
    print(f"treeplex memory            {tree_bytes / 1e6:.2f} MB ({tree_bytes / (p.X.n_seqs + p.Y.n_seqs):.1f} "
          f"B per sequence)")
    print(f"explicit CSR (A and A^T)   {st['explicit_csr_bytes'] / 1e9:.2f} GB = 24 B x leaves: over the 2 GB budget")

    # ---------------------------------------------------------------- products
    x, y = p.X.uniform(), p.Y.uniform()
    sweep_ms = per_product_ms(p.A, x, y)
    dense = endgame2(args.seed, showdown="dense").operator()
    dense_ms = per_product_ms(dense, x, y)
    print(f"\none product (mean of A y and A^T x): sweep {sweep_ms:.2f} ms, dense sign matrix {dense_ms:.2f} ms "
          f"({dense.nbytes / 1e6:.0f} MB); {load()}")
    del dense

    # ---------------------------------------------------------------- CFR+
    target = 2 * args.target_mbb * bb / 1000  # gap in chips
    t0 = time.perf_counter()
    res = solve(p, "cfr+", target_gap=target, time_limit=args.time_limit)
    wall = time.perf_counter() - t0
    mem = peak_mb()
    gap_mbb = to_mbb(res.gap, bb)
    print(f"\nCFR+ to exploitability <= {args.target_mbb} mbb/g (gap <= {2 * args.target_mbb} mbb): "
          f"stopped by {res.stopped_by}; {load()}")
    print(f"iterations                 {res.iterations}")
    print(f"gradient computations      {res.gradients}")
    print(f"wall time                  {wall:.1f} s (solver {res.seconds:.1f} s, gap checks {res.check_seconds:.1f} s); "
          f"{1000 * res.seconds / res.iterations:.2f} ms per iteration")
    print(f"final gap                  {gap_mbb:.3f} mbb (exploitability {gap_mbb / 2:.3f} mbb/g), "
          f"value {res.value:.3f} chips = {to_mbb(res.value, bb):.1f} mbb/g")
    print(f"peak memory (process RSS)  {mem:.0f} MB")
    for goal in (10.0, 2.0, 1.0):
        row = first_below(res.trace, goal * bb / 1000)
        where = "not reached"
        if row:
            before = [r for r in res.trace if r["iteration"] < row["iteration"]]
            where = (f"iteration {row['iteration']}, {row['seconds']:.1f} s solver time"
                     + (f" (check before: iteration {before[-1]['iteration']}, gap "
                        f"{to_mbb(before[-1]['gap_average'], bb):.2f} mbb)" if before else ""))
        print(f"  first check with gap <= {goal:4.1f} mbb: {where}")
    ms = 1000 * res.seconds / res.iterations
    print(f"  at the paper's ~400 iterations: {build + 0.4 * ms:.1f} s (build + 400 x {ms:.2f} ms); "
          f"gap there {to_mbb(next(r for r in res.trace if r['iteration'] >= 400)['gap_average'], bb):.1f} mbb"
          if res.iterations >= 400 else "")

    # ---------------------------------------------------------------- other CFR variants
    print(f"\nother CFR variants to exploitability <= {args.target_mbb} mbb/g (gap checks on the driver's "
          f"schedule: every ~10% of the iterations, closer near the target)")
    print(f"{'algorithm':10s} {'iterations':>10s} {'wall s':>7s} {'solver s':>9s} {'gap mbb':>8s}  load")
    for algo in filter(None, args.variants.split(",")):
        t0 = time.perf_counter()
        r = solve(p, algo, target_gap=target, time_limit=args.time_limit)
        print(f"{algo:10s} {r.iterations:10d} {time.perf_counter() - t0:7.1f} {r.seconds:9.1f} "
              f"{to_mbb(r.gap, bb):8.3f}  {load()}" + ("" if r.stopped_by == "target" else f" ({r.stopped_by})"))

    # ---------------------------------------------------------------- explicit CSR contrast
    n = args.contrast_hands
    small = generated_endgame(spec["pot"], (n, n), seed=args.seed)
    ps = small.problem()
    t0 = time.perf_counter()
    S = SparsePayoff(ps.A.to_sparse())
    csr_build = time.perf_counter() - t0
    pe = Problem(ps.X, ps.Y, S, name=ps.name, payoff_unit="chips", big_blind=bb)
    runs = {}
    early = []
    for label, prob in (("structured", ps), ("explicit CSR", pe)):
        early.append(solve(prob, "cfr+", max_iters=2).gap)
        runs[label] = solve(prob, "cfr+", max_iters=args.contrast_iters, check_every=args.contrast_iters)
    print(f"\ncontrast, {n} hands each ({ps.X.n_seqs} / {ps.Y.n_seqs} sequences, {ps.stats['leaves']:,} leaves), "
          f"{args.contrast_iters} CFR+ iterations; {load()}")
    print(f"{'operator':14s} {'memory MB':>10s} {'ms/iteration':>13s} {'gap mbb':>10s}")
    for label, r in runs.items():
        op = ps.A if label == "structured" else S
        print(f"{label:14s} {op.nbytes / 1e6:10.1f} {1000 * r.seconds / r.iterations:13.2f} {to_mbb(r.gap, bb):10.3f}")
    print(f"explicit CSR build {csr_build:.1f} s; gaps after 2 iterations differ by {abs(early[0] - early[1]):.1e} "
          f"chips (later, regret matching+ turns rounding-level differences at exact ties into different "
          f"but equally valid iterates)")

    # ---------------------------------------------------------------- OpenSpiel
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        print("\nOpenSpiel cross-check: skipped (pyspiel not installed)")
        return
    from treeplex.model.compile import compile_game
    from treeplex.io.openspiel import OpenSpielGame
    from treeplex.poker.openspiel import load_universal_poker

    g = RiverGame(pot=1000, board="7s8h9dTc2s", range0="AA,KK:0.5,QJs,66,T9o:0.3,32",
                  range1="AA,KK,87,22:0.7,J8s", abstraction="fcpa", first=1, stack=5000)
    ours = g.problem()
    t0 = time.perf_counter()
    theirs = compile_game(OpenSpielGame(load_universal_poker(g)))
    os_seconds = time.perf_counter() - t0
    v_ours = solve_lp(Problem(ours.X, ours.Y, SparsePayoff(ours.A.to_sparse()))).value
    v_theirs = solve_lp(theirs).value
    print(f"\nOpenSpiel universal_poker (fcpa, potSize=1000, {g.board_text}, handReaches from our ranges):")
    print(f"  game value: ours {v_ours:.9f} chips, OpenSpiel's {v_theirs:.9f} chips, difference "
          f"{abs(v_ours - v_theirs):.1e} (LP on both; OpenSpiel tree walked in {os_seconds:.1f} s)")
    print(f"  sequences: ours {ours.X.n_seqs} / {ours.Y.n_seqs}, OpenSpiel's {theirs.X.n_seqs} / {theirs.Y.n_seqs}")


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    main()
