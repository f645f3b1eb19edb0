"""Lazy Monte Carlo CFR: external (and outcome) sampling over a rules game, without compiling it.

Issue 13's second storage mode. :class:`LazyMCCFR` walks a game through the
:class:`~treeplex.model.game.Game`/``State`` protocol (a built-in rules game, or any OpenSpiel game
through :mod:`treeplex.io.openspiel`) and never builds a :class:`~treeplex.model.problem.Problem`. An
infoset gets its row the first time a traversal reaches it, in a :class:`LazyTable` per
player: a dict from infoset key to row index, and growable flat arrays (``start``/``end``
per row, regrets ``R``, current strategy ``b``, strategy sums ``S`` and scratch values
``v`` per action), the layout of a compiled treeplex, so the regret update is the backend's
kernel unchanged: after each traversal :func:`treeplex.solvers.mccfr._apply` calls
:func:`~treeplex.backends.numba_regret.regret_match_infoset` on the table's arrays at every
row the traversal reached (regret matching is still written once). Memory is reported as the
table grows (:meth:`LazyTable.memory`: arrays, plus the dict and its keys).

The sampling is exactly ``mccfr-es``'s (:mod:`treeplex.solvers.mccfr`; ``sampling="os"``:
``mccfr-os``'s, zero baseline): per iteration one
63-bit seed from the checkpointed ``numpy`` generator seeded by ``seed``, splitmix64 from it,
one uniform per chance node and per opponent node in the same depth-first order, player 0's
traversal and update, then player 1's; the same variants (``variant``, ``alpha``, ``beta``,
``gamma``) and averaging weights. On a game that compiles, the lazy run's regrets, sums and
average strategy equal the compiled run's with the same seed, bit for bit
(tests/test_lazy_sampling.py). The walk is Python over the game's states: on OpenSpiel's
liars_dice with 2 dice per player about 40 us per node touched, where the compiled numba
traversal takes well under 1 us; the lazy mode is for games that cannot be compiled.

Quality (:meth:`LazyMCCFR.evaluate`): **exact exploitability** where the tree can be walked
(the game is compiled for the evaluation only and the table's average strategy mapped onto
it by infoset key, :func:`treeplex.model.metrics.evaluate`); otherwise a **sampled lower bound**
(:meth:`LazyMCCFR.sampled_bound`): for each player p, a best response to the average
strategy is *learned* by external sampling against it (a separate lazy table, p's regrets
only, played greedily: argmax of cumulative regret, p's own average strategy at infosets the
learning never reached), then its value is estimated on fresh
independent playouts. A fixed strategy can do no better than a best response, so the
estimate is below the best-response value in expectation: (u(x', y_avg) - u(x_avg, y')) / 2
estimates a lower bound on the exploitability, reported with its standard error.

Determinism and checkpoints: :meth:`LazyMCCFR.state_dict` holds the tables, the counters and
the generator's state; :meth:`LazyMCCFR.save` writes it atomically
(:func:`treeplex.io.files.atomic_write`, pickled), :meth:`LazyMCCFR.load` resumes a killed run
to the same iterates bit for bit. Evaluations draw from their own generators and leave the
run's untouched.
"""

from __future__ import annotations

import math
import pickle
import sys
import time

import numpy as np

from ..backends.numba_regret import kernel_args
from ..errors import GameError, InputError, nonnegative
from ..io.files import atomic_write
from ..solvers.mccfr import MCCFR, _apply, check_sampling_args

_MASK = (1 << 64) - 1
_GOLDEN, _M1, _M2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
_INV53 = 1.0 / 9007199254740992.0
_PLAIN = kernel_args((1.0, 1.0, -math.inf, 1.0, 0.0, 0.0), plain=False)[:3]  # plain CFR (best responses)


class SplitMix64:
    """The traversal generator of :mod:`treeplex.solvers.mccfr` (its ``_uniform``) in Python."""

    __slots__ = ("s",)

    def __init__(self, seed: int):
        self.s = int(seed) & _MASK

    def uniform(self) -> float:
        self.s = (self.s + _GOLDEN) & _MASK
        z = self.s
        z = ((z ^ (z >> 30)) * _M1) & _MASK
        z = ((z ^ (z >> 27)) * _M2) & _MASK
        z ^= z >> 31
        return float(z >> 11) * _INV53


