"""``treeplex blueprint train``: external-sampling MCCFR over the abstract HUNL game.

The trainer (:class:`Trainer`) holds the betting tree (:mod:`.game`), a deal source (52-card
hold'em bucketed by an abstraction ``.npz``, :class:`RealDeals`; or a finite table of deals,
:class:`TableDeals`, for tests) and the state: regrets R (int32, chips), strategy sums S
(float32), the random generator's state and the iteration count. Kernels: :mod:`.kernels`.

**Weighting** (linear CFR as Pluribus applies it, Brown & Sandholm, Science 2019): after every
``discount_every`` iterations, up to ``discount_until``, R and S are multiplied by k/(k+1)
after the k-th interval, so an iteration of interval m ends with weight m/(k+1): linear in m.
After ``discount_until`` iterations are weighted equally. **Pruning** after ``prune_after``
iterations in ``prune_share`` of the traversals (Pluribus: 95%), threshold and floor in chips.

**Checkpoints** are ``.npz`` files (the output is one too, and resumes): R, S, the generator
state and a JSON ``meta`` (format version, betting config, bucket counts, the tree's sha256,
the abstraction's fingerprint, the parameters, iterations, seconds). Loading checks all of
it and every array's dtype, shape and values, and refuses a mismatch in one line.

**The quality figure** of the progress bar: the mean over preflop infosets of
max_a R+(I, a) / W (W the iterations' total weight), in mbb: average positive regret, whose
sum over infosets bounds the exploitability of the average strategy in CFR (Zinkevich et al.
2007); sampled regrets make it an estimate, and it falls as training converges.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
import zipfile
from dataclasses import asdict, dataclass
from itertools import combinations

import numpy as np

from ..core.memory import rss, limit_bytes, show
from ..errors import InputError
from ..io.files import atomic_write
from . import kernels as K
from .game import DECISION, BettingTree

VERSION = 1
KIND = "treeplex-blueprint"


@dataclass(frozen=True)
class Params:
    """MCCFR settings (iterations; chips). Defaults: Pluribus's schedule (40 discounts,
    pruning from half-way through them, its threshold and floor in chips), its 10-minute
    intervals scaled to an hours-long run here: at about 10^4 iterations/s an interval is
    about 2 minutes and the discounting about the first hour."""

    seed: int = 0
    discount_every: int = 1_000_000
    discount_until: int = 40_000_000
    prune_after: int = 20_000_000
    prune_share: float = 0.95
    threshold: int = -300_000_000
    floor: int = -310_000_000

    def check(self) -> None:
        for name in ("discount_every", "discount_until", "prune_after"):
            if getattr(self, name) < 0:
                raise InputError(f"blueprint: {name} must be >= 0, got {getattr(self, name)}")
        if not 0 <= self.prune_share <= 1:
            raise InputError(f"blueprint: prune_share must be in [0, 1], got {self.prune_share}")
        if not -2**31 < self.floor <= self.threshold < 0:
            raise InputError(f"blueprint: need -2^31 < floor <= threshold < 0, got {self.floor}, {self.threshold}")

    def weight(self, iterations: int) -> float:
        """Total weight W of ``iterations`` iterations after the discounts (module doc)."""
        if self.discount_every <= 0:
            return float(iterations)
        N = self.discount_every
        k = min(iterations, self.discount_until) // N
        return N * k / 2.0 + (iterations - k * N)


_EMPTY_I64 = np.zeros(0, dtype=np.int64)
_EMPTY_I16 = np.zeros(0, dtype=np.int16)


class RealDeals:
    """52-card deals bucketed by an abstraction (:func:`treeplex.abstraction.build.load`):
    the flop uniform over the flops whose classes the abstraction reached (all 22,100 for a
    full build), then hole cards, turn and river uniform; 7-card showdowns."""

    mode = 0

    def __init__(self, abstraction, path: str = "abstraction"):
        from ..abstraction.indexer import Indexer

        self.abstraction = abstraction
        self.buckets = (169,) + abstraction.buckets
        data = abstraction.data
        ixs = [Indexer(s) for s in ("preflop", "flop", "turn", "river")]
        n = max(len(ix.config_keys) for ix in ixs)
        self.ix_rounds = np.zeros((4, 2), dtype=np.int64)
        self.ix_keys = np.zeros((4, n), dtype=np.int64)
        self.ix_offsets = np.zeros((4, n), dtype=np.int64)
        self.ix_shapes = np.zeros((4, n, 4, 4), dtype=np.int64)
        self.ix_lens = np.zeros(4, dtype=np.int64)
        for s, ix in enumerate(ixs):
            m = len(ix.config_keys)
            self.ix_rounds[s, :len(ix.rounds)] = ix.rounds
            self.ix_keys[s, :m] = ix.config_keys
            self.ix_offsets[s, :m] = ix.config_offsets
            self.ix_shapes[s, :m] = ix.config_shapes
            self.ix_lens[s] = m
        self.vals = (_EMPTY_I16,) + tuple(np.ascontiguousarray(data[s]) for s in ("flop", "turn", "river"))
        self.wheres = (_EMPTY_I64,) + tuple(np.ascontiguousarray(data.get(f"{s}_index", _EMPTY_I64))
                                            for s in ("flop", "turn", "river"))
        all_flops = np.array(list(combinations(range(52), 3)), dtype=np.int64)
        if "flop_index" in data:
            canon = Indexer((3,))
            reached = np.unique(canon.index(ixs[1].unindex(data["flop_index"])[:, 2:5]))
            self.flops = all_flops[np.isin(canon.index(all_flops), reached)]
        else:
            self.flops = all_flops
        if len(self.flops) == 0:
            raise InputError(f"{path}: the abstraction reaches no flop")
        h = hashlib.sha256(np.array(abstraction.buckets, dtype=np.int64).tobytes())
        for s in ("flop", "turn", "river"):
            a = data[s]
            h.update(np.int64(len(a)).tobytes())
            h.update(np.ascontiguousarray(a[::max(1, len(a) // 100_000)]).tobytes())
            if f"{s}_index" in data:
                w = data[f"{s}_index"]
                h.update(np.ascontiguousarray(w[::max(1, len(w) // 100_000)]).tobytes())
        self.fingerprint = h.hexdigest()  # sizes and a strided sample of every table

    def args(self):
        return (self.mode, self.flops, self.ix_rounds, self.ix_keys, self.ix_offsets, self.ix_shapes, self.ix_lens,
                self.vals, self.wheres, np.zeros(1), np.zeros((1, 2, 4), dtype=np.int64), np.zeros(1, dtype=np.int64))


class TableDeals:
    """A finite table of deals: probabilities ``prob[d]``, buckets ``bk[d, player, round]``,
    showdown ``sd[d]`` (+1 player 0 wins, -1 loses, 0 ties)."""

    mode = 1

    def __init__(self, prob, bk, sd):
        prob = np.asarray(prob, dtype=np.float64)
        bk = np.asarray(bk, dtype=np.int64)
        self.prob, self.sd = prob, np.asarray(sd, dtype=np.int64)
        self.bk = np.zeros((len(prob), 2, 4), dtype=np.int64)
        self.bk[:, :, :bk.shape[2]] = bk
        self.buckets = tuple(int(b) for b in bk.max(axis=(0, 1)) + 1)
        self.cdf = np.cumsum(prob / prob.sum())
        self.fingerprint = hashlib.sha256(prob.tobytes() + self.bk.tobytes() + self.sd.tobytes()).hexdigest()

    def args(self):
        return (self.mode, np.zeros((1, 3), dtype=np.int64), np.zeros((4, 2), dtype=np.int64),
                np.zeros((4, 1), dtype=np.int64), np.zeros((4, 1), dtype=np.int64),
                np.zeros((4, 1, 4, 4), dtype=np.int64), np.zeros(4, dtype=np.int64),
                (_EMPTY_I16,) * 4, (_EMPTY_I64,) * 4, self.cdf, self.bk, self.sd)


def memory_estimate(tree: BettingTree) -> int:
    """Bytes the trainer allocates: R (int32) and S (float32) per infoset-action, and the tree."""
    return tree.n_slots * 8 + tree.n_nodes * 40 + len(tree.children) * 8


class Trainer:
    """MCCFR state over ``tree`` with deals from ``deals`` (see the module doc)."""

    def __init__(self, tree: BettingTree, deals, params: Params = Params(), max_memory: str | None = None):
        params.check()
        if tuple(int(b) for b in tree.buckets) != tuple(deals.buckets[:tree.config.rounds]):
            raise InputError(f"blueprint: the tree's bucket counts {list(tree.buckets)} are not the deals' "
                             f"{list(deals.buckets)}")
        need = memory_estimate(tree)
        limit, name = limit_bytes(max_memory)
        if limit is not None and need > limit:
            raise InputError(f"blueprint: needs about {show(need)} ({tree.n_slots:,} infoset-actions x 8 B), more "
                             f"than {name} ({show(limit)}); use fewer buckets or a lower raise cap")
        self.tree, self.deals, self.params = tree, deals, params
        self.R = np.zeros(tree.n_slots, dtype=np.int32)
        self.S = np.zeros(tree.n_slots, dtype=np.float32)
        self.rng = K.seed_state(params.seed)
        self.iterations = 0
        self.seconds = 0.0
        self.stats = np.zeros(3, dtype=np.int64)  # nodes visited, actions pruned, deals redrawn

    # ------------------------------------------------------------ running

    def step(self, n: int) -> float:
        """Run ``n`` iterations; returns the mean traverser value (chips; 0 for n = 0)."""
        t, p = self.tree, self.params
        total = K.run_iterations(n, self.iterations, t.kind, t.street, t.actor, t.n_act, t.first, t.payoff,
                                 t.children, t.offset, t.config.rounds - 1, self.R, self.S, self.rng,
                                 p.prune_after, p.prune_share, p.threshold, p.floor, p.discount_every,
                                 p.discount_until, *self.deals.args(), self.stats)
        self.iterations += n
        return total / (2 * n) if n else 0.0

    def quality(self) -> float:
        """The progress bar's figure (module doc), in mbb."""
        t = self.tree
        W = self.params.weight(self.iterations)
        if W <= 0:
            return float("nan")
        vals = []
        for v in np.flatnonzero((t.kind == DECISION) & (t.street == 0)):
            k = t.n_act[v]
            block = self.R[t.offset[v]:t.offset[v] + k * t.buckets[0]].reshape(-1, k)
            vals.append(np.maximum(block.max(1), 0))
        return float(np.concatenate(vals).mean() / W / t.config.big_blind * 1000)

    def train(self, iterations: int | None = None, time_limit: float | None = None, progress: bool = True,
              checkpoint: str | None = None, checkpoint_every: float = 600.0) -> dict:
        """Run until ``iterations`` in all (counting earlier runs) or ``time_limit`` seconds of
        this run; checkpoint every ``checkpoint_every`` seconds and at the end."""
        from tqdm import tqdm

        if iterations is None and time_limit is None:
            raise InputError("blueprint train: give --iterations or --time-limit")
        self.step(0)  # compile (or load the cached kernels) outside the timed run
        start_it, t0 = self.iterations, time.perf_counter()
        last_ck = t0
        bar = tqdm(total=iterations, initial=self.iterations, unit="it", disable=not progress, smoothing=0.1)
        chunk = 16
        while True:
            now = time.perf_counter()
            if time_limit is not None and now - t0 >= time_limit:
                break
            n = chunk
            if iterations is not None:
                n = min(n, iterations - self.iterations)
            if n <= 0:
                break
            c0 = time.perf_counter()
            self.step(n)
            dt = time.perf_counter() - c0
            self.seconds += dt
            bar.update(n)
            bar.set_postfix_str(f"mem {show(rss())}, R+/T {self.quality():.1f} mbb")
            rate = n / max(dt, 1e-6)
            chunk = max(1, min(int(rate * 0.5), chunk * 4))  # about half a second per call
            if time_limit is not None:
                chunk = max(1, min(chunk, int(rate * (time_limit - (time.perf_counter() - t0))) + 1))
            if checkpoint and time.perf_counter() - last_ck >= checkpoint_every:
                self.save(checkpoint)
                last_ck = time.perf_counter()
        bar.close()
        if checkpoint:
            self.save(checkpoint)
        wall = time.perf_counter() - t0
        done = self.iterations - start_it
        return {"iterations": self.iterations, "this_run": done, "seconds": wall,
                "iterations_per_second": done / wall if wall > 0 else float("nan"), "quality_mbb": self.quality(),
                "nodes_visited": int(self.stats[0]), "actions_pruned": int(self.stats[1])}

    # ------------------------------------------------------------ strategies

    def average(self) -> np.ndarray:
        """The average strategy per infoset-action (:func:`average_strategy` of S)."""
        return average_strategy(self.tree, self.S)

    # ------------------------------------------------------------ checkpoints

    def meta(self) -> dict:
        return {"version": VERSION, "kind": KIND, "config": self.tree.config.to_dict(),
                "buckets": [int(b) for b in self.tree.buckets], "tree_sha256": self.tree.digest(),
                "abstraction": self.deals.fingerprint, "params": asdict(self.params),
                "iterations": self.iterations, "seconds": self.seconds}

    def save(self, path: str) -> None:
        """Write the state atomically (module doc)."""
        text = json.dumps(self.meta())
        atomic_write(path, lambda f: np.savez(f, meta=np.array(text), R=self.R, S=self.S, rng=self.rng))

    def load(self, path: str) -> None:
        """Continue from checkpoint ``path``: it must belong to this tree, abstraction and
        parameters, and hold sound arrays (else one :class:`InputError` line)."""
        meta, arrays = read_checkpoint(path)
        mine = self.meta()
        for key, what in (("version", "format version"), ("kind", "kind"), ("config", "betting"),
                          ("buckets", "bucket counts"), ("tree_sha256", "betting tree"),
                          ("abstraction", "abstraction"), ("params", "set of parameters")):
            if meta.get(key) != mine[key]:
                detail = "" if key in ("tree_sha256", "abstraction") else f": {meta.get(key)} here, {mine[key]} asked"
                raise InputError(f"{path}: a checkpoint of another {what}{detail}")
        n = self.tree.n_slots
        R, S, rng = arrays.get("R"), arrays.get("S"), arrays.get("rng")
        if R is None or R.dtype != np.int32 or R.shape != (n,):
            raise InputError(f"{path}: 'R' must be int32[{n}]")
        if R.size and (R.min() < self.params.floor):
            raise InputError(f"{path}: 'R' has regrets below the floor {self.params.floor}")
        if S is None or S.dtype != np.float32 or S.shape != (n,) or not np.isfinite(S).all() or (S < 0).any():
            raise InputError(f"{path}: 'S' must be finite float32[{n}] >= 0")
        if rng is None or rng.dtype != np.uint64 or rng.shape != (1,) or rng[0] == 0:
            raise InputError(f"{path}: 'rng' must be one nonzero uint64")
        it, sec = meta.get("iterations"), meta.get("seconds")
        if not isinstance(it, int) or it < 0 or not isinstance(sec, (int, float)) or not math.isfinite(sec):
            raise InputError(f"{path}: bad iteration count or seconds in 'meta'")
        self.R, self.S, self.rng = R.copy(), S.copy(), rng.copy()
        self.iterations, self.seconds = it, float(sec)


