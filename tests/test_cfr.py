"""The CFR family: against a tree-walking reference, published curves, the LP, and itself resumed."""

import numpy as np
import pytest
from random_games import random_game

import treeplex as tp
from treeplex.run.driver import solve
from treeplex.run.schedule import toward_target
from treeplex.solvers import ALGORITHMS
from treeplex.model.strategy import behavioral_dict

CFR_FAMILY = ["cfr", "cfr-rm+", "cfr+", "lcfr", "dcfr", "dcfr+", "pcfr+", "sapcfr+", "pdcfr+", "hedge", "dual-averaging"]


@pytest.fixture(scope="module")
def games():
    out = {}
    for name in ("kuhn", "leduc"):
        p = tp.compile_game(tp.make_game(name))
        out[name] = (p, tp.solve_lp(p))
    return out


# ---------------------------------------------------------------- reference CFR+


class ReferenceCFRPlus:
    """Plain CFR+ walking the game tree (Tammelin et al. 2015): regret matching+ at every
    infoset, alternating updates (player 0 then player 1), and the average strategy
    accumulating each player's own reach times its strategy with weight t (iteration t,
    counted from 1). Kept readable on purpose; it shares no code with treeplex's solvers."""

    def __init__(self, game):
        self.root = game.initial_state()
        self.t = 0
        self.regret, self.strategy, self.cumulative = {}, {}, {}

    def _infoset(self, node):
        key = (node.player(), node.infoset_key())
        if key not in self.regret:
            n = len(node.legal_actions())
            self.regret[key] = np.zeros(n)
            self.strategy[key] = np.full(n, 1.0 / n)
            self.cumulative[key] = np.zeros(n)
        return key

    def _walk(self, node, player, own_reach, other_reach, inst, reach):
        """Expected payoff for ``player`` below ``node`` under the current strategies."""
        if node.is_terminal():
            u = node.payoff()
            return u if player == 0 else -u
        if node.is_chance():
            return sum(p * self._walk(node.apply(a), player, own_reach, other_reach * p, inst, reach)
                       for a, p in node.chance_outcomes())
        key = self._infoset(node)
        sigma = self.strategy[key]
        actions = node.legal_actions()
        if node.player() != player:
            return sum(sigma[i] * self._walk(node.apply(a), player, own_reach, other_reach * sigma[i], inst, reach)
                       for i, a in enumerate(actions))
        values = np.array([self._walk(node.apply(a), player, own_reach * sigma[i], other_reach, inst, reach)
                           for i, a in enumerate(actions)])
        value = sigma @ values
        inst[key] = inst.get(key, 0.0) + other_reach * (values - value)
        reach[key] = own_reach  # the same at every node of the infoset (perfect recall)
        return value

    def iterate(self):
        self.t += 1
        for player in (0, 1):
            inst, reach = {}, {}
            self._walk(self.root, player, 1.0, 1.0, inst, reach)
            for key in inst:
                self.cumulative[key] += self.t * reach[key] * self.strategy[key]
                self.regret[key] = np.maximum(self.regret[key] + inst[key], 0.0)
                pos = self.regret[key]
                n = len(pos)
                self.strategy[key] = pos / pos.sum() if pos.sum() > 0 else np.full(n, 1.0 / n)

    def average(self, key):
        c = self.cumulative[key]
        return c / c.sum() if c.sum() > 0 else np.full(len(c), 1.0 / len(c))


def _behavioral(T, plan, player):
    return {(player, key): np.array(list(probs.values())) for key, probs in behavioral_dict(T, plan).items()}


def _local(T, b, player):
    """Local strategies by (player, infoset key), also where the player's own plan is 0."""
    return {(player, str(key)): b[T.start[j] : T.end[j]] for j, key in enumerate(T.infoset_keys)}


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_first_ten_cfr_plus_iterates_match_tree_walking_reference(seed):
    game = random_game(seed)
    p = tp.compile_game(game)
    solver = ALGORITHMS["cfr+"](p)
    ref = ReferenceCFRPlus(game)
    for _ in range(10):
        solver.step()
        ref.iterate()
        cur = {**_local(p.X, solver.players[0].b, 0), **_local(p.Y, solver.players[1].b, 1)}
        avg_x, avg_y = solver.average()
        avg = {**_behavioral(p.X, avg_x, 0), **_behavioral(p.Y, avg_y, 1)}
        # infosets the walk never reached have no reference entry: the game has none here
        for key, sigma in ref.strategy.items():
            np.testing.assert_allclose(cur[(key[0], str(key[1]))], sigma, rtol=0, atol=1e-12)
            if ref.cumulative[key].sum() > 0:  # own reach > 0: the average is defined
                np.testing.assert_allclose(avg[(key[0], str(key[1]))], ref.average(key), rtol=0, atol=1e-12)
        assert len(ref.strategy) == p.X.n_infosets + p.Y.n_infosets


