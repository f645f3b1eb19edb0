"""One postflop spot split across workers: the driver owns the trunk (the betting before the
first deal), each worker the chance subtrees below some dealt cards (:mod:`.poker.split`).

A worker holds its part of both treeplexes, its regrets, strategies and average sums, and
its part of the payoff operator; the driver holds the trunk's, as a :class:`RegretSolver`
on the trunk problem, whose ``regrets(t)`` and ``averaging(t)`` give every CFR variant's
scalars. One iteration with alternating updates, as ``RegretSolver.step``:

1. driver -> each worker: player 1's plan at the parents of the worker's roots of player 1
   (the roots' stubs in the trunk play b = 1: their plan is the parent's). The worker ends player 1's plan pass of the previous iteration (top-down
   below the roots), computes player 0's gradient on its terminals and its regret pass
   (bottom-up), and returns player 0's values at its roots (what each root's infoset passes
   up to its parent: sum_a b[a] v[a]);
2. the driver puts them on player 0's stubs and runs the trunk's gradient, regret pass and
   plan pass for player 0 (``backend.regret_update``);
3. driver -> each worker: player 0's new plan at its roots' parents. The worker runs player 0's plan
   pass, then player 1's gradient and regret pass, and returns player 1's root values;
4. the driver updates the trunk for player 1. Player 1's plan pass below the roots waits
   for step 1 of the next iteration (or :meth:`SplitSolver.flush`).

Only vectors over hands cross: per worker and iteration ``8 (nP_0 + nP_1 + nB_0 + nB_1)``
bytes, nB_p = player p's hands x the worker's roots of p (public nodes right below the deal
where p acts first on the new street), nP_p = p's hands x the (node, action) pairs before
the deal that those roots follow (:func:`bytes_per_iteration`). Every number is the single-process solve's,
bit for bit, where that solve runs its operator on one thread (see :mod:`.poker.split`:
stubs keep the trunk's sums in the same order; a worker's sums are the same as its subtrees').

Engines: ``local`` (workers are objects in this process, called one after another: tests),
``process`` (one process per worker, pipes) and ``ray`` (Ray actors; a local cluster, or
``address``). The gap (:meth:`SplitSolver.evaluate`) is computed the same way: best-response
passes below the roots on the workers, the trunk's on the driver, nothing gathered.
"""

from __future__ import annotations

import time

import numba as nb
import numpy as np

from ..backends.numba_regret import _plan_runs, _regret_runs, kernel_args
from ..errors import InputError, WorkerLost
from ..core.memory import limit_bytes, show
from ..model.metrics import Evaluation, dot
from ..poker.postflop import BYTES_PER_PUBLIC_NODE, bytes_per_seq
from ..model.problem import Problem
from ..core.threads import PARALLEL_SEQS
from ..core.treeplex_kernels import max_values


def load_split_game(spec: dict):
    """The PostflopGame of a spec dict, with isomorphism off (parts are cut by dealt card)."""
    from ..poker.postflop import load_postflop_spec

    return load_postflop_spec({**spec, "isomorphism": False}, "split spec")