class LazyTable:
    """One player's infosets, a row each, allocated on first visit.

    ``index``: infoset key -> row; ``keys``: row -> key. Row j owns the actions
    [start[j], end[j]) of the flat arrays ``R`` (cumulative regrets), ``b`` (current
    strategy, uniform when allocated), ``S`` (strategy sums) and ``v`` (a traversal's sampled
    counterfactual values, zero between traversals). Arrays double their capacity when full."""

    ROW_ARRAYS = ("start", "end", "noparent", "mark", "touched")
    SEQ_ARRAYS = ("R", "b", "S", "v")

    def __init__(self, rows: int = 256, seqs: int = 1024):
        self.index: dict = {}
        self.keys: list = []
        self.n_rows = self.n_seqs = 0
        self.key_bytes = 0
        self.start = np.zeros(rows, dtype=np.int32)
        self.end = np.zeros(rows, dtype=np.int32)
        self.noparent = np.zeros(rows, dtype=np.int32)  # all 0: regret_match_infoset passes nothing up
        self.mark = np.zeros(rows, dtype=np.uint8)  # reached by the current traversal
        self.touched = np.zeros(rows, dtype=np.int32)  # the rows reached, in order
        self.R, self.b, self.S, self.v = (np.zeros(seqs) for _ in range(4))

    def row(self, key, k: int) -> int:
        """The row of infoset ``key`` with ``k`` actions, allocated (uniform b) on first visit."""
        j = self.index.get(key)
        if j is not None:
            if self.end[j] - self.start[j] != k:
                raise GameError(f"infoset {key!r} offers {k} actions here, {self.end[j] - self.start[j]} elsewhere")
            return j
        if k < 1:
            raise GameError(f"infoset {key!r} has no actions")
        j = self.n_rows
        if j == len(self.start):
            for name in self.ROW_ARRAYS:
                setattr(self, name, _grown(getattr(self, name), 2 * j))
        a = self.n_seqs
        if a + k > len(self.R):
            for name in self.SEQ_ARRAYS:
                setattr(self, name, _grown(getattr(self, name), max(2 * len(self.R), a + k)))
        self.start[j], self.end[j] = a, a + k
        self.b[a:a + k] = 1.0 / k
        self.index[key] = j
        self.keys.append(key)
        self.key_bytes += _key_bytes(key)
        self.n_rows, self.n_seqs = j + 1, a + k
        return j

    def average(self, j: int) -> np.ndarray:
        """Row j's average strategy: S normalized, uniform if nothing was summed (as ``mccfr``'s)."""
        a, e = self.start[j], self.end[j]
        tot = np.add.reduceat(self.S[a:e], [0])[0]  # summed as mccfr's _normalize sums
        return self.S[a:e] / tot if tot > 0.0 else np.full(e - a, 1.0 / (e - a))

    def memory(self) -> dict:
        """Bytes held: the arrays in use and allocated (capacity), the index (dict + keys + list)."""
        used = self.n_rows * sum(getattr(self, n).itemsize for n in self.ROW_ARRAYS) + self.n_seqs * 8 * 4
        allocated = sum(getattr(self, n).nbytes for n in self.ROW_ARRAYS + self.SEQ_ARRAYS)
        index = sys.getsizeof(self.index) + sys.getsizeof(self.keys) + self.key_bytes
        return {"infosets": self.n_rows, "actions": self.n_seqs, "array_bytes": used,
                "allocated_bytes": allocated, "index_bytes": index}

    def state(self) -> dict:
        n, m = self.n_rows, self.n_seqs
        return {"keys": list(self.keys), "start": self.start[:n].copy(), "end": self.end[:n].copy(),
                "R": self.R[:m].copy(), "b": self.b[:m].copy(), "S": self.S[:m].copy()}

    @classmethod
    def from_state(cls, st: dict) -> LazyTable:
        n, m = len(st["keys"]), len(st["R"])
        t = cls(max(n, 256), max(m, 1024))
        t.keys = list(st["keys"])
        t.index = {k: j for j, k in enumerate(t.keys)}
        t.key_bytes = sum(_key_bytes(k) for k in t.keys)
        t.n_rows, t.n_seqs = n, m
        t.start[:n], t.end[:n] = st["start"], st["end"]
        t.R[:m], t.b[:m], t.S[:m] = st["R"], st["b"], st["S"]
        return t


def _grown(a: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n, dtype=a.dtype)
    out[:len(a)] = a
    return out


def _key_bytes(key) -> int:
    if isinstance(key, tuple):
        return sys.getsizeof(key) + sum(_key_bytes(k) for k in key)
    return sys.getsizeof(key)


def _payoff(state) -> float:
    u = state.payoff()
    return float(u[0]) if isinstance(u, tuple) else float(u)


