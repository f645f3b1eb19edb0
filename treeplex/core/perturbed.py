"""xi-perturbed treeplexes Q^xi and the perturbed dilated entropy (Kroer, Farina & Sandholm
2017, sections 2.1 and 3).

**Perturbation.** A lower bound l(h, a) >= 0 per action (section 2.1) makes every action
a of infoset j be played with at least l_a times the parent sequence's probability:

    Q^l = { q in Q : q_a >= l_a q_{p_j} for every sequence a of every infoset j }.

The paper's uniform perturbation is l_a = xi for all a (Q^xi). Each local simplex becomes
Delta^l = {b : sum b = 1, b >= l}, non-empty with interior only if L_j = sum_{a in j} l_a < 1
(n_j xi < 1 for uniform xi); :func:`lower_bounds` refuses anything else and names the infoset.

**DGF (section 3).** With the simplex entropy d_s(b) = sum_i b_i log b_i + log n (shifted by
the constant log n so that min d_s = 0, as EGT needs of a prox-function), the affine map
phi(b) = (b - l) / (1 - L) takes Delta^l onto Delta_n, and d_s^l = d_s o phi. Lemma 1:

    d_s^{l*}(g)      = d_s^*((1 - L) g) + <g, l>,        d_s^*(g) = log sum_i exp(g_i) - log n
    grad d_s^{l*}(g) = (1 - L) grad d_s^*((1 - L) g) + l = (1 - L) softmax((1 - L) g) + l.

Dilated: d(q) = sum_j beta_j q_{p_j} d_s^{l_j}(q^j / q_{p_j}). Its smoothed best response
argmax_{q in Q^l} <g, q> - mu d(q) is Lemma 1 applied bottom-up (Hoda et al. 2010, Prop. 3.4),
exactly as the unperturbed one in :mod:`treeplex.core.dilated_entropy` with w_j = mu beta_j:
local b = l + (1 - L) softmax((1 - L) v / w), value w (log-sum-exp((1 - L) v / w) - log n) +
<v, l> added to the parent sequence. With l = 0 everything reduces to the unperturbed DGF.

Everything maximizes (a minimizing player passes -g), as in :mod:`treeplex.core.dilated_entropy`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numba as nb
import numpy as np

from .dilated_entropy import _log_sizes, dilated_weights, max_l1_norm
from ..errors import InputError, nonnegative
from .treeplex import Treeplex

WEIGHTS = ("egt", "thm2", "thm3", "thm4")

# ------------------------------------------------------------------ lower bounds


def lower_bounds(T: Treeplex, xi, player: int = 0) -> np.ndarray:
    """Per-sequence lower bounds l (float64[n_seqs], l[0] = 0) on local action probabilities.

    ``xi`` is one of
    - a number: the paper's uniform perturbation, l_a = xi for every action;
    - an array of length n_seqs: l_a per sequence (entry 0 ignored);
    - a mapping ``{infoset key: number}`` (every action of that infoset) or
      ``{infoset key: {action label: number}}``; infosets not named get 0.
    Raises InputError for negative or non-finite bounds, unknown keys, and any infoset whose
    bounds sum to 1 or more (``player`` is only used in the message).
    """
    lo = np.zeros(T.n_seqs)
    if isinstance(xi, Mapping):
        index = {str(k): j for j, k in enumerate(T.infoset_keys)}
        for key, val in xi.items():
            j = index.get(str(key))
            if j is None:
                raise InputError(f"perturbation names player {player} infoset {key!r}, which does not exist")
            if isinstance(val, Mapping):
                labels = T.action_labels[j]
                for a, v in val.items():
                    if a not in labels:
                        raise InputError(f"perturbation names action {a!r} of player {player} infoset {key!r}; "
                                         f"it has {list(labels)}")
                    lo[T.start[j] + labels.index(a)] = nonnegative(v, f"perturbation for {key!r}")
            else:
                lo[T.start[j] : T.end[j]] = nonnegative(val, f"perturbation for {key!r}")
    elif np.ndim(xi) == 0:
        lo[1:] = nonnegative(xi, "perturbation for all infosets")
    else:
        arr = np.asarray(xi, dtype=np.float64)
        if arr.shape != (T.n_seqs,):
            raise InputError(f"per-sequence perturbation must have length {T.n_seqs}, got shape {arr.shape}")
        lo[1:] = arr[1:]
        if not np.all(np.isfinite(lo)) or np.any(lo < 0):
            raise InputError(f"perturbation bounds must be finite and >= 0 (player {player})")
    sums = np.add.reduceat(lo, T.start) if T.n_infosets else np.zeros(0)
    bad = np.flatnonzero(sums >= 1.0)
    if len(bad):
        j = int(bad[0])
        n = int(T.end[j] - T.start[j])
        row = lo[T.start[j] : T.end[j]]
        what = (f"n*xi = {n}*{row[0]:g} = {sums[j]:g}" if np.all(row == row[0])
                else f"the bounds sum to {sums[j]:g}")
        raise InputError(f"perturbation too large at player {player} infoset {T.infoset_keys[j]!r} "
                         f"({n} actions): {what} >= 1, so no strategy can play every action that often")
    return lo


def _infoset_sums(T: Treeplex, lower: np.ndarray) -> np.ndarray:
    return np.add.reduceat(lower, T.start) if T.n_infosets else np.zeros(0)


# ------------------------------------------------------------ Q^l as a polytope


class PerturbedTreeplex:
    """Q^l: the treeplex T with q_a >= l_a q_{p_j}. ``lower`` from :func:`lower_bounds`."""

    def __init__(self, T: Treeplex, lower: np.ndarray):
        self.T = T
        self.lower = np.ascontiguousarray(lower, dtype=np.float64)
        self.lower_sum = _infoset_sums(T, self.lower)

    def best_response(self, g: np.ndarray) -> tuple[float, np.ndarray]:
        """max_{q in Q^l} <g, q>: (value, maximizing plan). Each infoset plays l + (1 - L) e_best."""
        x = np.empty(self.T.n_seqs)
        v = _pbr(self.T.start, self.T.end, self.T.parent, self.lower, self.lower_sum,
                 np.asarray(g, dtype=np.float64), x)
        return v, x

    def check_plan(self, x: np.ndarray, tol: float = 1e-9) -> str | None:
        """None if ``x`` is a plan of Q^l within ``tol``, else what is wrong."""
        msg = self.T.check_plan(x, tol)
        if msg is not None:
            return msg
        slack = x - self.lower * x[self.T.seq_parent.clip(0)]
        slack[0] = 0.0
        s = int(np.argmin(slack))
        if slack[s] < -tol:
            return f"sequence {self.T.seq_label(s)} has {x[s]!r}, below its lower bound by {-slack[s]!r}"
        return None


# ------------------------------------------------------------- simplex: Lemma 1


def simplex_entropy(b: np.ndarray) -> float:
    """d_s(b) = sum_i b_i log b_i + log n (0 log 0 = 0); zero at the uniform point."""
    b = np.asarray(b, dtype=np.float64)
    nz = b[b > 0]
    return float(np.sum(nz * np.log(nz)) + np.log(len(b)))


def simplex_entropy_conjugate(g: np.ndarray) -> float:
    """d_s^*(g) = max_{b in Delta} <g, b> - d_s(b) = log sum exp(g) - log n."""
    g = np.asarray(g, dtype=np.float64)
    m = g.max()
    return float(m + np.log(np.sum(np.exp(g - m))) - np.log(len(g)))


def phi(b: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """The affine map of section 3, phi(b) = (b - l) / (1 - L): Delta^l onto Delta_n."""
    lower = np.asarray(lower, dtype=np.float64)
    return (np.asarray(b, dtype=np.float64) - lower) / (1.0 - lower.sum())


def phi_inverse(p: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """phi^{-1}(p) = (1 - L) p + l: Delta_n onto Delta^l."""
    lower = np.asarray(lower, dtype=np.float64)
    return (1.0 - lower.sum()) * np.asarray(p, dtype=np.float64) + lower


def perturbed_entropy(b: np.ndarray, lower: np.ndarray) -> float:
    """d_s^l(b) = d_s(phi(b)) for b in Delta^l."""
    return simplex_entropy(phi(b, lower))


def perturbed_entropy_conjugate(g: np.ndarray, lower: np.ndarray) -> float:
    """Lemma 1: d_s^{l*}(g) = d_s^*((1 - L) g) + <g, l>."""
    g = np.asarray(g, dtype=np.float64)
    lower = np.asarray(lower, dtype=np.float64)
    return simplex_entropy_conjugate((1.0 - lower.sum()) * g) + float(g @ lower)


def perturbed_entropy_conjugate_grad(g: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """Lemma 1: grad d_s^{l*}(g) = (1 - L) softmax((1 - L) g) + l, the maximizer in Delta^l."""
    g = np.asarray(g, dtype=np.float64)
    lower = np.asarray(lower, dtype=np.float64)
    e = np.exp((1.0 - lower.sum()) * (g - g.max()))
    return phi_inverse(e / e.sum(), lower)


# ------------------------------------------------------------- dilated DGF


def perturbed_weights(T: Treeplex, kind: str = "egt", scale: float = 1.0) -> tuple[np.ndarray, float]:
    """Simplex weights beta_j and the l1 strong-convexity modulus they give (times ``scale``).

    - ``"egt"``: beta_j = 2 + sum_{k below j} 2 beta_k (EGT paper, section 4); modulus 1/M_Q.
    - ``"thm2"``: the smallest weights of the EFPE paper's Theorem 2 recurrence,
      alpha_j = 1 + max_a sum_{k in D_j^a} alpha_k beta_k / (beta_k - alpha_k) with
      beta_k = 2 alpha_k below the roots and beta_j = alpha_j at the roots; modulus 1/M_Q.
    - ``"thm3"``: beta_j = M_Q (2 + sum_{r=1}^{d_j} 2^r (M_{Q_j,r} - 1)) (Theorem 3); modulus 1.
    - ``"thm4"``: the same without the factor M_Q (Theorem 4); modulus 1/M_Q.

    Theorem 2 shows the perturbed entropy is at least as strongly convex as the unperturbed
    one with the same weights, so these moduli hold on every Q^l.
    """
    if kind not in WEIGHTS:
        raise InputError(f"unknown perturbed-entropy weights {kind!r}; choose from {', '.join(WEIGHTS)}")
    if not scale > 0:
        raise InputError(f"weight scale must be > 0, got {scale!r}")
    m_q = max_l1_norm(T)
    if kind == "egt":
        return dilated_weights(T, "egt", scale), scale / m_q
    if kind == "thm2":
        alpha = _thm2_alpha(T.start, T.end, T.parent, T.seq_infoset)
        beta = np.where(T.parent == 0, alpha, 2.0 * alpha)
        return beta * scale, scale / m_q
    beta = dilated_weights(T, "kroer2017", scale)
    return (beta, scale) if kind == "thm3" else (beta / m_q, scale / m_q)


class PerturbedDilatedEntropy:
    """The dilated perturbed entropy on Q^l, with the interface of
    :class:`treeplex.core.dilated_entropy.DilatedEntropy` (``sbr``, ``prox``, ``value``,
    ``gradient``, ``modulus``, ``omega``, ``center``), so EGT and mirror prox run on Q^l
    unchanged. ``lower`` comes from :func:`lower_bounds`; ``weights`` from :func:`perturbed_weights`.
    """

    def __init__(self, T: Treeplex, lower: np.ndarray, weights: str = "egt", scale: float = 1.0):
        self.T = T
        self.kind = weights
        self.polytope = PerturbedTreeplex(T, lower)
        self.lower, self.lower_sum = self.polytope.lower, self.polytope.lower_sum
        self.beta, self.modulus = perturbed_weights(T, weights, scale)
        self._logn = _log_sizes(T)
        self.center = self.sbr(np.zeros(T.n_seqs), 1.0)[0]  # phi(b) uniform everywhere: d = 0
        g = np.zeros(T.n_seqs)
        np.add.at(g, T.parent, self.beta * self._logn)
        self.omega = self.polytope.best_response(g)[0]  # max d: at a vertex of Q^l, sum beta_j q_pj log n_j

    def sbr(self, g: np.ndarray, mu: float) -> tuple[np.ndarray, float]:
        """argmax_{x in Q^l} <g, x> - mu d(x) and its value (the conjugate of mu d at g)."""
        if not mu > 0:
            raise InputError(f"smoothing mu must be > 0, got {mu!r}")
        x = np.empty(self.T.n_seqs)
        v = _psbr(self.T.start, self.T.end, self.T.parent, self.beta * mu, self._logn, self.lower,
                  self.lower_sum, np.asarray(g, dtype=np.float64), x)
        return x, v

    def prox(self, center: np.ndarray, g: np.ndarray, mu: float) -> np.ndarray:
        """argmax_{x in Q^l} <g, x> - mu D(x || center): the SBR of g + mu grad d(center)."""
        return self.sbr(np.asarray(g, dtype=np.float64) + mu * self.gradient(center), mu)[0]

    def value(self, q: np.ndarray) -> float:
        """d(q) >= 0 for q in Q^l; zero at ``center``."""
        return _pvalue(self.T.start, self.T.end, self.T.parent, self.beta, self._logn, self.lower,
                       self.lower_sum, np.asarray(q, dtype=np.float64))

    def gradient(self, q: np.ndarray) -> np.ndarray:
        """grad d(q), d extended 1-homogeneously in (q_{p_j}, q^j): for sequence a of infoset j,
        beta_j (log phi_a + 1) / (1 - L_j) + sum_{k below a} beta_k (log n_k - 1 - sum_{i in k}
        l_i (log phi_i + 1) / (1 - L_k)), phi = (q^j / q_{p_j} - l) / (1 - L_j). With l = 0 it
        is the unperturbed gradient (EGT paper, Appendix A)."""
        out = np.zeros(self.T.n_seqs)
        _pgradient(self.T.start, self.T.end, self.T.parent, self.beta, self._logn, self.lower, self.lower_sum,
                   np.asarray(q, dtype=np.float64), out)
        return out


# --------------------------------------------------------------------- kernels


@nb.njit(cache=True)
def _psbr(start, end, parent, w, logn, lower, lsum, g, x):
    v = g.copy()
    for j in range(len(start) - 1, -1, -1):
        a, b, wj, c = start[j], end[j], w[j], 1.0 - lsum[j]
        m = v[a]
        for s in range(a + 1, b):
            if v[s] > m:
                m = v[s]
        z = 0.0
        lv = 0.0
        for s in range(a, b):
            e = np.exp(c * (v[s] - m) / wj)
            x[s] = e
            z += e
            lv += lower[s] * v[s]
        for s in range(a, b):
            x[s] = lower[s] + c * x[s] / z
        v[parent[j]] += c * m + wj * (np.log(z) - logn[j]) + lv
    x[0] = 1.0
    for j in range(len(start)):
        px = x[parent[j]]
        for s in range(start[j], end[j]):
            x[s] *= px
    return v[0]


@nb.njit(cache=True)
def _pbr(start, end, parent, lower, lsum, g, x):
    v = g.copy()
    choice = np.empty(len(start), dtype=np.int64)
    for j in range(len(start) - 1, -1, -1):
        best = start[j]
        lv = 0.0
        for s in range(start[j], end[j]):
            lv += lower[s] * v[s]
            if v[s] > v[best]:
                best = s
        choice[j] = best
        v[parent[j]] += (1.0 - lsum[j]) * v[best] + lv
    x[0] = 1.0
    for j in range(len(start)):
        px = x[parent[j]]
        for s in range(start[j], end[j]):
            x[s] = px * (lower[s] + ((1.0 - lsum[j]) if s == choice[j] else 0.0))
    return v[0]


@nb.njit(cache=True)
def _pvalue(start, end, parent, beta, logn, lower, lsum, q):
    total = 0.0
    for j in range(len(start)):
        pq = q[parent[j]]
        if pq <= 0.0:
            continue
        c = 1.0 - lsum[j]
        acc = pq * logn[j]
        for s in range(start[j], end[j]):
            r = (q[s] - lower[s] * pq) / c
            if r > 0.0:
                acc += r * np.log(r / pq)
        total += beta[j] * acc
    return total


@nb.njit(cache=True)
def _pgradient(start, end, parent, beta, logn, lower, lsum, q, out):
    tiny = 2.2250738585072014e-308
    out[:] = 0.0
    for j in range(len(start)):
        pq = q[parent[j]]
        n = end[j] - start[j]
        c = 1.0 - lsum[j]
        up = logn[j] - 1.0
        for s in range(start[j], end[j]):
            phi = (q[s] / pq - lower[s]) / c if pq > 0.0 else 1.0 / n
            t = (np.log(max(phi, tiny)) + 1.0) / c
            out[s] += beta[j] * t
            up -= lower[s] * t
        out[parent[j]] += beta[j] * up


@nb.njit(cache=True)
def _thm2_alpha(start, end, parent, seq_infoset):
    """alpha_j = 1 + max_a sum_{k in D_j^a} 2 alpha_k (beta_k = 2 alpha_k below the roots)."""
    n = len(start)
    alpha = np.empty(n)
    child = np.zeros(end[n - 1] if n else 1)  # per sequence: sum of 2 alpha_k of the infosets below
    for j in range(n - 1, -1, -1):
        best = 0.0
        for s in range(start[j], end[j]):
            if child[s] > best:
                best = child[s]
        alpha[j] = 1.0 + best
        if seq_infoset[parent[j]] >= 0:
            child[parent[j]] += 2.0 * alpha[j]
    return alpha
