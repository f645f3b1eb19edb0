"""``treeplex batch SPECS.jsonl``: many spots solved by a pool of workers into one SQLite table.

Each line of SPECS.jsonl is one spot, a JSON object::

    {"game": "postflop(board=KsQh9d,pot=20,stack=30)" | {inline postflop spec} | "leduc" | "x.efg",
     "range0": "...", "range1": "...", "algorithm": "pdcfr+", "target": "0.5%pot",
     "max_iters": 1000, "time_limit": 60, "params": {"alpha": 2.3}, "weight": 12}

``game`` is what ``treeplex solve`` takes (relative paths are read from the JSONL file's
folder) or an inline postflop spec (:func:`~treeplex.poker.postflop.load_postflop_spec`);
the other keys are optional and mean what ``solve``'s flags mean (``weight``, e.g. a flop's
number of combos, is only carried to reports). The algorithm defaults as in ``solve``: lp
without a stop rule, else pdcfr+ (dcfr-ps on river and postflop spots).

A spot's key is the sha256 of its canonical JSON (sorted keys, no spaces): a spot whose
key is in the table with status ``done`` is skipped, so a batch can be rerun after a stop
and solves only what is missing (a ``failed`` spot is tried again). The driver alone
writes; it commits every finished spot in its own transaction (WAL, synchronous=FULL), so
killing it at any moment loses no finished spot, and the key's UNIQUE constraint makes a
duplicate row impossible. Engines: ``local`` (a spawn process pool on this machine) and
``ray`` (:mod:`treeplex.scale.ray_engine`; a local Ray cluster, or ``--address`` for a running one).
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import multiprocessing
import os
import sqlite3
import sys
import threading
import time
import zlib
from dataclasses import dataclass

from ..errors import InputError, parse_json

SPOT_KEYS = {"game", "range0", "range1", "algorithm", "target", "max_iters", "time_limit", "params", "weight"}

SCHEMA = """
CREATE TABLE IF NOT EXISTS spots (
    hash TEXT PRIMARY KEY NOT NULL,          -- sha256 of the spec's canonical JSON
    spec TEXT NOT NULL,                      -- the spec (canonical JSON)
    status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
    error TEXT,                              -- one line, for failed spots
    game TEXT, algorithm TEXT, payoff_unit TEXT, stopped_by TEXT,
    value REAL, gap REAL, exploitability REAL,
    iterations INTEGER,
    seconds REAL,                            -- solver time (no load, no gap checks)
    wall_seconds REAL,                       -- load + solve + strategy, in the worker
    solver_version TEXT,
    finished_at TEXT,                        -- UTC, ISO 8601
    strategy BLOB                            -- zlib(JSON): what `solve --out` writes
)"""
COLUMNS = ["hash", "spec", "status", "error", "game", "algorithm", "payoff_unit", "stopped_by", "value", "gap",
           "exploitability", "iterations", "seconds", "wall_seconds", "solver_version", "finished_at", "strategy"]


@dataclass
class Spot:
    line: int  # 1-based line in the JSONL file
    spec: dict
    key: str  # sha256 of canonical(spec)


def canonical(spec: dict) -> str:
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def spec_hash(spec: dict) -> str:
    return hashlib.sha256(canonical(spec).encode()).hexdigest()


def read_specs(path: str) -> list[Spot]:
    """The spots of a JSONL file (blank lines skipped); a malformed line is an InputError."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read the specs ({getattr(e, 'strerror', None) or e})") from None
    spots = []
    for i, text in enumerate(lines, 1):
        if text.strip():
            spec = parse_json(text, f"{path} line {i}")
            check_spec(spec, f"{path} line {i}")
            spots.append(Spot(i, spec, spec_hash(spec)))
    if not spots:
        raise InputError(f"{path}: no spots (one JSON object per line)")
    return spots


