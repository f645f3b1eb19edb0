"""Realization plans <-> readable behavioral strategies keyed by infoset and action label; solution files (``solve --out``)."""

from __future__ import annotations

import json
import math
import os
import re

import numpy as np

from ..errors import GameError, InputError
from ..core.treeplex import Treeplex

# ``Problem`` in annotations is :class:`treeplex.model.problem.Problem`, not imported: it imports this module


def behavioral_dict(T: Treeplex, x: np.ndarray) -> dict[str, dict[str, float]]:
    """{infoset key: {action label: probability}} for realization plan ``x``.

    Infosets the player's own plan never reaches are reported uniform.
    """
    b = T.behavioral_from_plan(x)
    return {
        str(key): {a: float(b[T.start[j] + i]) for i, a in enumerate(T.action_labels[j])}
        for j, key in enumerate(T.infoset_keys)
    }


def profile_dict(problem: Problem, x: np.ndarray, y: np.ndarray) -> dict:
    return {"player0": behavioral_dict(problem.X, x), "player1": behavioral_dict(problem.Y, y)}


def profile_text(profile: dict) -> str:
    """A :func:`profile_dict` as text: per player a header, then one line per infoset."""
    return "\n\n".join(
        f"{player} (behavioral: infoset -> action probabilities)"
        + "".join(f"\n  {key:24s} " + "  ".join(f"{a}={q:.4f}" for a, q in probs.items()) for key, probs in strat.items())
        for player, strat in profile.items()
    )


def behavioral_from_dict(T: Treeplex, strategy: dict, player: int, default: np.ndarray | None = None) -> np.ndarray:
    """Local probabilities b[s] = P(action of s | its infoset) (b[0] = 1) of a strategy
    {infoset key: {action: probability}}. A listed infoset's row must name its actions with
    probabilities that sum to 1 within 1e-6 (unlisted actions 0); it is normalized. An infoset
    the dict lacks plays ``default``'s row (uniform if None). Anything else is a
    :class:`GameError` naming the player and infoset."""
    b = np.empty(T.n_seqs) if default is None else np.array(default, dtype=np.float64)
    b[0] = 1.0
    for j, key in enumerate(T.infoset_keys):
        probs = strategy.get(str(key))
        labels = T.action_labels[j]
        if probs is None:
            if default is None:
                b[T.start[j] : T.end[j]] = 1.0 / len(labels)
            continue
        if not isinstance(probs, dict):
            raise GameError(f"player {player} infoset {key!r}: expected {{action: probability}}, got {probs!r:.60}")
        unknown = set(probs) - set(labels)
        if unknown:
            raise GameError(f"player {player} infoset {key!r}: unknown actions {sorted(unknown)}; has {list(labels)}")
        for a, q in probs.items():
            if isinstance(q, bool) or not isinstance(q, (int, float)):
                raise GameError(f"player {player} infoset {key!r}: the probability of {a!r} is {q!r:.40}, not a number")
        row = np.array([float(probs.get(a, 0.0)) for a in labels])
        if np.any(row < 0) or abs(row.sum() - 1.0) > 1e-6:
            raise GameError(f"player {player} infoset {key!r}: probabilities {row.tolist()} are not a distribution")
        b[T.start[j] : T.end[j]] = row / row.sum()
    return b


def plan_from_dict(T: Treeplex, strategy: dict, player: int, complete: bool = False) -> np.ndarray:
    """Realization plan of a strategy {infoset key: {action: probability}}
    (:func:`behavioral_from_dict`; infosets the dict lacks play uniformly). With ``complete``,
    every infoset the dict lacks must be one the plan never reaches (else :class:`GameError`)."""
    x = T.plan_from_behavioral(behavioral_from_dict(T, strategy, player))
    if complete:
        for j, key in enumerate(T.infoset_keys):
            if str(key) not in strategy and x[T.parent[j]] > 1e-12:
                raise GameError(f"player {player}'s strategy lacks infoset {key!r}, which it reaches")
    return x


FORMAT_VERSION = 1  # of the files ``solve --out`` writes; readers refuse newer versions


def save_solution(path: str, solution: dict, **meta) -> None:
    """Write a ``solve --out`` file: ``format_version``, the run's ``meta`` (algorithm, value,
    gap, exploitability, payoff unit...) and ``solution`` (:meth:`Problem.solution`)."""
    with open(path, "w") as f:
        json.dump(solution_record(solution, **meta), f)


def solution_record(solution: dict, **meta) -> dict:
    """What :func:`save_solution` writes, as a dict (``treeplex batch`` stores it compressed)."""
    return {"format_version": FORMAT_VERSION, **meta, **solution}


READ_BYTES_PER_FILE_BYTE = 14  # peak of reading a solution and making its page: ~11x the file (18 MB postflop)


