"""Checkpoints of a running solve: the solver's state plus the driver's counters and trace.

One ``.npz`` file: every array of ``solver.state_dict()`` under ``state/NAME``, and a JSON
string ``meta`` with the format version, the algorithm name, its parameters, the state's
other entries (``scalars``: numbers, and JSON-able dicts such as a numpy Generator's
``bit_generator.state``, given back as JSON loads them: tuples become lists), the game's
signature (name, treeplex sizes and a fingerprint: a hash of both treeplexes and a probe of
the payoffs, or a public-tree game's digest; checked on resume) and the driver's progress (trace, seconds, restarts, the
best profile, the schedule: :func:`save_run`). Writes go to a uniquely named temporary file
beside the target that is fsynced and renamed over it (:func:`~treeplex.io.files.atomic_write`),
so a run killed while writing leaves the previous checkpoint intact.

Loading trusts nothing: a file that is not such a checkpoint, or whose fields or arrays do not
fit the game and the solver (shape, dtype, finiteness: :meth:`Solver.load_state_dict`), is
refused with one :class:`InputError` line.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from ..errors import InputError
from ..io.files import atomic_write
from ..model.problem import Problem
from ..solvers.base import check_array
from .progress import Progress

VERSION = 3  # 3: solver state listed explicitly (per-player fields, "gradients", optional "rng")


def fingerprint(problem: Problem) -> dict:
    """sha256 of both treeplexes' arrays, and r0^T A r1 for fixed vectors r0, r1 (cached); for
    a game on a public tree (postflop, nlfh52), its :meth:`~treeplex.poker.hands_game.PublicTreeGame.digest`
    instead: the treeplexes and full-size vectors a fused run never allocates (they came on
    top of its memory estimate at every checkpoint)."""
    cached = getattr(problem, "_fingerprint", None)
    game = getattr(problem, "game", None)
    if cached is None and hasattr(game, "digest"):
        cached = problem._fingerprint = {"public_tree_sha256": game.digest()}
    if cached is None:
        import hashlib

        h = hashlib.sha256()
        for T in problem.treeplexes:
            for a in (T.start, T.end, T.parent):
                h.update(np.ascontiguousarray(a, dtype=np.int64).tobytes())
        r0, r1 = (np.cos(np.arange(T.n_seqs) + 0.5) for T in problem.treeplexes)
        probe = float(r0 @ problem.A.matvec(r1, count=False))
        cached = problem._fingerprint = {"treeplexes_sha256": h.hexdigest(), "payoff_probe": probe}
    return cached


def signature(problem: Problem) -> dict:
    """What must match for a checkpoint to belong to ``problem``."""
    fp = fingerprint(problem)
    infosets = {} if "public_tree_sha256" in fp else {"infosets": [problem.X.n_infosets, problem.Y.n_infosets]}
    return {"game": problem.name, "seqs": list(problem.n_seqs), **infosets, **fp}


def save_checkpoint(path: str, problem: Problem, algorithm: str, params: dict, state: dict, driver: dict,
                    driver_arrays: dict | None = None) -> None:
    """Write the checkpoint atomically (see the module docstring)."""
    arrays = {f"state/{k}": v for k, v in state.items() if isinstance(v, np.ndarray)}
    arrays.update({f"driver/{k}": v for k, v in (driver_arrays or {}).items()})
    scalars = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in state.items()
               if not isinstance(v, np.ndarray)}  # numbers and JSON-able dicts
    meta = {"version": VERSION, "algorithm": algorithm, "params": params, "scalars": scalars,
            "problem": signature(problem), "driver": driver}
    text = json.dumps(meta, default=_plain)
    atomic_write(path, lambda f: np.savez(f, meta=np.array(text), **arrays))


def save_run(path: str, problem: Problem, solver, params: dict, progress: Progress, schedule) -> None:
    """Checkpoint ``solver`` (run with ``params``), the driver's ``progress`` and where its
    :class:`~treeplex.run.schedule.Schedule` stands."""
    best = progress.best
    save_checkpoint(path, problem, solver.name, params, solver.state_dict(),
                    {"trace": progress.trace, "seconds": progress.seconds, "check_seconds": progress.check_seconds,
                     "restart_gap": progress.restart_gap, "best_gap": best[2] if best else None,
                     "last_check": schedule.last, "next_check": schedule.next_check},
                    {"best_x": best[0], "best_y": best[1]} if best else None)


def load_run(path: str, problem: Problem, algorithm, params: dict) -> tuple[str, dict, dict, Progress, dict]:
    """(algorithm, params, solver state, progress, schedule keywords ``next_check`` and
    ``last``) of the run checkpointed at ``path``, refusing to resume it with another
    ``algorithm`` or other ``params`` (:func:`check_resume`)."""
    name, saved, state, driver = load_checkpoint(path, problem)
    check_resume(path, algorithm, params, name, saved)
    arrays = driver["arrays"]
    best = (arrays["best_x"], arrays["best_y"], driver["best_gap"]) if "best_x" in arrays else None
    progress = Progress(driver["trace"], driver["seconds"], driver["check_seconds"], driver["restart_gap"], best)
    last = tuple(driver["last_check"]) if driver.get("last_check") else None
    return name, saved, state, progress, {"next_check": driver.get("next_check"), "last": last}


def check_resume(path: str, algorithm, params: dict, name: str, saved: dict) -> None:
    """Refuse resuming with another algorithm (a name or a solver) or other parameters than the checkpoint's."""
    if algorithm not in (None, name):
        given = algorithm if isinstance(algorithm, str) else algorithm.name
        raise InputError(f"{path} is a checkpoint of {name!r}, not of {given!r}; resume without --algorithm "
                         f"(or with --algorithm {name})")
    if "prior" in params:
        raise InputError("a resumed run continues from its checkpoint: --warm-start does not apply")
    for k, v in params.items():
        if k not in saved or json.loads(json.dumps(v, default=str)) != saved[k]:
            was = f"with {k}={saved[k]!r}" if k in saved else f"without {k}"
            raise InputError(f"{path} was run {was}, not with {k}={v!r}; resume without --param {k}")


