"""What-ifs: a locked or raked postflop solve against its baseline, the same spot solved
without its locks (locked) or without rake (raked, not locked).

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

A raked solve without locks gets its baseline the same way from :meth:`~treeplex.poker.postflop.
PostflopGame.unraked` (the spot with rake 0, zero-sum) and records what the rake costs each
player (``rake_ev_cost``), its own value in each game:

    cost_0 = v0_baseline - v0_raked,   cost_1 = v1_baseline - v1_raked,  v1_baseline = -v0_baseline

(chips, mbb/g, % of the pot; positive: the rake takes that much of the player's EV).
cost_0 + cost_1 = the raked profile's expected rake, exactly. ``error_bound_chips`` = gap_raked +
gap_baseline: the baseline's value is within its gap of the unraked game's value; the raked game
is general-sum, whose equilibria need not share one value, so there the gap bounds each player's
distance to its best response against the other (the Nash gap), not to a unique value.
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


def is_raked(game) -> bool:
    """Whether ``game`` is a raked postflop spot without locks (whose baseline is the spot
    without rake; a locked raked spot's is the raked spot without locks)."""
    return bool(getattr(game, "rake", 0)) and not is_locked(game)


def baseline_game(game):
    """The spot the baseline solves: ``game`` without locks, or without rake (raked, not locked)."""
    return game.unlocked() if is_locked(game) else game.unraked()


def baseline_from_file(game, path: str, max_memory: str | None = None) -> dict:
    """Read ``path`` (``solve --out`` of :func:`baseline_game`) as ``game``'s baseline; its record."""
    data = read_solution(path, max_memory)
    want = game.name if is_locked(game) else game.unraked().name
    if data.get("game") != want or "nodes" not in data:
        raise InputError(f"--baseline {path}: a solution of {data.get('game')!r}, not of this spot "
                         f"{want!r}{'' if is_locked(game) else ' (the spot without rake)'}")
    if data.get("locks"):
        raise InputError(f"--baseline {path}: a locked solve; the baseline is the spot without locks")
    if data.get("value") is None:
        raise InputError(f"--baseline {path}: no value recorded (write it with treeplex solve --out)")
    for key in ("value", "gap", "exploitability"):
        x = data.get(key)
        if x is not None and (isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x)):
            raise InputError(f"--baseline {path}: {key} {x!r} is not a finite number")
    if is_locked(game):
        game.set_baseline(solution=data, path=path)
    else:  # the same checks (board, sizes, nodes, ranges): the rake changes none of them
        from ..poker.locks import baseline_from_solution

        baseline_from_solution(game, data, path)
    return {"file": path, **{k: data.get(k) for k in RECORD}}


def baseline_for(game, source, run=None, max_memory: str | None = None, problem=None) -> dict | None:
    """The baseline record of a locked or raked ``game``, as ``treeplex solve --baseline`` and
    ``treeplex.solve(..., whatif=...)`` take it: ``source`` None (solve :func:`baseline_game`'s
    problem, ``problem`` if already built, by ``run(problem) -> Result``: the caller's solver and
    stop rule), a path (a ``solve --out`` file of it, :func:`baseline_from_file`) or ``"none"``
    (no baseline: None). Refuses a spot that is neither locked nor raked."""
    if not hasattr(game, "unraked") or not (is_locked(game) or is_raked(game)):
        raise InputError(f"a baseline applies to postflop spots with locks or rake; {getattr(game, 'name', 'this problem')!r} has neither")
    if source == "none":
        return None
    if source is not None:
        return baseline_from_file(game, source, max_memory)
    return solve_baseline(game, baseline_game(game).problem(max_memory) if problem is None else problem, run)


def solve_baseline(game, problem, solve) -> dict:
    """Solve ``problem`` (:func:`baseline_game`'s) by ``solve(problem) -> Result``, make it
    ``game``'s baseline (locks: frequency locks spread from it), and return its record."""
    res = solve(problem)
    if is_locked(game):
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
    return _units(problem, d, gap + (baseline.get("gap") or 0.0))


def rake_cost(problem, value: float, value1: float, gap: float, baseline: dict) -> dict:
    """What the rake costs each player (see the module docstring): the unraked baseline's value
    minus the raked solve's own value (``value``, ``value1``: players 0's and 1's), chips,
    mbb/g and % of the pot, with ``error_bound_chips``."""
    b0 = baseline["value"]
    return _units(problem, [b0 - value, -b0 - value1], gap + (baseline.get("gap") or 0.0))


def record(problem, res, baseline: dict) -> dict:
    """The what-if entries of a locked or raked solve's record: its ``baseline``, and
    ``lock_ev_gain`` (locked) or ``rake_ev_cost`` (raked, not locked)."""
    if problem.locks is not None:
        return {"baseline": baseline, "lock_ev_gain": ev_gain(problem, res.value, res.gap, baseline,
                                                              res.evaluation.value1)}
    return {"baseline": baseline, "rake_ev_cost": rake_cost(problem, res.value, res.evaluation.value1, res.gap,
                                                            baseline)}


def _units(problem, d: list, bound: float) -> dict:
    """``d`` (chips per player) with its bound, in mbb/g (with a big blind) and % of the pot."""
    out = {"chips": d, "error_bound_chips": bound}
    if problem.big_blind:
        out["mbb_per_game"] = [to_mbb(v, problem.big_blind) for v in d]
    if "pot" in problem.stats:
        out["pct_pot"] = [100 * v / problem.stats["pot"] for v in d]
    return out
