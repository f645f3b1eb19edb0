"""Dilated entropy DGF: smoothed best response, prox mapping, weights, diameter, modulus.

Expected numbers come from outside the recursion under test: scipy's SLSQP on the
sequence-form constraints, the KKT conditions (solved by least squares), the worked backward /
forward pass of Pena's slides (written out by hand below), closed forms for pure strategies,
and weights computed by hand for Kuhn poker.
"""

import decimal
import math

import numpy as np
import pytest
from scipy.optimize import minimize, root

from treeplex.model.compile import compile_game
from treeplex.core.dilated_entropy import (
    DilatedEntropy,
    dgf_value,
    dilated_weights,
    gradient,
    max_l1_norm,
    omega,
    prox,
    root_constant,
    smoothed_best_response,
)
from treeplex.errors import InputError
from treeplex.games import make_game
from treeplex.core.treeplex import Treeplex


def random_treeplex(seed: int, max_infosets: int = 5, max_actions: int = 3) -> Treeplex:
    """Infosets in topological order, each hanging below a random earlier sequence (or the
    empty one): covers Cartesian products at the root and below, and uneven depths."""
    rng = np.random.default_rng(seed)
    start, end, parent = [], [], []
    n = 1
    for _ in range(int(rng.integers(1, max_infosets + 1))):
        k = int(rng.integers(2, max_actions + 1))
        parent.append(int(rng.integers(0, n)))
        start.append(n)
        end.append(n + k)
        n += k
    return Treeplex(np.array(start), np.array(end), np.array(parent))


def constraint_matrix(T: Treeplex) -> np.ndarray:
    """E x = e: x[0] = 1 and sum_{s in j} x[s] - x[p_j] = 0 (sequence form)."""
    E = np.zeros((T.n_infosets + 1, T.n_seqs))
    E[0, 0] = 1.0
    for j in range(T.n_infosets):
        E[j + 1, T.start[j] : T.end[j]] = 1.0
        E[j + 1, T.parent[j]] -= 1.0
    return E


def entropy_direct(T: Treeplex, beta: np.ndarray, x: np.ndarray) -> float:
    """d(x) written straight from section 4, for interior x."""
    total = 0.0
    for j in range(T.n_infosets):
        xp = x[T.parent[j]]
        b = x[T.start[j] : T.end[j]] / xp
        total += beta[j] * xp * (np.sum(b * np.log(b)) + math.log(len(b)))
    return total


