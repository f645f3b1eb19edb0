"""The dilated entropy distance-generating function (DGF) on a treeplex, its smoothed best
response (gradient of the conjugate) and its prox mapping.

EGT paper (Kroer, Farina, Sandholm 2018), section 4: with the simplex entropy
d_j(b) = sum_i b_i log b_i + log n_j (zero at the uniform point, log n_j at a vertex),

    d(q) = sum_j beta_j q_{p_j} d_j(q^j / q_{p_j})        (q^j: the sequences of infoset j)

Weights beta_j (per infoset, see :func:`dilated_weights`):

- ``"egt"`` (section 4):  beta_j = 2 + sum_{k in D^j} 2 beta_k, D^j = infosets right below j.
  Strongly convex with modulus 1/M_Q w.r.t. the l1 norm, M_Q = max_{q in Q} ||q||_1.
- ``"kroer2017"`` (EFPE paper, Theorem 3, restating Kroer et al. 2017):
  beta_j = M_Q (2 + sum_{r=1}^{d_j} 2^r (M_{Q_j,r} - 1)), modulus 1 w.r.t. the l1 norm.

Both are multiplied by an overall ``scale`` (which multiplies the modulus too).

Sign convention: everything here *maximizes*. The smoothed best response is

    SBR(g, mu) = argmax_{q in Q} <g, q> - mu d(q)     (and the max value),

the gradient of the conjugate of mu*d at g. A minimizing player passes -g and negates the
value. The recursion (section 4, Proposition 3.4 of Hoda et al. 2010) goes bottom-up: at
infoset j with weight w = mu beta_j the local optimum is b_i = exp(v_i / w) / Z, whose value
w log Z - w log n_j is added to the parent sequence's v. For numerical safety it is written
as the value propagated through the action of largest probability (largest v_i = m):
v_m - w log b_m - w log n_j = m + w log sum_i exp((v_i - m)/w) - w log n_j, so no exp()
overflows whatever the size of g / mu. A top-down pass turns local probabilities into a
realization plan.

The prox mapping argmax_q <g, q> - mu D(q || q') (D the Bregman divergence of d) is the SBR
of the shifted gradient g + mu grad d(q') (section 4; minimization form g - grad d(q')). Its
value uses Appendix A's closed form -d(q') + <grad d(q'), q'> = -sum_{roots j} beta_j (log n_j - 1)
(carried by the empty sequence's entry of grad d), so d(q') itself is never evaluated.

Arrays are flat, indexed by sequence (index 0 = empty sequence); weights by infoset.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .treeplex import NUMPY_SEQS, Treeplex

WEIGHTS = ("egt", "kroer2017")


# ------------------------------------------------------------------ public API


def dilated_weights(T: Treeplex, kind: str = "egt", scale: float = 1.0) -> np.ndarray:
    """Simplex weights beta_j (float64[n_infosets]) of the dilated entropy, times ``scale``.

    ``kind="egt"``: beta_j = 2 + sum_{k in D^j} 2 beta_k (EGT paper, section 4).
    ``kind="kroer2017"``: beta_j = M_Q (2 + sum_{r=1}^{d_j} 2^r (M_{Q_j,r} - 1)) (EFPE paper,
    Theorem 3), where M_{Q_j,r} is the largest number of infosets within r branchings below j
    (j included) that one pure strategy of the subtreeplex Q_j reaches, and d_j the depth of Q_j.
    """
    if kind not in WEIGHTS:
        raise InputError(f"unknown dilated-entropy weights {kind!r}; choose from {', '.join(WEIGHTS)}")
    if not scale > 0:
        raise InputError(f"weight scale must be > 0, got {scale!r}")
    if kind == "egt":
        beta = _egt_weights(T)
    else:
        from .dilated_entropy_kernels import subtree_counts

        counts = subtree_counts(T.start, T.end, T.parent, T.seq_infoset, int(T.depth.max(initial=0)) + 1)
        m_q = max_l1_norm(T)
        beta = np.empty(T.n_infosets)
        for j in range(T.n_infosets):
            # counts[j, r] = M_{Q_j, r}; d_j = the last r where it still grows
            c = counts[j]
            d_j = int(np.searchsorted(c, c[-1]))  # first r at which the full count is reached
            r = np.arange(1, d_j + 1)
            beta[j] = m_q * (2.0 + np.sum(2.0**r * (c[1 : d_j + 1] - 1.0)))
    return beta * scale


def max_l1_norm(T: Treeplex) -> float:
    """M_Q = max_{q in Q} ||q||_1 over the infoset sequences (empty sequence excluded):
    the largest number of infosets one pure strategy reaches. 1 for a player who never acts
    (0 infosets): the moduli divide by M_Q, and a one-point treeplex is strongly convex with any."""
    g = np.ones(T.n_seqs)
    g[0] = 0.0
    return max(T.best_response(g)[0], 1.0)


def smoothed_best_response(T: Treeplex, weights: np.ndarray, g: np.ndarray, mu: float) -> tuple[np.ndarray, float]:
    """argmax_{x in T} <g, x> - mu d(x) and its value (same units as <g, x>).

    ``weights`` are the beta_j of d (from :func:`dilated_weights`), ``g`` a gradient indexed
    by sequence (g[0] is added to the value), ``mu > 0`` the smoothing. Returns the realization
    plan (strictly positive up to underflow) and the maximum value. Finite for any finite g.
    """
    g = np.asarray(g, dtype=np.float64)
    if not mu > 0:
        raise InputError(f"smoothing mu must be > 0, got {mu!r}")
    from .dilated_entropy_kernels import sbr

    x = np.empty(T.n_seqs)
    value = sbr(T.start, T.end, T.parent, np.asarray(weights, dtype=np.float64), float(mu), _log_sizes(T), g, x)
    return x, value


def prox(T: Treeplex, weights: np.ndarray, center: np.ndarray, g: np.ndarray, mu: float) -> tuple[np.ndarray, float]:
    """argmax_{x in T} <g, x> - mu D(x || center) and its value, D the Bregman divergence of d.

    Computed as the smoothed best response to the shifted gradient g + mu grad d(center)
    (EGT paper, section 4). Its value is the prox value with no d(center) evaluated:
    -d(c) + <grad d(c), c> over the infoset sequences is Appendix A's constant
    -sum_{roots} beta_j (log n_j - 1), which :func:`gradient` puts at entry 0, so
    <g, x> - mu D(x || c) = <g + mu grad d(c), x> - mu d(x) for every plan x.
    """
    from .dilated_entropy_kernels import add_gradient

    shifted = np.array(g, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    add_gradient(T.start, T.end, T.parent, weights, _log_sizes(T), np.asarray(center, dtype=np.float64), mu, shifted)
    return smoothed_best_response(T, weights, shifted, mu)


def dgf_value(T: Treeplex, weights: np.ndarray, q: np.ndarray) -> float:
    """d(q) = sum_j beta_j [sum_{i in j} q_i log(q_i / q_{p_j}) + q_{p_j} log n_j], with 0 log 0 = 0.

    >= 0; zero at the uniform strategy; sum_j q_{p_j} beta_j log n_j at a pure strategy."""
    from .dilated_entropy_kernels import value

    return value(T.start, T.end, T.parent, weights, _log_sizes(T), np.asarray(q, dtype=np.float64))


def gradient(T: Treeplex, weights: np.ndarray, q: np.ndarray) -> np.ndarray:
    """grad d(q) (Appendix A): for sequence i of infoset j,
    beta_j (log(q_i / q_{p_j}) + 1) + sum_{k in D_j^i} beta_k (log n_k - 1).

    Entry 0 (the empty sequence, the parent of the root infosets) is sum_{roots} beta_k (log n_k - 1),
    so that <grad d(q), q> = d(q) (Euler: d is 1-homogeneous in (q_0, q)). Ratios below the
    smallest positive double are floored there (log = -708), which changes nothing a double
    can represent; an unreached infoset is treated as uniform.
    """
    from .dilated_entropy_kernels import add_gradient

    out = np.zeros(T.n_seqs)
    add_gradient(T.start, T.end, T.parent, weights, _log_sizes(T), np.asarray(q, dtype=np.float64), 1.0, out)
    return out


def root_constant(T: Treeplex, weights: np.ndarray) -> float:
    """Appendix A: -d(q) + <grad d(q), q over the infoset sequences> = -sum_{roots j} beta_j (log n_j - 1)
    for every q; returns sum_{roots j} beta_j (log n_j - 1) (= grad d(q)[0])."""
    roots = T.parent == 0
    return float(np.sum(weights[roots] * (_log_sizes(T)[roots] - 1.0)))


def omega(T: Treeplex, weights: np.ndarray) -> float:
    """Omega = max_q d(q) - min_q d(q) = max over pure plans of sum_j q_{p_j} beta_j log n_j
    (d is convex, so its max is at a vertex, where the entropies vanish; its min 0 is at the
    uniform strategy)."""
    g = np.zeros(T.n_seqs)
    np.add.at(g, T.parent, weights * _log_sizes(T))
    return T.best_response(g)[0]


class DilatedEntropy:
    """A dilated entropy DGF bound to one treeplex: weights, modulus, diameter and its passes.

    ``modulus`` is the strong-convexity modulus w.r.t. the l1 norm (1/M_Q x scale for the
    section-4 weights, scale for Theorem 3's); ``omega`` = max d - min d; ``center`` =
    argmin d, the uniform strategy. Solvers talk to the DGF only through this object, so a
    different DGF (e.g. a perturbed one on a xi-perturbed treeplex) plugs in by providing the
    same methods.
    """

    def __init__(self, T: Treeplex, weights: str = "egt", scale: float = 1.0):
        self.T = T
        self.kind = weights
        self.beta = dilated_weights(T, weights, scale)
        self.modulus = scale / max_l1_norm(T) if weights == "egt" else scale
        self.omega = omega(T, self.beta)
        self.center = T.uniform()
        self._logn = _log_sizes(T)

    def sbr(self, g: np.ndarray, mu: float) -> tuple[np.ndarray, float]:
        """argmax_x <g, x> - mu d(x) and its value (``g`` float64, ``mu`` > 0 unchecked)."""
        from .dilated_entropy_kernels import sbr

        x = np.empty(self.T.n_seqs)
        value = sbr(self.T.start, self.T.end, self.T.parent, self.beta, mu, self._logn, g, x)
        return x, value

    def prox(self, center: np.ndarray, g: np.ndarray, mu: float) -> np.ndarray:
        """argmax_x <g, x> - mu D(x || center) (the minimizer only; :func:`prox` gives the value)."""
        from .dilated_entropy_kernels import add_gradient

        shifted = g.copy()
        add_gradient(self.T.start, self.T.end, self.T.parent, self.beta, self._logn, center, mu, shifted)
        return self.sbr(shifted, mu)[0]

    def value(self, q: np.ndarray) -> float:
        from .dilated_entropy_kernels import value

        return value(self.T.start, self.T.end, self.T.parent, self.beta, self._logn, q)

    def gradient(self, q: np.ndarray) -> np.ndarray:
        return gradient(self.T, self.beta, q)


# --------------------------------------------------------------------- helpers


def _log_sizes(T: Treeplex) -> np.ndarray:
    return np.log((T.end - T.start).astype(np.float64))


def _egt_weights(T: Treeplex) -> np.ndarray:
    """beta_j = 2 + 2 sum_{k in D^j} beta_k, bottom-up: by depth in NumPy on small treeplexes
    (the kernel's order of the sums, so the same bits), the kernel on large ones."""
    if T.n_seqs > NUMPY_SEQS:
        from .dilated_entropy_kernels import egt_weights

        return egt_weights(T.start, T.end, T.parent, T.seq_infoset)
    below = np.zeros(T.n_infosets)  # sum of beta_k over the infosets right below j
    beta = np.empty(T.n_infosets)
    for js, _, _, _ in reversed(T.levels()):
        beta[js] = 2.0 + 2.0 * below[js]
        up = T.seq_infoset[T.parent[js]]
        np.add.at(below, up[up >= 0], beta[js][up >= 0])
    return beta
