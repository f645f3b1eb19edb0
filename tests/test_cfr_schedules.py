"""HS-PCFR+, HS-DCFR and APCFR+ (treeplex/solvers/cfr_schedules.py): against the papers'
equations walked on the game tree, hand-computed first iterations, and the LP value."""

import math

import numpy as np
import pytest
from random_games import random_game
from test_cfr import ReferenceCFRPlus, _behavioral, _local

import treeplex as tp
from treeplex.core.treeplex import UNREACHED_TOL
from treeplex.run.driver import solve
from treeplex.solvers import ALGORITHMS

HORIZON = 50


class ReferenceVariant(ReferenceCFRPlus):
    """The papers' per-infoset updates, written from their equations on the game tree (alternating
    updates, iteration t from 1, prediction r^0 = 0, R^1 = 0); shares no code with the solvers.

    - HS-PCFR+ (Zhang, McAleer & Sandholm 2026, eq. 4): PCFR+, R = [R + r]^+, play
      [R + r]^+ normalized; average S = S ((t-1)/t)^g_t + reach sigma, g_t = 30 - 5 (t-1)/T.
    - HS-DCFR: R = R d + r with d = (t-1)^a/((t-1)^a + 1), a = 1 + 3p if R > 0 else -1 - 2p,
      p = (t-1)/T; play R^+ normalized; the same average.
    - APCFR+ (Meng et al. 2026, section 4.1 and eq. 3): R' = [R + r]^+, play
      [R' + r/(1 + alpha)]^+ normalized, alpha = min(sqrt(sum ||r - r_prev||^2 / sum ||R' - R||^2), 5);
      average weights t^2.
    """

    def __init__(self, game, variant):
        super().__init__(game)
        self.variant = variant
        self.prev, self.dr2, self.dR2 = {}, {}, {}

    def _gamma(self):
        return 2.0 if self.variant == "apcfr+" else 30.0 - 5.0 * min((self.t - 1) / HORIZON, 1.0)

    def iterate(self):
        self.t += 1
        t = self.t
        for player in (0, 1):
            inst, reach = {}, {}
            self._walk(self.root, player, 1.0, 1.0, inst, reach)
            for key in inst:
                r = inst[key]
                self.cumulative[key] = self.cumulative[key] * ((t - 1) / t) ** self._gamma() + reach[key] * self.strategy[key]
                R = self.regret[key]
                if self.variant == "hs-dcfr":
                    p = (t - 1) / HORIZON
                    d = np.where(R > 0, (t - 1) ** (1 + 3 * p) / ((t - 1) ** (1 + 3 * p) + 1),
                                 (1 / (t - 1) ** (1 + 2 * p)) / (1 / (t - 1) ** (1 + 2 * p) + 1) if t > 1 else 0.0)
                    R = R * d + r
                    q = np.maximum(R, 0.0)
                elif self.variant == "hs-pcfr+":
                    R = np.maximum(R + r, 0.0)
                    q = np.maximum(R + r, 0.0)
                else:
                    R_new = np.maximum(R + r, 0.0)
                    prev = self.prev.get(key, np.zeros_like(r))
                    self.dr2[key] = self.dr2.get(key, 0.0) + np.sum((r - prev) ** 2)
                    self.dR2[key] = self.dR2.get(key, 0.0) + np.sum((R_new - R) ** 2)
                    if self.dR2[key] > 0:
                        alpha = min(math.sqrt(self.dr2[key] / self.dR2[key]), 5.0)
                    else:
                        alpha = 5.0 if self.dr2[key] > 0 else 0.0
                    self.prev[key] = r
                    R = R_new
                    q = np.maximum(R + r / (1 + alpha), 0.0)
                self.regret[key] = R
                n = len(q)
                self.strategy[key] = q / q.sum() if q.sum() > 0 else np.full(n, 1.0 / n)


