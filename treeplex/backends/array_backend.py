"""The array backend: every treeplex pass as whole-array operations, vectorized by depth level,
so that the same code runs on NumPy arrays on the CPU (``make_backend("array")``, what the
tests run) and on CuPy arrays on a CUDA device (``make_backend("gpu")``).

Design. Infosets are grouped by (depth, number of actions k). A group's sequences form an
(n, k) index matrix (an infoset's sequences are contiguous), so every reduction *inside* an
infoset (the value sum_s b[s] v[s], the regret-matching normalizer, the max and the
log-sum-exp of the smoothed best response, the argmax of a best response) is a reduction
along axis 1 of one gathered (n, k) array: no per-infoset loop, no segment pointers. The only
cross-infoset operation is adding the infosets' values into their parent sequences: one
scatter-add per depth level (:func:`_scatter_add`). Bottom-up passes (regret update,
counterfactual values, smoothed best response, best response) visit the levels deepest
first, top-down passes (plans) shallowest first; all infosets of one depth are independent,
so a pass costs a few array launches per (depth, k) group, whatever the number of infosets:
the shape a GPU wants. The gradient of the dilated entropy and its value have no level
dependency (one pass over the groups, one scatter). The regret update goes further
(:class:`_Rows`): only its value pass is bottom-up, so regret matching runs once over every
sequence, with the sums inside an infoset as ``bincount`` over the sequences' infosets.

The arithmetic is that of the numba kernels (:mod:`.numba_regret`,
:mod:`treeplex.core.dilated_entropy_kernels`, :mod:`treeplex.core.perturbed`) operation for operation,
and on NumPy in the same order too: sums inside an infoset left to right (:func:`_rowsum`,
up to 16 actions) and the scatter into parents in numba's infoset order (``np.add.at``), so
NumPy runs reproduce numba's iterates to the last bit or nearly (exact ties, e.g. all regrets
zero up to rounding, are decided alike; the tests ask 1e-9 in float64). On CuPy the scatter
uses atomics, in no fixed order: results agree to rounding, and a rounding-level tie may
branch differently. Every scalar of :func:`.numba_regret.kernel_args` is supported (RM, RM+, discounting,
prediction, Hedge with a log prior) and so are lower bounds (EFPE) in the regret update, the
best response and the (perturbed) dilated entropy.

Namespaces. The code is written to the Python array API standard's names (``xp.sum(a,
axis=1)``, ``xp.max``, ``xp.argmax``, ``xp.where``, ``xp.exp``, ...) plus two operations the
standard lacks: integer-array gathers/assignments (NumPy, CuPy and torch all have them) and
the scatter-add (:func:`_scatter_add`: ``np.add.at``, ``cupyx.scatter_add``). A torch
namespace would need ``index_add_`` there and ``array_api_compat`` for the names; not done. ``xp`` is ``numpy`` for "array" and
``cupy`` for "gpu" (``pip install 'treeplex[gpu]'``).

Products. Solvers take gradients from ``problem.A`` as before. On the CPU the operator is
used as is. On the device, a CSR operator (``A.csr``) is copied to the device once, as two
``cupyx.scipy.sparse.csr_matrix`` (A and A^T, cuSPARSE products), and counted on the host
operator; the poker operators (river, streets, suit-symmetric) run as sorted prefix sums
per board batched over terminal groups (:mod:`treeplex.poker.device_operator`), on the
device; any other structured operator stays on the host, its products copying the vector
to the host and the result back.

Iterates stay where the backend keeps them (regrets, plans, sums, SBR outputs);
``to_numpy`` is called only for averages, checkpoints and gap checks.

float32 against float64 on a device: consumer GPUs run float64 at 1/32-1/64 of the float32
rate, data-center GPUs (H100) at 1/2; the passes here are memory-bound, so float32 would
about halve the traffic (up to ~2x faster) on either. Expected cost: regret sums and the
log-sum-exp lose precision at ~1e-7 relative, so CFR+ averages stall around a gap of ~1e-6 of
the payoff range and EGT's small-mu smoothed best responses lose accuracy first. None of
this is measured here (no device was available); the tests run float64 only, and the
crossover size where the device beats numba on the CPU needs a device to measure.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..errors import InputError
from .state import RegretState, first_play, host_bounds

TINY = 2.2250738585072014e-308


def _cupy():
    """CuPy and a CUDA device, or an InputError in one line."""
    msg = "backend 'gpu' needs CuPy and a CUDA device: pip install 'treeplex[gpu]'"
    try:
        import cupy
    except Exception:  # ImportError, or a broken CUDA install
        raise InputError(msg) from None
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise InputError(msg)
    except InputError:
        raise
    except Exception:
        raise InputError(msg) from None
    return cupy


class _Group:
    """Infosets of one depth with k actions: ``idx`` (n, k) sequence indices, ``j`` infoset
    ids, ``par`` parent sequences, ``col`` = arange(k)."""

    def __init__(self, xp, T, js: np.ndarray):
        k = int(T.end[js[0]] - T.start[js[0]])
        self.k = k
        self.n = len(js)
        self.j_host = js
        self.idx = xp.asarray(T.start[js].astype(np.int64)[:, None] + np.arange(k, dtype=np.int64)[None, :])
        self.j = xp.asarray(js.astype(np.int64))
        self.par = xp.asarray(T.parent[js].astype(np.int64))
        self.col = xp.asarray(np.arange(k, dtype=np.int64))


class _Level:
    """The groups of one depth, and the scatter of their infosets' values into their parent
    sequences in decreasing infoset order (the numba kernels' order: the same sums in the
    same order, so that NumPy runs agree with numba to the last bit where ties decide)."""

    def __init__(self, xp, T, groups):
        self.groups = groups
        js = np.concatenate([G.j_host for G in groups])
        self.order = xp.asarray(np.argsort(-js, kind="stable"))
        self.par = xp.asarray(T.parent[js].astype(np.int64)[np.argsort(-js, kind="stable")])


class _Plex:
    """One treeplex's levels (top-down order) and per-infoset/sequence arrays."""

    def __init__(self, xp, T):
        self.xp = xp
        self.T = T
        self.n = T.n_seqs
        groups = []
        if T.n_infosets:
            order = np.lexsort((T.end - T.start, T.depth))
            key = np.stack((T.depth[order], (T.end - T.start)[order]))
            cut = np.flatnonzero(np.any(np.diff(key, axis=1) != 0, axis=0)) + 1
            groups = [_Group(xp, T, np.sort(js)) for js in np.split(order, cut) if len(js)]
        self.groups = groups
        depths = [int(T.depth[G.j_host[0]]) for G in groups]
        self.levels = [_Level(xp, T, [G for G, d in zip(groups, depths) if d == level])
                       for level in sorted(set(depths))]
        self.logn = xp.asarray(np.log((T.end - T.start).astype(np.float64)))
        # every infoset, increasing order: the gradient's scatter into parent sequences
        js = np.concatenate([G.j_host for G in groups]) if groups else np.zeros(0, np.int64)
        self.all_order = xp.asarray(np.argsort(js, kind="stable"))
        self.all_par = xp.asarray(T.parent.astype(np.int64))
        self.parent = self.all_par
        self._rows = None

    @property
    def rows(self) -> "_Rows":
        """The regret update's index (:class:`_Rows`), built on first use."""
        if self._rows is None:
            self._rows = _Rows(self.xp, self.T)
        return self._rows