# ------------------------------------------------------ published curves (DDCFR)

# Exploitability (gap / 2) of the average strategy after T iterations, from the released
# results of Xu et al., ICLR 2024 (DDCFR), github.com/rpSebastian/DDCFR, files
# results/{CFR,CFRPlus,DCFR}/{KuhnPoker,LeducPoker}/data.csv (OpenSpiel games, alternating
# updates, averages weighted from t = 1). Kuhn's numbers are reproduced to rounding; Leduc's
# curves are chaotic in floating point after ~100 iterations, so we compare early points.
PUBLISHED = [
    ("kuhn", "cfr", 1000, 0.0009376166469940161),
    ("kuhn", "cfr+", 1000, 8.736532252065499e-05),
    ("kuhn", "dcfr", 1000, 0.0001465002281534622),
    ("kuhn", "cfr+", 10, 0.032687090668344715),
    ("leduc", "cfr+", 10, 0.6104389015904067),
    ("leduc", "cfr+", 50, 0.03412145649454963),
    ("leduc", "dcfr", 10, 0.7788020469962015),
    ("leduc", "dcfr", 50, 0.022921832286570437),
    ("leduc(suited=True)", "cfr+", 50, 0.03412145649454963),
]


@pytest.mark.parametrize("game,algorithm,T,expected", PUBLISHED)
def test_reproduces_published_ddcfr_curves(game, algorithm, T, expected):
    p = tp.compile_game(tp.make_game(game))
    res = solve(p, algorithm, max_iters=T, check_every=T)
    assert res.exploitability == pytest.approx(expected, rel=1e-8)


# ------------------------------------------------------------ convergence to the LP

# Gap (= 2 x exploitability) of the reported strategy after N iterations. Each bound is
# about 2-3x what the algorithm reaches, so the test fails if a variant regresses by more.
BOUNDS = {
    # algorithm: (iterations, kuhn bound, leduc bound); measured gaps in the comments
    "cfr": (2000, 3e-3, 4e-2),  # 1.1e-3, 1.5e-2
    "cfr-rm+": (2000, 1.5e-3, 2e-2),  # 5.2e-4, 7.0e-3
    "cfr+": (2000, 3e-4, 5e-4),  # 8.7e-5, 1.5e-4
    "lcfr": (2000, 3e-4, 2e-2),  # 9.1e-5, 7.2e-3
    "dcfr": (2000, 5e-4, 3e-4),  # 1.8e-4, 8.5e-5
    "dcfr+": (2000, 3e-4, 2.5e-4),  # 1.2e-4, 8.3e-5
    "pcfr+": (2000, 2e-8, 1.5e-3),  # 5.9e-9, 5.5e-4
    "sapcfr+": (2000, 8e-9, 5e-4),  # 2.7e-9, 1.7e-4
    "pdcfr+": (2000, 1e-12, 1e-3),  # 1.2e-15, 3.1e-4
    "hedge": (2000, 8e-3, 0.1),  # 2.8e-3, 3.8e-2
    "dual-averaging": (2000, 6e-3, 0.1),  # 2.2e-3, 3.1e-2
}


@pytest.mark.parametrize("algorithm", CFR_FAMILY)
@pytest.mark.parametrize("game", ["kuhn", "leduc"])
def test_every_algorithm_converges_to_the_lp_value(games, game, algorithm):
    p, lp = games[game]
    iters, *bounds = BOUNDS[algorithm]
    bound = bounds[0] if game == "kuhn" else bounds[1]
    res = solve(p, algorithm, max_iters=iters)
    assert p.X.is_plan(res.x) and p.Y.is_plan(res.y)
    assert res.gap <= bound
    # BR_1(x) <= v* <= BR_0(y) for every profile, so the value is within the gap of v*
    assert abs(res.value - lp.value) <= res.gap + 1e-12
    assert res.gradients == 2 * iters  # two products A y, A^T x per iteration


