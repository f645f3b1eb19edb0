"""EGT, EGT/as and mirror prox with the dilated entropy.

Expected numbers come from outside the solvers: the LP value (treeplex.model.lp.solve_lp) and the
known game values, Nesterov's bounds (excessive gap condition => gap <= mu_x Omega_X +
mu_y Omega_Y; EGT rate 4 ||A|| / (T+1) sqrt(Omega_X Omega_Y / (phi_X phi_Y)); mirror prox
gap <= (mu_x Omega_X + mu_y Omega_Y) / T), and raw calls to the payoff operator for the
gradient accounting.
"""

import json
import math

import numpy as np
import pytest

from treeplex.cli import main as cli_main
from treeplex.model.compile import compile_game
from treeplex.core.dilated_entropy import DilatedEntropy, prox, smoothed_best_response
from treeplex.run.driver import make_solver, solve
from treeplex.errors import InputError
from treeplex.games import make_game
from treeplex.model.lp import solve_lp
from treeplex.model.metrics import evaluate
from treeplex.model.problem import PayoffOperator, Problem
from treeplex.solvers.egt import TUNE_ITERS, TUNE_SCALES, theory_mu

KUHN_VALUE = -1.0 / 18.0  # player 0's value of Kuhn poker (Kuhn 1950)


@pytest.fixture(scope="module")
def games():
    return {name: compile_game(make_game(name)) for name in ("kuhn", "leduc")}


def excessive_gap(problem, x, y, mu_x, mu_y, weights="egt"):
    """f(x) - phi(y) from the definitions (section 2), with uncounted products:
    f(x) = min_y <A^T x, y> + mu_y d_Y(y),  phi(y) = max_x <A y, x> - mu_x d_X(x)."""
    dx, dy = DilatedEntropy(problem.X, weights), DilatedEntropy(problem.Y, weights)
    _, neg_f = smoothed_best_response(problem.Y, dy.beta, -problem.A.rmatvec(x, count=False), mu_y)
    _, phi = smoothed_best_response(problem.X, dx.beta, problem.A.matvec(y, count=False), mu_x)
    return -neg_f - phi


@pytest.mark.parametrize("game,iters", [("kuhn", 300), ("leduc", 120)])
@pytest.mark.parametrize("algorithm,params", [
    ("egt", {"mu": "theory", "balance": False}),  # Algorithm 1 exactly: the theory's setting
    ("egt-as", {}),  # Algorithms 3-4 with the tuned mu
])
def test_excessive_gap_condition_and_bound_at_every_iterate(games, game, iters, algorithm, params):
    p = games[game]
    s = make_solver(p, algorithm, **params)
    omega_x, omega_y = s.dgf[0].omega, s.dgf[1].omega
    for t in range(iters + 1):
        x, y = s.average()
        egv = excessive_gap(p, x, y, s.mu_x, s.mu_y)
        assert egv >= -1e-12 * (1 + abs(egv)), f"EGC fails at iterate {t}: EGV = {egv}"
        assert s.excessive_gap() == pytest.approx(egv, rel=1e-9, abs=1e-12)
        gap = evaluate(p, x, y).gap
        assert gap <= s.mu_x * omega_x + s.mu_y * omega_y + 1e-12
        s.step()
    if algorithm == "egt-as":
        assert s.backtracks > 0  # the backtracking path was exercised


@pytest.mark.parametrize("game", ["kuhn", "leduc"])
def test_step_equals_algorithm_2_with_the_prox_mapping(games, game):
    """Algorithm 2 written out literally, line 3 by the shifted-gradient prox of section 4,
    with fresh (uncounted) products: the solver's cached-gradient step with x~ = x_{mu+}(y+)
    follows it to rounding (Algorithm 1: alternating, tau = 2 / (t + 3))."""
    p = games[game]
    A = p.A
    s = make_solver(p, "egt", mu=0.01, balance=False)
    bx, by = s.dgf[0].beta, s.dgf[1].beta
    x, y, mx, my = s.x.copy(), s.y.copy(), s.mu_x, s.mu_y
    for t in range(40):
        tau = 2.0 / (t + 3)
        if t % 2 == 0:  # step on x
            xm = smoothed_best_response(p.X, bx, A.matvec(y, count=False), mx)[0]
            xh = (1 - tau) * x + tau * xm
            yh = smoothed_best_response(p.Y, by, -A.rmatvec(xh, count=False), my)[0]
            xt = prox(p.X, bx, xm, tau / (1 - tau) * A.matvec(yh, count=False), mx)[0]
            x, y, mx = (1 - tau) * x + tau * xt, (1 - tau) * y + tau * yh, (1 - tau) * mx
        else:  # the same with the roles swapped (y maximizes -x^T A y)
            ym = smoothed_best_response(p.Y, by, -A.rmatvec(x, count=False), my)[0]
            yh = (1 - tau) * y + tau * ym
            xh = smoothed_best_response(p.X, bx, A.matvec(yh, count=False), mx)[0]
            yt = prox(p.Y, by, ym, -tau / (1 - tau) * A.rmatvec(xh, count=False), my)[0]
            x, y, my = (1 - tau) * x + tau * xh, (1 - tau) * y + tau * yt, (1 - tau) * my
        s.step()
        # rounding differences in the gradients are amplified by 1 / mu (~1e3 here)
        assert np.abs(s.x - x).max() < 1e-8 and np.abs(s.y - y).max() < 1e-8
        assert (s.mu_x, s.mu_y) == pytest.approx((mx, my), rel=1e-14)