class _Rows:
    """The regret update's index: every infoset a row, its sequences ``seq`` the row's cells.
    Rows go by depth, shallowest first, and inside a depth by decreasing infoset (numba's
    order of the adds into a parent sequence); cells are flat, row after row. Per cell:
    ``seq``, ``row``, ``row_in_depth`` (counted from its depth's first row), ``cell_par`` (its
    infoset's parent sequence). Per row: ``j`` (the infoset), ``first`` (its first cell),
    ``uniform`` (1/k). ``depths``: per depth, (lo, hi) of its rows, their ``parent`` sequences,
    and (c0, c1) of its cells.

    Only the value pass is bottom-up by depth; regret matching needs only the counterfactual
    values, so it runs on all cells at once: a few array operations per depth plus one set for
    the whole treeplex, instead of one set per (depth, k) group (3x fewer on a small river
    spot). Sums over a row are ``bincount`` with weights, which adds each row's cells in
    order from 0, as the numba kernels do. 32 B per sequence and 32 per infoset.
    """

    def __init__(self, xp, T):
        self.xp = xp
        order = np.lexsort((-np.arange(T.n_infosets), T.depth))  # depth up, then infoset down
        self.n = n = len(order)
        ks = (T.end - T.start).astype(np.int64)[order]
        first = np.concatenate([[0], np.cumsum(ks)[:-1]]).astype(np.int64) if n else np.zeros(0, np.int64)
        row = np.repeat(np.arange(n, dtype=np.int64), ks)
        self.row = xp.asarray(row)
        self.first = xp.asarray(first)
        self.seq = xp.asarray(T.start[order].astype(np.int64)[row] + np.arange(len(row)) - first[row])
        par = T.parent[order].astype(np.int64)
        self.cell_par = xp.asarray(par[row])
        self.uniform = xp.asarray(1.0 / np.maximum(ks, 1).astype(np.float64))
        self.j = xp.asarray(order.astype(np.int64))
        d = T.depth[order]
        lo = np.concatenate([[0], np.flatnonzero(np.diff(d)) + 1]).astype(np.int64) if n else np.zeros(0, np.int64)
        hi = np.append(lo[1:], n)
        self.row_in_depth = xp.asarray(row - np.repeat(lo, hi - lo)[row])
        c = np.append(first, len(row))
        self.depths = [(int(a), int(b), xp.asarray(par[a:b]), int(c[a]), int(c[b])) for a, b in zip(lo, hi)]

    def value_pass(self, v, b):
        """Bottom-up by depth: each infoset's value sum_s b[s] v[s] (returned, by row) added
        into its parent sequence, so ``v`` becomes the counterfactual values under ``b``."""
        xp = self.xp
        played = xp.empty(self.n)
        for lo, hi, par, c0, c1 in reversed(self.depths):
            S = self.seq[c0:c1]
            bs = b[S] if b.dtype == xp.float64 else b[S].astype(xp.float64)
            played[lo:hi] = xp.bincount(self.row_in_depth[c0:c1], weights=bs * v[S], minlength=hi - lo)
            _scatter_add(xp, v, par, played[lo:hi])
        return played

    def sums(self, cells):
        """Per row, the sum of its cells' values, left to right."""
        return self.xp.bincount(self.row, weights=cells, minlength=self.n)

    def max(self, cells):
        """Each row's largest cell (exact, so any order gives the same bits): ``reduceat`` on
        NumPy; CuPy has no ``reduceat``, so ``maximum.at`` into a row vector there."""
        xp = self.xp
        if xp is np:
            return np.maximum.reduceat(cells, self.first)
        out = xp.full(self.n, -xp.inf, dtype=cells.dtype)
        try:
            xp.maximum.at(out, self.row, cells)
        except (AttributeError, NotImplementedError):  # CuPy before ufunc.at
            import cupyx

            cupyx.scatter_max(out, self.row, cells)
        return out