def test_sapcfr_plus_is_pcfr_plus_with_a_shorter_prediction_step(games):
    # SAPCFR+ plays max(R + r / (1 + alpha), 0): alpha = 0 is PCFR+ exactly, and the paper's
    # alpha = 2 beats PCFR+ on Leduc at T = 2000 (Meng et al., AAAI 2026: "outperform PCFR+
    # in most of the tested games"; measured 1.7e-4 against 5.5e-4).
    p, _ = games["leduc"]
    assert solve(p, "sapcfr+", max_iters=300, alpha=0.0).gap == solve(p, "pcfr+", max_iters=300).gap
    assert solve(p, "sapcfr+", max_iters=2000).gap < solve(p, "pcfr+", max_iters=2000).gap


def test_gap_bounds_are_not_vacuous(games):
    # The same runs with 10x fewer iterations miss the bounds: the bounds measure convergence.
    p, _ = games["leduc"]
    assert solve(p, "cfr+", max_iters=200).gap > BOUNDS["cfr+"][2]


def test_simultaneous_updates_converge(games):
    p, lp = games["kuhn"]
    res = solve(p, "cfr+", max_iters=2000, alternating=False)
    assert res.gap < 1e-2  # measured 3.8e-3
    assert abs(res.value - lp.value) <= res.gap + 1e-12
    # and they are a different algorithm from the default alternating one
    assert res.gap != solve(p, "cfr+", max_iters=2000).gap


def test_trace_reports_gap_of_average_and_current(games):
    p, _ = games["kuhn"]
    res = solve(p, "pcfr+", max_iters=100, check_every=10)
    assert [row["iteration"] for row in res.trace] == list(range(10, 101, 10))
    last = res.trace[-1]
    assert last["gap_average"] == pytest.approx(res.gap, abs=1e-15)
    assert last["gap_current"] == pytest.approx(tp.evaluate(p, *res.current).gap, abs=1e-15)
    assert [row["gradients"] for row in res.trace] == [2 * row["iteration"] for row in res.trace]


# ------------------------------------------------------------------ warm start


@pytest.mark.parametrize("algorithm", CFR_FAMILY)
def test_warm_start_from_the_lp_solution(games, algorithm):
    p, lp = games["leduc"]
    assert tp.evaluate(p, lp.x, lp.y).gap < 1e-9  # the LP is exact to rounding
    solver = ALGORITHMS[algorithm](p, prior=(lp.x, lp.y))
    assert tp.evaluate(p, *solver.current()).gap <= 1e-9
    assert tp.evaluate(p, *solver.average()).gap <= 1e-9
    solver.step()
    assert tp.evaluate(p, *solver.average()).gap <= 1e-9  # the first iterate played is the prior


@pytest.mark.parametrize("algorithm", ["cfr", "cfr-rm+", "cfr+", "dcfr", "pcfr+", "pdcfr+", "hedge"])
@pytest.mark.parametrize("game", ["kuhn", "leduc"])
def test_warm_started_iterates_stay_at_an_equilibrium_prior(games, game, algorithm):
    # At an equilibrium the counterfactual regrets vanish on the support and are <= 0 off it,
    # so regret matching on the recentered regrets (or KL-centered Hedge) keeps playing the
    # prior. (LCFR forgets the prior at rate 1/t, and dual averaging drifts: not tested.)
    p, lp = games[game]
    res = solve(p, ALGORITHMS[algorithm](p, prior=(lp.x, lp.y)), max_iters=100, check_every=1)
    assert max(row["gap_current"] for row in res.trace) <= 1e-9
    assert max(row["gap_average"] for row in res.trace) <= 1e-9
    cold = solve(p, algorithm, max_iters=100)
    assert cold.gap > 1e-7  # ... where a cold start is not (smallest: pdcfr+ on kuhn, 2.2e-7)


def test_warm_start_rejects_a_non_plan(games):
    p, lp = games["kuhn"]
    with pytest.raises(tp.InputError, match="player 0's prior is not a realization plan"):
        ALGORITHMS["cfr+"](p, prior=(2 * lp.x, lp.y))


# ------------------------------------------------------------------ restarting