def _chance(state, rng) -> str:
    """The sampled chance outcome (cumulative probabilities in listed order, as ``mccfr``)."""
    outcomes = list(state.chance_outcomes())
    u, acc = rng.uniform(), 0.0
    for label, p in outcomes:
        acc += max(float(p), 0.0)
        if u < acc:
            return label
    return outcomes[-1][0]


class Stopped(Exception):
    """A traversal passed :attr:`LazyMCCFR.deadline`, or the tables' next growth would pass
    :attr:`LazyMCCFR.max_bytes` (``args[0] == "memory"``), checked every :data:`TICK` nodes."""


TICK = 1024  # nodes between deadline checks inside a traversal


def _pick(probs, u: float) -> int:
    acc = 0.0
    for c, p in enumerate(probs):
        acc += p
        if u < acc:
            return c
    return len(probs) - 1


class LazyMCCFR:
    """MCCFR over ``game`` (a rules game) with lazily allocated tables (module docstring):
    ``sampling`` = ``"es"`` (external, default) or ``"os"`` (outcome sampling, exploration
    ``epsilon``, zero baseline), each the compiled ``mccfr-es`` / ``mccfr-os``. Parameters as
    theirs: ``seed``, ``variant``, ``alpha``, ``beta``, ``gamma``."""

    def __init__(self, game, seed: int = 0, variant: str = "cfr", alpha: float = 1.5, beta: float = 0.0,
                 gamma: float = 2.0, sampling: str = "es", epsilon: float = 0.6):
        if sampling not in ("es", "os"):
            raise InputError(f"lazy mccfr: sampling must be 'es' or 'os', got {sampling!r}")
        self.name = f"mccfr-{sampling}"
        check_sampling_args(f"lazy {self.name}", variant, seed, epsilon)
        self.sampling, self.epsilon = sampling, float(epsilon)
        self.game, self.seed, self.variant = game, int(seed), variant
        if hasattr(game, "record_action_ids"):  # an OpenSpiel game: no per-infoset record outside the table
            game.record_action_ids = False
        self.alpha, self.gamma, self.beta = nonnegative(alpha, "alpha"), nonnegative(gamma, "gamma"), float(beta)
        self.rng = np.random.default_rng(self.seed)
        self.tables = (LazyTable(), LazyTable())
        self.iteration = self.nodes_touched = self.samples = 0
        self.avg_scale = 1.0
        self.seconds = 0.0  # solver seconds of run_timed, checkpointed: a resumed run's time limit counts them
        self.deadline = None  # time.perf_counter() past which a traversal raises Stopped (run_timed sets it)
        self._ticks = 0
        self.stopped_by = ""  # why run_timed stopped
        self.max_bytes = None  # the tables may not grow past this (run_timed sets it from --max-memory)
        self._stats = np.zeros(3, dtype=np.int64)

    regrets = MCCFR.regrets  # the variants' scalars, shared with the compiled sampler
    averaging = MCCFR.averaging

    # ------------------------------------------------------------------ iterations

    def run(self, n: int = 1) -> None:
        for _ in range(n):
            self.step()

    def _tick(self) -> None:
        """Every :data:`TICK` nodes of any traversal: raise :class:`Stopped` past the deadline."""
        self._ticks += 1
        if self._ticks % TICK == 0:
            if self.deadline is not None and time.perf_counter() > self.deadline:
                raise Stopped
            if self.max_bytes is not None and self.growth_bytes() > self.max_bytes:
                raise Stopped("memory")

    def growth_bytes(self) -> int:
        """The tables' bytes once their arrays next double (LazyTable grows by doubling), the
        index (dict and keys) included: what the limit is checked against before it happens."""
        return sum(2 * sum(getattr(T, n).nbytes for n in T.ROW_ARRAYS + T.SEQ_ARRAYS)
                   + sys.getsizeof(T.index) + sys.getsizeof(T.keys) + T.key_bytes for T in self.tables)

    def step(self) -> None:
        """One iteration (both players' traversals and updates). Cut by :class:`Stopped`, it is
        dropped: regrets, counters and generator as before it; only the strategy sums keep the
        samples the cut traversal had added (part of one iteration's averaging weight)."""
        rng_state, counts = self.rng.bit_generator.state, (self.samples, self.nodes_touched)
        scale = (self.avg_scale, [T.S[:T.n_seqs].copy() for T in self.tables]) if self._rescales() else None
        try:
            self._step()
        except Stopped:
            self.rng.bit_generator.state = rng_state
            self.samples, self.nodes_touched = counts
            if scale is not None:
                self.avg_scale = scale[0]
                for T, S in zip(self.tables, scale[1]):
                    T.S[:len(S)] = S
            for T in self.tables:  # the cut traversal's values and marks
                T.v[:T.n_seqs] = 0.0
                T.mark[:T.n_rows] = 0
            self._stats[2] = 0
            raise

    def _rescales(self) -> bool:
        rho, _ = self.averaging(self.iteration + 1)
        return rho == 0.0 or self.avg_scale * rho < 1e-200

    def _step(self) -> None:
        t = self.iteration + 1
        rho, omega = self.averaging(t)
        if rho == 0.0 or self.avg_scale * rho < 1e-200:
            for T in self.tables:
                T.S[:T.n_seqs] *= rho * self.avg_scale
            self.avg_scale = 1.0
        else:
            self.avg_scale *= rho
        pos, floor, general, _ = kernel_args(self.regrets(t), plain=False)
        w = omega / self.avg_scale
        rng = SplitMix64(int(self.rng.bit_generator.random_raw() >> 1))
        for i in range(2):
            self.samples += 1
            if self.sampling == "es":
                self._es(self.game.initial_state(), i, w, rng)
            else:
                self._os(self.game.initial_state(), i, w, rng, 1.0, 1.0, 1.0)
            self._update(self.tables[i], pos, floor, general)
        self.iteration = t

    def _update(self, T: LazyTable, pos, floor, general) -> None:
        """The backend's regret update at every row the traversal reached (clears ``v``)."""
        _apply(T.start, T.end, T.noparent, T.v, T.b, T.R, pos, floor, general, T.mark, T.touched, self._stats)

    def _es(self, state, i: int, w: float, rng: SplitMix64) -> float:
        """External sampling, traverser i: its sampled value (player i's payoff); the values of
        i's actions summed into its table's ``v``, the rows reached listed for the update, the
        opponent's current strategy added to its sums where it is sampled."""
        self.nodes_touched += 1
        self._tick()
        if state.is_terminal():
            u = _payoff(state)
            return u if i == 0 else -u
        if state.is_chance():
            return self._es(state.apply(_chance(state, rng)), i, w, rng)
        p = state.player()
        actions = state.legal_actions()
        k = len(actions)
        T = self.tables[p]
        j = T.row(state.infoset_key(), k)
        a = int(T.start[j])
        if p != i:
            T.S[a:a + k] += w * T.b[a:a + k]
            c = _pick(T.b[a:a + k].tolist(), rng.uniform())
            return self._es(state.apply(actions[c]), i, w, rng)
        b = T.b[a:a + k].tolist()  # not changed before the update: the arrays may grow below
        value = 0.0
        for c in range(k):
            r = self._es(state.apply(actions[c]), i, w, rng)
            T.v[a + c] += r
            value += b[c] * r
        if T.mark[j] == 0:
            T.mark[j] = 1
            T.touched[self._stats[2]] = j
            self._stats[2] += 1
        return value

    def _os(self, state, i: int, w: float, rng: SplitMix64, own: float, opp: float, q: float) -> float:
        """Outcome sampling, traverser i, at a node reached with own reach ``own``, the
        opponent's and chance's ``opp`` and sample probability ``q``: the sampled value
        (importance-corrected below, zero baseline), the traverser's values and averages
        (own reach / q) added as the compiled ``mccfr-os`` adds them."""
        self.nodes_touched += 1
        self._tick()
        if state.is_terminal():
            u = _payoff(state)
            return u if i == 0 else -u
        if state.is_chance():
            outcomes = list(state.chance_outcomes())
            x, acc, c = rng.uniform(), 0.0, len(outcomes) - 1
            for t, (_, p) in enumerate(outcomes):
                acc += max(float(p), 0.0)
                if x < acc:
                    c = t
                    break
            p = max(float(outcomes[c][1]), 0.0)
            return self._os(state.apply(outcomes[c][0]), i, w, rng, own, opp * p, q * p)
        pl = state.player()
        actions = state.legal_actions()
        k = len(actions)
        T = self.tables[pl]
        j = T.row(state.infoset_key(), k)
        a = int(T.start[j])
        b = T.b[a:a + k].tolist()
        e = self.epsilon if pl == i else 0.0
        c = _pick([e / k + (1.0 - e) * bc for bc in b], rng.uniform())
        sp = e / k + (1.0 - e) * b[c]
        if pl == i:
            ret = self._os(state.apply(actions[c]), i, w, rng, own * b[c], opp, q * sp)
        else:
            ret = self._os(state.apply(actions[c]), i, w, rng, own, opp * b[c], q * sp)
        u = ret / sp
        if pl == i:
            T.v[a + c] += u * opp / q
            for t in range(k):
                T.S[a + t] += w * own * b[t] / q
            if T.mark[j] == 0:
                T.mark[j] = 1
                T.touched[self._stats[2]] = j
                self._stats[2] += 1
        return b[c] * u

    # ------------------------------------------------------------------ strategies and memory

    def average_strategy(self, player: int, key, k: int) -> np.ndarray:
        """The average local strategy at an infoset (uniform where never reached)."""
        T = self.tables[player]
        j = T.index.get(key)
        return T.average(j) if j is not None else np.full(k, 1.0 / k)

    def plans(self, problem) -> tuple[np.ndarray, np.ndarray]:
        """Realization plans of the compiled ``problem`` from the average strategy, by infoset key."""
        out = []
        for player, T in enumerate(problem.treeplexes):
            b = np.ones(T.n_seqs)
            for j, key in enumerate(T.infoset_keys):
                b[T.start[j]:T.end[j]] = self.average_strategy(player, key, T.end[j] - T.start[j])
            out.append(T.plan_from_behavioral(b))
        return tuple(out)

    def memory(self) -> dict:
        """Infosets and actions allocated per player and bytes in all (arrays + index), with
        bytes per infoset and per action."""
        m = [T.memory() for T in self.tables]
        tot = {k: m[0][k] + m[1][k] for k in m[0]}
        total = tot["allocated_bytes"] + tot["index_bytes"]
        return {**tot, "infosets_per_player": [x["infosets"] for x in m], "bytes": total,
                "bytes_per_infoset": total / max(tot["infosets"], 1),
                "array_bytes_per_action": tot["array_bytes"] / max(tot["actions"], 1)}

    # ------------------------------------------------------------------ quality

    def evaluate(self, problem=None) -> dict:
        """Exact exploitability of the average strategy on the compiled ``problem`` (compiled
        here, for the evaluation only, if None): {"measure": "exact exploitability", ...}."""
        from ..model.compile import compile_game
        from ..model.metrics import evaluate

        if problem is None:
            record = getattr(self.game, "record_action_ids", None)
            problem = compile_game(self.game)
            if record is not None:
                self.game.record_action_ids = record
        e = evaluate(problem, *self.plans(problem))
        return {"measure": "exact exploitability", "exploitability": e.exploitability, "value": e.value,
                "br_value_player0": e.br0, "br_value_player1": e.br1}

    def sampled_bound(self, br_iters: int = 200, playouts: int = 2000, seed: int = 0) -> dict:
        """Sampled lower bound on the exploitability of the average strategy (module
        docstring): per player, a best response learned by ``br_iters`` external-sampling
        traversals against the average, then valued on ``playouts`` independent playouts.
        Returns {"measure": "sampled BR lower bound", "exploitability_lb", its "stderr", the
        estimated values "br_value_player0" (>=: a lower bound on BR_0) and
        "br_value_player1" (an upper bound on BR_1 in expectation), ...}."""
        gen = np.random.default_rng([self.seed, self.iteration, seed])
        vals, ses = [], []
        for p in range(2):
            br = LazyTable()
            for _ in range(br_iters):
                rng = SplitMix64(int(gen.bit_generator.random_raw() >> 1))
                self._br(self.game.initial_state(), p, br, rng)
                stats = np.zeros(3, dtype=np.int64)
                stats[2] = self._br_count
                _apply(br.start, br.end, br.noparent, br.v, br.b, br.R, *_PLAIN, br.mark, br.touched, stats)
                self._br_count = 0
            rng = SplitMix64(int(gen.bit_generator.random_raw() >> 1))
            u = np.array([self._playout(self.game.initial_state(), p, br, rng) for _ in range(playouts)])
            vals.append(float(u.mean()))
            ses.append(float(u.std(ddof=1) / math.sqrt(playouts)) if playouts > 1 else math.inf)
        return {"measure": "sampled BR lower bound", "exploitability_lb": (vals[0] - vals[1]) / 2,
                "stderr": math.sqrt(ses[0] ** 2 + ses[1] ** 2) / 2, "br_value_player0": vals[0],
                "br_value_player1": vals[1], "stderr_player0": ses[0], "stderr_player1": ses[1],
                "br_iters": br_iters, "playouts": playouts}

    _br_count = 0

    def _br(self, state, p: int, br: LazyTable, rng: SplitMix64) -> float:
        """External sampling for player p against the fixed average strategy (p's payoff)."""
        self._tick()
        if state.is_terminal():
            u = _payoff(state)
            return u if p == 0 else -u
        if state.is_chance():
            return self._br(state.apply(_chance(state, rng)), p, br, rng)
        q = state.player()
        actions = state.legal_actions()
        k = len(actions)
        if q != p:
            c = _pick(self.average_strategy(q, state.infoset_key(), k).tolist(), rng.uniform())
            return self._br(state.apply(actions[c]), p, br, rng)
        j = br.row(state.infoset_key(), k)
        a = int(br.start[j])
        b = br.b[a:a + k].tolist()
        value = 0.0
        for c in range(k):
            r = self._br(state.apply(actions[c]), p, br, rng)
            br.v[a + c] += r
            value += b[c] * r
        if br.mark[j] == 0:
            br.mark[j] = 1
            br.touched[self._br_count] = j
            self._br_count += 1
        return value

    def _playout(self, state, p: int, br: LazyTable, rng: SplitMix64) -> float:
        """One playout (player 0's payoff): p plays the argmax of its learned cumulative
        regret (its average strategy where never reached), the other player its average."""
        while not state.is_terminal():
            self._tick()
            if state.is_chance():
                state = state.apply(_chance(state, rng))
                continue
            q, key, actions = state.player(), state.infoset_key(), state.legal_actions()
            if q == p:
                j = br.index.get(key)
                if j is None:  # never reached while learning: p's own average strategy
                    c = _pick(self.average_strategy(q, key, len(actions)).tolist(), rng.uniform())
                else:
                    c = int(np.argmax(br.R[br.start[j]:br.end[j]]))
            else:
                c = _pick(self.average_strategy(q, key, len(actions)).tolist(), rng.uniform())
            state = state.apply(actions[c])
        return _payoff(state)

    # ------------------------------------------------------------------ checkpoints

    def state_dict(self) -> dict:
        return {"algorithm": self.name, "storage": "lazy", "sampling": self.sampling, "epsilon": self.epsilon,
                "seed": self.seed, "variant": self.variant,
                "alpha": self.alpha, "beta": self.beta, "gamma": self.gamma, "iteration": self.iteration,
                "nodes_touched": self.nodes_touched, "samples": self.samples, "avg_scale": self.avg_scale,
                "seconds": self.seconds,
                "rng": self.rng.bit_generator.state, "tables": [T.state() for T in self.tables]}

    def set_state(self, st: dict) -> None:
        self.iteration, self.nodes_touched, self.samples = st["iteration"], st["nodes_touched"], st["samples"]
        self.avg_scale = float(st["avg_scale"])
        self.seconds = float(st.get("seconds", 0.0))
        self.rng.bit_generator.state = st["rng"]
        self.tables = tuple(LazyTable.from_state(t) for t in st["tables"])

    def save(self, path: str) -> None:
        """Write the run (tables, counters, generator) to ``path`` atomically."""
        st = self.state_dict()
        atomic_write(path, lambda f: pickle.dump(st, f, protocol=pickle.HIGHEST_PROTOCOL))

    @classmethod
    def load(cls, path: str, game) -> LazyMCCFR:
        """The run saved at ``path`` by :meth:`save`, on ``game``, ready to continue."""
        try:
            with open(path, "rb") as f:
                st = pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError) as e:
            raise InputError(f"{path}: cannot read the lazy checkpoint ({e})") from None
        if not isinstance(st, dict) or st.get("storage") != "lazy":
            raise InputError(f"{path}: not a lazy mccfr checkpoint")
        solver = cls(game, seed=st["seed"], variant=st["variant"], alpha=st["alpha"], beta=st["beta"],
                     gamma=st["gamma"], sampling=st["sampling"], epsilon=st["epsilon"])
        solver.set_state(st)
        return solver