def _scatter_add(xp, v, idx, vals):
    """v[idx[i]] += vals[i] one after another in order (``idx`` may repeat): the one scatter
    the passes need. NumPy adds in order (``ufunc.at``); CuPy with atomics, in no fixed order."""
    if xp is np:
        np.add.at(v, idx, vals)
    else:
        import cupyx

        cupyx.scatter_add(v, idx, vals)


def _rowsum(xp, M, first=None):
    """``first`` (if given) + the sum along axis 1 of an (n, k) array, left to right (the
    numba kernels' order) for the small k of game trees; pairwise (``xp.sum``) above 16 actions."""
    k = M.shape[1]
    if k > 16:
        return xp.sum(M, axis=1) + (0.0 if first is None else first)
    acc = M[:, 0] if first is None else first + M[:, 0]
    for i in range(1, k):
        acc = acc + M[:, i]
    return acc


def _up(xp, v, level, vals):
    """Add each infoset's value (``vals``: one array per group of ``level``) into its parent sequence."""
    cat = xp.concatenate(vals) if len(vals) > 1 else vals[0]
    _scatter_add(xp, v, level.par, cat[level.order])


class ArrayBackend:
    """The treeplex passes on arrays of namespace ``xp`` (numpy or cupy); see the module docstring."""

    auto = False  # True when driver.solve picked this backend itself (see backends.starts_on_numpy)

    @property
    def problem(self):
        """The problem this backend runs (held weakly: the problem owns the backend)."""
        return self._problem()

    def __init__(self, problem, xp=np, name: str = "array"):
        if problem.locks is not None:
            raise InputError(f"node locks run on the numba backend, not {name}")
        self._problem = weakref.ref(problem)  # the problem owns its backend: no cycle to wait for the collector
        self.xp = xp
        self.name = name
        self.treeplexes = problem.treeplexes
        self.plex = tuple(_Plex(xp, T) for T in self.treeplexes)
        self.device = xp is not np
        if self.device:
            problem.A = DeviceOperator(problem.A, xp)

    # ------------------------------------------------------------------ arrays

    def asarray(self, a, dtype=np.float64):
        if self.device:
            return self.xp.asarray(a, dtype=dtype)
        return np.asarray(a, dtype=dtype)

    def to_numpy(self, a):
        if self.device and not isinstance(a, np.ndarray):
            return self.xp.asnumpy(a)
        return a

    def lerp(self, a, b, tau: float):
        """(1 - tau) a + tau b."""
        return (1.0 - tau) * a + tau * b

    def bounds(self, lower):
        """Per player: None, or (l per sequence, L = sum of l per infoset) on the device."""
        return tuple(None if pl is None else tuple(self.asarray(a) for a in pl)
                     for pl in host_bounds(self.treeplexes, lower))

    # ------------------------------------------------------------------ CFR

    def regret_state(self, p: int, dtype, lower=None) -> RegretState:
        """Uniform play (l + (1 - L) uniform on a perturbed treeplex), zero regrets and sums."""
        n = self.treeplexes[p].n_seqs
        host = None if lower is None else tuple(self.to_numpy(a) for a in lower)
        b, x = first_play(self.treeplexes[p], host)
        return RegretState(b=self.asarray(b, dtype), R=self.asarray(np.zeros(n), dtype), x=self.asarray(x, dtype),
                           xsum=self.asarray(np.zeros(n), dtype), logprior=self.asarray(np.zeros(0)))

    def regret_update(self, p: int, g, s: RegretState, coef, avg, plain: bool = False, lower=None) -> float:
        """The value pass (bottom-up by depth), regret matching at every infoset at once, then
        the plan pass (top-down) for player p against ``g`` (overwritten with the
        counterfactual values); returns <g, x> played. See :class:`_Rows`."""
        xp, W = self.xp, self.plex[p].rows
        pos, neg, floor, kappa, lam, eta = coef
        rho, omega = avg
        v, b, R = g, s.b, s.R
        f64 = b.dtype == xp.float64
        hedge = eta > 0.0
        simple = plain and pos == neg and kappa == 1.0 and lam == 0.0 and not hedge  # numba's general = None
        played = W.value_pass(v, b)
        V, Rg = v[W.seq], R[W.seq]
        if not f64:
            Rg = Rg.astype(xp.float64)
        value = played
        if lower is not None and not hedge:
            c = 1.0 - lower[1][W.j]
            L = lower[0][W.seq]
            value = (played - W.sums(L * V)) / c
        inst = V - value[W.row]
        if simple:
            acc = xp.maximum(Rg * pos + inst, floor)
        else:
            acc = xp.maximum(Rg * xp.where(Rg > 0.0, pos, neg) + inst, floor)
        if hedge:
            q = eta * (kappa * acc + lam * inst)
            if s.logprior.shape[0]:
                q = q + s.logprior[W.seq]
            e = xp.exp(q - W.max(q)[W.row]) if W.n else q
            Bn = e / W.sums(e)[W.row]
        else:
            q = xp.maximum(acc if simple else kappa * acc + lam * inst, 0.0)
            total = W.sums(q)
            if not f64:  # numba stores q in b (rounded) before normalizing it
                q = q.astype(b.dtype).astype(xp.float64)
            some = total > 0.0
            inv = 1.0 / xp.where(some, total, 1.0)
            Bn = xp.where(some[W.row], q * inv[W.row], W.uniform[W.row])
            if lower is not None:
                Bn = L + c[W.row] * Bn
        R[W.seq] = acc
        b[W.seq] = Bn
        self._plan(W, b, s.x, s.xsum, rho, omega)
        return v[0]

    def _plan(self, W, b, x, xsum, rho, omega):
        """xsum <- rho xsum + omega x, then x <- plan of b, top-down by depth."""
        if xsum.dtype == self.xp.float64:
            xsum[...] = rho * xsum + omega * x
        else:  # in float64, stored rounded (as numba does)
            xsum[...] = rho * xsum.astype(self.xp.float64) + omega * x.astype(self.xp.float64)
        x[0] = 1.0
        for _, _, _, c0, c1 in W.depths:
            seq = W.seq[c0:c1]
            x[seq] = x[W.cell_par[c0:c1]] * b[seq]

    def cfr_iteration(self, players, coef, avg, plain: bool, alternating: bool, lower=(None, None)) -> None:
        """One iteration: player 0 against A y, then player 1 against -A^T x (the new x when
        ``alternating``); products through ``problem.A`` (on the device when it is CSR)."""
        A = self.problem.A
        s0, s1 = players
        g0 = self._f64(A.matvec(s1.x))
        if not alternating:
            g1 = self._f64(A.rmatvec(s0.x))
        self.regret_update(0, g0, s0, coef, avg, plain, lower[0])
        if alternating:
            g1 = self._f64(A.rmatvec(s0.x))
        self.regret_update(1, -g1, s1, coef, avg, plain, lower[1])

    def _f64(self, a):
        a = self.asarray(a)
        return a if a.dtype == self.xp.float64 else a.astype(self.xp.float64)

    def counterfactual_values(self, p: int, g, b):
        """v[s] = g[s] + the values under ``b`` of the infosets below s (a new array)."""
        v = self.asarray(g).copy()
        self.plex[p].rows.value_pass(v, self.asarray(b))
        return v

    # ------------------------------------------------------------------ smoothing, best response

    def dilated_entropy(self, p: int, weights: str = "egt", lower=None):
        """The (perturbed when ``lower`` is given) dilated entropy of player p, level-vectorized."""
        return ArrayDilatedEntropy(self, p, weights, lower)

    def best_response(self, p: int, g, lower=None):
        """max_x <g, x> over player p's treeplex (or Q^l): (value, maximizing plan)."""
        xp, P = self.xp, self.plex[p]
        v = self.asarray(g).copy()
        choice = {}
        for level in reversed(P.levels):
            ups = []
            for G in level.groups:
                V = v[G.idx]
                a = xp.argmax(V, axis=1)
                best = xp.max(V, axis=1)
                if lower is not None:
                    best = (1.0 - lower[1][G.j]) * best + _rowsum(xp, lower[0][G.idx] * V)
                choice[id(G)] = a
                ups.append(best)
            _up(xp, v, level, ups)
        x = xp.zeros(P.n, dtype=xp.float64)
        x[0] = 1.0
        for G in P.groups:
            hit = xp.where(G.col[None, :] == choice[id(G)][:, None], 1.0, 0.0)
            if lower is not None:
                hit = lower[0][G.idx] + (1.0 - lower[1][G.j])[:, None] * hit
            x[G.idx] = x[G.par][:, None] * hit
        return float(v[0]), x