def average_strategy(tree: BettingTree, S: np.ndarray) -> np.ndarray:
    """Strategy sums ``S`` normalized per infoset (uniform where an infoset's sum is 0)."""
    t = tree
    out = np.empty(t.n_slots)
    for v in np.flatnonzero(t.kind == DECISION):
        k, b = t.n_act[v], t.buckets[t.street[v]]
        s = np.asarray(S[t.offset[v]:t.offset[v] + k * b], dtype=np.float64).reshape(b, k)
        tot = s.sum(1, keepdims=True)
        out[t.offset[v]:t.offset[v] + k * b] = np.where(tot > 0, s / np.where(tot > 0, tot, 1), 1.0 / k).ravel()
    return out


def read_checkpoint(path: str) -> tuple[dict, dict]:
    """(meta, arrays) of a blueprint file, or one :class:`InputError` line."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise InputError(f"{path}: no such checkpoint") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, KeyError) as e:
        raise InputError(f"{path}: not a readable blueprint checkpoint ({type(e).__name__}: {e})") from None
    try:
        meta = json.loads(str(arrays.pop("meta")))
    except (KeyError, ValueError):
        raise InputError(f"{path}: not a blueprint checkpoint (no 'meta')") from None
    if not isinstance(meta, dict) or meta.get("kind") != KIND:
        raise InputError(f"{path}: not a blueprint checkpoint")
    return meta, arrays


def head_to_head(tree: BettingTree, deals, SA: np.ndarray, SB: np.ndarray, n: int, seed: int = 1) -> dict:
    """A's winnings against B in mbb/g with a 95% confidence interval: duplicate play on ``n``
    sampled deals (each deal played in both seats), exact over both players' actions with
    their average strategies (strategy sums ``SA``, ``SB``)."""
    t = tree
    PA, PB = (average_strategy(t, S) for S in (SA, SB))
    v = K.head_to_head(n, t.kind, t.street, t.actor, t.n_act, t.first, t.payoff, t.children, t.offset, PA, PB,
                       K.seed_state(seed), *deals.args())
    scale = 1000.0 / t.config.big_blind
    return {"mbb": float(v.mean() * scale), "ci95": float(1.96 * v.std(ddof=1) / math.sqrt(n) * scale), "deals": n}