def test_restarting_on_kuhn_reaches_machine_precision(games):
    # Measured: restarting CFR+ from its average each time the gap halves converges linearly
    # on Kuhn (5000 iterations: gap ~1e-15 with restarts, ~6e-5 without).
    p, lp = games["kuhn"]
    res = solve(p, "cfr+", max_iters=5000, restart=True)
    plain = solve(p, "cfr+", max_iters=5000)
    assert res.gap < 1e-10 < plain.gap
    assert abs(res.value - lp.value) <= res.gap + 1e-12
    assert len({row["restart_gap"] for row in res.trace}) > 10  # it did restart, many times


def test_restart_needs_a_restartable_solver(games):
    p, _ = games["kuhn"]
    with pytest.raises(tp.InputError, match="does not support restarting"):
        solve(p, "egt", max_iters=10, restart=True)


# ------------------------------------------------------------ checkpoint / resume


class Crash(Exception):
    pass


@pytest.mark.parametrize("algorithm", ["cfr+", "pdcfr+", "hedge", "dual-averaging"])
@pytest.mark.parametrize("restart", [False, True])
def test_resume_reproduces_the_uninterrupted_run(tmp_path, games, algorithm, restart):
    p, _ = games["leduc"]
    kw = dict(max_iters=300, check_every=20, restart=restart)
    full = solve(p, algorithm, **kw)
    path = str(tmp_path / "run.npz")

    def crash_at_iteration_140(solver, row):
        if row["iteration"] == 140:
            raise Crash

    with pytest.raises(Crash):  # killed mid-way, after the checkpoint of iteration 120
        solve(p, algorithm, checkpoint=path, on_check=crash_at_iteration_140, **kw)
    resumed = solve(p, algorithm, resume=path, **kw)
    assert resumed.iterations == full.iterations == 300
    np.testing.assert_array_equal(resumed.x, full.x)
    np.testing.assert_array_equal(resumed.y, full.y)
    np.testing.assert_array_equal(resumed.current[0], full.current[0])
    np.testing.assert_array_equal(resumed.current[1], full.current[1])
    strip = [{k: v for k, v in row.items() if k != "seconds"} for row in full.trace]
    assert [{k: v for k, v in row.items() if k != "seconds"} for row in resumed.trace] == strip
    assert resumed.gradients == full.gradients


def test_resume_refuses_another_game(tmp_path, games):
    path = str(tmp_path / "run.npz")
    solve(games["kuhn"][0], "cfr+", max_iters=5, checkpoint=path)
    with pytest.raises(tp.InputError, match="checkpoint is for"):
        solve(games["leduc"][0], "cfr+", max_iters=10, resume=path)


# --------------------------------------------------- fused kernel vs generic path


class OpaqueOperator(tp.PayoffOperator):
    """The same matrix behind the generic operator protocol (no CSR access)."""

    def __init__(self, inner):
        self.inner, self.shape, self.gradients = inner, inner.shape, 0

    def _matvec(self, y):
        return self.inner.matvec(y, count=False)

    def _rmatvec(self, x):
        return self.inner.rmatvec(x, count=False)


@pytest.mark.parametrize("algorithm", ["cfr", "cfr+", "lcfr", "pcfr+", "pdcfr+",
                                       *(pytest.param(a, marks=pytest.mark.slow) for a in ("dcfr", "hedge"))])
@pytest.mark.parametrize("alternating", [True, False])
def test_fused_iteration_equals_the_generic_path(algorithm, alternating):
    p = tp.compile_game(random_game(7))
    q = tp.Problem(p.X, p.Y, OpaqueOperator(p.A), name="opaque")
    fused, generic = ALGORITHMS[algorithm](p, alternating=alternating), ALGORITHMS[algorithm](q, alternating=alternating)
    for _ in range(30):
        fused.step()
        generic.step()
    for a, b in zip(fused.average() + fused.current(), generic.average() + generic.current()):
        np.testing.assert_array_equal(a, b)
    assert fused.gradients == generic.gradients == 60


# ------------------------------------------------------------ reported strategy


def test_report_current_or_best_iterate(games):
    p, _ = games["leduc"]
    avg = solve(p, "pcfr+", target_gap=2e-6, check_every=100)
    best = solve(p, "pcfr+", target_gap=2e-6, check_every=100, report="best")
    # measured: PCFR+'s last iterate reaches the target first (18700 vs 25400 iterations)
    assert best.stopped_by == avg.stopped_by == "target"
    assert best.iterations < avg.iterations and best.gap <= 2e-6
    np.testing.assert_array_equal(best.x, best.current[0])  # ... and is the one reported
    cur = solve(p, "cfr+", max_iters=50, report="current")
    np.testing.assert_array_equal(cur.x, cur.current[0])
    assert cur.gap == pytest.approx(cur.trace[-1]["gap_current"], abs=1e-15)
    with pytest.raises(tp.InputError, match="report must be one of"):
        solve(p, "cfr+", max_iters=5, report="last")


