"""``treeplex abstraction build``: equities, equity histograms and buckets per street.

One pass per canonical flop F (the 1,755 suit classes of 3-card flops; every flop, turn and
river class has a representative whose flop is canonical). For each of the 1,176 boards
F + {t, r} the river equity of every hand (:func:`board_equities`) gives at once:

* river: the equity of each (hand, board) class, as a 16-bit code (``river_eq``);
* turn: per (hand, F + t), the histogram of its river equity over the 46 rivers;
* flop: per (hand, F), the histogram over the 1,081 (turn, river) runouts.

The arrays live in memory-mapped files in ``OUT.parts/`` and a ``state.json`` names the next
flop, written after each flop's arrays are flushed: a rerun continues where a stopped one left
off (a flop cut off halfway is redone; its writes are idempotent). Then flop and turn
histograms are clustered by k-means under the EMD (:mod:`.cluster`), river classes by equity
quantiles (not OCHS), one bucket per street per class (imperfect recall), and ``OUT`` (an
``.npz``) is written atomically. ``flops=K`` does only K canonical flops (seeded): classes not
reached get bucket -1.
"""

from __future__ import annotations

import json
import os
import time
from itertools import combinations

import numba as nb
import numpy as np

from ..core.memory import limit_bytes, show
from ..errors import InputError
from ..io.files import atomic_write
from ..poker.cards import HAND_CARDS, N_HANDS
from .cluster import emd_kmeans, histograms_to_cdfs, quantile_buckets
from .equity import board_equities, decode, encode
from .indexer import Indexer

VERSION = 1
BINS = 50  # histogram bins over equity [0, 1]
STREETS = ("flop", "turn", "river")


def _sizes():
    return {s: Indexer(s).size for s in ("preflop",) + STREETS}


def memory_estimate(buckets, flops: int | None) -> int:
    """Bytes the build holds at its peak: the clustering of the turn histograms as float32
    CDFs (the largest step), plus the per-flop board equities; memory-mapped tables count as
    touched pages (all of them for a full build)."""
    sz = _sizes()
    frac = 1.0 if flops is None else min(1.0, flops / 1755 * 24)  # sampled flops reach ~24x their share
    turn_rows = int(sz["turn"] * frac)
    return int(turn_rows * BINS * 4 * 2 + 1176 * N_HANDS * 4 + (sz["river"] * 2 + sz["turn"] * BINS
                                                                 + sz["flop"] * BINS * 2) * frac)


class _Parts:
    def __init__(self, out: str, config: dict):
        self.dir = out + ".parts"
        os.makedirs(self.dir, exist_ok=True)
        self.state_path = os.path.join(self.dir, "state.json")
        sz = _sizes()
        self.state = {"config": config, "next": 0, "seconds": 0.0}
        if os.path.exists(self.state_path):
            with open(self.state_path) as f:
                old = json.load(f)
            if old.get("config") != config:
                raise InputError(f"{self.state_path}: a build with other settings ({old.get('config')}) is in "
                                 f"progress; remove {self.dir} or rerun with the same settings")
            self.state = old
        mode = "r+" if self.state["next"] > 0 else "w+"
        self.river = np.memmap(os.path.join(self.dir, "river_eq.u16"), np.uint16, mode, shape=(sz["river"],))
        self.turn = np.memmap(os.path.join(self.dir, "turn_hist.u8"), np.uint8, mode, shape=(sz["turn"], BINS))
        self.flop = np.memmap(os.path.join(self.dir, "flop_hist.u16"), np.uint16, mode, shape=(sz["flop"], BINS))

    def save(self, next_flop: int, seconds: float):
        for a in (self.river, self.turn, self.flop):
            a.flush()
        self.state.update(next=next_flop, seconds=seconds)
        atomic_write(self.state_path, lambda f: f.write(json.dumps(self.state).encode()))


def flop_order(flops: int | None, seed: int) -> np.ndarray:
    """The canonical flops (3 cards each) the build visits, in order."""
    canon = Indexer((3,))
    boards = canon.unindex(np.arange(canon.size))
    if flops is None:
        return boards
    if not 1 <= flops <= canon.size:
        raise InputError(f"--flops: need 1..{canon.size}, got {flops}")
    return boards[np.random.default_rng(seed).permutation(canon.size)[:flops]]