def check_spec(spec, where: str) -> None:
    """Refuse a line that is not a spot; the game itself is checked when it is solved."""
    if not isinstance(spec, dict):
        raise InputError(f"{where}: expected a JSON object {{\"game\": ..., ...}}")
    unknown = sorted(set(spec) - SPOT_KEYS)
    if unknown:
        raise InputError(f"{where}: unknown keys {unknown}; allowed: {sorted(SPOT_KEYS)}")
    types = {"game": (str, dict), "range0": str, "range1": str, "algorithm": str, "target": (str, int, float),
             "max_iters": int, "time_limit": (int, float), "params": dict, "weight": (int, float)}
    if "game" not in spec:
        raise InputError(f"{where}: 'game' is required")
    for k, t in types.items():
        if k in spec and (not isinstance(spec[k], t) or isinstance(spec[k], bool)):
            raise InputError(f"{where}: {k} has the wrong type ({type(spec[k]).__name__})")
    for k, low, what in (("weight", 0, ">= 0"), ("max_iters", 1, ">= 1")):
        if k in spec and spec[k] < low:
            raise InputError(f"{where}: {k} must be {what}, got {spec[k]}")
    if "time_limit" in spec and spec["time_limit"] <= 0:
        raise InputError(f"{where}: time_limit must be > 0 seconds, got {spec['time_limit']}")
    try:
        canonical(spec).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate escape such as \ud800: no UTF-8 text, no key
        raise InputError(f"{where}: a string holds a lone surrogate escape (\\ud800-\\udfff), not text") from None


# ------------------------------------------------------------------ one spot (in a worker)


def solver_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("treeplex")
    except PackageNotFoundError:
        return "unknown"


def solve_spot(spec: dict, base: str = ".", threads: int = 1) -> dict:
    """Solve one spot; never raises: a failure is ``{"status": "failed", "error": one line}``.
    ``base``: the folder relative game paths are read from; ``threads``: numba threads."""
    t0 = time.perf_counter()
    try:
        row = _solve(spec, base, threads)
    except InputError as e:
        row = {"status": "failed", "error": str(e)}
    except MemoryError:
        row = {"status": "failed", "error": "out of memory"}
    except Exception as e:  # noqa: BLE001 - a spot's failure must not stop the batch
        row = {"status": "failed", "error": f"{type(e).__name__}: {e}"}
    row["error"] = " ".join(str(row["error"]).split()) if row.get("error") else None
    row["wall_seconds"] = time.perf_counter() - t0
    row["solver_version"] = solver_version()
    return row


def _solve(spec: dict, base: str, threads: int) -> dict:
    import numba

    from ..games import load_game, problem_for
    from ..run.driver import solve
    from ..run.targets import iterative_default
    from ..core.memory import lp_default
    from ..model.strategy import solution_record
    from ..run.targets import target_gap
    from ..run.whatif import baseline_for, baseline_game, is_locked, is_raked, record

    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    overrides = {k: spec[k] for k in ("range0", "range1") if k in spec}
    game_spec = spec["game"]
    if isinstance(game_spec, dict):
        from ..poker.postflop import load_postflop_spec

        game = load_postflop_spec({**game_spec, **overrides}, where="inline postflop spec")
        name = game.name
    else:
        name = game_path(game_spec, base)
        game = load_game(name, **overrides)
    locked = is_locked(game)
    whatif = locked or is_raked(game)
    p = problem_for(baseline_game(game) if whatif else game, name)  # locked or raked: the baseline first (run.whatif)
    stops = {k: spec.get(k) for k in ("max_iters", "time_limit")}
    algorithm = spec.get("algorithm") or (iterative_default(p) if any(stops.values()) or "target" in spec else "lp")
    if algorithm == "lp" and "algorithm" not in spec and not lp_default(p, None)[0]:
        algorithm = iterative_default(p)  # as solve does: the LP would not fit in memory, or is too big to be a default
    run = lambda q: solve(q, algorithm, target_gap=target_gap(spec.get("target"), q), **stops,  # noqa: E731
                          **spec.get("params", {}))
    if whatif:
        baseline = baseline_for(game, None, run, problem=p)
        p = game.problem()
    res = run(p)
    meta = {"algorithm": res.algorithm, "value": res.value, "gap": res.gap, "exploitability": res.exploitability,
            "payoff_unit": p.payoff_unit, "iterations": res.iterations}
    if p.general_sum:
        meta.update(value_player1=res.evaluation.value1, expected_rake=res.evaluation.rake)
    if locked:
        meta["locks"] = game.locks
    if whatif:
        meta.update(record(p, res, baseline))
    blob = zlib.compress(json.dumps(solution_record(p.solution(res.x, res.y), **meta)).encode(), 6)
    return {"status": "done", "game": p.name, **meta, "stopped_by": res.stopped_by, "seconds": res.seconds,
            "strategy": blob}