class ArrayDilatedEntropy:
    """The dilated entropy (EGT paper, section 4) on a treeplex, or the perturbed dilated
    entropy on Q^l (EFPE paper) when ``lower`` = (l, L) is given, with the interface of
    :class:`treeplex.core.dilated_entropy.DilatedEntropy`: ``sbr``, ``prox``, ``value``,
    ``gradient``, ``omega``, ``modulus``, ``center``, ``beta``. Weights, modulus and omega
    are computed once on the host (setup); the passes run on the backend's arrays.
    """

    def __init__(self, backend: ArrayBackend, p: int, weights: str = "egt", lower=None):
        from ..core.dilated_entropy import DilatedEntropy

        self.bk, self.xp, self.P = backend, backend.xp, backend.plex[p]
        T = self.T = backend.treeplexes[p]
        self.kind = weights
        self.lower = lower
        if lower is None:
            host = DilatedEntropy(T, weights)
            beta, self.modulus, self.omega = host.beta, host.modulus, host.omega
            self.center = backend.asarray(host.center)
        else:
            from ..core.perturbed import PerturbedDilatedEntropy

            host = PerturbedDilatedEntropy(T, backend.to_numpy(lower[0]), "thm3" if weights == "kroer2017" else weights)
            beta, self.modulus, self.omega = host.beta, host.modulus, host.omega
            self.center = backend.asarray(host.center)
        self.beta = backend.asarray(beta)

    def sbr(self, g, mu: float):
        """argmax_x <g, x> - mu d(x) and its value, bottom-up by level then top-down."""
        xp, P = self.xp, self.P
        v = self.bk.asarray(g).copy()
        x = xp.empty(P.n, dtype=xp.float64)
        lower = self.lower
        scale = {}
        for level in reversed(P.levels):
            ups = []
            for G in level.groups:
                V = v[G.idx]
                w = self.beta[G.j] * mu
                m = xp.max(V, axis=1)
                if lower is None:
                    t = (V - m[:, None]) * (1.0 / w)[:, None]
                    e = xp.where(t > -708.0, xp.exp(xp.maximum(t, -708.0)), 0.0)
                    # z = 1 (the top term) + the others left to right, as the numba kernel sums
                    top = xp.argmax(V, axis=1)
                    z = _rowsum(xp, xp.where(G.col[None, :] == top[:, None], 0.0, e), 1.0)
                    x[G.idx] = xp.where(G.col[None, :] == top[:, None], 1.0, e)
                    scale[id(G)] = 1.0 / z
                    ups.append(m + w * (xp.where(z > 1.0, xp.log(z), 0.0) - P.logn[G.j]))
                else:
                    c = 1.0 - lower[1][G.j]
                    lo = lower[0][G.idx]
                    e = xp.exp(c[:, None] * (V - m[:, None]) / w[:, None])
                    z = _rowsum(xp, e)
                    x[G.idx] = lo + c[:, None] * e / z[:, None]
                    ups.append(c * m + w * (xp.log(z) - P.logn[G.j]) + _rowsum(xp, lo * V))
            _up(xp, v, level, ups)
        x[0] = 1.0
        for G in P.groups:
            px = x[G.par] if lower is not None else x[G.par] * scale[id(G)]
            x[G.idx] = x[G.idx] * px[:, None]
        return x, float(v[0])

    def _gradient_into(self, q, scale: float, out):
        """out += scale * grad d(q) (unperturbed; the perturbed gradient adds into zeros):
        per group, with the parent terms added in increasing infoset order as numba does."""
        xp, P = self.xp, self.P
        q = self.bk.asarray(q)
        ups = []
        tiny = TINY
        for G in P.groups:
            pq = q[G.par][:, None]
            beta = self.beta[G.j]
            if self.lower is None:
                c = scale * beta
                b = xp.where(pq > 0.0, q[G.idx] / xp.where(pq > 0.0, pq, 1.0), 1.0 / G.k)
                out[G.idx] += c[:, None] * (xp.log(xp.maximum(b, tiny)) + 1.0)
                ups.append(c * (P.logn[G.j] - 1.0))
            else:
                l, L = self.lower[0][G.idx], 1.0 - self.lower[1][G.j]
                phi = xp.where(pq > 0.0, (q[G.idx] / xp.where(pq > 0.0, pq, 1.0) - l) / L[:, None], 1.0 / G.k)
                t = (xp.log(xp.maximum(phi, tiny)) + 1.0) / L[:, None]
                out[G.idx] += beta[:, None] * t
                up = P.logn[G.j] - 1.0
                for i in range(G.k):
                    up = up - l[:, i] * t[:, i]
                ups.append(beta * up)
        if ups:
            cat = xp.concatenate(ups)[P.all_order]
            _scatter_add(xp, out, P.parent, cat)
        return out

    def gradient(self, q):
        return self._gradient_into(q, 1.0, self.xp.zeros(self.P.n, dtype=self.xp.float64))

    def prox(self, center, g, mu: float):
        """argmax_x <g, x> - mu D(x || center): the SBR of g + mu grad d(center)."""
        if self.lower is not None:
            return self.sbr(self.bk.asarray(g) + mu * self.gradient(center), mu)[0]
        shifted = self.bk.asarray(g).copy()
        return self.sbr(self._gradient_into(center, mu, shifted), mu)[0]

    def value(self, q) -> float:
        """d(q) (0 log 0 = 0; infosets with q_{p_j} = 0 contribute 0)."""
        xp = self.xp
        q = self.bk.asarray(q)
        total = 0.0
        for G in self.P.groups:
            pq = q[G.par]
            safe = xp.where(pq > 0.0, pq, 1.0)[:, None]
            r = q[G.idx]
            if self.lower is not None:
                r = (r - self.lower[0][G.idx] * pq[:, None]) / (1.0 - self.lower[1][G.j])[:, None]
            term = xp.where(r > 0.0, r * xp.log(xp.where(r > 0.0, r, 1.0) / safe), 0.0)
            per = xp.where(pq > 0.0, pq * self.P.logn[G.j] + _rowsum(xp, term), 0.0)
            total += float(xp.sum(self.beta[G.j] * per))
        return total