@pytest.mark.parametrize("variant", ["hs-pcfr+", "hs-dcfr", "apcfr+"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_first_iterates_match_the_papers_equations_on_the_tree(variant, seed):
    game = random_game(seed)
    p = tp.compile_game(game)
    kw = {} if variant == "apcfr+" else {"horizon": HORIZON}
    solver = ALGORITHMS[variant](p, **kw)
    ref = ReferenceVariant(game, variant)
    for _ in range(12):
        solver.step()
        ref.iterate()
        cur = {**_local(p.X, solver.players[0].b, 0), **_local(p.Y, solver.players[1].b, 1)}
        avg_x, avg_y = solver.average()
        avg = {**_behavioral(p.X, avg_x, 0), **_behavioral(p.Y, avg_y, 1)}
        mass = {**_infoset_mass(p.X, avg_x, 0), **_infoset_mass(p.Y, avg_y, 1)}
        for key, sigma in ref.strategy.items():
            k = (key[0], str(key[1]))
            np.testing.assert_allclose(cur[k], sigma, rtol=0, atol=1e-10)
            if mass[k] > UNREACHED_TOL:
                np.testing.assert_allclose(avg[k], ref.average(key), rtol=0, atol=1e-10)
            else:  # unreached by the average plan (its actions carry <= 1e-12 of x[0]): uniform
                np.testing.assert_allclose(avg[k], 1.0 / len(sigma), rtol=0, atol=0)


def _infoset_mass(T, plan, player):
    """Each infoset's share of the plan: the sum of its actions' entries (x[0] = 1)."""
    return {(player, str(key)): plan[T.start[j] : T.end[j]].sum() for j, key in enumerate(T.infoset_keys)}


# ------------------------------------------------------------ hand-computed on a one-infoset game


def _one_infoset_game():
    """Player 0 picks a, b, c worth 2, 1, -3; player 1's single move does not matter."""
    leaf = {"a": 2.0, "b": 1.0, "c": -3.0}
    opp = {k: tp.decision(1, "o", {"x": tp.terminal(v)}) for k, v in leaf.items()}
    return tp.compile_game(tp.ExplicitGame(tp.decision(0, "p", opp)))


def test_apcfr_plus_third_strategy_by_hand():
    # t=1: uniform, value 0, r1 = (2, 1, -3), R2 = (2, 1, 0).
    # t=2: sigma2 = (2/3, 1/3, 0) (R2 + r1/(1+alpha) is proportional to (2, 1, 0)),
    #      value 5/3, r2 = (1/3, -2/3, -14/3), R3 = (7/3, 1/3, 0).
    # alpha3 = sqrt((14 + 25/3) / (5 + 5/9)) = sqrt(4.02); lam = 1/(1 + alpha3);
    # sigma3 = normalize(7/3 + lam/3, 1/3 - 2 lam/3, 0).
    p = _one_infoset_game()
    s = ALGORITHMS["apcfr+"](p)
    s.step()
    np.testing.assert_allclose(s.players[0].b[1:], [2 / 3, 1 / 3, 0.0], atol=1e-15)
    s.step()
    lam = 1.0 / (1.0 + math.sqrt(4.02))
    q = np.array([7 / 3 + lam / 3, 1 / 3 - 2 * lam / 3, 0.0])
    np.testing.assert_allclose(s.players[0].b[1:], q / q.sum(), atol=1e-15)
    np.testing.assert_allclose(s.players[0].R[1:], [7 / 3, 1 / 3, 0.0], atol=1e-15)
    assert s.alphas(0)[0] == pytest.approx(math.sqrt(4.02), rel=1e-14)
    # SAPCFR+ (alpha = 2) and PCFR+ (alpha = 0) play other third strategies
    for name, lam2 in (("sapcfr+", 1 / 3), ("pcfr+", 1.0)):
        o = ALGORITHMS[name](p)
        o.step(), o.step()
        q2 = np.maximum([7 / 3 + lam2 / 3, 1 / 3 - 2 * lam2 / 3, 0.0], 0.0)
        np.testing.assert_allclose(o.players[0].b[1:], q2 / q2.sum(), atol=1e-15)
        assert np.abs(o.players[0].b[1:] - s.players[0].b[1:]).max() > 1e-4  # alpha3 = 2.005: 1.4e-4 from SAPCFR+


def test_hs_schedules_by_hand():
    p = _one_infoset_game()
    T = 10
    # HS-PCFR+: after 2 iterations the average is (sigma1 (1/2)^g2 + sigma2) / ((1/2)^g2 + 1),
    # g2 = 30 - 5 (2-1)/T = 29.5; sigma1 uniform, sigma2 = (2/3, 1/3, 0)
    s = ALGORITHMS["hs-pcfr+"](p, horizon=T)
    s.step(), s.step()
    w = 0.5 ** 29.5
    expected = (np.full(3, 1 / 3) * w + np.array([2 / 3, 1 / 3, 0.0])) / (w + 1)
    np.testing.assert_allclose(s.average()[0][1:], expected, rtol=1e-14)
    # HS-DCFR: R2 = r1 = (2, 1, -3); at t=2 both discounts are 1^a/(1^a+1) = 1/2, so
    # R3 = R2/2 + r2 = (1 + 1/3, 1/2 - 2/3, -3/2 - 14/3); at t=3, with p = 2/T = 0.2,
    # positive regrets x 2^1.6/(2^1.6+1) and negative ones x 2^-1.4/(2^-1.4+1).
    d = ALGORITHMS["hs-dcfr"](p, horizon=T)
    d.step(), d.step()
    R3 = np.array([4 / 3, -1 / 6, -37 / 6])
    np.testing.assert_allclose(d.players[0].R[1:], R3, atol=1e-14)
    np.testing.assert_allclose(d.players[0].b[1:], [1.0, 0.0, 0.0])
    d.step()  # sigma3 = (1, 0, 0): value 2, r3 = (0, -1, -5)
    dp, dn = 2**1.6 / (2**1.6 + 1), 2**-1.4 / (2**-1.4 + 1)
    np.testing.assert_allclose(d.players[0].R[1:], R3 * np.array([dp, dn, dn]) + [0.0, -1.0, -5.0], atol=1e-14)
    # the schedule ends at (4, -3, 25) and stays there after the horizon
    assert d.regrets(T + 1)[:2] == (T**4 / (T**4 + 1), T**-3 / (T**-3 + 1))
    assert d.regrets(5 * T)[0] == pytest.approx((5 * T - 1) ** 4 / ((5 * T - 1) ** 4 + 1), rel=1e-15)
    assert d.averaging(T + 1)[0] == (T / (T + 1)) ** 25


# ------------------------------------------------------------ LP value on Kuhn (-1/18) and Leduc

# Gap (2 x exploitability) after 2000 iterations with horizon 2000 where the variant has
# one; bounds about 2-3x the measured gap (in the comments).
BOUNDS = {
    "hs-pcfr+": (2e-14, 2e-3),  # 1.0e-15, 1.06e-3
    "hs-dcfr": (1.2e-3, 1e-3),  # 4.2e-4, 4.6e-4
    "apcfr+": (8e-9, 5e-4),  # 2.7e-9, 1.65e-4
}


@pytest.fixture(scope="module")
def games():
    out = {}
    for name in ("kuhn", "leduc"):
        p = tp.compile_game(tp.make_game(name))
        out[name] = (p, tp.solve_lp(p))
    return out


@pytest.mark.parametrize("algorithm", sorted(BOUNDS))
@pytest.mark.parametrize("game", ["kuhn", "leduc"])
def test_converges_to_the_lp_value(games, game, algorithm):
    p, lp = games[game]
    kw = {} if algorithm == "apcfr+" else {"horizon": 2000}
    res = solve(p, algorithm, max_iters=2000, check_every=2000, **kw)
    if game == "kuhn":
        assert lp.value == pytest.approx(-1 / 18, abs=1e-12)
    assert p.X.is_plan(res.x) and p.Y.is_plan(res.y)
    assert res.gap <= BOUNDS[algorithm][0 if game == "kuhn" else 1]
    assert abs(res.value - lp.value) <= res.gap + 1e-12
    assert res.gradients == 4000


class Crash(Exception):
    pass


@pytest.mark.parametrize("algorithm", sorted(BOUNDS))
def test_resume_reproduces_the_uninterrupted_run(tmp_path, games, algorithm):
    p, _ = games["leduc"]
    kw = dict(max_iters=100, check_every=20)
    full = solve(p, algorithm, **kw)
    path = str(tmp_path / "run.npz")

    def crash_at_iteration_60(solver, row):
        if row["iteration"] == 60:
            raise Crash

    with pytest.raises(Crash):
        solve(p, algorithm, checkpoint=path, on_check=crash_at_iteration_60, **kw)
    resumed = solve(p, algorithm, resume=path, **kw)
    np.testing.assert_array_equal(resumed.x, full.x)
    np.testing.assert_array_equal(resumed.current[1], full.current[1])


@pytest.mark.parametrize("algorithm", sorted(BOUNDS))
def test_warm_start_from_the_lp_solution(games, algorithm):
    p, lp = games["leduc"]
    solver = ALGORITHMS[algorithm](p, prior=(lp.x, lp.y))
    assert tp.evaluate(p, *solver.current()).gap <= 1e-9
    solver.step()
    assert tp.evaluate(p, *solver.average()).gap <= 1e-9  # the first iterate played is the prior


def test_bad_parameters_are_refused(games):
    p, _ = games["kuhn"]
    for algorithm, kw in (("hs-pcfr+", {"horizon": 0}), ("hs-dcfr", {"gamma0": 1.0}), ("apcfr+", {"alpha_max": -1})):
        with pytest.raises(tp.InputError):
            solve(p, algorithm, max_iters=1, **kw)
