"""Depth-limited subgames with multi-valued leaves (Brown, Sandholm & Amos 2018, section 4).

A depth-limited subgame is any game (the state interface of :mod:`treeplex.model.game`) cut at
*leaf* states. At a leaf the opponent ``chooser`` picks one of k continuation strategies and
the game ends with payoff v_i(s, sigma*_i, sigma^j_{-i}): the value of state s when the
solving player i plays the blueprint beyond the leaf and the opponent plays its j-th
strategy. The pick is one decision per *leaf infoset* (the same choice at every state the
chooser cannot tell apart), so the subgame is an ordinary two-player zero-sum game: compile
it with :func:`treeplex.compile_game` and solve it with the LP or any solver.

Safety when the subgame does not start at the root (Proposition 1; the proof's augmented
subgame = the resolve gadget of Burch et al. 2014): before the subgame the opponent, at each
of its root infosets I, chooses "alt" (payoff: the bound v_{-i}(I), e.g. its value against
the blueprint) or "enter". The solving player must then keep every root infoset's value for
the opponent at most its bound, or pay for it.

All payoffs are player 0's, in the game's units.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Hashable, Sequence

import numpy as np

from ..model.compile import compile_game
from ..model.game import Chance, Decision, Terminal
from ..model.metrics import evaluate
from ..model.strategy import behavioral_dict

LEAF_TAG = "#leaf"
GADGET_TAG = "#gadget"


class _Leaf:
    """The chooser's pick among k continuation strategies at a leaf state."""

    __slots__ = ("chooser", "key", "values")

    def __init__(self, chooser: int, key: Hashable, values: np.ndarray):
        self.chooser, self.key, self.values = chooser, key, values

    def is_terminal(self):
        return False

    def is_chance(self):
        return False

    def player(self):
        return self.chooser

    def infoset_key(self):
        return f"{self.key}{LEAF_TAG}"

    def legal_actions(self):
        return [f"v{j}" for j in range(len(self.values))]

    def apply(self, action):
        return Terminal(float(self.values[int(action[1:])]))


class _Cut:
    """A state of the wrapped game, with its leaves replaced by :class:`_Leaf` decisions."""

    __slots__ = ("s", "g")

    def __init__(self, s, g: "DepthLimitedGame"):
        self.s, self.g = s, g

    def is_terminal(self):
        return self.s.is_terminal()

    def is_chance(self):
        return self.s.is_chance()

    def player(self):
        return self.s.player()

    def infoset_key(self):
        return self.s.infoset_key()

    def legal_actions(self):
        return self.s.legal_actions()

    def chance_outcomes(self):
        return self.s.chance_outcomes()

    def payoff(self):
        return self.s.payoff()

    def apply(self, action):
        return self.g.wrap(self.s.apply(action))


@dataclass
class DepthLimitedGame:
    """``root`` cut at states where ``is_leaf(state)``; see the module docstring.

    ``leaf_values(state)`` -> float array of the k values (player 0's payoff) of the state;
    ``leaf_key(state)`` -> the chooser's infoset at the state (a leaf infoset's states share it).
    """

    root: object
    is_leaf: Callable
    leaf_values: Callable
    leaf_key: Callable
    chooser: int
    name: str = "depth-limited subgame"
    payoff_unit: str | None = None
    big_blind: float | None = None
    n_leaves: int = 0  # leaf states seen by the last compile

    def initial_state(self):
        self.n_leaves = 0
        return self.wrap(self.root)

    def wrap(self, s):
        if not s.is_terminal() and self.is_leaf(s):
            self.n_leaves += 1
            return _Leaf(self.chooser, self.leaf_key(s), np.asarray(self.leaf_values(s), dtype=np.float64))
        return _Cut(s, self)


def root_chance(items: Sequence[tuple[str, float, object]]) -> Chance:
    """A chance node over root states ``(label, weight, state)``; weights are normalized."""
    items = [(label, float(w), s) for label, w, s in items if w > 0]
    total = sum(w for _, w, _ in items)
    if not items or not total > 0:
        raise ValueError("a subgame root needs at least one state of positive weight")
    return Chance([(label, w / total, s) for label, w, s in items])


def resolve_gadget(state, opponent: int, key: Hashable, alt: float) -> Decision:
    """The opponent's "alt" (ends with player 0's payoff ``alt``) or "enter" (plays ``state``)."""
    return Decision(opponent, f"{key}{GADGET_TAG}", {"alt": Terminal(float(alt)), "enter": state})


@dataclass
class SubgameSolution:
    """A solved subgame: strategies by infoset key, its value, and what it cost.

    ``strategies[p]`` = {infoset key: {action: probability}} of player p, gadget and leaf
    choices included (their keys end in ``#gadget`` / ``#leaf``). ``cost`` holds seconds to
    build (compile) and solve, the subgame's size, and ``leaf_table_bytes``.
    """

    strategies: tuple[dict, dict]
    value: float
    gap: float
    cost: dict = field(default_factory=dict)
    problem: object = None
    plans: tuple | None = None

    def cost_line(self) -> str:
        c = self.cost
        return (f"subgame: {c['histories']} histories, {c['leaves']} leaves x {c['k']} values, "
                f"leaf table {c['leaf_table_bytes'] / 1024:.1f} KiB, build {c['build_seconds']:.3f} s, "
                f"solve {c['solve_seconds']:.3f} s ({c['solver']})")


def solve_subgame(game, *, solver: str = "lp", k: int = 1, leaf_table_bytes: int = 0, **solve_kw) -> SubgameSolution:
    """Compile ``game`` and solve it with the LP (``solver="lp"``) or a registered solver.

    ``solve_kw`` go to :func:`treeplex.run.driver.solve` (``target_gap``, ``max_iters``...).
    """
    from ..run.driver import solve

    t0 = time.perf_counter()
    problem = compile_game(game)
    t1 = time.perf_counter()
    res = solve(problem, solver, **solve_kw)
    t2 = time.perf_counter()
    cost = {
        "histories": problem.stats["histories"],
        "infosets": (problem.X.n_infosets, problem.Y.n_infosets),
        "leaves": getattr(game, "n_leaves", 0),
        "k": k,
        "leaf_table_bytes": int(leaf_table_bytes),
        "build_seconds": t1 - t0,
        "solve_seconds": t2 - t1,
        "solver": solver,
    }
    strategies = (behavioral_dict(problem.X, res.x), behavioral_dict(problem.Y, res.y))
    ev = evaluate(problem, res.x, res.y)
    return SubgameSolution(strategies, ev.value, ev.gap, cost, problem, (res.x, res.y))