class DeviceOperator:
    """A payoff operator whose products take and give device arrays: a CSR operator's A and
    A^T moved to the device once (cuSPARSE), a poker operator (river, streets, suit-symmetric)
    as :class:`~treeplex.poker.device_operator.PokerArrayOperator`, any other on the host with copies.
    Host (NumPy) arguments of a device-resident operator are copied to the device and their
    product back (metrics and gap checks then run at the device's speed); of the others, they
    go to the host operator. Products are counted on the host operator (``gradients`` is its counter)."""

    def __init__(self, host, xp):
        while isinstance(host, DeviceOperator):
            host = host.host
        self.host, self.xp = host, xp
        self.shape = host.shape
        self._dev = self._poker = None
        if host.csr is None:  # an operator with its own device form (poker: prefix sums), or None
            self._poker = host.on_device(xp)
        else:
            import cupyx.scipy.sparse as csp

            # cuSPARSE takes int32 indices (2^31 nonzeros at most)
            self._dev = tuple(csp.csr_matrix((xp.asarray(d), xp.asarray(i.astype(np.int32)),
                                              xp.asarray(ptr.astype(np.int32))), shape=shape)
                              for (ptr, i, d), shape in zip(host.csr, (host.shape, host.shape[::-1])))

    def __getattr__(self, name):
        return getattr(self.host, name)

    @property
    def gradients(self):
        return self.host.gradients

    @gradients.setter
    def gradients(self, value):
        self.host.gradients = value

    def _product(self, which, v, count, out):
        if type(v) is np.ndarray:  # a host array (a device array is not one)
            if self.xp is np or (self._dev is None and self._poker is None):
                f = self.host.matvec if which == 0 else self.host.rmatvec
                return f(v, count=count, out=out)
            # the device's form, copied there and back (gap checks: far faster than the host's
            # products on large spots, measured on FLOP-FAST)
            r = self.xp.asnumpy(self._product(which, self.xp.asarray(v), count, None))
            if out is None:
                return r
            out[...] = r
            return out
        if count:
            self.host.gradients += 1
        v = v.astype(self.xp.float64, copy=False)
        if self._dev is not None:
            r = self._dev[which] @ v
        elif self._poker is not None:
            r = self._poker.matvec(v) if which == 0 else self._poker.rmatvec(v)
        else:
            f = self.host.matvec if which == 0 else self.host.rmatvec
            r = self.xp.asarray(f(self.xp.asnumpy(v), count=False))
        if out is None:
            return r
        out[...] = r
        return out

    def matvec(self, y, count=True, out=None):
        return self._product(0, y, count, out)

    def rmatvec(self, x, count=True, out=None):
        return self._product(1, x, count, out)

    def charge(self, products: int) -> None:
        self.host.gradients += products


def gpu_backend(problem):
    """The array backend on CuPy (a CUDA device), or an InputError in one line."""
    return ArrayBackend(problem, _cupy(), "gpu")


__all__ = ["ArrayBackend", "ArrayDilatedEntropy", "DeviceOperator", "gpu_backend"]
