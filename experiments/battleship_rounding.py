"""Why CFR+ / DCFR differ from the DDCFR paper's released curves on Battleship and Leduc: rounding.

    PYTHONPATH=. .venv/bin/python experiments/battleship_rounding.py [--exact-iters 20] [--big] [--ddcfr-order]

Writes out/battleship_rounding/table.md (and prints it and its path). About 2 minutes on one
core (``--big`` adds Battleship 2x3, 732,607 histories, with 3 scalings and its table-3 rows:
~10 more minutes; ``--ddcfr-order`` adds table 4, ~3 more minutes of pure Python).

The DDCFR paper's Battleship (OpenSpiel ``battleship``, 2x2 board, ship_sizes=[2],
ship_values=[2], num_shots=3, allow_repeated_shots=False: 10,069 histories, no chance) has
many infosets where two or more actions have *exactly* equal counterfactual values. The exact
regret there is 0, so regret matching plays uniformly; in floating point the regrets come out
as +-1e-17, and regret matching(+) then puts all the mass on the actions whose noise happens
to be positive: a discontinuous jump decided by the summation order. Leduc has no such ties
(``--exact-game leduc_poker --exact-iters 4``, a few minutes, agrees with treeplex to 2e-16
with no tie noise; t = 5 alone takes over ten minutes in fractions), but CFR+ on it is chaotic:
rounding differences of 1e-16 grow to 1e-10 by t = 100 and to percents by t = 150.
Four tables:

1. CFR+ in exact rational arithmetic (fractions.Fraction: alternating updates, RM+, linear
   averaging from t = 1, as OpenSpiel's CFRPlusSolver states it) against treeplex's float run
   and the released curve (github.com/rpSebastian/DDCFR results/CFRPlus/BattleShip2/data.csv,
   which OpenSpiel's own python CFRPlusSolver reproduces to 1e-14), for the first iterations;
   "tie noise" is the largest |regret| treeplex holds where every exact regret of the infoset
   is 0.
2. Sensitivity: exploitability at T = 1000 of the same algorithm on the same game with every
   payoff multiplied by c (divided back by c). On a game without ties or chaos this changes
   nothing beyond rounding (the controls: Liar's Dice 1x3, GoofSpiel 3 and 4, whose released
   curves treeplex matches to 1e-8); on Battleship it moves the result by +-15%, on Leduc by
   +-2% (CFR+) and +-12% (DCFR).
3. The released values next to ours at c = 1 (the README's table rows).
4. (``--ddcfr-order``) CFR+ and DCFR on Leduc in float64 with the DDCFR code's conventions and
   summation order (ddcfr/cfr/cfr.py: per-history immediate regrets summed first, then
   R = max(R + r, 0); values summed in legal-action order; OpenSpiel's exploitability): it
   reproduces the released curve bit for bit, where treeplex and OpenSpiel's own
   CFRPlusSolver (C++; its python one gives the same values) each follow their own trajectory
   from t ~ 100 on.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from fractions import Fraction

import numpy as np

from treeplex.model.compile import compile_game
from treeplex.run.driver import make_solver, solve
from treeplex.games import load_game
from treeplex.model.metrics import exploitability
from treeplex.model.problem import SparsePayoff

BATTLESHIP = ("battleship(board_width=2,board_height={h},ship_sizes=[2],ship_values=[2],num_shots=3,"
              "allow_repeated_shots=False)")
GOOFSPIEL = "turn_based_simultaneous_game(game=goofspiel(num_cards={n},imp_info=True,points_order=descending))"
GOOFSPIEL3, GOOFSPIEL4 = GOOFSPIEL.format(n=3), GOOFSPIEL.format(n=4)
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
    (GOOFSPIEL4, "cfr+"): 2.680067895387836e-04,
    (GOOFSPIEL4, "dcfr"): 4.096428420659016e-04,
    ("leduc_poker", "cfr+"): 2.5710955969532323e-04,
    ("leduc_poker", "dcfr"): 1.5270815274320837e-04,
    ("kuhn_poker", "cfr+"): 8.736532252065499e-05,
    ("kuhn_poker", "dcfr"): 1.465002281534622e-04,
    ("liars_dice(numdice=1,dice_sides=4)", "cfr+"): 4.533202689365606e-05,
    ("liars_dice(numdice=1,dice_sides=4)", "dcfr"): 2.6220483322750288e-05,
}
# results/{CFRPlus,DCFR}/LeducPoker/data.csv at a few steps (table 4).
RELEASED_LEDUC = {
    "cfr+": {10: 0.6104389015904067, 50: 0.03412145649454963, 100: 0.0134159949715811, 150: 0.007408499712390659,
             200: 0.004991256680480519, 300: 0.0023296348919080723, 400: 0.0012786702854495763,
             1000: 2.5710955969532323e-04},
    "dcfr": {10: 0.7788020469962015, 50: 0.022921832286570437, 1000: 1.5270815274320837e-04},
}
LEDUC_CHECKS = (10, 50, 100, 150, 200, 300, 400, 1000)
# results/CFRPlus/BattleShip2/data.csv, steps 1-10.
RELEASED_CFRPLUS_EARLY = [0.5, 0.6944444444444446, 0.8797310806569236, 0.8579466667971232, 0.6635230038932237,
                          0.5747670568252682, 0.4642741820992581, 0.376082262877949, 0.3450263058030815,
                          0.3436006198051241]
SCALES = (1.0, 3.0, 0.1, 7.0, 0.3, 1.0 + 2.0 ** -40, 5.0, 0.7, 11.0, 1.1, 0.01, 13.0)


class ExactCFRPlus:
    """CFR+ on a pyspiel game in fractions: a tree walk keyed by (player,
    information_state_string), alternating updates (player 0 then 1), RM+, the average
    accumulated with weight t from t = 1 (OpenSpiel's python CFRPlusSolver). Every history is
    walked, also below actions the opponent plays with probability 0: an infoset's average
    sums t * own reach over all its histories, as OpenSpiel's and the DDCFR code do; skipping
    them changes each iteration's weight in the average (an earlier version did, which moved
    Battleship's exact curve from t = 3 on and Leduc's from t = 2)."""

    def __init__(self, spiel_game):
        def build(s):
            if s.is_terminal():
                return Fraction(s.returns()[0]).limit_denominator()
            if s.is_chance_node():
                return ("chance", [(Fraction(q).limit_denominator(), build(s.child(a))) for a, q in s.chance_outcomes()])
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
        if node[0] == "chance":
            return sum(q * self._walk(c, player, opp * q, own) for q, c in node[1])
        p, k, children = node
        key = (p, k)
        self.actions[key] = [a for a, _ in children]
        s = self._strategy(key, len(children))
        if p != player:
            return sum(s[i] * self._walk(c, player, opp * s[i], own) for i, (_, c) in enumerate(children))
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


def exact_table(n: int, lines: list, spec: str = BATTLESHIP.format(h=2)) -> None:
    from treeplex.io.openspiel import plans_from_policy

    game = load_game("openspiel:" + spec)
    problem = compile_game(game)
    exact, ours = ExactCFRPlus(game.spiel_game), make_solver(problem, "cfr+")
    early = RELEASED_CFRPLUS_EARLY if spec == BATTLESHIP.format(h=2) else []
    together = True
    lines += [f"## 1. CFR+ on `{spec}`: exact arithmetic, treeplex (float64), released curve", "",
              "| t | exact (fractions) | treeplex | released | tie noise in treeplex's regrets |", "|---|---|---|---|---|"]
    for t in range(1, n + 1):
        exact.step()
        ours.step()
        ex = exploitability(problem, *plans_from_policy(game, problem, exact.average_table()))
        fl = exploitability(problem, *ours.average())
        pub = f"{early[t - 1]:.6g}" if t <= len(early) else ""
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


def released_table(specs: list[str], lines: list) -> None:
    """Table 3: the released value at T = 1000 next to treeplex's (c = 1, the game's own
    payoff operator, as the README's table). Built-in names run treeplex's own layouts of the
    same game and are compared with the OpenSpiel game's released value."""
    same = {"leduc(suited=True)": "leduc_poker", "leduc": "leduc_poker", "kuhn": "kuhn_poker"}
    lines += ["## 3. Released (github.com/rpSebastian/DDCFR, T = 1000) against treeplex (c = 1)", "",
              "| game | algorithm | released | treeplex | ratio |", "|---|---|---|---|---|"]
    for spec in specs:
        p = compile_game(load_game(spec if spec in same else "openspiel:" + spec))
        for a in ("cfr+", "dcfr"):
            ours = solve(p, a, max_iters=1000, check_every=1000).exploitability
            pub = RELEASED[(same.get(spec, spec), a)]
            lines.append(f"| `{spec}` | {a} | {pub:.10e} | {ours:.10e} | {ours / pub:.6f} |")
            print(lines[-1], flush=True)
    lines.append("")


