"""Why Battleship's CFR+ / DCFR numbers differ from the DDCFR paper's released curves: regret ties.

    PYTHONPATH=. .venv/bin/python experiments/battleship_rounding.py [--exact-iters 20] [--big]

Writes out/battleship_rounding/table.md (and prints it and its path). About 2 minutes on one
core (``--big`` adds Battleship 2x3, 732,607 histories, with 3 scalings: ~8 more minutes).

The DDCFR paper's Battleship (OpenSpiel ``battleship``, 2x2 board, ship_sizes=[2],
ship_values=[2], num_shots=3, allow_repeated_shots=False: 10,069 histories, no chance) has
many infosets where two or more actions have *exactly* equal counterfactual values. The exact
regret there is 0, so regret matching plays uniformly; in floating point the regrets come out
as +-1e-17, and regret matching(+) then puts all the mass on the actions whose noise happens
to be positive: a discontinuous jump decided by the summation order. Three tables:

1. CFR+ in exact rational arithmetic (fractions.Fraction: alternating updates, RM+, linear
   averaging from t = 1, as OpenSpiel's CFRPlusSolver states it) against treeplex's float run
   and the released curve (github.com/rpSebastian/DDCFR results/CFRPlus/BattleShip2/data.csv,
   which OpenSpiel's own python CFRPlusSolver reproduces to 1e-14), for the first iterations;
   "tie noise" is the largest |regret| treeplex holds where every exact regret of the infoset
   is 0.
2. Sensitivity: exploitability at T = 1000 of the same algorithm on the same game with every
   payoff multiplied by c (divided back by c). On a game without ties this changes nothing
   beyond rounding (the controls: Liar's Dice 1x3 and GoofSpiel 3, whose released curves
   treeplex matches to 1e-8); on Battleship it moves the result by +-15%.
3. The released values next to ours (the README's table rows).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from fractions import Fraction

import numpy as np

from treeplex.compile import compile_game
from treeplex.driver import make_solver, solve
from treeplex.games import load_game
from treeplex.metrics import exploitability
from treeplex.problem import SparsePayoff

BATTLESHIP = ("battleship(board_width=2,board_height={h},ship_sizes=[2],ship_values=[2],num_shots=3,"
              "allow_repeated_shots=False)")
GOOFSPIEL3 = "turn_based_simultaneous_game(game=goofspiel(num_cards=3,imp_info=True,points_order=descending))"
# Exploitability at T = 1000 in github.com/rpSebastian/DDCFR results/{CFRPlus,DCFR}/<game>/data.csv
# (commit 75f2f5a9580741730ed93e241f0dd8f508d4487a).
RELEASED = {
    (BATTLESHIP.format(h=2), "cfr+"): 2.5821145363028597e-03,
    (BATTLESHIP.format(h=2), "dcfr"): 2.1247344040388194e-03,
    (BATTLESHIP.format(h=3), "cfr+"): 1.7451500591369323e-03,
    (BATTLESHIP.format(h=3), "dcfr"): 1.5765259300704604e-03,
    ("liars_dice(numdice=1,dice_sides=3)", "cfr+"): 4.842475981453598e-06,
    ("liars_dice(numdice=1,dice_sides=3)", "dcfr"): 3.952371344095873e-08,
    (GOOFSPIEL3, "cfr+"): 1.8315018315018316e-06,
    (GOOFSPIEL3, "dcfr"): 3.4947561184442756e-09,
}
# results/CFRPlus/BattleShip2/data.csv, steps 1-10.
RELEASED_CFRPLUS_EARLY = [0.5, 0.6944444444444446, 0.8797310806569236, 0.8579466667971232, 0.6635230038932237,
                          0.5747670568252682, 0.4642741820992581, 0.376082262877949, 0.3450263058030815,
                          0.3436006198051241]
SCALES = (1.0, 3.0, 0.1, 7.0, 0.3, 1.0 + 2.0 ** -40, 5.0, 0.7, 11.0, 1.1, 0.01, 13.0)


class ExactCFRPlus:
    """CFR+ on a pyspiel game without chance nodes, in fractions: a tree walk keyed by
    (player, information_state_string), alternating updates (player 0 then 1), RM+, the
    average accumulated with weight t from t = 1 (OpenSpiel's python CFRPlusSolver)."""

    def __init__(self, spiel_game):
        def build(s):
            if s.is_terminal():
                return Fraction(s.returns()[0]).limit_denominator()
            assert not s.is_chance_node(), "exact CFR+ here walks games without chance"
            p = s.current_player()
            return (p, s.information_state_string(p), [(a, build(s.child(a))) for a in s.legal_actions()])

        self.root = build(spiel_game.new_initial_state())
        self.regrets, self.cumulative, self.current, self.actions = {}, {}, {}, {}
        self.t = 0

    def _strategy(self, key, n):
        return self.current.get(key) or [Fraction(1, n)] * n

    def _walk(self, node, player, opp, own):
        if not isinstance(node, tuple):
            return node if player == 0 else -node
        p, k, children = node
        key = (p, k)
        self.actions[key] = [a for a, _ in children]
        s = self._strategy(key, len(children))
        if p != player:
            return sum(s[i] * self._walk(c, player, opp * s[i], own) for i, (_, c) in enumerate(children) if s[i])
        vals = [self._walk(c, player, opp, own * s[i]) for i, (_, c) in enumerate(children)]
        v = sum(si * vi for si, vi in zip(s, vals))
        r = self.regrets.setdefault(key, [Fraction(0)] * len(children))
        cum = self.cumulative.setdefault(key, [Fraction(0)] * len(children))
        for i in range(len(children)):
            r[i] += opp * (vals[i] - v)
            cum[i] += self.t * own * s[i]
        return v

    def step(self):
        self.t += 1
        for player in (0, 1):
            self._walk(self.root, player, Fraction(1), Fraction(1))
            for key, r in self.regrets.items():
                if key[0] != player:
                    continue
                r[:] = [max(x, Fraction(0)) for x in r]
                total = sum(r)
                self.current[key] = [x / total for x in r] if total else [Fraction(1, len(r))] * len(r)

    def average_table(self):
        """{infostate: [(action, probability)]}, the form plans_from_policy reads."""
        out = {}
        for (p, k), cum in self.cumulative.items():
            total = sum(cum)
            out[k] = [(a, float(c / total) if total else 1.0 / len(cum)) for a, c in zip(self.actions[(p, k)], cum)]
        return out


def tie_noise(exact: ExactCFRPlus, problem, solver) -> float:
    """Largest |regret| treeplex holds at an infoset where every exact regret is 0."""
    worst = 0.0
    for p, T in enumerate(problem.treeplexes):
        R = np.asarray(solver.players[p].R, dtype=np.float64)
        for j, key in enumerate(T.infoset_keys):
            r = exact.regrets.get((p, key))
            if r is not None and not any(r):
                worst = max(worst, float(np.abs(R[T.start[j]:T.end[j]]).max()))
    return worst


def exact_table(n: int, lines: list) -> None:
    from treeplex.openspiel import plans_from_policy

    game = load_game("openspiel:" + BATTLESHIP.format(h=2))
    problem = compile_game(game)
    exact, ours = ExactCFRPlus(game.spiel_game), make_solver(problem, "cfr+")
    together = True
    lines += ["## 1. CFR+ on Battleship 2x2: exact arithmetic, treeplex (float64), released curve", "",
              "| t | exact (fractions) | treeplex | released | tie noise in treeplex's regrets |", "|---|---|---|---|---|"]
    for t in range(1, n + 1):
        exact.step()
        ours.step()
        ex = exploitability(problem, *plans_from_policy(game, problem, exact.average_table()))
        fl = exploitability(problem, *ours.average())
        pub = f"{RELEASED_CFRPLUS_EARLY[t - 1]:.6g}" if t <= len(RELEASED_CFRPLUS_EARLY) else ""
        together = together and abs(ex - fl) < 1e-9
        noise = f"{tie_noise(exact, problem, ours):.2g}" if together else "(apart)"
        lines.append(f"| {t} | {ex:.6g} | {fl:.6g} | {pub} | {noise} |")
        print(lines[-1], flush=True)
    lines.append("")


def scaled_runs(p, algorithm: str, scales) -> list[float]:
    A = p.A.to_sparse()
    out = []
    for c in scales:
        q = dataclasses.replace(p, A=SparsePayoff(A * c))
        out.append(solve(q, algorithm, max_iters=1000, check_every=1000).exploitability / c)
    return out


def sensitivity_table(games: list[tuple[str, int]], lines: list) -> None:
    lines += ["## 2. Exploitability at T = 1000 with every payoff multiplied by c (result divided by c)", "",
              "c = " + ", ".join(repr(c) for c in SCALES) + " (the first n of them; c = 1 is the README's row).", "",
              ("| game | algorithm | n | released | c = 1 | min over c | median | max over c | max/min - 1 | "
               "released / median |"), "|---|---|---|---|---|---|---|---|---|---|"]
    for spec, n in games:
        p = compile_game(load_game("openspiel:" + spec))
        for a in ("cfr+", "dcfr"):
            t0 = time.time()
            vals = scaled_runs(p, a, SCALES[:n])
            pub = RELEASED[(spec, a)]
            lo, med, hi = min(vals), float(np.median(vals)), max(vals)
            lines.append(f"| `{spec}` | {a} | {n} | {pub:.4e} | {vals[0]:.4e} | {lo:.4e} | {med:.4e} | {hi:.4e} | "
                         f"{hi / lo - 1:.1e} | {pub / med:.3f} |")
            print(lines[-1], f"({time.time() - t0:.0f} s)", flush=True)
    lines.append("")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exact-iters", type=int, default=20)
    ap.add_argument("--big", action="store_true", help="add Battleship 2x3 to table 2")
    args = ap.parse_args(argv)
    import pyspiel

    lines = ["# Battleship against the DDCFR released curves: regret ties and rounding", "",
             f"open_spiel {getattr(pyspiel, '__version__', '?')}", ""]
    exact_table(args.exact_iters, lines)
    games = [("liars_dice(numdice=1,dice_sides=3)", len(SCALES)), (GOOFSPIEL3, len(SCALES)),
             (BATTLESHIP.format(h=2), len(SCALES))]
    if args.big:
        games.append((BATTLESHIP.format(h=3), 3))
    sensitivity_table(games, lines)
    out = os.path.join("out", "battleship_rounding")
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "table.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