def run_timed(solver: LazyMCCFR, time_limit: float | None = None, max_iters: int | None = None,
              report_every: float = 10.0, on_report=None, max_bytes: float | None = None) -> list[dict]:
    """Step ``solver`` until ``time_limit`` solver seconds or ``max_iters`` iterations, both
    counting those before a resume (``solver.seconds``, ``solver.iteration``); every
    ``report_every`` seconds (and at the end) append a row (seconds, iterations, samples,
    nodes touched, the table's memory) and call ``on_report(row)``. Returns the rows.

    The time limit holds inside a traversal too (:attr:`LazyMCCFR.deadline`: the iteration it
    cuts is dropped), and so does Ctrl-C (a first one stops the run there, a second one
    interrupts). The tables stop growing before their next doubling would pass ``max_bytes``
    (:meth:`LazyMCCFR.growth_bytes`, checked every :data:`TICK` nodes; the iteration that
    reached it is dropped). ``solver.stopped_by`` says which: "max iterations", "time
    limit", "time limit inside a traversal", "memory limit" or "interrupted"."""
    import signal

    if time_limit is None and max_iters is None:
        raise InputError("the lazy mode needs a stop rule: --time-limit or --max-iters")
    rows, seconds = [], solver.seconds
    next_report = seconds + report_every
    interrupted = []

    def on_sigint(*_):
        interrupted.append(True)
        solver.deadline = -math.inf
        signal.signal(signal.SIGINT, signal.default_int_handler)

    try:
        previous = signal.signal(signal.SIGINT, on_sigint)
    except ValueError:  # not the main thread: Ctrl-C is not ours to take
        previous = None
    try:
        while True:
            t0 = time.perf_counter()
            solver.deadline = -math.inf if interrupted else (
                None if time_limit is None else t0 + time_limit - seconds)
            solver.max_bytes = max_bytes
            cut = False
            try:
                solver.step()
            except Stopped as e:
                cut = "memory" if e.args == ("memory",) else "time"
            seconds += time.perf_counter() - t0
            solver.seconds = seconds
            if interrupted:
                solver.stopped_by = "interrupted"
            elif cut == "memory":
                solver.stopped_by = "memory limit"
            elif cut:
                solver.stopped_by = "time limit inside a traversal"
            elif max_iters is not None and solver.iteration >= max_iters:
                solver.stopped_by = "max iterations"
            elif time_limit is not None and seconds >= time_limit:
                solver.stopped_by = "time limit"
            else:
                solver.stopped_by = ""
            if seconds >= next_report or solver.stopped_by:
                m = solver.memory()
                row = {"seconds": seconds, "iterations": solver.iteration, "samples": solver.samples,
                       "nodes_touched": solver.nodes_touched, **m}
                rows.append(row)
                if on_report is not None:
                    on_report(row)
                next_report = seconds + report_every
            if solver.stopped_by:
                return rows
    finally:
        solver.deadline = solver.max_bytes = None
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


