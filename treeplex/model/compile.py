"""Sequence-form compiler: walk a game once and emit a :class:`~treeplex.model.problem.Problem`.

For every terminal z reached with chance probability c(z) after player 0's sequence
sigma_0(z) and player 1's sequence sigma_1(z),  A[sigma_0, sigma_1] += c(z) * u_0(z)
(von Stengel 1996; EGT paper section 3). Duplicates are merged in the CSR conversion.

Checks, each raising :class:`~treeplex.model.game.GameError` with the place named:
- perfect recall: every node of an infoset has the same own-parent sequence;
- every node of an infoset offers the same actions;
- payoffs and chance probabilities are finite; probabilities are >= 0 and sum to 1 within 1e-9;
- payoffs given as pairs (u0, u1) are constant-sum. Player 1's payoffs are then shifted
  by the constant, which leaves every strategy's ranking unchanged; A holds u0.

Time and memory are linear in the number of histories: one visit per node, a dict lookup
per decision node, three list entries per terminal.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..errors import GameError
from .problem import Problem, SparsePayoff
from ..core.treeplex import Treeplex

# ``Game`` in annotations is the protocol of :mod:`treeplex.model.game`, not imported: it imports this module

PROB_TOL = 1e-9
SUM_TOL = 1e-9


def _path(history) -> str:
    """Render a linked-list history (label, parent) as 'a/b/c'."""
    labels = []
    while history is not None:
        labels.append(str(history[0]))
        history = history[1]
    return "/".join(reversed(labels)) or "<root>"


class _Side:
    """Builds one player's treeplex while the tree is walked."""

    def __init__(self, player: int):
        self.player = player
        self.index: dict = {}  # infoset key -> infoset id
        self.start: list[int] = []
        self.parent: list[int] = []
        self.keys: list = []
        self.actions: list[tuple[str, ...]] = []
        self.first_history: list = []
        self.n_seqs = 1

    def infoset(self, key, actions, parent_seq: int, history) -> int:
        j = self.index.get(key)
        if j is None:
            if len(actions) == 0:
                raise GameError(f"player {self.player} infoset {key!r} has no actions at {_path(history)}")
            if len(set(actions)) != len(actions):
                raise GameError(f"player {self.player} infoset {key!r} repeats an action label: {list(actions)}")
            j = len(self.start)
            self.index[key] = j
            self.start.append(self.n_seqs)
            self.parent.append(parent_seq)
            self.keys.append(key)
            self.actions.append(actions)
            self.first_history.append(history)
            self.n_seqs += len(actions)
            return j
        if self.actions[j] != actions:
            raise GameError(
                f"player {self.player} infoset {key!r} offers different actions at different nodes: "
                f"{list(self.actions[j])} at {_path(self.first_history[j])} but "
                f"{list(actions)} at {_path(history)}"
            )
        if self.parent[j] != parent_seq:
            raise GameError(
                f"imperfect recall: player {self.player} infoset {key!r} is reached by histories that "
                f"disagree on the player's own past: {_path(self.first_history[j])} and {_path(history)}"
            )
        return j

    def treeplex(self) -> Treeplex:
        start = np.array(self.start, dtype=np.int32)
        end = start + np.array([len(a) for a in self.actions], dtype=np.int32)
        return Treeplex(start, end, np.array(self.parent, dtype=np.int32), self.keys, self.actions)


