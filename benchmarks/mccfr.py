"""Monte Carlo CFR (issue 13): wall time to exploitability 1e-2 and 1e-3, medians of seeds,
our samplers against OpenSpiel's C++ MCCFR, LiteEFG's sampling MCCFR and our full-width CFR+,
one table, the speedups, and a figure of exploitability against seconds.

    .venv/bin/python benchmarks/mccfr.py [GAME ...] [--seeds 3] [--time-limit 15] [--os-time-limit 5]
                                         [--solvers es,os,cfr+] [--liteefg /tmp/liteefg/bin/python]
                                         [--out out/mccfr_vs_cfr.png]

GAME defaults: ``openspiel:leduc_poker`` (OpenSpiel's Leduc, 936 infosets, the same game for
every solver) and ``openspiel:liars_dice(numdice=1,dice_sides=6)``.

Solvers: treeplex ``mccfr-es``, ``mccfr-os`` (epsilon 0.6) and, with ``--solvers os-vr``,
``mccfr-os`` with VR-MCCFR baselines (driven with ``run(n)``, n iterations per numba call);
``pyspiel.ExternalSamplingMCCFRSolver`` and ``pyspiel.OutcomeSamplingMCCFRSolver``
(``run_iteration()`` in a Python loop; the per-call overhead is well under a microsecond of
their 15-300 us iterations); LiteEFG's external sampling (``baselines.CFR``, traverse
"External") and outcome sampling (``baselines.OS_MCCFR``, traverse "Outcome"), each in its own
interpreter (``--liteefg``, the virtual environment it was built in; ``liteefg_worker.py``,
which times its iterations itself); and treeplex ``cfr+`` (full width, deterministic: one run).
All samplers are plain regret matching with uniform averaging (our default variant, and
OpenSpiel's), so the comparison is time to the same exploitability with the same algorithm.
Every solver runs on its own, checked at a geometric schedule of iterations (x1.25); only
solver time counts (the checks are excluded). Every exploitability is treeplex's, exact, on
the same game: OpenSpiel's average policy is read through ``Policy.get_state_policy`` at one
state per infoset (on Leduc it agrees with ``pyspiel.exploitability`` to 1e-12, checked at
start), LiteEFG's from its "avg-iterate" strategy per information state string. A run stops
at the last target or at its time limit (``--time-limit``; outcome sampling, which reaches
none of 1e-2 and 1e-3 in minutes, ``--os-time-limit``); a time not reached prints as ``>T``
with T the limit. Times are upper bounds at the check granularity (at most 25% late); the
last check may end past the limit. Speedups divide a peer's median time by ours; where the
peer did not reach the target within its limit T, the speedup is at least T / ours and
prints as ``>x``. ``--peers-only --stop 0.01`` runs only the peers, each until 1e-2 (a long
run to measure what the time-limited table can only bound).
"""

from __future__ import annotations

import argparse
import os
import json
import statistics
import subprocess
import sys
import time

import numpy as np

from treeplex.games import load_problem
from treeplex.run.driver import make_solver
from treeplex.model.metrics import exploitability

DEFAULT_GAMES = ["openspiel:leduc_poker", "openspiel:liars_dice(numdice=1,dice_sides=6)"]
TARGETS = (1e-1, 1e-2, 1e-3)  # the issue asks for 1e-2 and 1e-3; 1e-1 shows the sampled ratios in short runs


def representatives(spiel_game) -> dict:
    """{(player, information state string): one state of that infoset}."""
    reps, stack = {}, [spiel_game.new_initial_state()]
    while stack:
        s = stack.pop()
        if s.is_terminal():
            continue
        if s.is_chance_node():
            stack.extend(s.child(a) for a, p in s.chance_outcomes() if p > 0)
            continue
        p = s.current_player()
        reps.setdefault((p, s.information_state_string(p)), s)
        stack.extend(s.child(a) for a in s.legal_actions())
    return reps


def spiel_plans(problem, reps, pol):
    """Realization plans of an OpenSpiel policy (average_policy() of the C++ solvers)."""
    game = problem.game
    b = [np.ones(T.n_seqs) for T in problem.treeplexes]
    for p, T in enumerate(problem.treeplexes):
        for j, key in enumerate(T.infoset_keys):
            acts = game.action_ids[(p, key)]
            probs = dict(pol.get_state_policy(reps[(p, key)]))
            row = np.array([probs.get(a, 0.0) for a in acts])
            b[p][T.start[j]:T.end[j]] = row / row.sum() if row.sum() > 0 else 1.0 / len(acts)
    return tuple(T.plan_from_behavioral(bp) for T, bp in zip(problem.treeplexes, b))


class DictPolicy:
    """An OpenSpiel-like policy from {(player, information state string): {action: probability}}."""

    def __init__(self, table):
        self.table = table

    def get_state_policy(self, state):
        return self.table[(state.current_player(), state.information_state_string())].items()