def load_checkpoint(path: str, problem: Problem) -> tuple[str, dict, dict, dict]:
    """(algorithm, params, state, driver progress) from a checkpoint written for ``problem``;
    the driver's arrays are in ``progress["arrays"]``, the state's dict entries are dicts. The solver's arrays are checked when
    the solver loads them; the driver's fields and arrays here."""
    if os.path.isdir(path):
        raise InputError(f"checkpoint {path} is a directory")
    if not os.path.isfile(path):
        raise InputError(f"no such checkpoint: {path}")
    try:
        data = np.load(path, allow_pickle=False)
    except Exception as e:  # noqa: BLE001 - a damaged file can fail in many ways (zip, npy, pickle)
        raise InputError(f"{path}: not a treeplex checkpoint ({_reason(e)})") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise InputError(f"{path}: not a treeplex checkpoint (a single .npy array, not the .npz of --checkpoint)")
    try:
        with data:
            meta = json.loads(str(data["meta"][()]))
            state = {k[len("state/"):]: data[k] for k in data.files if k.startswith("state/")}
            driver_arrays = {k[len("driver/"):]: data[k] for k in data.files if k.startswith("driver/")}
    except Exception as e:  # noqa: BLE001 - a damaged file can fail in many ways (zip, npy, JSON)
        raise InputError(f"{path}: not a treeplex checkpoint ({_reason(e)})") from None
    if not isinstance(meta, dict) or meta.get("version") != VERSION:
        found = meta.get("version") if isinstance(meta, dict) else None
        raise InputError(f"{path}: checkpoint format version {found!r}, expected {VERSION}")
    try:
        _check_meta(meta, driver_arrays, problem)
    except InputError as e:
        raise InputError(f"{path}: {e}") from None
    state.update(meta["scalars"])
    return meta["algorithm"], meta["params"], state, {**meta["driver"], "arrays": driver_arrays}


def _check_meta(meta: dict, driver_arrays: dict, problem: Problem) -> None:
    """Refuse checkpoint fields of the wrong type, or that belong to another game."""
    for key, kind in (("algorithm", str), ("params", dict), ("scalars", dict), ("problem", dict), ("driver", dict)):
        if not isinstance(meta.get(key), kind):
            raise InputError(f"checkpoint field {key!r} is missing or not a {kind.__name__}")
    got, want = meta["problem"], signature(problem)
    probe = got.get("payoff_probe")
    if ({k: v for k, v in got.items() if k != "payoff_probe"} != {k: v for k, v in want.items() if k != "payoff_probe"}
            or ("payoff_probe" in want and not (isinstance(probe, (int, float)) and math.isclose(
                probe, want["payoff_probe"], rel_tol=1e-9, abs_tol=1e-12)))):
        raise InputError(f"checkpoint is for {got.get('game')!r} with sizes {got.get('seqs')}, not for this game "
                         f"{want['game']!r} with sizes {want['seqs']} (or its payoffs differ)")
    d = meta["driver"]
    if not isinstance(d.get("trace"), list) or not all(isinstance(r, dict) for r in d["trace"]):
        raise InputError("checkpoint field 'driver.trace' is missing or not a list of rows")
    for key in ("seconds", "check_seconds", "restart_gap"):
        if not _number(d.get(key)) or not d[key] >= 0:
            raise InputError(f"checkpoint field 'driver.{key}' is missing or not a number >= 0")
    if d.get("best_gap") is not None and not _number(d["best_gap"]):
        raise InputError("checkpoint field 'driver.best_gap' is not a number")
    last = d.get("last_check")
    if last is not None and not (isinstance(last, list) and len(last) == 2 and all(map(_number, last))):
        raise InputError("checkpoint field 'driver.last_check' is not [iteration, gap]")
    if d.get("next_check") is not None and not (isinstance(d["next_check"], int) and d["next_check"] >= 0):
        raise InputError("checkpoint field 'driver.next_check' is not an iteration number")
    want_arrays = dict(zip(("best_x", "best_y"), problem.n_seqs)) if d.get("best_gap") is not None else {}
    if set(driver_arrays) != set(want_arrays):
        raise InputError(f"checkpoint driver arrays are {sorted(driver_arrays)}, expected {sorted(want_arrays)}")
    for k, n in want_arrays.items():
        check_array(f"driver/{k}", driver_arrays[k], (n,), np.dtype(np.float64))


def _reason(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e).strip() else type(e).__name__


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)


def _plain(v):
    """JSON fallback for numpy scalars in traces and states."""
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(f"cannot store {type(v).__name__} in a checkpoint")