class PartWorker:
    """One worker: part ``part`` of ``parts`` of the spot ``spec`` (a postflop spec dict)."""

    def __init__(self, spec: dict, part: int, parts: int, storage: str = "float64", threads: int | None = 1):
        if threads:
            nb.set_num_threads(min(threads, nb.config.NUMBA_NUM_THREADS))
        from ..poker.split import piece

        self.piece = piece(load_split_game(spec), part, parts)
        self.n_root = [sd.n_boundary for sd in self.piece.sides]
        self.A = self.piece.A
        dtype = np.dtype(storage)
        self.runs, self.b, self.R, self.x, self.xsum = [], [], [], [], []
        for sd in self.piece.sides:
            n = sd.n_seqs
            self.runs.append(sd.parts(nb.get_num_threads() if n > PARALLEL_SEQS else 1))
            b = np.ones(n, dtype=dtype)
            b[1 + sd.n_boundary:] = 1.0 / np.repeat(sd.end - sd.start, sd.end - sd.start)
            self.b.append(b)
            self.R.append(np.zeros(n, dtype=dtype))
            self.x.append(np.zeros(n, dtype=dtype))
            self.x[-1][0] = 1.0
            self.xsum.append(np.zeros(n, dtype=dtype))

    def sizes(self) -> dict:
        """Boundary entries and memory of this worker."""
        return {"boundary": [sd.n_boundary for sd in self.piece.sides],
                "sequences": [sd.n_seqs for sd in self.piece.sides], "nbytes": self.nbytes()}

    def nbytes(self) -> int:
        """Bytes of this worker's arrays: layout, operator and solver state."""
        return self.piece.nbytes + sum(a.nbytes for arrs in (self.b, self.R, self.x, self.xsum) for a in arrs) + \
            sum(a.nbytes for r in self.runs for a in r)

    def step(self, q: int, vec: np.ndarray, plan_avg, coef) -> np.ndarray | None:
        """``vec`` = player q's plan at its roots' parents. With ``plan_avg`` = (rho, omega):
        player q's plan pass. With ``coef`` (kernel_args): player 1-q's gradient and regret
        pass; returns its values at the roots."""
        x = self.x[q]
        x[1:1 + self.n_root[q]] = vec[self.expand[q]]
        if plan_avg is not None:
            self._plan(q, *plan_avg)
        if coef is None:
            return None
        p = 1 - q
        g = self.A.matvec(x) if p == 0 else -self.A.rmatvec(x)
        pos, floor, general, eta = coef
        start, end, parent = self._arrays(p)
        _regret_parts(self.runs[p], start, end, parent, g, self.b[p], self.R[p], pos, floor, general, eta,
                      np.zeros(0))
        return g[1:1 + self.n_root[p]]

    def start(self, vecs, expand) -> None:
        """The first plans (uniform play) below the roots, from ``vecs``, both players' plans
        at the roots' parents; ``expand[q]`` gives the parent entry of each root entry."""
        self.expand = expand
        for q, sd in enumerate(self.piece.sides):  # in float64, as RegretState's first plan, then stored
            x, b = np.zeros(sd.n_seqs), np.ones(sd.n_seqs)
            b[1 + sd.n_boundary:] = 1.0 / np.repeat(sd.end - sd.start, sd.end - sd.start)
            x[0], x[1:1 + self.n_root[q]] = 1.0, vecs[q][expand[q]]
            _plan_parts(self.runs[q], sd.start, sd.end, sd.parent, b, x, np.zeros(sd.n_seqs), 1.0, 0.0)
            self.x[q][:] = x

    def _plan(self, q, rho, omega) -> None:
        _plan_parts(self.runs[q], *self._arrays(q), self.b[q], self.x[q], self.xsum[q], rho, omega)

    def _arrays(self, p):
        sd = self.piece.sides[p]
        return sd.start, sd.end, sd.parent

    def evaluate(self, vecs, norm: float) -> tuple:
        """Against the average plans (xsum / ``norm`` below the roots, ``vecs`` at their
        parents): this part's share of x^T A y, and each player's best-response values at its roots."""
        z = []
        for q in (0, 1):
            a = np.asarray(self.xsum[q], np.float64) / norm if norm > 0 else np.array(self.x[q], dtype=np.float64)
            a[0] = 1.0
            a[1:1 + self.n_root[q]] = vecs[q][self.expand[q]]
            z.append(a)
        g0, g1 = self.A.matvec(z[1], count=False), -self.A.rmatvec(z[0], count=False)
        value = dot(z[0], g0)
        out = []
        for p, g in ((0, g0), (1, g1)):
            max_values(*self._arrays(p), g)
            out.append(g[1:1 + self.n_root[p]])
        return value, out[0], out[1]

    def roots(self) -> list[np.ndarray]:
        """Per player, the root nodes (global ids) in the order of the root vectors."""
        return [sd.roots for sd in self.piece.sides]

    def plans(self, which: str) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per player (global sequences, values of ``x`` or ``xsum``) of the own sequences."""
        arrs = self.x if which == "x" else self.xsum
        return [(sd.glob, np.asarray(a[1 + sd.n_boundary:], dtype=np.float64))
                for sd, a in zip(self.piece.sides, arrs)]


@nb.njit(parallel=True, cache=True)
def _regret_parts(parts, start, end, parent, v, b, R, pos, floor, general, eta, logprior):
    """The regret pass of a worker, one part of whole subtrees below its roots per thread
    (each root's infoset passes its value to its own root entry: parts write disjoint
    entries, and every number is the serial pass's)."""
    lo, hi, size, ptr = parts
    for k in nb.prange(len(ptr) - 1):
        _regret_runs(lo, hi, size, ptr[k], ptr[k + 1], start, end, parent, v, b, R, pos, floor, general, eta, logprior,
                     None)


@nb.njit(parallel=True, cache=True)
def _plan_parts(parts, start, end, parent, b, x, xsum, rho, omega):
    """The plan pass of a worker, parts as in :func:`_regret_parts`."""
    lo, hi, size, ptr = parts
    for k in nb.prange(len(ptr) - 1):
        _plan_runs(lo, hi, size, ptr[k], ptr[k + 1], start, end, parent, b, x, xsum, rho, omega)


def bytes_per_iteration(roots, parents) -> int:
    """Bytes crossing per iteration for workers with root entries ``roots`` = [(nB_0, nB_1),
    ...] and parent entries ``parents`` = [(nP_0, nP_1), ...]: 8 (nP_0 + nP_1 + nB_0 + nB_1)
    per worker (module docstring)."""
    return sum(8 * (b0 + b1 + p0 + p1) for (b0, b1), (p0, p1) in zip(roots, parents))


class SplitSolver:
    """A CFR-family solve of a postflop spot over ``workers`` parts (module docstring).

    ``algorithm`` and ``params`` are those of :func:`treeplex.run.driver.make_solver` (any
    :class:`RegretSolver` variant, alternating updates; no prior, no lower bounds).
    ``engine`` = "local", "process" or "ray" (``address`` for a running Ray cluster).
    ``max_memory`` (per worker, bytes or "4G"): refuses, before building, a part that would
    not fit.
    """

    def __init__(self, spec: dict, workers: int = 2, algorithm: str = "cfr+", engine: str = "local",
                 address: str | None = None, max_memory=None, threads: int = 1, **params):
        from ..run.driver import make_solver
        from ..poker.split import part_sizes, piece
        from ..solvers.cfr import RegretSolver

        if params.get("alternating") is False or params.get("prior") is not None or params.get("lower") is not None:
            raise InputError("split: alternating updates only, without a prior or lower bounds")
        self.spec = dict(spec)
        game = load_split_game(self.spec)
        if getattr(game, "rake", 0):
            raise InputError("split: raked spots are general-sum, which the split solve does not evaluate; "
                             "solve them in one process")
        self.game = game
        sizes = part_sizes(game, workers)
        t = game.tree
        public = (t.n_nodes + t.n_chance + t.n_terminals) * BYTES_PER_PUBLIC_NODE
        per_seq = bytes_per_seq(threads)  # as PostflopGame.memory_estimate
        need = [per_seq * (a + b) + public for a, b in sizes]
        limit, name = limit_bytes(None if max_memory is None else str(max_memory))
        if limit is not None and max(need) > limit:
            k = int(np.argmax(need))
            raise InputError(f"split: worker {k + 1} of {workers} needs about {show(need[k])} "
                             f"({sum(sizes[k]):,} sequences), above {name} ({show(limit)}) per worker; add workers")
        self.memory_estimate = need
        trunk = piece(game, -1, workers)
        self.trunk_problem = Problem(trunk.sides[0].treeplex(), trunk.sides[1].treeplex(), trunk.A,
                                     name=game.name + "/trunk")
        self.trunk = make_solver(self.trunk_problem, algorithm, **params)
        if not isinstance(self.trunk, RegretSolver):
            raise InputError(f"split: {algorithm!r} is not a CFR-family algorithm")
        own = [sd.glob >= 0 for sd in trunk.sides]  # not a stub
        self.trunk_glob = [(1 + np.flatnonzero(m), sd.glob[m]) for m, sd in zip(own, trunk.sides)]
        self.name = f"{self.trunk.name}/split{workers}"
        self.engine = make_split_engine(engine, self.spec, workers, params.get("storage", "float64"), address, threads)
        self.sizes = self.engine.call("sizes", [()] * workers)
        # per worker and player: the trunk sequence (stub) of each entry of its root vectors
        self.index = [[np.concatenate([sd.local[int(v)] + np.arange(sd.n_hands) for v in r] or [np.zeros(0, int)])
                       for sd, r in zip(trunk.sides, rts)] for rts in self.engine.call("roots", [()] * workers)]
        # ... and the trunk sequences whose plans it needs: its roots' parents (a stub's plan is
        # its parent's, b = 1), sent once per parent; ``expand`` puts them on the root entries
        T = self.trunk_problem.treeplexes
        self.send, expand = [], []
        for ix in self.index:
            pairs = [np.unique(T[p].parent[T[p].seq_infoset[ix[p]]], return_inverse=True) for p in (0, 1)]
            self.send.append([u for u, _ in pairs])
            expand.append([inv.reshape(-1).astype(np.int64) for _, inv in pairs])
        self.iteration = 0
        self.pending = None  # (rho, omega) of player 1's plan pass still to run below the roots
        self.bytes_sent = 0
        first = [T[p].uniform() for p in (0, 1)]  # the trunk's first plans before storage rounding
        self.engine.call("start", [([f[i] for f, i in zip(first, self.send[k])], expand[k]) for k in range(workers)])

    @property
    def workers(self) -> int:
        return len(self.index)

    def _boundary(self, q: int) -> list[np.ndarray]:
        x = self.trunk.players[q].x
        return [np.asarray(x[i[q]], dtype=np.float64) for i in self.send]

    def _exchange(self, q: int, plan_avg, coef) -> list:
        vecs = self._boundary(q)
        out = self.engine.call("step", [(q, v, plan_avg, coef) for v in vecs])
        self.bytes_sent += sum(v.nbytes for v in vecs) + sum(o.nbytes for o in out if o is not None)
        return out

    def step(self) -> None:
        tr = self.trunk
        t = tr.iteration + 1 - tr.epoch
        coef, avg = tr.regrets(t), tr.averaging(t)
        kargs = kernel_args(coef, tr.plain)
        A, bk = self.trunk_problem.A, self.trunk_problem.backend
        s0, s1 = tr.players
        vals = self._exchange(1, self.pending, kargs)
        g0 = A.matvec(s1.x)
        for ix, v in zip(self.index, vals):
            g0[ix[0]] += v
        bk.regret_update(0, g0, s0, coef, avg, tr.plain)
        vals = self._exchange(0, avg, kargs)
        g1 = A.rmatvec(s0.x)
        np.negative(g1, out=g1)
        for ix, v in zip(self.index, vals):
            g1[ix[1]] += v
        bk.regret_update(1, g1, s1, coef, avg, tr.plain)
        self.pending = avg
        tr.iteration += 1
        self.iteration += 1

    def flush(self) -> None:
        """Run player 1's pending plan pass below the boundary (before reading plans)."""
        if self.pending is not None:
            vecs = self._boundary(1)
            self.engine.call("step", [(1, v, self.pending, None) for v in vecs])
            self.bytes_sent += sum(v.nbytes for v in vecs)
            self.pending = None

    def _assemble(self, which: str) -> tuple[np.ndarray, np.ndarray]:
        self.flush()
        full = [np.zeros(self.game.n_seqs(p)) for p in (0, 1)]
        for p, (s, (at, gl)) in enumerate(zip(self.trunk.players, self.trunk_glob)):
            a = s.x if which == "x" else s.xsum
            full[p][0] = a[0]
            full[p][gl] = a[at]
        for parts in self.engine.call("plans", [(which,)] * self.workers):
            for p, (gl, a) in enumerate(parts):
                full[p][gl] = a
        return full[0], full[1]

    def current(self) -> tuple[np.ndarray, np.ndarray]:
        """The full-tree plans the next iteration plays (gathered from the workers)."""
        return self._assemble("x")

    def average(self) -> tuple[np.ndarray, np.ndarray]:
        """The full-tree average plans (gathered from the workers)."""
        x, y = self._assemble("xsum")
        cur = self.current() if x[0] <= 0 else None
        return (x / x[0], y / y[0]) if cur is None else cur

    def evaluate(self) -> Evaluation:
        """Value, best responses and gap of the average plans, without gathering them."""
        self.flush()
        tr, A = self.trunk, self.trunk_problem.A
        z = []
        for s in tr.players:
            z.append(s.xsum / np.float64(s.xsum[0]) if s.xsum[0] > 0 else np.array(s.x, dtype=np.float64))
        norms = [float(s.xsum[0]) for s in tr.players]
        if norms[0] != norms[1]:
            raise AssertionError("players' average weights differ")
        res = self.engine.call("evaluate", [([zq[i[q]] for q, zq in enumerate(z)], norms[0]) for i in self.send])
        g0, g1 = A.matvec(z[1], count=False), -A.rmatvec(z[0], count=False)
        value = dot(z[0], g0) + sum(r[0] for r in res)
        for ix, (_, v0, v1) in zip(self.index, res):
            g0[ix[0]] += v0
            g1[ix[1]] += v1
        X, Y = self.trunk_problem.treeplexes
        return Evaluation(value=float(value), br0=float(X.best_response_value(g0)),
                          br1=float(-Y.best_response_value(g1)))

    def report(self) -> dict:
        """Bytes per iteration (formula) and memory per worker (measured and estimated)."""
        roots = [s["boundary"] for s in self.sizes]
        parents = [[len(i) for i in send] for send in self.send]
        return {"workers": self.workers, "bytes_per_iteration": bytes_per_iteration(roots, parents),
                "boundary_entries": roots, "parent_entries": parents,
                "worker_bytes": [s["nbytes"] for s in self.sizes], "worker_estimate_bytes": self.memory_estimate,
                "trunk_sequences": [self.trunk_problem.X.n_seqs, self.trunk_problem.Y.n_seqs]}

    def close(self) -> None:
        self.engine.close()


# ---------------------------------------------------------------------- engines


class LocalSplit:
    """Workers as objects in this process, called one after another (tests, small spots)."""

    def __init__(self, spec, workers, storage):
        self.workers = [PartWorker(spec, k, workers, storage, threads=None) for k in range(workers)]

    def call(self, method: str, args: list) -> list:
        return [_dispatch(w, method, a) for w, a in zip(self.workers, args)]

    def close(self):
        pass


def _dispatch(worker, method, args):
    return getattr(worker, method)(*args)


class ProcessSplit:
    """One process per worker (multiprocessing, spawn), calls sent in parallel over pipes."""

    def __init__(self, spec, workers, storage, threads=1):
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        self.pipes, self.procs = [], []
        for k in range(workers):
            a, b = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(b, spec, k, workers, storage, threads), daemon=True)
            proc.start()
            b.close()  # only the worker holds its end: its death reads as EOF here, not as a hang
            self.pipes.append(a)
            self.procs.append(proc)
        try:
            for k in range(workers):
                self._answer(k)
        except BaseException:
            self.close()
            raise

    def call(self, method, args):
        for k, arg in enumerate(args):
            try:
                self.pipes[k].send((method, arg))
            except OSError:  # BrokenPipeError, ConnectionResetError: the worker is gone
                self._lost(k)
        return [self._answer(k) for k in range(len(self.pipes))]

    def _answer(self, k):
        try:
            return _answer(self.pipes[k])
        except (EOFError, OSError):
            self._lost(k)

    def _lost(self, k):
        """Raise :class:`WorkerLost` for worker ``k`` (dead or dying), saying how it ended."""
        proc = self.procs[k]
        proc.join(timeout=5)
        code = proc.exitcode
        how = (f"killed by signal {-code}" if code is not None and code < 0 else
               f"exit code {code}" if code is not None else "its pipe closed")
        raise WorkerLost(f"split worker {k} died ({how}); the solve is stopped") from None

    def close(self):
        for a, proc in zip(self.pipes, self.procs):
            try:
                a.send(None)
            except OSError:
                pass
        for proc in self.procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
                proc.join()