class LiteEFGRun:
    """One LiteEFG solver in its own interpreter (``liteefg_worker.py``)."""

    def __init__(self, python, game, algorithm, seed):
        worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "liteefg_worker.py")
        self.proc = subprocess.Popen([python, worker, game, algorithm, str(seed)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert json.loads(self.proc.stdout.readline())["ready"]

    def _ask(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def advance(self, n):
        return self._ask({"run": n})["seconds"]

    def policy(self):
        rows = self._ask({"policy": True})["policy"]
        return DictPolicy({(p, key): dict(zip(acts, probs)) for p, key, acts, probs in rows})

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.write(json.dumps({"quit": True}) + "\n")
            self.proc.stdin.close()
        self.proc.wait()


STOP = [TARGETS[-1]]  # a run stops at this exploitability (--stop)


def traced(advance, evaluate, time_limit, first=10, factor=1.25):
    """Run ``advance(n)`` to a geometric schedule of iterations; [(seconds, iterations, expl)]."""
    rows, done, seconds, nxt = [], 0, 0.0, first
    while True:
        t0 = time.perf_counter()
        took = advance(nxt - done)  # a solver timed elsewhere (LiteEFG's worker) returns its seconds
        seconds += time.perf_counter() - t0 if took is None else took
        done = nxt
        e = evaluate()
        rows.append((seconds, done, e))
        if e <= STOP[0] or seconds >= time_limit:
            return rows
        nxt = max(nxt + 1, int(nxt * factor))


def time_to(rows, target):
    return next((s for s, _, e in rows if e <= target), float("inf"))


OURS = (("es", "mccfr-es", "mccfr-es", {}), ("os", "mccfr-os", "mccfr-os", {}),
        ("os-vr", "mccfr-os (VR baselines)", "mccfr-os", {"baseline": "learned"}))
PEERS = {"mccfr-es": ("OpenSpiel ES (C++)", "LiteEFG ES"), "mccfr-os": ("OpenSpiel OS (C++)", "LiteEFG OS")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("games", nargs="*", default=DEFAULT_GAMES)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=15.0, help="solver seconds per run")
    ap.add_argument("--os-time-limit", type=float, default=5.0, help="solver seconds per outcome-sampling run")
    ap.add_argument("--out", default="out/mccfr_vs_cfr.png")
    ap.add_argument("--no-peers", action="store_true", help="skip OpenSpiel and LiteEFG")
    ap.add_argument("--liteefg", default="/tmp/liteefg/bin/python",
                    help="the Python of LiteEFG's virtual environment ('' to skip LiteEFG)")
    ap.add_argument("--solvers", default="es,os,cfr+", help="comma-separated subset of es, os, os-vr, cfr+")
    ap.add_argument("--peers-only", action="store_true", help="the peers of --solvers' samplers, not ours")
    ap.add_argument("--stop", type=float, default=TARGETS[-1], help="stop a run at this exploitability")
    args = ap.parse_args(argv)
    chosen = set(args.solvers.split(","))
    STOP[0] = args.stop
    pyspiel = None
    if not args.no_peers:
        try:
            import pyspiel
        except ImportError:
            print("pyspiel not installed: OpenSpiel's solvers skipped", file=sys.stderr)
    lite = args.liteefg if (args.liteefg and not args.no_peers and os.path.exists(args.liteefg)) else None
    if args.liteefg and not args.no_peers and lite is None:
        print(f"{args.liteefg} not found: LiteEFG skipped", file=sys.stderr)
    limit_of = lambda name: args.os_time_limit if ("OS" in name or "-os" in name) else args.time_limit
    table, curves, limits = [], {}, {}
    for spec in args.games:
        problem = load_problem(spec)
        _ = problem.tree  # walked once, outside every timing
        runs = {}  # solver -> list of traces (one per seed)
        for key, label, alg, params in OURS:
            if key not in chosen or args.peers_only:
                continue
            for seed in range(args.seeds):
                s = make_solver(problem, alg, seed=seed, **params)
                s.run(1)  # JIT outside the timing
                s = make_solver(problem, alg, seed=seed, **params)
                runs.setdefault(label, []).append(traced(s.run, lambda p=problem, s=s: exploitability(p, *s.average()),
                                                         limit_of(label)))
        if "cfr+" in chosen and not args.peers_only:
            s = make_solver(problem, "cfr+")
            s.step()
            s = make_solver(problem, "cfr+")

            def steps(n, s=s):
                for _ in range(n):
                    s.step()

            runs["cfr+ (full width)"] = [traced(steps, lambda p=problem, s=s: exploitability(p, *s.average()),
                                                args.time_limit, first=1)]
        sampling = [k for k in ("es", "os") if k in chosen]
        if (pyspiel is not None or lite) and spec.startswith("openspiel:"):
            sg = problem.game.spiel_game  # the game's states, to read peers' policies at one state per infoset
            reps = representatives(sg)
        if pyspiel is not None and spec.startswith("openspiel:"):
            check = pyspiel.ExternalSamplingMCCFRSolver(sg, seed=0)
            for _ in range(100):
                check.run_iteration()
            if sg.num_distinct_actions() <= 3:  # Leduc: cross-check the policy reading
                ours = exploitability(problem, *spiel_plans(problem, reps, check.average_policy()))
                theirs = pyspiel.exploitability(sg, check.average_policy())
                assert abs(ours - theirs) < 1e-9, (ours, theirs)
            for key in sampling:
                name = PEERS[f"mccfr-{key}"][0]
                cls = pyspiel.ExternalSamplingMCCFRSolver if key == "es" else pyspiel.OutcomeSamplingMCCFRSolver
                for seed in range(args.seeds):
                    sol = cls(sg, seed=seed)

                    def advance(n, sol=sol):
                        for _ in range(n):
                            sol.run_iteration()

                    runs.setdefault(name, []).append(
                        traced(advance, lambda sol=sol, p=problem, r=reps: exploitability(
                            p, *spiel_plans(p, r, sol.average_policy())), limit_of(name)))
        if lite and spec.startswith("openspiel:"):
            game_string = spec[len("openspiel:"):]
            for key in sampling:
                name = PEERS[f"mccfr-{key}"][1]
                for seed in range(args.seeds):
                    lr = LiteEFGRun(lite, game_string, key, seed)
                    try:
                        runs.setdefault(name, []).append(
                            traced(lr.advance, lambda lr=lr, p=problem, r=reps: exploitability(
                                p, *spiel_plans(p, r, lr.policy())), limit_of(name)))
                    finally:
                        lr.close()
        for name, traces in runs.items():
            med = [statistics.median(time_to(r, tg) for r in traces) for tg in TARGETS]
            rate = statistics.median(r[-1][1] / r[-1][0] for r in traces)
            best = statistics.median(r[-1][2] for r in traces)
            table.append((spec, name, *med, rate, best, len(traces)))
            limits[(spec, name)] = limit_of(name) if name != "cfr+ (full width)" else args.time_limit
        curves[spec] = runs
    fmt = lambda t, lim: f">{lim:g}" if t == float("inf") else f"{t:.3g}"
    print(f"\nwall seconds to exploitability (median of {args.seeds} seeds; solver time only; limit "
          f"{args.time_limit:g} s per run, outcome sampling {args.os_time_limit:g} s)\n")
    print("| game | solver | " + " | ".join(f"to {tg:g}" for tg in TARGETS) + " | iterations/s | final expl. | runs |")
    print("|---|---|" + "---|" * len(TARGETS) + "---|---|---|")
    times = {}
    for spec, name, *rest in table:
        ts, (rate, best, n) = rest[:len(TARGETS)], rest[len(TARGETS):]
        times[(spec, name)] = ts
        print(f"| {spec} | {name} | " + " | ".join(fmt(t, limits[(spec, name)]) for t in ts)
              + f" | {rate:,.0f} | {best:.2e} | {n} |")
    print("\nspeedup = peer's median seconds / ours (>x: the peer did not reach the target within its limit T, "
          "so the speedup is at least T / ours; -: we did not reach it)\n")
    print("| game | ours | peer | " + " | ".join(f"to {tg:g}" for tg in TARGETS) + " |")
    print("|---|---|---|" + "---|" * len(TARGETS))
    for (spec, name), ts in times.items():
        for peer in PEERS.get(name, ()):
            if (spec, peer) not in times:
                continue
            cells = []
            for ours, theirs in zip(ts, times[(spec, peer)]):
                if ours == float("inf"):
                    cells.append("-")
                elif theirs == float("inf"):
                    cells.append(f">{limits[(spec, peer)] / ours:.3g}x")
                else:
                    cells.append(f"{theirs / ours:.3g}x")
            print(f"| {spec} | {name} | {peer} | " + " | ".join(cells) + " |")
    if args.out:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(curves), figsize=(6 * len(curves), 4.5), squeeze=False)
        for ax, (spec, runs) in zip(axes[0], curves.items()):
            for name, traces in runs.items():
                r = np.array(traces[0])
                ax.loglog(r[:, 0], r[:, 2], label=name)
            for tg in TARGETS:
                ax.axhline(tg, color="grey", lw=0.5, ls=":")
            ax.set_title(spec)
            ax.set_xlabel("solver seconds")
            ax.set_ylabel("exploitability")
            ax.legend(fontsize=8)
        fig.tight_layout()
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        fig.savefig(args.out, dpi=120)
        print(f"\nfigure: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