def game_path(game: str, base: str) -> str:
    """``game``, or ``base/game`` when that names a file (a spec file beside the JSONL)."""
    if not os.path.isabs(game) and os.path.exists(os.path.join(base, game)):
        return os.path.join(base, game)
    return game


def spot_size(spec: dict) -> float | None:
    """A rough relative cost of a postflop spot, to start the largest spots first: the hands
    left in both ranges once the board is removed, times the boards its public tree deals
    (one per orbit of the cards under the suit isomorphisms, as the tree deals them). The
    betting tree is not counted (spots of one batch usually share it). None for other games,
    or for a spec this cannot read (its worker reports the error)."""
    game = spec.get("game")
    try:
        if isinstance(game, dict):
            params = dict(game)
        elif isinstance(game, str) and game.replace(" ", "").startswith("postflop("):
            from ..games import parse_game_name

            params = parse_game_name(game)[1]
        else:
            return None
        params.update({k: spec[k] for k in ("range0", "range1") if k in spec})
        import numpy as np

        from ..poker.cards import HAND_CARDS, board_mask, parse_cards
        from ..poker.postflop import parse_deck
        from ..poker.public_tree import card_symmetries
        from ..poker.ranges import make_range

        board = tuple(parse_cards(params["board"], "board"))
        deck = parse_deck(params.get("deck"))
        in_deck = np.zeros(52, dtype=bool)
        in_deck[list(deck)] = True
        alive = board_mask(list(board)) & in_deck[HAND_CARDS[:, 0]] & in_deck[HAND_CARDS[:, 1]]
        weights = [np.where(alive, make_range(params.get(k), k), 0.0) for k in ("range0", "range1")]
        perms = [tuple(range(4))]
        if params.get("isomorphism", True) is True and len(board) < 5:
            perms = card_symmetries(board, deck, weights)
        return float(sum(int(np.count_nonzero(w)) for w in weights) * _boards(board, deck, perms))
    except Exception:  # noqa: BLE001 - only an order; the worker reports a bad spec
        return None


def _boards(board: tuple, deck, perms: list) -> int:
    """Boards from ``board`` to the river, one per orbit of each next card under the suit
    permutations ``perms`` that fix the cards dealt so far (as the public tree deals them)."""
    from ..poker.public_tree import permute_card

    def count(board, perms):
        if len(board) >= 5:
            return 1
        rest = len(deck) - len(board)
        if len(perms) == 1:  # no symmetry left: each card its own orbit
            return 1 + rest * count(board + (-1,), perms)
        reps = {min(permute_card(c, p) for p in perms) for c in deck if c not in board}
        if len(board) == 4:
            return 1 + len(reps)
        return 1 + sum(count(board + (c,), [p for p in perms if permute_card(c, p) == c]) for c in reps)

    return count(tuple(board), perms)


def longest_first(todo: list[Spot]) -> list[Spot]:
    """The spots in the order a pool of several workers takes them: spots of unknown size (not
    postflop) first, in file order, then the rest by :func:`spot_size`, largest first, so
    that no worker starts a large spot when the others are about to run out of work."""
    sizes = [spot_size(s.spec) for s in todo]
    order = sorted(range(len(todo)), key=lambda i: (sizes[i] is not None, -(sizes[i] or 0), i))
    return [todo[i] for i in order]