def _serve(pipe, spec, part, parts, storage, threads):
    try:
        worker = PartWorker(spec, part, parts, storage, threads)
        pipe.send(("ok", None))
    except Exception as e:  # noqa: BLE001 - reported to the driver
        pipe.send(("error", f"{type(e).__name__}: {e}"))
        return
    while True:
        try:
            msg = pipe.recv()
        except (EOFError, OSError):  # the driver is gone
            return
        if msg is None:
            return
        try:
            pipe.send(("ok", _dispatch(worker, *msg)))
        except Exception as e:  # noqa: BLE001
            pipe.send(("error", f"{type(e).__name__}: {e}"))


def _answer(pipe):
    status, value = pipe.recv()
    if status == "error":
        raise InputError(f"split worker: {value}")
    return value


class RaySplit:
    """Workers as Ray actors of one CPU each: a local cluster, or the one at ``address``."""

    def __init__(self, spec, workers, storage, address=None, threads=1):
        try:
            import ray
        except ImportError:
            raise InputError("--engine ray needs Ray: pip install 'treeplex[distributed]'") from None
        self.ray = ray
        self.started = not ray.is_initialized()
        if self.started:
            try:
                ray.init(address=address, num_cpus=None if address else workers * threads, include_dashboard=False,
                         log_to_driver=False, logging_level="ERROR")
            except ConnectionError as e:
                raise InputError(f"--address {address}: cannot connect to a Ray cluster ({e})") from None
        actor = ray.remote(num_cpus=threads)(RayWorker)
        self.workers = [actor.remote(spec, k, workers, storage, threads) for k in range(workers)]

    def call(self, method, args):
        return self.ray.get([w.call.remote(method, a) for w, a in zip(self.workers, args)])

    def close(self):
        for w in self.workers:
            self.ray.kill(w)
        if self.started:
            self.ray.shutdown()


