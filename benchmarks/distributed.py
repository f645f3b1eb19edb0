"""Batch throughput and per-spot overhead of ``treeplex batch`` (local process pool, and Ray if installed).

1. Throughput: 20 turn spots (full deck, ranges AA-TT,AK,AQ,KQ vs 99-66,AJ,KJ,QJ,JT, bets
   50%/all-in, pdcfr+ for 100 iterations) by ``treeplex batch specs.jsonl --workers W`` in a
   child process (the user's command, timed from outside: start-up, imports, pool, solves,
   commits, shutdown), W = 1 and 2 alternating (1,2 then 2,1, ...) for ``--repeats`` runs each;
   medians, the ratio of the medians and the median of each repeat's ratio. Per run: the
   load average, our processes' CPU seconds, and the CPU the *other* processes on the machine
   used meanwhile (cores; /proc/stat's busy time less ours). Each repeat also times a busy
   loop in 1 process and in 2 at once: the throughput ratio of 2 loops is the most any
   2-worker batch can get at that moment (on a shared machine with per-session CPU shares,
   Linux's autogroup, it is near 1 whenever other sessions keep the cores busy).
   ``--wait-idle`` starts each repeat once the other processes have used < 0.15 cores for 5 s.
2. Overhead per spot on tiny spots (kuhn by LP, ~1 ms of solving): one worker, a batch of 1
   spot and a batch of N; overhead = (T_N - T_1) / (N - 1) - the mean time in the worker's
   solve_spot. T_1 is the start-up (pool or Ray cluster, imports, numba's cached kernels).
3. Split solve of one flop spot (:mod:`treeplex.scale.split`; QsJh2h, ranges as above, 50% bets,
   2.5x raises, no isomorphism: 26.9M sequences) with 2 workers against one process: CFR+
   seconds per iteration and bytes per iteration, memory per worker (``--split-iters``;
   ``--only-split`` runs this part alone).

    python benchmarks/distributed.py [--spots 20] [--iters 100] [--repeats 5] [--threads 1] [--wait-idle]
                                     [--tiny 40] [--engines local,ray] [--split-iters 10] [--only-split]
                                     [--only-batch]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from treeplex.scale.batch import read_rows, run_batch
from treeplex.scale.flops import flop_subset

RANGES = {"range0": "AA-TT,AK,AQ,KQ", "range1": "99-66,AJ,KJ,QJ,JT"}


def turn_specs(n: int, iters: int) -> list[dict]:
    """``n`` turn spots: spread-out flops of the 1,755, each with the first turn card not on it."""
    flops = [f for f, _ in flop_subset("all")]
    out = []
    for f in flops[:: len(flops) // n][:n]:
        turn = next(c for c in ("2c", "3d", "4h") if c not in f)
        out.append({"game": {"board": f + turn, "pot": 20, "stack": 60, "bet": "50%,a", **RANGES},
                    "algorithm": "pdcfr+", "max_iters": iters})
    return out


def _busy_seconds() -> float:
    """CPU seconds the whole machine has been busy (all but idle and iowait), from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def cli_batch(specs: list[dict], engine: str, workers: int, threads: int) -> dict:
    """``treeplex batch`` in a child process on a fresh database: wall seconds, our CPU
    seconds, the other processes' cores meanwhile, the load average at the start, the rows."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "specs.jsonl")
        with open(path, "w") as f:
            f.writelines(json.dumps(s) + "\n" for s in specs)
        db = os.path.join(d, "r.sqlite")
        cmd = [sys.executable, "-m", "treeplex.cli", "batch", path, "--db", db, "--workers", str(workers),
               "--threads", str(threads), "--engine", engine, "--no-progress"]
        load = os.getloadavg()[0]
        r0, b0 = resource.getrusage(resource.RUSAGE_CHILDREN), _busy_seconds()
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        b1, r1 = _busy_seconds(), resource.getrusage(resource.RUSAGE_CHILDREN)
        ours = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
        rows = read_rows(db)
        assert all(r["status"] == "done" for r in rows) and len(rows) == len(specs)
        return {"wall": wall, "cpu": ours, "others": max(0.0, b1 - b0 - ours) / wall, "load": load, "rows": rows}


LOOP = "x = 0\nfor i in range(30_000_000):\n    x += i\n"


def ceiling() -> float:
    """Throughput of a busy loop in 2 processes at once over 1 process (2.0 on 2 free cores)."""
    def run(k: int) -> float:
        t0 = time.perf_counter()
        for p in [subprocess.Popen([sys.executable, "-c", LOOP]) for _ in range(k)]:
            p.wait()
        return time.perf_counter() - t0

    return 2 * run(1) / run(2)


def wait_idle(limit: float = 0.15) -> None:
    """Until the machine's busy cores over 5 s are below ``limit`` (we run nothing meanwhile)."""
    while True:
        b0 = _busy_seconds()
        time.sleep(5)
        if (_busy_seconds() - b0) / 5 < limit:
            return


def throughput(specs: list[dict], engine: str, repeats: int, threads: int, idle: bool = False) -> None:
    """Section 1 of the module docstring for one engine (``idle``: each repeat waits for a
    moment when other processes use < 0.15 cores)."""
    runs: dict[int, list[dict]] = {1: [], 2: []}
    for i in range(repeats):
        if idle:
            wait_idle()
        c = ceiling()
        for w in (1, 2) if i % 2 == 0 else (2, 1):
            r = cli_batch(specs, engine, w, threads)
            runs[w].append(r)
            mean = sum(row["wall_seconds"] for row in r["rows"]) / len(r["rows"])
            print(f"| {engine} | {i + 1} | {w} x {threads} | {r['wall']:.1f} | {len(specs) / r['wall']:.3f} | {mean:.2f} | "
                  f"{r['cpu']:.1f} | {r['others']:.2f} | {r['load']:.2f} | {c:.2f}x |", flush=True)
    med = {w: statistics.median(r["wall"] for r in rs) for w, rs in runs.items()}
    pairs = [a["wall"] / b["wall"] for a, b in zip(runs[1], runs[2])]
    print(f"\n{engine}, {threads} thread(s) per worker, {repeats} runs each: median wall {med[1]:.1f} s (1 worker), "
          f"{med[2]:.1f} s (2 workers); ratio of the medians {med[1] / med[2]:.2f}x; per repeat "
          f"{', '.join(f'{x:.2f}' for x in pairs)} (median {statistics.median(pairs):.2f}x)\n", flush=True)