def load_strategy(blob: bytes, where: str = "a spot") -> dict:
    """The solution dict of a row's ``strategy`` column; a corrupt blob is an InputError."""
    try:
        sol = json.loads(zlib.decompress(blob))
    except (zlib.error, TypeError, ValueError) as e:
        raise InputError(f"{where}: its stored strategy is corrupt ({e})") from None
    if not isinstance(sol, dict):
        raise InputError(f"{where}: its stored strategy is not a solution object")
    from ..model.strategy import check_whatif

    check_whatif(f"{where}: its stored strategy", sol)
    return sol


# ------------------------------------------------------------------ the table


class Store:
    """The SQLite table of spots (one row per spec hash), written by the driver only."""

    def __init__(self, path: str):
        self.path = path
        try:
            self.conn = sqlite3.connect(path, timeout=60)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute(SCHEMA)
            have = [r[1] for r in self.conn.execute("PRAGMA table_info(spots)")]
        except sqlite3.DatabaseError as e:
            raise InputError(f"{path}: not a usable SQLite database ({e})") from None
        if have != COLUMNS:
            raise InputError(f"{path}: its 'spots' table is not a treeplex batch table (columns {have})")

    def done(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT hash FROM spots WHERE status = 'done'")}

    def record(self, spot: Spot, row: dict) -> None:
        """Insert the spot's row in its own transaction; a done row is never replaced."""
        from datetime import datetime, timezone

        values = {c: row.get(c) for c in COLUMNS}
        values.update(hash=spot.key, spec=canonical(spot.spec),
                      finished_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        cols = ", ".join(COLUMNS)
        updates = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c != "hash")
        with self.conn:
            self.conn.execute(f"INSERT INTO spots ({cols}) VALUES ({', '.join('?' * len(COLUMNS))}) "
                              f"ON CONFLICT(hash) DO UPDATE SET {updates} WHERE spots.status <> 'done'",
                              [values[c] for c in COLUMNS])

    def rows(self) -> list[dict]:
        cur = self.conn.execute(f"SELECT {', '.join(COLUMNS)} FROM spots ORDER BY rowid")
        return [dict(zip(COLUMNS, r)) for r in cur]

    def close(self) -> None:
        self.conn.close()


def read_rows(path: str) -> list[dict]:
    """Every row of a batch database (a missing file is an InputError, not a new database)."""
    if not os.path.isfile(path):
        raise InputError(f"no such database: {path}")
    store = Store(path)
    try:
        return store.rows()
    finally:
        store.close()


def write_parquet(rows: list[dict], folder: str) -> str:
    """``folder/spots.parquet``: the table's rows (the strategy blob as binary)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "spots.parquet")
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def check_parquet(folder: str) -> None:
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise InputError(f"--parquet {folder}: needs pyarrow (pip install pyarrow)") from None
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise InputError(f"--parquet {folder} is not a folder")


# ------------------------------------------------------------------ engines


class LocalEngine:
    """``workers`` worker processes (spawn) on this machine, one spot at a time each, with a
    wall-clock watchdog per spot: a spot still running at its deadline (:func:`spot_deadline`),
    or whose worker dies (killed, out of memory), is failed with one line, its worker alone is
    ended and replaced, and the other workers' spots go on. ``submit`` returns a future of the
    spot's row; a thread per spot in flight waits on that worker's pipe."""

    def __init__(self, workers: int | None, threads: int = 1, spot_time_limit: float | None = None):
        self.workers = workers or os.cpu_count() or 1
        self.threads = threads
        self.spot_time_limit = spot_time_limit
        self.ctx = multiprocessing.get_context("spawn")
        self.lock = threading.Lock()
        self.idle: list = []  # (process, pipe) pairs waiting for a spot
        self.alive: set = set()  # every process started and not yet ended

    def submit(self, spec: dict, base: str) -> cf.Future:
        fut: cf.Future = cf.Future()
        threading.Thread(target=self._run, args=(fut, spec, base), daemon=True).start()
        return fut

    def _start(self):
        here, there = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker_main, args=(there, os.getpid()), daemon=True)
        proc.start()
        there.close()
        with self.lock:
            self.alive.add(proc)
        return proc, here

    def _end(self, worker) -> None:
        proc, conn = worker
        if proc.is_alive():
            proc.kill()
        proc.join()
        conn.close()
        with self.lock:
            self.alive.discard(proc)

    def _run(self, fut: cf.Future, spec: dict, base: str) -> None:
        with self.lock:
            worker = self.idle.pop() if self.idle else None
        try:
            if worker is None:
                worker = self._start()
                if not worker[1].poll(WORKER_START_LIMIT) or worker[1].recv() != "ready":
                    raise EOFError("no answer from a new worker")  # its imports, before the clock starts
            conn = worker[1]
            limit = spot_deadline(spec, self.spot_time_limit)
            conn.send((spec, base, self.threads))
            if conn.poll(limit):
                row = conn.recv()
                with self.lock:
                    self.idle.append(worker)
            else:
                self._end(worker)
                row = {"status": "failed", "error": f"ran past its wall-clock limit of {limit:g} s (its worker was ended)"}
        except (EOFError, OSError) as e:  # the worker died under this spot
            if worker:
                self._end(worker)
            code = worker[0].exitcode if worker else None
            how = (f"killed by signal {-code}" + (" (out of memory?)" if code == -9 else "")
                   if code is not None and code < 0 else f"exit code {code}" if code is not None else str(e))
            row = {"status": "failed", "error": f"the worker died ({how})"}
        except BaseException as e:  # noqa: BLE001 - the future must always get its row
            row = {"status": "failed", "error": f"{type(e).__name__}: {e}"}
        fut.set_result(row)

    def close(self, cancel: bool = False) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
            busy = [p for p in self.alive if all(p is not w[0] for w in idle)]
        for proc, conn in idle:
            try:
                conn.send(None)  # stop
            except OSError:
                pass
        for proc, conn in idle:
            proc.join(5)
            self._end((proc, conn))
        if cancel:
            for proc in busy:
                proc.kill()
                proc.join()


WORKER_START_LIMIT = 300.0  # seconds a new worker may take to import (a loaded machine)


def spot_deadline(spec: dict, spot_time_limit: float | None) -> float:
    """The watchdog's wall-clock limit of one spot in seconds (loading and building its tree
    included): ``--spot-time-limit`` if given; else, when the spot has a ``time_limit``, that
    plus as much again and at least 60 s for building the tree and the final gap; else None: no limit."""
    limits = [spot_time_limit] if spot_time_limit else []
    if spec.get("time_limit"):
        limits.append(spec["time_limit"] + max(60.0, spec["time_limit"]))
    return min(limits) if limits else None


def _worker_main(conn, parent: int) -> None:
    """A worker: solve the spots the driver sends until it sends None or goes away."""
    _init_worker(parent)
    from ..games import load_game  # noqa: F401 - the imports every spot needs, before the clock
    from ..run.driver import solve  # noqa: F401

    conn.send("ready")
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            break
        if job is None:
            break
        conn.send(solve_spot(*job))


def _init_worker(parent: int) -> None:
    """Pool initializer. End this worker once the driver is gone (after a SIGKILL nothing else
    would: an idle worker waits on its queue forever). And once the pool lets it go, end it
    without the interpreter's teardown: with numba's kernels loaded that takes 0.3 s of CPU
    (0.5 s wall, measured), which the driver waits for when it shuts the pool down at the end
    of every batch. The pool's own exit steps run first (this handler is registered before any
    later atexit handler, which run before it); the worker holds no open files of the batch."""
    import atexit
    import threading

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    atexit.register(_quick_exit)


def _quick_exit() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001, S110 - a closed stream: nothing to flush
            pass
    os._exit(0)


def check_spot_time_limit(spot_time_limit: float | None) -> None:
    if spot_time_limit is not None and not (0 < spot_time_limit < float("inf")):
        raise InputError(f"--spot-time-limit must be a positive number of seconds, got {spot_time_limit}")


def make_engine(engine: str, workers: int | None, address: str | None, threads: int,
                spot_time_limit: float | None = None):
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}")
    if threads < 1:
        raise InputError(f"--threads must be at least 1, got {threads}")
    check_spot_time_limit(spot_time_limit)
    if engine == "local":
        if address is not None:
            raise InputError("--address applies to --engine ray only")
        return LocalEngine(workers, threads, spot_time_limit)
    if engine == "ray":
        from .ray_engine import RayEngine

        return RayEngine(solve_spot, workers, address, threads,
                         deadline=lambda spec: spot_deadline(spec, spot_time_limit))
    raise InputError(f"unknown engine {engine!r}; use local or ray")


# ------------------------------------------------------------------ the driver


def run_batch(specs_path: str, db: str, engine: str = "local", workers: int | None = None,
              address: str | None = None, threads: int = 1, parquet: str | None = None,
              progress: bool = False, spot_time_limit: float | None = None) -> dict:
    """Solve the spots of ``specs_path`` not yet done in ``db``; returns the counts
    (``spots``, ``skipped``, ``done``, ``failed``) and the errors of this run's failures."""
    spots = read_specs(specs_path)
    eng_args = (engine, workers, address, threads, spot_time_limit)
    if engine == "local":
        make_engine(*eng_args)  # check the arguments before touching the database (starts no process)
    elif engine == "ray":
        from .ray_engine import check_address

        check_spot_time_limit(spot_time_limit)
        check_address(address)
    if parquet:
        check_parquet(parquet)
    base = os.path.dirname(os.path.abspath(specs_path))
    store = Store(db)
    try:
        done = store.done()
        todo, seen = [], set()
        for s in spots:
            if s.key not in done and s.key not in seen:  # a repeated line is solved once
                seen.add(s.key)
                todo.append(s)
        counts = {"spots": len(spots), "unique": len({s.key for s in spots}), "skipped": 0, "done": 0,
                  "failed": 0, "errors": []}
        counts["skipped"] = counts["unique"] - len(todo)
        if todo:
            _drive(todo, store, make_engine(*eng_args), base, counts, progress)
        if parquet:
            counts["parquet"] = write_parquet(store.rows(), parquet)
    finally:
        store.close()
    return counts