def read_solution(path: str, max_memory: str | None = None) -> dict:
    """A file written by ``solve --out`` (or ``solve --json``), checked enough to display: a
    poker solution (``nodes``) or a strategy profile (``strategies``). Anything else, a
    truncated file, one from a newer ``format_version``, or one whose size times
    :data:`READ_BYTES_PER_FILE_BYTE` is above ``max_memory`` (default: the memory available
    now; checked before reading) raises a one-line :class:`InputError`."""
    from ..core.memory import limit_bytes, show

    limit, what = limit_bytes(max_memory)
    try:
        with open(path) as f:
            size = os.fstat(f.fileno()).st_size
            if limit is not None and READ_BYTES_PER_FILE_BYTE * size > limit:
                too_big = f"{path}: a {show(size)} solution file needs about " \
                          f"{show(READ_BYTES_PER_FILE_BYTE * size)} to read and show, above {show(limit)} ({what})"
            else:
                too_big, data = None, json.load(f)
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read ({e})") from None
    except ValueError as e:
        raise InputError(f"{path}: not a solution file: bad or truncated JSON ({e})") from None
    except RecursionError:
        raise InputError(f"{path}: not a solution file: JSON nested too deeply") from None
    if too_big:
        raise InputError(too_big)
    if not isinstance(data, dict):
        raise InputError(f"{path}: not a solution file (expected a JSON object written by treeplex solve --out)")
    version = data.get("format_version", 0)  # files from before format_version count as 0
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise InputError(f"{path}: format_version must be a whole number >= 0, got {version!r}")
    if version > FORMAT_VERSION:
        raise InputError(f"{path}: format_version {version} is newer than this treeplex reads "
                         f"({FORMAT_VERSION}); upgrade treeplex")
    check_whatif(path, data)
    if "nodes" in data:
        _check_nodes(path, data["nodes"])
    elif "strategies" in data:
        _check_profile(path, data["strategies"])
    else:
        raise InputError(f"{path}: not a solution file (no 'nodes' or 'strategies'); "
                         "write one with treeplex solve GAME --out FILE")
    return data


def check_whatif(where: str, data: dict) -> None:
    """Refuse (one line naming ``where``) the numbers the viewer and ``treeplex report`` take
    from a solution without looking: ``big_blind`` and ``pot`` (finite, >= 0, or absent), and
    a locked or raked solve's record (:mod:`treeplex.run.whatif`): ``lock_ev_gain`` or
    ``rake_ev_cost`` with ``chips`` (two finite numbers) and ``error_bound_chips`` (finite,
    >= 0), beside a ``baseline`` object with a finite ``value``."""
    def number(v) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

    for key in ("big_blind", "pot"):
        if data.get(key) is not None and not (number(data[key]) and data[key] >= 0):
            raise InputError(f"{where}: {key} {data[key]!r} is not a finite number >= 0")
    for key, what in (("lock_ev_gain", "locked"), ("rake_ev_cost", "raked")):
        if key not in data:
            continue
        g, b = data[key], data.get("baseline")
        ok = (isinstance(g, dict) and isinstance(g.get("chips"), list) and len(g["chips"]) == 2
              and all(map(number, g["chips"])) and number(g.get("error_bound_chips")) and g["error_bound_chips"] >= 0)
        if not ok:
            raise InputError(f"{where}: {key} must hold chips (two finite numbers) and error_bound_chips "
                             "(a finite number >= 0)")
        if not (isinstance(b, dict) and number(b.get("value")) and isinstance(b.get("file"), (str, type(None)))):
            raise InputError(f"{where}: a {what} solve's baseline must be an object with a finite value and a file "
                             "(a path or null)")


def _probability(q) -> bool:
    """A probability as the viewer draws it: a finite number in [0, 1] (not a bool)."""
    return (isinstance(q, (int, float)) and not isinstance(q, bool) and math.isfinite(q)
            and -1e-9 <= q <= 1 + 1e-9)


def _check_nodes(path: str, nodes) -> None:
    if not isinstance(nodes, list) or not nodes:
        raise InputError(f"{path}: 'nodes' must be a non-empty list of betting nodes")
    for i, nd in enumerate(nodes):
        ok = (isinstance(nd, dict) and isinstance(nd.get("history"), str) and nd.get("player") in (0, 1)
              and isinstance(nd.get("actions"), list) and isinstance(nd.get("hands"), dict))
        if ok:
            k = len(nd["actions"])
            ok = k > 0 and all(isinstance(q, list) and len(q) == k for q in nd["hands"].values())
        if not ok:
            raise InputError(f"{path}: node {i} is malformed (needs history, player 0/1, actions, and hands "
                             "with one probability per action)")
        where = f"{path}: node {i} (history {nd['history']!r})"
        if not all(isinstance(a, str) for a in nd["actions"]):
            raise InputError(f"{where}: 'actions' must be action names (strings)")
        for hand, probs in nd["hands"].items():
            if not _HAND.fullmatch(hand):
                raise InputError(f"{where}: hand {hand!r} is not two cards such as 'AsKd'")
            bad = next((q for q in probs if not _probability(q)), None)
            if bad is not None or not probs:
                raise InputError(f"{where}: hand {hand}: probability {bad!r} is not a number in [0, 1]")
        if "frequencies" in nd and not (isinstance(nd["frequencies"], list) and len(nd["frequencies"]) == k
                                        and (all(_probability(q) for q in nd["frequencies"])
                                             or nd.get("reach") == 0)):  # a node never reached: NaN
            raise InputError(f"{where}: 'frequencies' must be one number in [0, 1] per action")
    if not any(nd["history"] == "" for nd in nodes):
        raise InputError(f"{path}: no node at the root (history '')")


_HAND = re.compile(r"[2-9TJQKA][cdhs][2-9TJQKA][cdhs]")


def _check_profile(path: str, strategies) -> None:
    ok = isinstance(strategies, dict) and set(strategies) == {"player0", "player1"}
    ok = ok and all(isinstance(s, dict) and all(isinstance(probs, dict) for probs in s.values())
                    for s in strategies.values())
    if not ok:
        raise InputError(f"{path}: 'strategies' must be {{player0: {{infoset: {{action: probability}}}}, player1: ...}}")
    for player, table in strategies.items():
        for key, probs in table.items():
            bad = next(((a, q) for a, q in probs.items() if not _probability(q)), None)
            if bad is not None:
                raise InputError(f"{path}: {player} infoset {key!r}: action {bad[0]!r} has probability "
                                 f"{bad[1]!r}, not a number in [0, 1]")