def timed(specs: list[dict], engine: str, workers: int) -> tuple[float, list[dict]]:
    """(wall seconds of run_batch, its rows) on a fresh database."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "specs.jsonl")
        with open(path, "w") as f:
            f.writelines(json.dumps(s) + "\n" for s in specs)
        db = os.path.join(d, "r.sqlite")
        t0 = time.perf_counter()
        counts = run_batch(path, db, engine=engine, workers=workers)
        seconds = time.perf_counter() - t0
        assert counts["failed"] == 0, counts["errors"]
        return seconds, read_rows(db)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spots", type=int, default=20)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="numba threads per worker (treeplex batch --threads)")
    ap.add_argument("--tiny", type=int, default=40)
    ap.add_argument("--engines", default="local,ray")
    ap.add_argument("--split-iters", type=int, default=10)
    ap.add_argument("--only-split", action="store_true")
    ap.add_argument("--only-batch", action="store_true", help="section 1 alone")
    ap.add_argument("--wait-idle", action="store_true",
                    help="section 1: start each repeat once other processes use < 0.15 cores for 5 s")
    args = ap.parse_args()
    engines = [e for e in args.engines.split(",") if e != "ray" or _has_ray()]
    print(f"# {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    if args.only_split:
        return split_flop(args.split_iters, ["process"] + (["ray"] if "ray" in engines else []))
    specs = turn_specs(args.spots, args.iters)
    print(f"\n{len(specs)} turn spots, pdcfr+ {args.iters} iterations\n")
    print("| engine | repeat | workers x threads | wall s | spots/s | mean solve_spot s | our CPU s | others' cores "
          "| load | 2-loop ceiling |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for engine in engines:
        throughput(specs, engine, args.repeats, args.threads, args.wait_idle)
    if args.only_batch:
        return
    print("\n| engine | tiny spots | start-up s (batch of 1) | batch of N s | overhead per spot ms |")
    print("|---|---|---|---|---|")
    for engine in engines:
        tiny = [{"game": "kuhn", "weight": i} for i in range(args.tiny)]  # distinct hashes
        t1, _ = timed(tiny[:1], engine, 1)
        tn, rows = timed(tiny, engine, 1)
        inside = sum(r["wall_seconds"] for r in rows[1:]) / (len(rows) - 1)  # the first pays imports
        per = (tn - t1) / (len(tiny) - 1) - inside
        print(f"| {engine} | {len(tiny)} | {t1:.2f} | {tn:.2f} | {1000 * per:.1f} |", flush=True)
    split_flop(args.split_iters, ["process"] + (["ray"] if "ray" in engines else []))


SPLIT_FLOP = {"board": "QsJh2h", "pot": 20, "stack": 60, "bet": "50%", "raise": "2.5x", **RANGES}


def split_flop(iters: int, engines: list[str]) -> None:
    """Section 3 of the module docstring: one process (all threads), then 2 workers per engine."""
    import gc

    import numba

    from treeplex.run.driver import make_solver
    from treeplex.core.memory import show
    from treeplex.scale.split import SplitSolver, load_split_game

    print("\n| flop spot, CFR+ | workers | setup s | s/iteration | bytes/iteration | memory per worker |")
    print("|---|---|---|---|---|---|")
    t0 = time.perf_counter()
    game = load_split_game(SPLIT_FLOP)
    problem = game.problem()
    solver = make_solver(problem, "cfr+")
    solver.step()  # compiles
    setup = time.perf_counter() - t0
    t1 = time.perf_counter()
    for _ in range(iters):
        solver.step()
    per = (time.perf_counter() - t1) / iters
    n = problem.X.n_seqs + problem.Y.n_seqs
    state = sum(a.nbytes for s in solver.players for a in (s.b, s.R, s.x, s.xsum))
    print(f"| one process, {numba.get_num_threads()} threads ({n:,} sequences) | 1 | {setup:.1f} | {per:.3f} | 0 | "
          f"{show(state + problem.A.nbytes + problem.X.nbytes + problem.Y.nbytes)} |", flush=True)
    del solver, problem, game
    gc.collect()
    for engine in engines:
        t0 = time.perf_counter()
        split = SplitSolver(SPLIT_FLOP, 2, "cfr+", engine=engine)
        split.step()
        setup = time.perf_counter() - t0
        sent = split.bytes_sent
        t1 = time.perf_counter()
        for _ in range(iters):
            split.step()
        per = (time.perf_counter() - t1) / iters
        rep = split.report()
        assert split.bytes_sent - sent == iters * rep["bytes_per_iteration"]
        print(f"| split, {engine}, 1 thread each (trunk {sum(rep['trunk_sequences']):,} sequences) | 2 | {setup:.1f} | "
              f"{per:.3f} | {rep['bytes_per_iteration']:,} | "
              f"{', '.join(show(b) for b in rep['worker_bytes'])} (estimates "
              f"{', '.join(show(b) for b in rep['worker_estimate_bytes'])}) |", flush=True)
        split.close()


def _has_ray() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