def process_flop(flop, ix: dict, river, turn, flop_hist) -> None:
    """Fill the river codes, turn and flop histograms of every hand on canonical ``flop``."""
    flop = [int(c) for c in flop]
    rest = [c for c in range(52) if c not in flop]
    pairs = np.array(list(combinations(rest, 2)), dtype=np.int64)  # (t, r) with t < r: 1176 boards
    E = np.stack([board_equities(flop + [int(t), int(r)]) for t, r in pairs])  # [board, hand]
    hands = np.flatnonzero(~np.isin(HAND_CARDS, flop).any(1))
    hc = HAND_CARDS[hands].astype(np.int64)
    F = np.broadcast_to(np.array(flop, dtype=np.int64), (len(hands), 3))
    flop_idx = ix["flop"].index(np.concatenate([hc, F], 1))
    # turn classes: every (hand, t) with t off the flop; -1 where t is a hole card
    T = np.array(rest, dtype=np.int64)
    tt = np.broadcast_to(T[None, :, None], (len(hands), len(T), 1))
    rows = np.concatenate([np.broadcast_to(hc[:, None], (len(hands), len(T), 2)),
                           np.broadcast_to(F[:, None], (len(hands), len(T), 3)), tt], 2)
    blocked = (hc[:, None, :] == T[None, :, None]).any(2)
    rows = np.where(blocked[..., None], np.array([0, 1, 2, 3, 4, 5]), rows)  # placeholder hand, masked
    turn_idx = np.where(blocked, -1, ix["turn"].index(rows))
    # river classes: every (hand, board)
    rb = np.concatenate([np.broadcast_to(hc[:, None], (len(hands), len(pairs), 2)),
                         np.broadcast_to(F[:, None], (len(hands), len(pairs), 3)),
                         np.broadcast_to(pairs[None], (len(hands), len(pairs), 2))], 2)
    rblocked = (hc[:, None, :, None] == pairs[None, :, None, :]).any((2, 3))
    rb = np.where(rblocked[..., None], np.arange(7), rb)
    river_idx = np.where(rblocked, -1, ix["river"].index(rb))
    pos = np.full(52, -1, dtype=np.int64)
    pos[T] = np.arange(len(T))
    tpos = pos[pairs]  # [board, 2]: positions of t and r in T
    codes = encode(np.nan_to_num(E[:, hands].T, nan=0.0))  # [hand, board]
    _fill(E[:, hands].T.copy(), codes, flop_idx, turn_idx, river_idx, tpos, river, turn, flop_hist)


@nb.njit(cache=True)
def _bin(e):
    b = int(e * BINS)
    return BINS - 1 if b >= BINS else b


@nb.njit(cache=True)
def _fill(E, codes, flop_idx, turn_idx, river_idx, tpos, river, turn, flop_hist):
    nh, nb_ = E.shape
    nt = turn_idx.shape[1]
    for h in range(nh):
        f = flop_idx[h]
        fresh_flop = flop_hist[f].sum() == 0
        fresh_turn = np.zeros(nt, dtype=np.bool_)
        for t in range(nt):
            ti = turn_idx[h, t]
            fresh_turn[t] = ti >= 0 and turn[ti].sum() == 0
        for b in range(nb_):
            ri = river_idx[h, b]
            if ri < 0:
                continue
            river[ri] = codes[h, b]
            k = _bin(E[h, b])
            if fresh_flop:
                flop_hist[f, k] += 1
            for j in range(2):  # the board's two cards: either one is the turn, the other the river
                t = tpos[b, j]
                if fresh_turn[t]:
                    turn[turn_idx[h, t], k] += 1


