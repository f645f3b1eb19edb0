"""The numba kernels of :class:`treeplex.core.treeplex.Treeplex`'s passes on large treeplexes
(small ones run NumPy level by level and never import numba: start-up, see that module)."""

import numba as nb
import numpy as np


@nb.njit(cache=True)
def subtree_roots(parent, seq_infoset):
    """root[j]: the infoset below the empty sequence that infoset j descends from."""
    root = np.empty(len(parent), dtype=np.int64)
    for j in range(len(parent)):
        root[j] = j if parent[j] == 0 else root[seq_infoset[parent[j]]]
    return root


@nb.njit(cache=True)
def plan_from_behavioral(start, end, parent, x):
    x[0] = 1.0
    for j in range(len(start)):
        px = x[parent[j]]
        for s in range(start[j], end[j]):
            x[s] *= px


@nb.njit(cache=True)
def best_response_value(start, end, parent, g, sign):
    """Bottom-up only: v[p_j] += max_{s in j} v[s] with v = sign * g; returns v[0]."""
    v = sign * g
    max_values(start, end, parent, v)
    return v[0]


@nb.njit(cache=True)
def max_values(start, end, parent, v):
    """In place, bottom-up: v[p_j] += max_{s in j} v[s] (the best-response pass; a split
    solve runs it on a part whose parents may lie on its boundary)."""
    for j in range(len(start) - 1, -1, -1):
        best = v[start[j]]
        for s in range(start[j] + 1, end[j]):
            best = max(best, v[s])
        v[parent[j]] += best


@nb.njit(cache=True)
def best_response(start, end, parent, g, x, choice):
    """Bottom-up: v[p_j] += max_{s in j} v[s], choice[j] = argmax; top-down: put all mass on it."""
    v = g.copy()
    for j in range(len(start) - 1, -1, -1):
        best = start[j]
        for s in range(start[j] + 1, end[j]):
            if v[s] > v[best]:
                best = s
        choice[j] = best
        v[parent[j]] += v[best]
    x[0] = 1.0
    for j in range(len(start)):
        px = x[parent[j]]
        for s in range(start[j], end[j]):
            x[s] = px if s == choice[j] else 0.0
    return v[0]