class DelegatingPayoff(PayoffOperator):
    """The same A behind the generic operator interface: EGT then takes its generic path."""

    def __init__(self, inner):
        self.inner, self.shape, self.gradients = inner, inner.shape, 0

    def _matvec(self, y):
        return self.inner.matvec(y, count=False)

    def _rmatvec(self, x):
        return self.inner.rmatvec(x, count=False)

    def to_sparse(self):
        return self.inner.to_sparse()


def test_egt_theory_rate(games):
    """Algorithm 1 with mu_x mu_y = ||A||^2 / (phi_X phi_Y) (section 2's theorem):
    gap(x^T, y^T) <= 4 ||A|| / (T + 1) sqrt(Omega_X Omega_Y / (phi_X phi_Y)) for T >= 1."""
    p = games["kuhn"]
    s = make_solver(p, "egt", mu="theory", balance=False)
    dx, dy = s.dgf
    const = 4 * p.A.max_abs_entry() * math.sqrt(dx.omega * dy.omega / (dx.modulus * dy.modulus))
    for T in range(1, 200):
        s.step()
        assert evaluate(p, *s.average()).gap <= const / (T + 1)


def test_mirror_prox_theory_bound(games):
    """Mirror prox with mu_x mu_y >= ||A||^2 / (phi_X phi_Y): the averaged extragradient
    points have gap <= (mu_x Omega_X + mu_y Omega_Y) / T (Nemirovski 2004)."""
    for game in ("kuhn", "leduc"):
        p = games[game]
        s = make_solver(p, "mirror-prox", mu="theory")
        bound = s.mu_x * s.dgf[0].omega + s.mu_y * s.dgf[1].omega
        for T in range(1, 60):
            s.step()
            assert evaluate(p, *s.average()).gap <= bound / T


@pytest.mark.parametrize("algorithm", ["egt", "egt-as", "mirror-prox"])
def test_converges_to_the_lp_value(games, algorithm):
    for game, target in (("kuhn", 1e-4), ("leduc", 2e-2)):
        p = games[game]
        lp_value = solve_lp(p).value
        r = solve(p, algorithm, target_gap=target, max_iters=20000)
        assert r.stopped_by == "target", (game, r.gap)
        # any profile with gap G has value within G of the game value
        assert abs(r.value - lp_value) <= r.gap
        assert p.X.is_plan(r.x) and p.Y.is_plan(r.y)
    assert lp_value == pytest.approx(-0.0856064, abs=1e-7)  # Leduc's value (player 0)


def test_kuhn_value_to_high_precision(games):
    r = solve(games["kuhn"], "egt-as", target_gap=1e-5, max_iters=50000)
    assert r.stopped_by == "target"
    assert abs(r.value - KUHN_VALUE) <= r.gap


@pytest.mark.parametrize("algorithm,per_iter", [("egt", 3), ("egt-as", 3), ("mirror-prox", 4)])
def test_gradient_accounting_is_honest(games, algorithm, per_iter):
    """Each solver step's raw operator calls equal the change of its gradient count:
    EGT 3 per iteration, EGT/as 3 per iteration + 2 per backtrack, mirror prox 4."""
    leduc = games["leduc"]
    p = Problem(leduc.X, leduc.Y, DelegatingPayoff(leduc.A))
    s = make_solver(p, algorithm)
    calls = [0]
    op = p.A
    orig_mv, orig_rmv = op._matvec, op._rmatvec

    def mv(v):
        calls[0] += 1
        return orig_mv(v)

    def rmv(v):
        calls[0] += 1
        return orig_rmv(v)

    op._matvec, op._rmatvec = mv, rmv
    try:
        for _ in range(60):
            before, raw, bt = s.gradients, calls[0], getattr(s, "backtracks", 0)
            s.step()
            made = calls[0] - raw
            assert s.gradients - before == made
            assert made == per_iter + 2 * (getattr(s, "backtracks", 0) - bt)
    finally:
        op._matvec, op._rmatvec = orig_mv, orig_rmv