def build(out: str, buckets=(200, 200, 200), flops: int | None = None, seed: int = 0,
          max_memory: str | None = None, progress: bool = True) -> dict:
    """Run (or continue) the build; write ``out``; return the measured figures."""
    buckets = tuple(int(b) for b in buckets)
    if len(buckets) != 3 or min(buckets) < 1:
        raise InputError(f"--buckets: need three positive counts (flop,turn,river), got {buckets}")
    need = memory_estimate(buckets, flops)
    limit, name = limit_bytes(max_memory)
    if limit is not None and need > limit:
        raise InputError(f"abstraction build: needs about {show(need)}, more than {name} ({show(limit)}); "
                         f"use --flops to build on fewer flops")
    config = {"version": VERSION, "flops": flops, "seed": seed, "bins": BINS}  # buckets may change on a rerun
    parts = _Parts(out, config)
    ix = {s: Indexer(s) for s in STREETS}
    order = flop_order(flops, seed)
    from tqdm import tqdm

    start = parts.state["next"]
    t0, spent = time.perf_counter(), parts.state["seconds"]
    bar = tqdm(total=len(order), initial=start, desc="flops", unit="flop", disable=not progress)
    for i in range(start, len(order)):
        process_flop(order[i], ix, parts.river, parts.turn, parts.flop)
        parts.save(i + 1, spent + time.perf_counter() - t0)
        bar.update(1)
    bar.close()
    t_pass = parts.state["seconds"]
    t1 = time.perf_counter()
    result = {"version": np.int64(VERSION), "buckets": np.array(buckets, dtype=np.int64)}
    for street, hist, k in (("flop", parts.flop, buckets[0]), ("turn", parts.turn, buckets[1])):
        done = np.flatnonzero(np.asarray(hist).any(1))
        labels, centres, _ = emd_kmeans(histograms_to_cdfs(hist[done]), k, seed)
        _store(result, street, done, labels, hist.shape[0])
        result[f"{street}_centres"] = centres
    done = np.flatnonzero(np.asarray(parts.river) > 0)
    _store(result, "river", done, quantile_buckets(decode(parts.river[done]), buckets[2]), parts.river.shape[0])
    result["river_eq"] = np.asarray(parts.river[done]) if len(done) < parts.river.shape[0] else np.asarray(parts.river)
    atomic_write(out, lambda f: np.savez(f, **result))
    return {"flops": len(order), "seconds_pass": t_pass, "seconds_cluster": time.perf_counter() - t1,
            "reached": {s: int(len(result.get(f"{s}_index", result[s]))) for s in STREETS}}


def _store(result, street, done, labels, size):
    """Buckets as int16 per class; a partial build (``--flops``) stores the reached classes'
    indices in ``{street}_index`` and their buckets in order."""
    result[street] = labels.astype(np.int16)
    if len(done) < size:
        result[f"{street}_index"] = done.astype(np.int64)


class Abstraction:
    """A built abstraction: ``bucket(street, class indices)`` (-1 where a partial build did not
    reach the class; preflop buckets are the 169 classes) and ``river_equity(indices)``."""

    def __init__(self, data: dict):
        self.data = data
        self.buckets = tuple(int(b) for b in data["buckets"])

    def _lookup(self, street, idx, values, missing):
        idx = np.asarray(idx, dtype=np.int64)
        if street == "preflop":
            return idx.astype(np.int32)
        where = self.data.get(f"{street}_index")
        if where is None:
            return values[idx]
        p = np.clip(np.searchsorted(where, idx), 0, len(where) - 1)
        return np.where(where[p] == idx, values[p], missing)

    def bucket(self, street: str, idx) -> np.ndarray:
        return self._lookup(street, idx, self.data[street].astype(np.int32), -1)

    def river_equity(self, idx) -> np.ndarray:
        """Equity of river classes (NaN where not computed), from the 16-bit codes."""
        return decode(self._lookup("river", idx, self.data["river_eq"], 0))


def load(path: str) -> "Abstraction":
    """A built abstraction, checked: version, streets' shapes and dtypes (one-line errors)."""
    try:
        z = np.load(path)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: not an abstraction file ({e})") from None
    with z:
        data = {k: z[k] for k in z.files}
    if "version" not in data or int(data["version"]) != VERSION:
        raise InputError(f"{path}: abstraction version {data.get('version')}, expected {VERSION}")
    sz = _sizes()
    for s, k in zip(STREETS, data.get("buckets", [0, 0, 0])):
        a, where = data.get(s), data.get(f"{s}_index")
        n = sz[s] if where is None else len(where)
        if a is None or a.shape != (n,) or a.dtype != np.int16:
            raise InputError(f"{path}: '{s}' must be int16[{n}], got {None if a is None else f'{a.dtype}{list(a.shape)}'}")
        if n and (a.min() < 0 or a.max() >= k):
            raise InputError(f"{path}: '{s}' has buckets outside 0..{k - 1}")
        if where is not None and (where.dtype != np.int64 or (n and (where.min() < 0 or where.max() >= sz[s]
                                                                     or (np.diff(where) <= 0).any()))):
            raise InputError(f"{path}: '{s}_index' must be increasing int64 class indices below {sz[s]}")
    n = sz["river"] if "river_index" not in data else len(data["river_index"])
    if data.get("river_eq") is None or data["river_eq"].shape != (n,) or data["river_eq"].dtype != np.uint16:
        raise InputError(f"{path}: 'river_eq' must be uint16[{n}]")
    return Abstraction(data)