EXACT_HISTORIES = 2_000_000  # evaluation=auto: exact where the tree has at most this many histories


def quality(solver: LazyMCCFR, evaluation: str = "auto", br_iters: int = 200, playouts: int = 2000,
            time_limit: float | None = None) -> dict:
    """Exact exploitability (``evaluation="exact"``, or ``"auto"`` on a tree of at most
    :data:`EXACT_HISTORIES` histories) or the sampled best-response lower bound, this one cut
    after ``time_limit`` seconds ({"measure": "none", "reason": ...})."""
    from ..core.memory import estimate_histories

    if evaluation not in ("auto", "exact", "sampled"):
        raise InputError(f"evaluation must be auto, exact or sampled, got {evaluation!r}")
    if evaluation == "auto":
        n, exact = estimate_histories(solver.game, cap=EXACT_HISTORIES)
        evaluation = "exact" if exact and n <= EXACT_HISTORIES else "sampled"
    if evaluation == "exact":
        return solver.evaluate()
    solver.deadline = None if time_limit is None else time.perf_counter() + time_limit
    try:
        return solver.sampled_bound(br_iters, playouts)
    except Stopped:
        return {"measure": "none", "reason": f"the sampled bound's traversals ran past {time_limit:g} s "
                                             "(as long as --time-limit)"}
    finally:
        solver.deadline, solver._br_count = None, 0