def test_mu_tuning_picks_the_best_scale():
    """EFPE paper, section 4: the weight s among 1, 0.1, 0.05, 0.01, 0.005 (mu = s max|A_ij|)
    with the smallest gap after 20 iterations; tuning products are reported apart."""
    p = compile_game(make_game("kuhn"))
    a = p.A.max_abs_entry()
    gaps = []
    for scale in TUNE_SCALES:
        trial = make_solver(p, "egt", mu=a * scale)
        for _ in range(TUNE_ITERS):
            trial.step()
        gaps.append(evaluate(p, *trial.average()).gap)
    s = make_solver(p, "egt")
    assert s.mu_scale == TUNE_SCALES[int(np.argmin(gaps))]
    assert (s.mu_x, s.mu_y) == (a * s.mu_scale, a * s.mu_scale)
    assert s.tune_gradients == len(TUNE_SCALES) * (3 + 3 * TUNE_ITERS)  # init 3, then 3 per iteration
    assert s.gradients == 3  # only its own initial point


def test_theory_mu_satisfies_nesterovs_condition(games):
    p = games["leduc"]
    dx, dy = DilatedEntropy(p.X), DilatedEntropy(p.Y)
    mx, my = theory_mu(p, dx, dy)
    assert mx * my == pytest.approx(p.A.max_abs_entry() ** 2 / (dx.modulus * dy.modulus), rel=1e-12)
    assert mx * dx.omega == pytest.approx(my * dy.omega, rel=1e-12)
    assert p.A.max_abs_entry() == np.abs(p.A.to_sparse().toarray()).max()


@pytest.mark.parametrize("algorithm", ["egt", "egt-as", "mirror-prox"])
def test_resume_is_bit_for_bit(algorithm):
    # two problems: solvers sharing one operator would share its gradient counter
    p, q = compile_game(make_game("kuhn")), compile_game(make_game("kuhn"))
    a = make_solver(p, algorithm, mu=0.05)
    for _ in range(15):
        a.step()
    state = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in a.state_dict().items()}
    for _ in range(15):
        a.step()
    b = make_solver(q, algorithm, mu=0.05)
    b.load_state_dict(state)
    for _ in range(15):
        b.step()
    for u, v in zip(a.average() + a.current(), b.average() + b.current()):
        assert np.array_equal(u, v)
    assert a.gradients == b.gradients and a.iteration == b.iteration


def test_weights_option_and_bad_mu(games):
    p = games["kuhn"]
    r = solve(p, "egt-as", target_gap=1e-3, max_iters=5000, weights="kroer2017")
    assert r.stopped_by == "target"
    for bad in ("fast", -1.0, (1.0, 0.0), (1.0, 2.0, 3.0)):
        with pytest.raises(InputError, match="mu must be"):
            make_solver(p, "egt", mu=bad)


def test_cli_solve_json(capsys):
    code = cli_main(["solve", "kuhn", "--algorithm", "egt-as", "--max-iters", "300", "--json", "--no-strategies"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm"] == "egt-as"
    assert out["gap"] < 1e-2 and abs(out["value"] - KUHN_VALUE) <= out["gap"]
    assert out["gradients"] >= 3 * 300


def test_trace_records_mu_tau_and_excessive_gap(games):
    r = solve(games["kuhn"], "egt-as", max_iters=50, check_every=10)
    for row in r.trace:
        assert {"mu_x", "mu_y", "tau", "excessive_gap"} <= row.keys()
        assert row["excessive_gap"] >= 0
        assert row["gap_average"] <= row["gap_bound"]


def test_egt_as_raises_a_too_small_initial_mu_until_the_condition_holds(games):
    """Algorithm 4 needs EGV >= 0 to start from; with mu = 1e-6 on Kuhn the initial point
    violates it, so both mu are doubled (keeping their ratio) until it holds."""
    p = games["kuhn"]
    s = make_solver(p, "egt-as", mu=(1e-6, 2e-6))
    assert s.mu_x > 1e-6 and s.mu_y == pytest.approx(2 * s.mu_x, rel=1e-15)
    assert math.log2(s.mu_x / 1e-6) == int(math.log2(s.mu_x / 1e-6))  # a power of two
    assert excessive_gap(p, s.x, s.y, s.mu_x, s.mu_y) >= 0
    half = make_solver(p, "egt", mu=(s.mu_x / 2, s.mu_y / 2))  # Algorithm 1's initial point, no doubling
    assert excessive_gap(p, half.x, half.y, half.mu_x, half.mu_y) < 0