class RayWorker:
    """The Ray actor: a :class:`PartWorker` behind one ``call`` method."""

    def __init__(self, spec, part, parts, storage, threads):
        self.worker = PartWorker(spec, part, parts, storage, threads)

    def call(self, method, args):
        return _dispatch(self.worker, method, args)


def make_split_engine(engine: str, spec: dict, workers: int, storage: str, address: str | None = None,
                      threads: int = 1):
    """The workers of a split solve; ``threads``: numba threads per worker (process, ray)."""
    if address is not None and engine != "ray":
        raise InputError("--address applies to --engine ray only")
    if engine == "local":
        return LocalSplit(spec, workers, storage)
    if engine == "process":
        return ProcessSplit(spec, workers, storage, threads)
    if engine == "ray":
        from .ray_engine import check_address

        check_address(address)
        return RaySplit(spec, workers, storage, address, threads)
    raise InputError(f"unknown engine {engine!r}; use local, process or ray")


def split_solve(spec: dict, workers: int, iterations: int, target_gap: float | None = None,
                check_every: int = 50, **kw) -> dict:
    """Run a split solve for ``iterations`` (or to ``target_gap``, checked every
    ``check_every``); returns the result with bytes per iteration and memory per worker."""
    for name, v in (("--max-iters", iterations), ("--check-every", check_every), ("--threads", kw.get("threads", 1))):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InputError(f"{name} must be a whole number >= 1, got {v!r}")
    t0 = time.perf_counter()
    solver = SplitSolver(spec, workers, **kw)
    setup = time.perf_counter() - t0
    try:
        t1 = time.perf_counter()
        ev = None
        while solver.iteration < iterations:
            solver.step()
            if target_gap is not None and solver.iteration % check_every == 0:
                ev = solver.evaluate()
                if ev.gap <= target_gap:
                    break
        seconds = time.perf_counter() - t1
        bytes_sent = solver.bytes_sent
        if ev is None or solver.iteration % check_every:
            ev = solver.evaluate()
        return {"algorithm": solver.name, "iterations": solver.iteration, "value": ev.value, "gap": ev.gap,
                "exploitability": ev.exploitability, "setup_seconds": setup, "seconds": seconds,
                "seconds_per_iteration": seconds / max(1, solver.iteration),
                "bytes_sent": bytes_sent, **solver.report()}
    finally:
        solver.close()
