"""Approximate EFPE: the perturbed game Gamma_xi solved by EGT, EGT/as, perturbed CFR+ and LP.

Expected numbers: the unperturbed LP (treeplex.model.lp) at xi = 0, closed forms computed by
hand for the threat game, and the exact perturbed LP as the independent reference for the
iterative routes.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_infoset_regret import threat_game

from treeplex import InputError, compile_game, make_game, solve_lp
from treeplex.run.driver import solve
from treeplex.model.metrics import perturbed_gap
from treeplex.refine.efpe import make_efpe_solver, perturbation, solve_efpe
from treeplex.refine.infoset_regret import InfosetRegret
from treeplex.core.perturbed import PerturbedTreeplex
from treeplex.refine.lp import solve_lp_perturbed

XI = 0.01


@pytest.mark.parametrize("name", ["kuhn", "leduc"])
def test_perturbed_lp_at_zero_is_the_plain_lp(name):
    p = compile_game(make_game(name))
    zero = [np.zeros(T.n_seqs) for T in p.treeplexes]
    assert solve_lp_perturbed(p, *zero).value == pytest.approx(solve_lp(p).value, abs=1e-9)


def test_threat_game_perturbed_value_by_hand():
    # In Gamma_xi player 1 punishes with 1 - xi (it is dominant once reached), so "in" is
    # worth -5 (1 - xi) < 1 and player 0 goes in only with xi:
    # value = (1 - xi) * 1 + xi * (-5 (1 - xi)) = 1 - 6 xi + 5 xi^2.
    p = compile_game(threat_game())
    for xi in (0.01, 0.1, 0.3):
        lp = solve_lp_perturbed(p, *perturbation(p, xi))
        assert lp.value == pytest.approx(1 - 6 * xi + 5 * xi * xi, abs=1e-9)


@pytest.mark.parametrize("algorithm", ["egt", "egt-as", "cfr+"])
def test_iterative_routes_reach_the_perturbed_lp(algorithm):
    p = compile_game(make_game("kuhn"))
    lower = perturbation(p, 0.05)
    exact = solve_lp_perturbed(p, *lower)
    res = solve_efpe(p, algorithm, 0.05, max_iters=2000)
    for T, lo, plan in zip(p.treeplexes, lower, (res.x, res.y)):
        assert PerturbedTreeplex(T, lo).check_plan(plan, 1e-9) is None
    assert perturbed_gap(p, lower, res.x, res.y) < 1e-3
    assert res.value == pytest.approx(exact.value, abs=1e-3)
    assert res.trace[-1]["gap_perturbed"] == pytest.approx(perturbed_gap(p, lower, res.x, res.y))


def test_refined_strategy_is_sequentially_rational_where_nash_is_not():
    game = threat_game()
    p = compile_game(game)
    ir = InfosetRegret(p)
    concede = list(p.Y.action_labels[0]).index("concede") + 1  # sequence of "concede"

    # Plain Nash solutions: all are equilibria (gap 0), none punishes. Player 0 never goes
    # in, so nothing pushes player 1 towards "punish": the LP (HiGHS) lands on the vertex
    # "concede", CFR+ and EGT never update her uniform start. Her infoset regret is 5 * P(concede).
    for res in (solve(p, "lp"), solve(p, "cfr+", max_iters=200), solve(p, "egt-as", max_iters=200)):
        assert res.gap < 1e-3
        assert res.y[concede] >= 0.49
        assert ir(res.x, res.y).regret[1][0] == pytest.approx(5 * res.y[concede], abs=1e-9)

    # Refined (xi = 0.01): punish with the largest probability allowed, 1 - xi; the infoset
    # regrets are only what the perturbation forces: 5 xi for player 1, and for player 0,
    # who must go in with xi, xi (1 - (-5 (1 - xi))) = xi (6 - 5 xi).
    for algorithm in ("lp", "egt", "egt-as", "cfr+"):
        res = solve_efpe(p, algorithm, XI, max_iters=2000)
        assert res.y[concede] == pytest.approx(XI, abs=1e-5), algorithm
        regrets = ir(res.x, res.y)
        assert regrets.regret[1][0] == pytest.approx(5 * XI, abs=1e-4), algorithm
        assert regrets.regret[0][0] == pytest.approx(XI * (6 - 5 * XI), abs=1e-4), algorithm
        assert res.x[1] == pytest.approx(1 - XI, abs=1e-5)  # out, as in every Nash equilibrium


def test_perturbed_cfr_plays_in_the_perturbed_polytope_and_per_infoset_xi():
    p = compile_game(make_game("kuhn"))
    xi = ({"J:": {"b": 0.3}, "K:pb": 0.2}, 0.05)  # player 0 per action / per infoset, player 1 uniform
    lower = perturbation(p, xi)
    s = make_efpe_solver(p, "cfr+", xi)
    for _ in range(500):
        s.step()
        for T, lo, plan in zip(p.treeplexes, lower, s.current()):
            assert PerturbedTreeplex(T, lo).check_plan(plan, 1e-12) is None
    x, y = s.average()
    assert perturbed_gap(p, lower, x, y) < 5e-3
    assert x[p.X.start[list(p.X.infoset_keys).index("J:")] + 1] >= 0.3 * (1 - 1e-12)  # J bets >= 0.3
    exact = solve_lp_perturbed(p, *lower)
    assert float(x @ p.A.matvec(y, count=False)) == pytest.approx(exact.value, abs=5e-3)


def test_bad_requests():
    p = compile_game(make_game("kuhn"))
    with pytest.raises(InputError, match="infoset 'J:'"):
        make_efpe_solver(p, "cfr+", 0.5)
    with pytest.raises(InputError, match="supports"):
        make_efpe_solver(p, "mirror-prox", 0.01)
    with pytest.raises(InputError, match="unknown algorithm"):
        make_efpe_solver(p, "nope", 0.01)


@pytest.mark.slow
def test_figure_run_must_show(tmp_path):
    """The issue's "must show" on the figure run (experiments/efpe_leduc5.py, ~15 s)."""
    import json
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[1] / "experiments"))
    import efpe_leduc5

    efpe_leduc5.main(["--traversals", "30000", "--out", str(tmp_path)])
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["bound"] == pytest.approx(22.0) and s["attained"] == pytest.approx(22.0)  # the paper's 22
    assert s["ratios_vs_xi_0.01"]["cfr+"] >= 10 and s["ratios_vs_xi_0.01"]["egt"] >= 10
    # small xi tracks unperturbed EGT early on (within 10% over the first ~300 traversals)
    assert all(abs(r - 1) < 0.1 for r in s["gap_ratio_to_unperturbed"]["egt(0.001)"][:3])


@pytest.mark.parametrize("weights", ["thm2", "thm3", "thm4"])
def test_egt_with_theorem_weights_reaches_the_perturbed_lp(weights):
    p = compile_game(make_game("kuhn"))
    lower = perturbation(p, 0.05)
    exact = solve_lp_perturbed(p, *lower)
    res = solve_efpe(p, "egt-as", 0.05, max_iters=3000, weights=weights)
    assert perturbed_gap(p, lower, res.x, res.y) < 2e-3
    assert res.value == pytest.approx(exact.value, abs=2e-3)


def test_tuning_happens_at_xi_zero():
    # Section 4: the DGF weight is tuned with EGT at xi = 0; every perturbed run then starts
    # from the mu of the tuned unperturbed run.
    from treeplex.run.driver import make_solver

    p = compile_game(make_game("leduc"))
    for algorithm in ("egt", "egt-as"):
        s = make_efpe_solver(p, algorithm, 0.01)
        plain = make_solver(p, algorithm)
        assert (s.mu_x, s.mu_y) == (plain.mu_x, plain.mu_y)