class DDCFROrder:
    """CFR+ or DCFR (1.5, 0, 2) in float64 with the conventions and the order of operations of
    the DDCFR code (ddcfr/cfr/cfr.py, cfr_plus.py, dcfr.py at commit 75f2f5a), restated here:
    a walk over the pyspiel tree (chance outcomes, then legal actions, in OpenSpiel's order),
    the traverser's per-history regrets summed into an immediate regret, added to the
    cumulative one after the walk (CFR+: R = max(R + r, 0)); the average weights t * reach
    (CFR+) or discounts by ((t-1)/t)^2 (DCFR); alternating updates, player 0 first."""

    def __init__(self, spiel_game, algorithm: str):
        self.game, self.algorithm, self.t, self.nodes = spiel_game, algorithm, 0, {}

        def build(s):
            if s.is_terminal():
                return ("terminal", s.returns())
            if s.is_chance_node():
                return ("chance", [(q, build(s.child(a))) for a, q in s.chance_outcomes()])
            p, acts = s.current_player(), s.legal_actions()
            key = (p, s.information_state_string(p))
            n = len(acts)
            # [player, actions, policy, regret, cumulative policy, reach, immediate regret]
            node = self.nodes.setdefault(key, [p, acts, [1 / n] * n, [0.0] * n, [0.0] * n, 0.0, [0.0] * n])
            return ("decision", node, [build(s.child(a)) for a in acts])

        self.root = build(spiel_game.new_initial_state())

    def _walk(self, h, trav, my, opp):
        if h[0] == "terminal":
            return h[1][trav]
        if h[0] == "chance":
            v = 0.0
            for q, c in h[1]:
                v += q * self._walk(c, trav, my, opp * q)
            return v
        node, children = h[1], h[2]
        pol = node[2]
        if node[0] != trav:
            v = 0.0
            for i, c in enumerate(children):
                v += pol[i] * self._walk(c, trav, my, opp * pol[i])
            return v
        vals, v = [], 0.0
        for i, c in enumerate(children):
            vals.append(self._walk(c, trav, my * pol[i], opp))
            v += pol[i] * vals[-1]
        for i in range(len(children)):
            node[6][i] += opp * (vals[i] - v)
        node[5] += my
        return v

    def _update(self, node):
        _, acts, pol, R, cum, reach, imm = node
        t = float(self.t)
        for i in range(len(acts)):
            if self.algorithm == "cfr+":
                R[i] = max(R[i] + imm[i], 0)
                cum[i] += self.t * pol[i] * reach
            else:
                if t == 1:
                    R[i] = imm[i]
                else:
                    w = np.power(t - 1, 1.5 if R[i] > 0 else 0.0)
                    R[i] = R[i] * (w / (w + 1)) + imm[i]
                cum[i] = reach * pol[i] if t == 1 else cum[i] * np.power((t - 1) / t, 2) + reach * pol[i]
        total = 0
        for r in R:
            total += max(0, r)
        for i in range(len(acts)):
            pol[i] = 1 / len(acts) if total == 0 else max(0, R[i]) / total
            imm[i] = 0
        node[5] = 0

    def step(self):
        self.t += 1
        for player in (0, 1):
            self._walk(self.root, player, 1.0, 1.0)
            for node in self.nodes.values():
                if node[0] == player:
                    self._update(node)

    def exploitability(self) -> float:
        from open_spiel.python import policy
        from open_spiel.python.algorithms import exploitability as ex

        def average(state):
            node = self.nodes[(state.current_player(), state.information_state_string())]
            total = sum(node[4])
            return {a: (c / total if total else 1 / len(node[1])) for a, c in zip(node[1], node[4])}

        return float(ex.exploitability(self.game, policy.tabular_policy_from_callable(self.game, average)))


