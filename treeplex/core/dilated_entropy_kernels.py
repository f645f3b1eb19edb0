"""The numba kernels of :mod:`treeplex.core.dilated_entropy` (see there for the math), imported
only where a pass runs on numba: large treeplexes, or the numba backend."""

import numba as nb
import numpy as np


@nb.njit(cache=True)
def sbr(start, end, parent, beta, mu, logn, g, x):
    """x <- argmax <g, x> - mu sum_j beta_j x_{p_j} d_j(x^j / x_{p_j}); returns the max value.

    Bottom-up, x holds exp((v_s - m_j) / w_j) and inv_z[j] the infoset's 1 / Z; top-down
    turns them into the plan x_s = x_{p_j} exp(...) / Z."""
    v = g.copy()
    inv_z = np.empty(len(start))
    for j in range(len(start) - 1, -1, -1):
        a, b = start[j], end[j]
        wj = mu * beta[j]
        inv_w = 1.0 / wj
        top = a
        for s in range(a + 1, b):
            if v[s] > v[top]:
                top = s
        m = v[top]
        z = 1.0  # the top term, exp(0)
        for s in range(a, b):
            if s == top:
                x[s] = 1.0
                continue
            t = (v[s] - m) * inv_w
            # below e^-708 (~1e-308, next to the top term's 1) a term changes nothing a double
            # holds; skipping exp() there avoids libm's slow subnormal path
            e = np.exp(t) if t > -708.0 else 0.0
            x[s] = e
            z += e
        inv_z[j] = 1.0 / z
        # value through the most likely action: v_m - w log b_m - w log n, log b_m = -log z
        v[parent[j]] += m + wj * ((np.log(z) if z > 1.0 else 0.0) - logn[j])
    x[0] = 1.0
    for j in range(len(start)):
        c = x[parent[j]] * inv_z[j]
        for s in range(start[j], end[j]):
            x[s] *= c
    return v[0]


@nb.njit(cache=True)
def add_gradient(start, end, parent, beta, logn, q, scale, out):
    """out += scale * grad d(q) (see :func:`gradient`)."""
    tiny = 2.2250738585072014e-308
    for j in range(len(start)):
        out[parent[j]] += scale * beta[j] * (logn[j] - 1.0)
        pq = q[parent[j]]
        n = end[j] - start[j]
        c = scale * beta[j]
        for s in range(start[j], end[j]):
            b = q[s] / pq if pq > 0.0 else 1.0 / n
            out[s] += c * (np.log(max(b, tiny)) + 1.0)


@nb.njit(cache=True)
def value(start, end, parent, beta, logn, q):
    total = 0.0
    for j in range(len(start)):
        pq = q[parent[j]]
        if pq <= 0.0:
            continue
        acc = pq * logn[j]
        for s in range(start[j], end[j]):
            if q[s] > 0.0:
                acc += q[s] * np.log(q[s] / pq)
        total += beta[j] * acc
    return total


@nb.njit(cache=True)
def egt_weights(start, end, parent, seq_infoset):
    n = len(start)
    below = np.zeros(n)  # sum of beta_k over the infosets right below j
    beta = np.empty(n)
    for j in range(n - 1, -1, -1):
        beta[j] = 2.0 + 2.0 * below[j]
        up = seq_infoset[parent[j]]
        if up >= 0:
            below[up] += beta[j]
    return beta


@nb.njit(cache=True)
def subtree_counts(start, end, parent, seq_infoset, depth):
    """counts[j, r] = M_{Q_j, r}: max over pure strategies of Q_j of the number of infosets
    within r branchings below j, j included (r = 0..depth; constant once r >= d_j)."""
    n = len(start)
    counts = np.ones((n, depth + 1))
    child = np.zeros((end[n - 1] if n else 1, depth + 1))  # per sequence: sum of children's counts
    for j in range(n - 1, -1, -1):
        for r in range(1, depth + 1):
            best = 0.0
            for s in range(start[j], end[j]):
                if child[s, r - 1] > best:
                    best = child[s, r - 1]
            counts[j, r] = 1.0 + best
        p = parent[j]
        if seq_infoset[p] >= 0:
            for r in range(depth + 1):
                child[p, r] += counts[j, r]
    return counts