def direct_gradient(T: Treeplex, beta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Partial derivatives of :func:`entropy_direct`, by hand: for i in infoset j,
    beta_j (log b_i + 1); for the parent p_j, beta_j (log n_j - sum_i b_i)."""
    out = np.zeros(T.n_seqs)
    for j in range(T.n_infosets):
        p = T.parent[j]
        b = x[T.start[j] : T.end[j]] / x[p]
        out[T.start[j] : T.end[j]] += beta[j] * (np.log(b) + 1.0)
        out[p] += beta[j] * (math.log(len(b)) - np.sum(b))
    return out


def scipy_argmax(T: Treeplex, objective, grad, x0: np.ndarray) -> np.ndarray:
    """Maximize a smooth strictly concave objective over the treeplex: SLSQP on the sequence-form
    constraints, then scipy's root finder on the KKT system grad(x) = E^T lam, E x = e to polish
    (SLSQP alone stops around 1e-3). The result is checked to be a KKT point to 1e-10."""
    E = constraint_matrix(T)
    e = np.zeros(len(E))
    e[0] = 1.0
    res = minimize(
        lambda x: -objective(x), x0, jac=lambda x: -grad(x), method="SLSQP",
        bounds=[(1e-12, 1.0)] * T.n_seqs,
        constraints=[{"type": "eq", "fun": lambda x: E @ x - e, "jac": lambda x: E}],
        options={"ftol": 1e-16, "maxiter": 2000},
    )
    n = T.n_seqs

    def kkt(u):
        return np.concatenate((grad(u[:n]) - E.T @ u[n:], E @ u[:n] - e))

    lam0, *_ = np.linalg.lstsq(E.T, grad(res.x), rcond=None)
    sol = root(kkt, np.concatenate((res.x, lam0)), method="hybr", options={"xtol": 1e-15})
    assert np.abs(kkt(sol.x)).max() < 1e-10 and sol.x[:n].min() > 0
    return sol.x[:n]


def numeric_gradient(T, beta, x, h=1e-6):
    """Central differences of the directly written d."""
    out = np.zeros(T.n_seqs)
    for s in range(T.n_seqs):
        e = np.zeros(T.n_seqs)
        e[s] = h
        out[s] = (entropy_direct(T, beta, x + e) - entropy_direct(T, beta, x - e)) / (2 * h)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_smoothed_best_response_equals_scipy(seed):
    T = random_treeplex(seed)
    rng = np.random.default_rng(100 + seed)
    kind = ("egt", "kroer2017")[seed % 2]
    beta = dilated_weights(T, kind)
    g = rng.normal(size=T.n_seqs)
    mu = float(rng.uniform(0.5, 2.0))
    x, value = smoothed_best_response(T, beta, g, mu)

    def obj(z):
        return g @ z - mu * entropy_direct(T, beta, z)

    def jac(z):
        return g - mu * direct_gradient(T, beta, z)

    ref = scipy_argmax(T, obj, jac, T.uniform())
    assert np.abs(x - ref).max() < 1e-8
    assert abs(value - obj(ref)) < 1e-8
    # and the KKT conditions hold at x to rounding
    assert T.is_plan(x, tol=1e-12)


def test_reproduces_slides_worked_pass():
    """Pena's slides, 'Nice prox-functions for complexes': simplified poker, player 1's
    complex with sequences x1 = empty, x2 = kJ, x3 = rJ, x4 = kQ, x5 = rQ, x6 = kJfJ,
    x7 = kJcJ, x8 = kQfQ, x9 = kQcQ, unit weights. The slides' backward pass has no log 2
    terms, i.e. it maximizes <s, x> - sum_j x_pj sum_i b_i log b_i; our d adds
    x_pj log n_j per simplex (linear in x), which the gradient shift below cancels."""
    p = compile_game(make_game("simple_poker"))
    T = p.X
    label = {T.seq_label(s): s for s in range(T.n_seqs)}
    idx = [0, label["J::k"], label["J::r"], label["Q::k"], label["Q::r"],
           label["J:kr:f"], label["J:kr:c"], label["Q:kr:f"], label["Q:kr:c"]]
    rng = np.random.default_rng(7)
    s = rng.normal(scale=2.0, size=10)  # s[1..9] as on the slides
    # backward pass, as on the slides
    t = s.copy()
    t[4] = s[4] + math.log(math.exp(t[8]) + math.exp(t[9]))
    t[2] = s[2] + math.log(math.exp(t[6]) + math.exp(t[7]))
    t[1] = s[1] + math.log(math.exp(t[2]) + math.exp(t[3])) + math.log(math.exp(t[4]) + math.exp(t[5]))
    # forward pass, as on the slides
    xb = np.zeros(10)
    xb[1] = 1.0
    for i in (2, 3):
        xb[i] = math.exp(t[i]) / (math.exp(t[2]) + math.exp(t[3]))
    for i in (4, 5):
        xb[i] = math.exp(t[i]) / (math.exp(t[4]) + math.exp(t[5]))
    for i in (6, 7):
        xb[i] = xb[2] * math.exp(t[i]) / (math.exp(t[6]) + math.exp(t[7]))
    for i in (8, 9):
        xb[i] = xb[4] * math.exp(t[i]) / (math.exp(t[8]) + math.exp(t[9]))

    ones = np.ones(T.n_infosets)
    g = np.zeros(T.n_seqs)
    for k in range(1, 10):
        g[idx[k - 1]] = s[k]
    g_shift = g.copy()
    np.add.at(g_shift, T.parent, np.log(T.end - T.start))  # cancel our x_pj log n_j terms
    x, value = smoothed_best_response(T, ones, g_shift, 1.0)
    for k in range(1, 10):
        assert x[idx[k - 1]] == pytest.approx(xb[k], abs=1e-14)
    assert value == pytest.approx(t[1], abs=1e-13)

    # the slides' d(x) (with its log 2 terms) is our dgf_value with unit weights
    xs = xb
    slides_d = (xs[2] * math.log(xs[2]) + xs[3] * math.log(xs[3]) + math.log(2)
                + xs[4] * math.log(xs[4]) + xs[5] * math.log(xs[5]) + math.log(2)
                + xs[2] * (xs[6] / xs[2] * math.log(xs[6] / xs[2]) + xs[7] / xs[2] * math.log(xs[7] / xs[2]) + math.log(2))
                + xs[4] * (xs[8] / xs[4] * math.log(xs[8] / xs[4]) + xs[9] / xs[4] * math.log(xs[9] / xs[4]) + math.log(2)))
    assert dgf_value(T, ones, x) == pytest.approx(slides_d, abs=1e-13)


def naive_sbr_decimal(T: Treeplex, beta: np.ndarray, g: np.ndarray, mu: float, digits: int = 60):
    """The textbook recursion b = exp(v / w) / Z, value w ln Z - w ln n, in 60-digit decimal
    arithmetic with an unbounded exponent range: exp(1e7) is no problem there."""
    with decimal.localcontext(decimal.Context(prec=digits, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)):
        D = decimal.Decimal
        v = [D(float(t)) for t in g]
        b = [D(1)] * T.n_seqs
        for j in range(T.n_infosets - 1, -1, -1):
            w = D(float(mu)) * D(float(beta[j]))
            sl = range(T.start[j], T.end[j])
            e = {s: (v[s] / w).exp() for s in sl}
            z = sum(e.values(), D(0))
            for s in sl:
                b[s] = e[s] / z
            v[T.parent[j]] += w * (z.ln() - D(len(sl)).ln())
        x = [D(1)] + [D(0)] * (T.n_seqs - 1)
        for j in range(T.n_infosets):
            for s in range(T.start[j], T.end[j]):
                x[s] = x[T.parent[j]] * b[s]
    return np.array([float(t) for t in x]), float(v[0])


@pytest.mark.parametrize("mu", [1.0, 0.01])
@pytest.mark.parametrize("kind", ["egt", "kroer2017"])
def test_huge_gradients_stay_finite_and_exact(kind, mu):
    """Gradients of size 1e5 / mu on Leduc: exp(g / (mu beta)) overflows a double, the
    recursion must not, and must agree with the naive recursion done in 60-digit arithmetic.
    Agreement is to the problem's conditioning: sums of gradients of size |v| carry a rounding
    error eps |v|, which moves b by up to eps |v| / w (w = mu beta_j)."""
    T = compile_game(make_game("leduc")).X
    beta = dilated_weights(T, kind)
    rng = np.random.default_rng(3)
    g = 1e5 / mu + mu * rng.normal(size=T.n_seqs)  # leaf differences of order w: non-degenerate
    with np.errstate(over="ignore"):  # the naive form in doubles overflows
        assert np.isinf(np.exp(g / (mu * beta.min()))).any()
    x, value = smoothed_best_response(T, beta, g, mu)
    assert np.all(np.isfinite(x)) and math.isfinite(value)
    ref_x, ref_value = naive_sbr_decimal(T, beta, g, mu)
    v_max = np.abs(g).sum()
    assert np.abs(x - ref_x).max() <= 4 * np.finfo(float).eps * v_max / (mu * beta.min())
    assert value == pytest.approx(ref_value, rel=1e-14)
    assert 0.1 < x[1:].max() and np.sort(x[1:])[-3] > 1e-3  # some mass really is spread out


def test_huge_gradient_gaps_give_the_best_response():
    """Gradient gaps of 1e5 / mu: the smoothed best response is the pure best response to the
    last bit, and its value <g, x> - mu d(x), d(pure x) = sum_{reached j} beta_j log n_j."""
    T = compile_game(make_game("leduc")).X
    beta = dilated_weights(T, "egt")
    mu = 1e-3
    big = np.random.default_rng(4).normal(size=T.n_seqs) * 1e5 / mu
    x, value = smoothed_best_response(T, beta, big, mu)
    br_value, br = T.best_response(big)
    assert np.array_equal(x, br)
    pure_d = float(np.sum(br[T.parent] * beta * np.log(T.end - T.start)))
    assert value == pytest.approx(br_value - mu * pure_d, rel=1e-15)


@pytest.mark.parametrize("seed", range(6))
def test_prox_mapping_and_appendix_a(seed):
    """prox = argmax <g, x> - mu D(x || c): equal to SLSQP on the Bregman objective; its value
    (Appendix A's constant, no d(c) evaluated) equals the objective computed directly."""
    T = random_treeplex(50 + seed)
    rng = np.random.default_rng(seed)
    beta = dilated_weights(T, "egt")
    c = smoothed_best_response(T, beta, rng.normal(size=T.n_seqs), 1.0)[0]  # interior centre
    g = rng.normal(size=T.n_seqs)
    mu = 1.0
    x, value = prox(T, beta, c, g, mu)
    grad_c = direct_gradient(T, beta, c)

    def obj(z):
        breg = entropy_direct(T, beta, z) - entropy_direct(T, beta, c) - grad_c @ (z - c)
        return g @ z - mu * breg

    def jac(z):
        return g - mu * (direct_gradient(T, beta, z) - grad_c)

    ref = scipy_argmax(T, obj, jac, c)
    assert np.abs(x - ref).max() < 1e-8
    assert value == pytest.approx(obj(x), abs=1e-10)
    assert np.array_equal(DilatedEntropy(T).prox(c, g, mu), x)


@pytest.mark.parametrize("seed", range(6))
def test_gradient_value_and_euler_identity(seed):
    T = random_treeplex(200 + seed)
    rng = np.random.default_rng(seed)
    beta = dilated_weights(T, ("egt", "kroer2017")[seed % 2])
    q = smoothed_best_response(T, beta, rng.normal(scale=2, size=T.n_seqs), 0.5)[0]
    gr = gradient(T, beta, q)
    assert np.abs(gr[1:] - numeric_gradient(T, beta, q)[1:]).max() < 1e-6
    assert np.abs(gr[1:] - direct_gradient(T, beta, q)[1:]).max() < 1e-10
    assert dgf_value(T, beta, q) == pytest.approx(entropy_direct(T, beta, q), abs=1e-12)
    # Appendix A: -d(q) + <grad d(q), q> = -sum_{roots} beta_j (log n_j - 1)
    assert -dgf_value(T, beta, q) + gr[1:] @ q[1:] == pytest.approx(-root_constant(T, beta), abs=1e-10)


def test_kuhn_weights_diameter_by_hand():
    """Kuhn: player 0 has 3 root infosets (card; check/bet), each with one infoset below
    (facing a bet after a check); player 1 has 6 root infosets. All simplexes have 2 actions.
    Section 4: beta_leaf = 2, beta_root(p0) = 2 + 2*2 = 6. Theorem 3 (EFPE): M_Q = 6 for both,
    beta = 6 (2 + 2^1 (2 - 1)) = 24 at player 0's roots, 6 * 2 = 12 elsewhere.
    Omega = max over pure plans of sum beta_j log 2: p0 checks everywhere: 3 (6 + 2) log 2."""
    p = compile_game(make_game("kuhn"))
    X, Y = p.X, p.Y
    roots = X.parent == 0
    assert np.array_equal(dilated_weights(X, "egt"), np.where(roots, 6.0, 2.0))
    assert np.array_equal(dilated_weights(Y, "egt"), np.full(6, 2.0))
    assert max_l1_norm(X) == 6 and max_l1_norm(Y) == 6
    assert np.array_equal(dilated_weights(X, "kroer2017"), np.where(roots, 24.0, 12.0))
    assert np.array_equal(dilated_weights(Y, "kroer2017"), np.full(6, 12.0))
    assert omega(X, dilated_weights(X, "egt")) == pytest.approx(24 * math.log(2), rel=1e-15)
    assert omega(Y, dilated_weights(Y, "egt", scale=0.5)) == pytest.approx(6 * math.log(2), rel=1e-15)
    assert dgf_value(X, dilated_weights(X, "egt"), X.uniform()) == pytest.approx(0.0, abs=1e-15)


def test_kroer2017_weights_on_a_deep_chain():
    """A chain of 3 binary infosets (each below the first action of the previous) plus a
    second root: M_Q = 4, M_{Q_1,r} = 1, 2, 3 for r = 0, 1, 2, d_1 = 2, so
    beta_1 = 4 (2 + 2 (2-1) + 4 (3-1)) = 48, beta_2 = 4 (2 + 2 (2-1)) = 16, beta_3 = 8, root 2: 8.
    Section 4: beta_3 = 2, beta_2 = 6, beta_1 = 14, root 2: 2."""
    T = Treeplex(np.array([1, 3, 5, 7]), np.array([3, 5, 7, 9]), np.array([0, 1, 3, 0]))
    assert max_l1_norm(T) == 4
    assert np.array_equal(dilated_weights(T, "kroer2017"), [48.0, 16.0, 8.0, 8.0])
    assert np.array_equal(dilated_weights(T, "egt"), [14.0, 6.0, 2.0, 2.0])


@pytest.mark.parametrize("kind", ["egt", "kroer2017"])
def test_strong_convexity_modulus_l1(kind):
    """d(z) >= d(x) + <grad d(x), z - x> + (phi / 2) ||z - x||_1^2 with phi the stated modulus
    (1/M_Q for section 4's weights, Kroer et al. 2017; 1 for Theorem 3's), on random pairs."""
    for seed in range(20):
        T = random_treeplex(300 + seed)
        D = DilatedEntropy(T, kind)
        rng = np.random.default_rng(seed)
        x = D.sbr(rng.normal(scale=3, size=T.n_seqs), 1.0)[0]
        z = D.sbr(rng.normal(scale=3, size=T.n_seqs), 1.0)[0]
        lhs = D.value(z) - D.value(x) - D.gradient(x)[1:] @ (z - x)[1:]
        assert lhs >= D.modulus / 2 * np.abs(z - x).sum() ** 2 - 1e-12


def test_bad_input():
    T = random_treeplex(1)
    beta = dilated_weights(T)
    with pytest.raises(InputError, match="mu must be > 0"):
        smoothed_best_response(T, beta, np.zeros(T.n_seqs), 0.0)
    with pytest.raises(InputError, match="unknown dilated-entropy weights"):
        dilated_weights(T, "l2")
