"""k-means under the earth mover's distance between equity histograms (Johanson et al. 2013,
"Evaluating state-space abstractions in extensive-form games", §3: distribution-aware
abstraction).

On one dimension the EMD between two histograms over the same equal-width bins is the L1
distance between their CDFs (times the bin width). Points are CDFs; a point goes to the centre
nearest in L1; a centre is the mean of its points' CDFs (the CDF of the mixture of their
histograms). Initialisation by k-means++ (Arthur and Vassilvitskii 2007): each next centre drawn
with probability proportional to the squared distance to the nearest centre so far, seeded.
"""

from __future__ import annotations

import numba as nb
import numpy as np


def histograms_to_cdfs(hist) -> np.ndarray:
    """float32 CDFs of count histograms ``[n, bins]`` (rows with at least one count)."""
    h = np.asarray(hist, dtype=np.float64)
    return (np.cumsum(h, axis=1) / h.sum(axis=1, keepdims=True)).astype(np.float32)


def emd_kmeans(cdfs, k: int, seed: int = 0, max_iter: int = 50):
    """(labels int32[n], centres float32[k, bins], iterations) of k-means under L1 on CDFs."""
    x = np.ascontiguousarray(cdfs, dtype=np.float32)
    n = x.shape[0]
    k = min(k, n)
    rng = np.random.default_rng(seed)
    centres = np.empty((k, x.shape[1]), dtype=np.float32)
    centres[0] = x[rng.integers(n)]
    d = _l1_to(x, centres[0])
    for j in range(1, k):
        w = d.astype(np.float64) ** 2
        i = rng.choice(n, p=w / w.sum()) if w.sum() > 0 else rng.integers(n)
        centres[j] = x[i]
        d = np.minimum(d, _l1_to(x, centres[j]))
    labels = np.full(n, -1, dtype=np.int32)
    for it in range(1, max_iter + 1):
        new, dist = _assign(x, centres)
        if (new == labels).all():
            break
        labels = new
        sums = np.zeros_like(centres, dtype=np.float64)
        np.add.at(sums, labels, x)
        counts = np.bincount(labels, minlength=k)
        for j in np.flatnonzero(counts == 0):  # an empty cluster takes the farthest point
            far = int(np.argmax(dist))
            labels[far], dist[far] = j, 0.0
            sums[j] = x[far]
            counts[j] = 1
        centres = (sums / counts[:, None]).astype(np.float32)
    return labels, centres, it


@nb.njit(cache=True)
def _l1_to(x, c):
    out = np.empty(x.shape[0], dtype=np.float32)
    for i in range(x.shape[0]):
        s = 0.0
        for b in range(x.shape[1]):
            s += abs(x[i, b] - c[b])
        out[i] = s
    return out


@nb.njit(cache=True)
def _assign(x, centres):
    n, k = x.shape[0], centres.shape[0]
    labels = np.empty(n, dtype=np.int32)
    dist = np.empty(n, dtype=np.float32)
    for i in range(n):
        best, bj = np.inf, 0
        for j in range(k):
            s = 0.0
            for b in range(x.shape[1]):
                s += abs(x[i, b] - centres[j, b])
                if s >= best:
                    break
            if s < best:
                best, bj = s, j
        labels[i], dist[i] = bj, best
    return labels, dist


def quantile_buckets(values, k: int) -> np.ndarray:
    """int32 bucket of each value: its quantile bin among ``values`` (k equal-count bins)."""
    v = np.asarray(values, dtype=np.float64)
    edges = np.quantile(v, np.arange(1, k) / k)
    return np.searchsorted(edges, v, side="right").astype(np.int32)