def cmd_lazy(args, solver_params) -> int:
    """``treeplex solve GAME --algorithm mccfr-es|mccfr-os --lazy``: run, print the table's growth and the
    quality (``args.resume``: continue a lazy checkpoint, whose sampler it keeps)."""
    import json

    from ..games import load_game
    from .progress import write_trace

    if args.algorithm not in (None, "mccfr-es", "mccfr-os"):
        raise InputError(f"--lazy runs mccfr-es (external sampling) or mccfr-os (outcome sampling), "
                         f"not {args.algorithm!r}")
    for flag in ("out", "target", "warm_start", "refine", "backend"):
        if getattr(args, flag, None):
            raise InputError(f"--{flag.replace('_', '-')} is not available with --lazy")
    params = solver_params(args, None)
    params.pop("algorithm", None)
    checkpoint, resume = params.pop("checkpoint", None), params.pop("resume", None)
    lazy = {k: params.pop(k) for k in ("evaluation", "br_iters", "playouts", "report_every") if k in params}
    for k in ("br_iters", "playouts"):
        if k in lazy and (isinstance(lazy[k], bool) or not isinstance(lazy[k], int) or lazy[k] < 1):
            raise InputError(f"--param {k} must be a whole number >= 1, got {lazy[k]!r}")
    if "report_every" in lazy:
        lazy["report_every"] = nonnegative(lazy["report_every"], "--param report_every")
        if lazy["report_every"] == 0:
            raise InputError("--param report_every must be a number of seconds > 0, got 0")
    ranges = {k: v for k in ("range0", "range1") if (v := getattr(args, k, None)) is not None}
    game = load_game(args.game, **ranges)  # the ranges as solve without --lazy takes them
    if resume:
        solver = LazyMCCFR.load(resume, game)
    else:
        try:
            solver = LazyMCCFR(game, sampling="os" if args.algorithm == "mccfr-os" else "es", **params)
        except TypeError as e:
            raise InputError(f"--lazy: bad parameter ({e}); parameters: seed, variant, alpha, beta, gamma, "
                             "epsilon (mccfr-os), evaluation, br_iters, playouts, report_every") from None
    show = not args.json

    def report(row):
        if checkpoint:
            solver.save(checkpoint)
        if show:
            print(f"{row['seconds']:8.1f} s  {row['iterations']:9d} it  {row['nodes_touched']:12d} nodes  "
                  f"{row['infosets']:10d} infosets  {row['actions']:11d} actions  {row['bytes'] / 2**20:9.1f} MiB  "
                  f"{row['bytes_per_infoset']:6.0f} B/infoset", flush=True)

    if show:
        print(f"game            {game.name} (not compiled: lazy table, rows allocated on first visit)")
        print(f"{'time':>10}  {'iterations':>12}  {'nodes touched':>18}  {'infosets':>19}  {'actions':>19}  "
              f"{'memory':>12}")
    from ..core.memory import limit_bytes, show as show_bytes

    limit, limit_name = limit_bytes(getattr(args, "max_memory", None))
    rows = run_timed(solver, args.time_limit, args.max_iters, float(lazy.get("report_every", 10.0)), report,
                     max_bytes=limit)
    if solver.iteration == 0:
        q = {"measure": "none", "reason": f"{solver.stopped_by} before the first iteration was complete: "
                                          "no average strategy yet"}
    elif solver.stopped_by == "interrupted":
        q = {"measure": "none", "reason": "interrupted (Ctrl-C)"}
    else:
        q = quality(solver, lazy.get("evaluation", "auto"), int(lazy.get("br_iters", 200)),
                    int(lazy.get("playouts", 2000)), args.time_limit)
    if args.trace:
        write_trace([{**r, "infosets_per_player": "/".join(map(str, r["infosets_per_player"]))} for r in rows],
                    args.trace, {"game": game.name, "algorithm": solver.name + "-lazy"})
    m = solver.memory()
    out = {"game": game.name, "algorithm": solver.name, "storage": "lazy", "iterations": solver.iteration,
           "samples": solver.samples, "nodes_touched": solver.nodes_touched, "seconds": rows[-1]["seconds"],
           "stopped_by": solver.stopped_by, "memory": m, "quality": q, "growth": rows}
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"algorithm       {solver.name}, lazy storage ({solver.iteration} iterations, {solver.samples} samples "
          f"(traversals), {solver.nodes_touched} nodes touched, {rows[-1]['seconds']:.1f} s)")
    print(f"table           {m['infosets']} infosets ({m['infosets_per_player'][0]} + {m['infosets_per_player'][1]}), "
          f"{m['actions']} actions, {m['bytes']} bytes = {m['bytes_per_infoset']:.0f} bytes per infoset "
          f"(arrays {m['array_bytes_per_action']:.1f} bytes per action in use; index {m['index_bytes']} bytes)")
    if solver.stopped_by == "memory limit":
        print(f"stopped         memory limit: the tables' next growth ({show_bytes(solver.growth_bytes())}) would "
              f"pass {show_bytes(limit)} ({limit_name}); the iteration it cut is dropped ({solver.iteration} complete)")
    elif solver.stopped_by in ("time limit inside a traversal", "interrupted"):
        print(f"stopped         {solver.stopped_by} at {rows[-1]['seconds']:.1f} s: the iteration it cut is "
              f"dropped ({solver.iteration} complete)")
    if q["measure"] == "none":
        print(f"quality         not estimated: {q['reason']}")
    elif q["measure"] == "exact exploitability":
        print(f"quality         exact exploitability {q['exploitability']:.4e} (the game compiled for the "
              f"evaluation only; value {q['value']:.6g})")
    else:
        print(f"quality         sampled BR lower bound on exploitability {q['exploitability_lb']:.4e} "
              f"+- {q['stderr']:.1e} (1 s.e.; learned best responses, {q['br_iters']} traversals each, "
              f"valued on {q['playouts']} playouts; the exact exploitability is at least this, in expectation"
              f"{'; not significant: within 2 s.e. of 0' if q['exploitability_lb'] <= 2 * q['stderr'] else ''})")
    return 0
