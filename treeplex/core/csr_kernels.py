"""CSR products y = M v for :class:`treeplex.model.problem.SparsePayoff` (and the fused CFR iteration
of :mod:`treeplex.backends.numba_regret`): one pass, row by row, sums from 0.0 in storage order."""

import numba as nb
import numpy as np


@nb.njit(cache=True)
def csr_matvec(indptr, indices, data, v):
    n = len(indptr) - 1
    out = np.zeros(n)
    for i in range(n):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * v[indices[k]]
        out[i] = acc
    return out


@nb.njit(cache=True)
def csr_matvec_into(indptr, indices, data, v, out):
    for i in range(len(indptr) - 1):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * v[indices[k]]
        out[i] = acc