def test_restarting_cfr_plus_on_leduc(games):
    # Measured (experiments/cfr_family.py): restarting CFR+ from its average (weight 10) each
    # time the gap halves gives gap 2.1e-8 at 20000 iterations on Leduc; plain CFR+ 8.8e-6.
    p, lp = games["leduc"]
    res = solve(p, "cfr+", max_iters=20000, restart=True)
    assert res.gap < 1e-7
    assert solve(p, "cfr+", max_iters=20000).gap > 1e-6
    assert abs(res.value - lp.value) <= res.gap + 1e-12


def test_gradient_grid_stops_at_budget_and_passes_every_grid_point():
    # CFR+ makes exactly 2 products per iteration, so with budget 100 it stops at 100, and
    # the yields fall at the first even counts >= each point of the log grid 4..100.
    from treeplex.run.driver import gradient_grid, make_solver

    p = tp.compile_game(tp.make_game("kuhn"))
    s = make_solver(p, "cfr+")
    counts = [s.gradients for _ in gradient_grid(s, budget=100, n_points=10)]
    grid = np.unique(np.geomspace(4, 100, 10).astype(int))
    assert counts[-1] == 100
    assert counts == sorted({int(g + g % 2) for g in grid})


def test_checks_move_toward_the_target():
    # gap = 0.2 / t: from (100, 2e-3) and (200, 1e-3), a target of 0.95e-3 is crossed at t = 210.5
    assert toward_target(200, 220, (100, 2e-3), 1e-3, 0.95e-3) == 211
    assert toward_target(200, 220, (100, 2e-3), 1e-3, 0.9e-3) == 220  # crossing 222.2: the schedule comes first
    assert toward_target(200, 220, (100, 2e-3), 1e-3, 0.999e-3) == 202  # crossing 200.2: at least 1% on
    assert toward_target(200, 220, (100, 2e-3), 1e-3, 0.4e-3) == 220  # gap > 2x target: schedule only
    assert toward_target(200, 220, (100, 1e-3), 2e-3, 1.5e-3) == 220  # gap went up: no extrapolation
    assert toward_target(200, 220, None, 1e-3, 0.95e-3) == 220


def test_target_runs_stop_at_the_first_check_below_the_target(games):
    p, _ = games["leduc"]
    r = solve(p, "cfr+", target_gap=1e-3)
    assert r.stopped_by == "target" and r.gap <= 1e-3
    assert all(row["gap_average"] > 1e-3 for row in r.trace[:-1])


def test_a_deadline_stops_the_iterations_on_the_wall_clock(games):
    """``deadline`` (a ``time.perf_counter()`` time): a deadline already past stops the run
    after its first iteration, whatever its other rules allow (``stopped_by`` "deadline"); a
    far one changes nothing (the same iterates as without it)."""
    import time

    p, _ = games["leduc"]
    r = solve(p, "dcfr", max_iters=10**6, deadline=time.perf_counter())
    assert r.stopped_by == "deadline" and r.iterations == 1
    far = solve(p, "dcfr", max_iters=50, deadline=time.perf_counter() + 3600)
    plain = solve(p, "dcfr", max_iters=50)
    assert far.stopped_by == plain.stopped_by == "max_iters"
    np.testing.assert_array_equal(far.x, plain.x)


def test_resume_of_a_target_run_keeps_its_check_schedule(tmp_path, games):
    p, _ = games["leduc"]
    full = solve(p, "cfr+", target_gap=1e-3)
    crash_at = full.trace[-2]["iteration"]  # resumes from the check before, which aimed at this one
    path = str(tmp_path / "run.npz")

    def crash(solver, row):
        if row["iteration"] == crash_at:
            raise Crash

    with pytest.raises(Crash):
        solve(p, "cfr+", target_gap=1e-3, checkpoint=path, on_check=crash)
    resumed = solve(p, "cfr+", target_gap=1e-3, resume=path)
    assert [r["iteration"] for r in resumed.trace] == [r["iteration"] for r in full.trace]
    np.testing.assert_array_equal(resumed.x, full.x)
