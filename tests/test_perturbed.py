"""xi-perturbed treeplexes and the perturbed dilated entropy (EFPE paper, sections 2.1 and 3).

Expected numbers come from finite differences of the functions' definitions (Lemma 1 and
the dilated conjugate), brute force over the vertices of Q^xi, hand computation (weights on
Kuhn's treeplex), and the unperturbed DGF of :mod:`treeplex.core.dilated_entropy` at xi = 0.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from random_games import random_game

from treeplex import InputError, compile_game, make_game
from treeplex.core.dilated_entropy import DilatedEntropy
from treeplex.core.perturbed import (
    PerturbedDilatedEntropy, PerturbedTreeplex, lower_bounds, perturbed_entropy, perturbed_entropy_conjugate,
    perturbed_entropy_conjugate_grad, perturbed_weights, phi, phi_inverse,
)


def _num_grad(f, z, h=1e-5):
    out = np.empty(len(z))
    for i in range(len(z)):
        e = np.zeros(len(z))
        e[i] = h
        out[i] = (f(z + e) - f(z - e)) / (2 * h)
    return out


def _random_lower(rng, n):
    """Uniform xi or per-action bounds, sum < 1."""
    if rng.random() < 0.5:
        return np.full(n, rng.uniform(0, 0.9 / n))
    w = rng.dirichlet(np.ones(n))
    return w * rng.uniform(0, 0.9)


def test_lemma1_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(2, 7))
        g = rng.normal(scale=3.0, size=n)
        lo = _random_lower(rng, n)
        grad = perturbed_entropy_conjugate_grad(g, lo)
        num = _num_grad(lambda z: perturbed_entropy_conjugate(z, lo), g)
        assert np.max(np.abs(grad - num)) < 1e-7


def test_lemma1_conjugate_is_the_max_over_the_perturbed_simplex():
    # Fenchel-Young: the conjugate equals <g, b*> - d(b*) at b* = grad conjugate, and b* is
    # optimal: b* lies in Delta^l and the finite-difference gradient of d_s^l at b* equals
    # g up to a multiple of the all-ones vector (first-order optimality, d_s^l convex).
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(2, 7))
        g = rng.normal(size=n)
        lo = _random_lower(rng, n)
        b = perturbed_entropy_conjugate_grad(g, lo)
        assert b.sum() == pytest.approx(1.0, abs=1e-12) and np.all(b >= lo)
        assert perturbed_entropy_conjugate(g, lo) == pytest.approx(g @ b - perturbed_entropy(b, lo), abs=1e-9)
        h = 1e-4 * float(np.min(b - lo))  # well inside Delta^l, where log is smooth
        resid = _num_grad(lambda z: perturbed_entropy(z, lo), b, h) - g
        assert np.ptp(resid) < 1e-6


def test_phi_maps_the_perturbed_simplex_onto_the_simplex():
    lo = np.array([0.1, 0.05, 0.2])
    assert np.allclose(phi(lo + np.array([0.65, 0, 0]), lo), [1, 0, 0])  # vertex -> vertex
    assert np.allclose(phi(np.full(3, 1 / 3), lo), (1 / 3 - lo) / 0.65)
    p = np.array([0.2, 0.3, 0.5])
    assert np.allclose(phi(phi_inverse(p, lo), lo), p) and phi_inverse(p, lo).sum() == pytest.approx(1.0)


def test_lemma1_at_xi_zero_is_the_plain_entropy():
    g = np.array([0.3, -1.2, 2.0])
    lse = np.log(np.exp(g).sum()) - np.log(3)  # log-sum-exp minus log n, by hand
    assert perturbed_entropy_conjugate(g, np.zeros(3)) == pytest.approx(lse, abs=1e-15)


def _problems():
    yield compile_game(make_game("kuhn"))
    for seed in range(4):
        yield compile_game(random_game(seed, max_depth=4))


def test_dilated_conjugate_gradient_is_the_smoothed_best_response():
    rng = np.random.default_rng(2)
    for p in _problems():
        for T in p.treeplexes:
            lo = np.zeros(T.n_seqs)
            for j in range(T.n_infosets):
                lo[T.start[j] : T.end[j]] = _random_lower(rng, T.end[j] - T.start[j])
            d = PerturbedDilatedEntropy(T, lo, "egt")
            for mu in (0.3, 2.0):
                g = rng.normal(size=T.n_seqs)
                x, v = d.sbr(g, mu)
                assert PerturbedTreeplex(T, lo).check_plan(x, 1e-12) is None
                num = _num_grad(lambda z: d.sbr(z, mu)[1], g)
                assert np.max(np.abs(num - x)) < 1e-7
                # value = <g, x> - mu d(x) (Fenchel-Young for the whole treeplex)
                assert v == pytest.approx(g @ x - mu * d.value(x), abs=1e-9)


def test_zero_perturbation_is_the_unperturbed_dgf():
    rng = np.random.default_rng(3)
    for p in _problems():
        for T in p.treeplexes:
            d0 = DilatedEntropy(T, "egt")
            d = PerturbedDilatedEntropy(T, np.zeros(T.n_seqs), "egt")
            g = rng.normal(size=T.n_seqs)
            (x0, v0), (x, v) = d0.sbr(g, 0.7), d.sbr(g, 0.7)
            assert np.allclose(x, x0, atol=1e-14) and v == pytest.approx(v0, abs=1e-12)
            assert np.allclose(d.gradient(x), d0.gradient(x), atol=1e-12)
            assert d.omega == pytest.approx(d0.omega) and d.modulus == d0.modulus
            assert np.allclose(d.center, T.uniform())


def test_gradient_value_center_and_prox():
    rng = np.random.default_rng(4)
    for p in _problems():
        T = p.X
        d = PerturbedDilatedEntropy(T, lower_bounds(T, 0.1), "thm2")
        assert d.value(d.center) == pytest.approx(0.0, abs=1e-12)
        q = d.sbr(rng.normal(size=T.n_seqs), 0.5)[0]
        num = _num_grad(d.value, q, 1e-7 * q.min())
        assert np.max(np.abs(num - d.gradient(q))) < 1e-5 * max(1.0, np.abs(num).max())
        assert np.allclose(d.prox(q, np.zeros(T.n_seqs), 0.8), q, atol=1e-12)
        # prox maximizes <g, x> - mu D(x || q) over Q^xi: compare with other points of Q^xi
        g, mu = rng.normal(size=T.n_seqs), 0.8
        gq = d.gradient(q)

        def obj(x):
            return g @ x - mu * (d.value(x) - d.value(q) - gq @ (x - q))

        best = obj(d.prox(q, g, mu))
        for _ in range(30):
            other = d.sbr(rng.normal(scale=2.0, size=T.n_seqs), 0.5)[0]
            assert obj(other) <= best + 1e-12


def _vertices(T, lo):
    """All vertices of Q^l: at every infoset, l + (1 - L) on one action."""
    per = [range(T.start[j], T.end[j]) for j in range(T.n_infosets)]
    for choice in itertools.product(*per):
        b = lo.copy()
        b[0] = 1.0
        for j, s in enumerate(choice):
            b[s] += 1.0 - lo[T.start[j] : T.end[j]].sum()
        yield T.plan_from_behavioral(b)


def test_perturbed_best_response_equals_brute_force():
    rng = np.random.default_rng(5)
    T = compile_game(make_game("kuhn")).X
    for xi in (0.0, 0.05, 0.3):
        Q = PerturbedTreeplex(T, lower_bounds(T, xi))
        for _ in range(5):
            g = rng.normal(size=T.n_seqs)
            v, x = Q.best_response(g)
            assert Q.check_plan(x) is None
            assert v == pytest.approx(max(g @ q for q in _vertices(T, Q.lower)), abs=1e-12)


def test_weights_on_kuhn_by_hand():
    # Kuhn, player 0: three root infosets "c:" (pass, bet), each with one infoset "c:pb" below
    # "pass". M_Q = 6 (a pure strategy passes at all three and reaches all six infosets).
    T = compile_game(make_game("kuhn")).X
    keys = list(T.infoset_keys)
    root, leaf = keys.index("J:"), keys.index("J:pb")
    b2, m2 = perturbed_weights(T, "thm2")  # leaf alpha 1, beta 2; root alpha 1 + 2 = 3 = beta
    assert (b2[root], b2[leaf], m2) == (3.0, 2.0, pytest.approx(1 / 6))
    b3, m3 = perturbed_weights(T, "thm3")  # 6 (2 + 2 (2 - 1)) = 24 at the root, 6 * 2 at the leaf
    assert (b3[root], b3[leaf], m3) == (24.0, 12.0, 1.0)
    b4, m4 = perturbed_weights(T, "thm4", scale=0.5)
    assert (b4[root], b4[leaf], m4) == (2.0, 1.0, pytest.approx(0.5 / 6))


def test_lower_bounds_forms_and_errors():
    T = compile_game(make_game("kuhn")).X
    lo = lower_bounds(T, 0.1)
    assert lo[0] == 0 and np.all(lo[1:] == 0.1)
    lo = lower_bounds(T, {"K:": 0.2, "J:pb": {"b": 0.3}})
    j, k = list(T.infoset_keys).index("K:"), list(T.infoset_keys).index("J:pb")
    assert np.all(lo[T.start[j] : T.end[j]] == 0.2) and lo[T.start[k] + 1] == 0.3 and lo.sum() == pytest.approx(0.7)
    with pytest.raises(InputError, match=r"infoset 'J:' \(2 actions\): n\*xi = 2\*0.5 = 1 >= 1"):
        lower_bounds(T, 0.5)
    with pytest.raises(InputError, match=r"player 1 infoset 'Q:pb'.*sum to 1.1"):
        lower_bounds(T, {"Q:pb": {"p": 0.6, "b": 0.5}}, player=1)
    with pytest.raises(InputError, match="does not exist"):
        lower_bounds(T, {"X:": 0.1})
    with pytest.raises(InputError, match="action 'r'"):
        lower_bounds(T, {"J:": {"r": 0.1}})
    with pytest.raises(InputError, match=">= 0"):
        lower_bounds(T, -0.1)