def ddcfr_order_table(lines: list) -> None:
    import pyspiel

    lines += [("## 4. Leduc (`leduc_poker`): the DDCFR code's order in float64, OpenSpiel's C++ CFRPlusSolver, "
               "treeplex, released"), "",
              "| algorithm | t | released | DDCFR order | OpenSpiel CFRPlusSolver | treeplex | treeplex / released |",
              "|---|---|---|---|---|---|---|"]
    game = load_game("openspiel:leduc_poker")
    problem = compile_game(game)
    for a in ("cfr+", "dcfr"):
        ref, ours = DDCFROrder(game.spiel_game, a), make_solver(problem, a)
        spiel = pyspiel.CFRPlusSolver(game.spiel_game) if a == "cfr+" else None
        for t in range(1, 1001):
            ref.step()
            ours.step()
            if spiel is not None:
                spiel.evaluate_and_update_policy()
            if t in LEDUC_CHECKS:
                pub = RELEASED_LEDUC[a].get(t)
                r, o = ref.exploitability(), exploitability(problem, *ours.average())
                sp = "" if spiel is None else repr(float(pyspiel.exploitability(game.spiel_game, spiel.average_policy())))
                lines.append(f"| {a} | {t} | {'' if pub is None else repr(pub)} | {r!r} | {sp} | {o!r} | "
                             f"{'' if pub is None else f'{o / pub:.6f}'} |")
                print(lines[-1], flush=True)
    lines.append("")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exact-iters", type=int, default=20)
    ap.add_argument("--exact-game", default=BATTLESHIP.format(h=2),
                    help="OpenSpiel game of table 1 (e.g. leduc_poker; default Battleship 2x2)")
    ap.add_argument("--big", action="store_true", help="add Battleship 2x3 to tables 2 and 3")
    ap.add_argument("--ddcfr-order", action="store_true", help="add table 4 (Leduc in the DDCFR code's order)")
    args = ap.parse_args(argv)
    import pyspiel

    lines = ["# Battleship and Leduc against the DDCFR released curves: regret ties, chaos and rounding", "",
             f"open_spiel {getattr(pyspiel, '__version__', '?')}", ""]
    exact_table(args.exact_iters, lines, args.exact_game)
    games = [("liars_dice(numdice=1,dice_sides=3)", len(SCALES)), (GOOFSPIEL3, len(SCALES)), (GOOFSPIEL4, len(SCALES)),
             ("leduc_poker", len(SCALES)), (BATTLESHIP.format(h=2), len(SCALES))]
    if args.big:
        games.append((BATTLESHIP.format(h=3), 3))
    sensitivity_table(games, lines)
    released = ["kuhn_poker", "leduc_poker", "leduc(suited=True)", "leduc", "liars_dice(numdice=1,dice_sides=3)",
                "liars_dice(numdice=1,dice_sides=4)", GOOFSPIEL3, GOOFSPIEL4, BATTLESHIP.format(h=2)]
    released_table(released + ([BATTLESHIP.format(h=3)] if args.big else []), lines)
    if args.ddcfr_order:
        ddcfr_order_table(lines)
    out = os.path.join("out", "battleship_rounding")
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "table.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
