"""What-ifs: a locked postflop solve against its baseline, the unlocked solve of the same spot.

A locked solve (``treeplex solve`` or ``treeplex batch`` on a spot with ``locks``) first gets
its baseline: it solves :meth:`~treeplex.poker.postflop.PostflopGame.unlocked` with the same
solver and stop rule, or reads a ``solve --out`` file of it (``--baseline FILE``). The
baseline spreads range-wide frequency locks over hands (:func:`treeplex.poker.locks.spread`)
and is recorded in the locked solution (``baseline``) with the EV each player gains from the
lock (``lock_ev_gain``):

    gain_0 = v_locked - v_baseline,   gain_1 = -gain_0

(player 0's values, chips; the game is zero-sum, so what one player gains the other loses;
a raked spot is not: there gain_1 = v1_locked - v1_baseline from player 1's own values),
also in mbb/g and % of the pot. Each value is its profile's, within its gap of the game's
value (the value of an equilibrium lies between the two best-response values, and so does
the profile's), so the gain is within ``error_bound_chips`` = gap_locked + gap_baseline of
the exact one (0 for two LP solves).
"""

from __future__ import annotations

import math

from ..errors import InputError
from ..model.metrics import to_mbb
from ..model.strategy import read_solution

RECORD = ("algorithm", "value", "value_player1", "gap", "exploitability", "iterations")


def is_locked(game) -> bool:
    """Whether ``game`` is a postflop spot with node locks."""
    return bool(getattr(game, "locks", None))


def baseline_from_file(game, path: str, max_memory: str | None = None) -> dict:
    """Read ``path`` (``solve --out`` of the unlocked spot) as ``game``'s baseline; its record."""
    data = read_solution(path, max_memory)
    if data.get("game") != game.name or "nodes" not in data:
        raise InputError(f"--baseline {path}: a solution of {data.get('game')!r}, not of this spot {game.name!r}")
    if data.get("locks"):
        raise InputError(f"--baseline {path}: a locked solve; the baseline is the spot without locks")
    if data.get("value") is None:
        raise InputError(f"--baseline {path}: no value recorded (write it with treeplex solve --out)")
    for key in ("value", "gap", "exploitability"):
        x = data.get(key)
        if x is not None and (isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x)):
            raise InputError(f"--baseline {path}: {key} {x!r} is not a finite number")
    game.set_baseline(solution=data, path=path)
    return {"file": path, **{k: data.get(k) for k in RECORD}}


def solve_baseline(game, problem, solve) -> dict:
    """Solve ``problem`` (``game.unlocked()``'s) by ``solve(problem) -> Result``, make it
    ``game``'s baseline, and return its record."""
    res = solve(problem)
    game.set_baseline(res.x, res.y)
    return {"file": None, "algorithm": res.algorithm, "value": res.value, "value_player1": res.evaluation.value1,
            "gap": res.gap,
            "exploitability": res.exploitability, "iterations": res.iterations, "seconds": res.seconds}


def ev_gain(problem, value: float, gap: float, baseline: dict, value1: float | None = None) -> dict:
    """Each player's EV gain from the locks (see the module docstring), in chips, mbb/g (with
    a big blind) and % of the pot, with its error bound in chips; ``value1``: player 1's own
    value on a raked (general-sum) spot."""
    d = [value - baseline["value"], -(value - baseline["value"])]
    if value1 is not None:
        if baseline.get("value_player1") is None:
            raise InputError("the baseline has no value_player1 (a raked spot's baseline records it)")
        d[1] = value1 - baseline["value_player1"]
    out = {"chips": d, "error_bound_chips": gap + (baseline.get("gap") or 0.0)}
    if problem.big_blind:
        out["mbb_per_game"] = [to_mbb(v, problem.big_blind) for v in d]
    if "pot" in problem.stats:
        out["pct_pot"] = [100 * v / problem.stats["pot"] for v in d]
    return out