def compile_game(game: Game, **problem_kwargs) -> Problem:
    """Walk ``game`` depth-first once and return its sequence-form :class:`Problem`.

    ``problem.stats`` gets the node counts, ``compile_seconds`` and, for poker games with a
    ``pot`` attribute, the starting pot in chips. Extra keyword arguments
    (``payoff_unit``, ``big_blind``) are passed to :class:`Problem`; a game may also carry
    them as attributes. ``problem.game`` is ``game``, from which :attr:`Problem.tree` is walked
    on first access.
    """
    t0 = time.perf_counter()
    sides = (_Side(0), _Side(1))
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    n_chance = n_decision = n_terminal = 0
    constant = None  # u0 + u1 for pair payoffs
    constant_at = None
    # stack items: (state, chance reach, seq of player 0, seq of player 1, history)
    stack = [(game.initial_state(), 1.0, 0, 0, None)]
    while stack:
        state, reach, s0, s1, hist = stack.pop()
        if state.is_terminal():
            n_terminal += 1
            u = state.payoff()
            if isinstance(u, tuple):
                u0, u1 = float(u[0]), float(u[1])
                if not math.isfinite(u1):
                    raise GameError(f"player 1's payoff {u1!r} is not finite at {_path(hist)}")
                if not math.isfinite(u0):
                    raise GameError(f"payoff {u0!r} is not finite at {_path(hist)}")
                if constant is None:
                    constant, constant_at = u0 + u1, hist
                elif abs(u0 + u1 - constant) > SUM_TOL * max(1.0, abs(constant)):
                    raise GameError(
                        "general-sum game: this solver handles two-player zero-sum (or constant-sum) "
                        f"games only, but payoffs sum to {constant!r} at {_path(constant_at)} and to "
                        f"{u0 + u1!r} at {_path(hist)}"
                    )
            else:
                u0 = float(u)
            if not math.isfinite(u0):
                raise GameError(f"payoff {u0!r} is not finite at {_path(hist)}")
            if reach != 0.0 and u0 != 0.0:
                rows.append(s0)
                cols.append(s1)
                vals.append(reach * u0)
        elif state.is_chance():
            n_chance += 1
            outcomes = list(state.chance_outcomes())
            total = 0.0
            for label, p in outcomes:
                if not (p >= -PROB_TOL) or not math.isfinite(p):
                    raise GameError(f"chance outcome {label!r} has probability {p!r} at {_path(hist)}")
                total += p
            if abs(total - 1.0) > PROB_TOL:
                raise GameError(
                    f"chance probabilities sum to {total!r}, not 1, at {_path(hist)}: "
                    + ", ".join(f"{label}={p}" for label, p in outcomes)
                )
            for label, p in reversed(outcomes):
                stack.append((state.apply(label), reach * max(p, 0.0), s0, s1, (label, hist)))
        else:
            n_decision += 1
            pl = state.player()
            if pl not in (0, 1):
                raise GameError(f"decision node for player {pl!r} at {_path(hist)}; players are 0 and 1")
            actions = tuple(state.legal_actions())
            side = sides[pl]
            own = s0 if pl == 0 else s1
            j = side.infoset(state.infoset_key(), actions, own, hist)
            base = side.start[j]
            for a in range(len(actions) - 1, -1, -1):
                child = state.apply(actions[a])
                seq = base + a
                if pl == 0:
                    stack.append((child, reach, seq, s1, (actions[a], hist)))
                else:
                    stack.append((child, reach, s0, seq, (actions[a], hist)))
    X, Y = sides[0].treeplex(), sides[1].treeplex()
    A = SparsePayoff((np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(vals, dtype=np.float64)),
                     shape=(X.n_seqs, Y.n_seqs))
    stats = {
        "histories": n_chance + n_decision + n_terminal,
        "terminals": n_terminal,
        "chance_nodes": n_chance,
        "decision_nodes": n_decision,
        "constant_sum": constant if constant is not None else 0.0,
    }
    if getattr(game, "pot", None) is not None:  # poker: the starting pot, for %pot units
        stats["pot"] = float(game.pot)
    for attr in ("payoff_unit", "big_blind"):
        if attr not in problem_kwargs and getattr(game, attr, None) is not None:
            problem_kwargs[attr] = getattr(game, attr)
    problem = Problem(X, Y, A, name=getattr(game, "name", "game"), stats=stats, game=game, **problem_kwargs)
    stats["compile_seconds"] = time.perf_counter() - t0
    return problem