def _drive(todo: list[Spot], store: Store, eng, base: str, counts: dict, progress: bool) -> None:
    """Keep ``eng.workers`` spots in flight (largest first when there are several workers);
    record each as soon as it finishes, once its worker has the next spot."""
    from tqdm import tqdm

    bar = tqdm(total=len(todo), unit="spot", disable=not progress, file=sys.stderr)
    queue = iter(longest_first(todo) if eng.workers > 1 else todo)
    pending: dict = {}
    cancel = True

    def refill():
        while len(pending) < eng.workers and (spot := next(queue, None)) is not None:
            pending[eng.submit(spot.spec, base)] = spot

    try:
        while True:
            refill()
            if not pending:
                break
            bar.set_postfix_str(_status(counts, len(pending)))
            finished, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            results = []
            for fut in finished:
                spot = pending.pop(fut)
                try:
                    row = fut.result()
                except Exception as e:  # noqa: BLE001 - the worker died, not the spot's own error
                    row = {"status": "failed", "error": f"the worker died ({type(e).__name__}: {e})"}
                results.append((spot, row))
            try:
                refill()  # the freed workers start their next spots while these commit (fsync)
            finally:
                for spot, row in results:
                    store.record(spot, row)
                    counts[row["status"]] += 1
                    if row["status"] == "failed":
                        counts["errors"].append(f"line {spot.line}: {row['error']}")
                    bar.set_postfix_str(_status(counts, len(pending)), refresh=False)
                    bar.update(1)
        cancel = False
    finally:
        bar.close()
        eng.close(cancel=cancel)


def _status(counts: dict, running: int) -> str:
    return f"done={counts['done']} failed={counts['failed']} running={running}"
