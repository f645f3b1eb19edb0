"""Checkpoints of a running solve: the solver's state plus the driver's counters and trace.

One ``.npz`` file: every array of ``solver.state_dict()`` under ``state/NAME``, and a JSON
string ``meta`` with the algorithm name, its parameters, the scalars of the state, the game's
signature (name and treeplex sizes, checked on resume) and the driver's progress (trace,
seconds, next check). Writes go to a temporary file that replaces the old one atomically, so
a run killed while writing leaves the previous checkpoint intact.
"""

from __future__ import annotations

import json
import os

import numpy as np

from .errors import InputError
from .problem import Problem

VERSION = 1


def signature(problem: Problem) -> dict:
    """What must match for a checkpoint to belong to ``problem``."""
    return {"game": problem.name, "seqs": [problem.X.n_seqs, problem.Y.n_seqs],
            "infosets": [problem.X.n_infosets, problem.Y.n_infosets]}


def save_checkpoint(path: str, problem: Problem, algorithm: str, params: dict, state: dict, driver: dict,
                    driver_arrays: dict | None = None) -> None:
    """Write the checkpoint atomically (``path + '.tmp'`` then rename)."""
    arrays = {f"state/{k}": v for k, v in state.items() if isinstance(v, np.ndarray)}
    arrays.update({f"driver/{k}": v for k, v in (driver_arrays or {}).items()})
    scalars = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in state.items()
               if not isinstance(v, np.ndarray)}
    meta = {"version": VERSION, "algorithm": algorithm, "params": params, "scalars": scalars,
            "problem": signature(problem), "driver": driver}
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.savez(f, meta=np.array(json.dumps(meta, default=_plain)), **arrays)
    os.replace(tmp, path)


def load_checkpoint(path: str, problem: Problem) -> tuple[str, dict, dict, dict]:
    """(algorithm, params, state, driver progress) from a checkpoint written for ``problem``;
    the driver's arrays are in ``progress["arrays"]``."""
    if not os.path.isfile(path):
        raise InputError(f"no such checkpoint: {path}")
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            state = {k[len("state/"):]: data[k] for k in data.files if k.startswith("state/")}
            driver_arrays = {k[len("driver/"):]: data[k] for k in data.files if k.startswith("driver/")}
    except (OSError, ValueError, KeyError) as e:
        raise InputError(f"{path}: not a treeplex checkpoint ({e})") from None
    if meta.get("version") != VERSION:
        raise InputError(f"{path}: checkpoint version {meta.get('version')!r}, expected {VERSION}")
    if meta["problem"] != signature(problem):
        raise InputError(f"{path}: checkpoint is for {meta['problem']}, not for this game {signature(problem)}")
    state.update(meta["scalars"])
    return meta["algorithm"], meta["params"], state, {**meta["driver"], "arrays": driver_arrays}


def _plain(v):
    """JSON fallback for numpy scalars in traces and states."""
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(f"cannot store {type(v).__name__} in a checkpoint")
