"""Game model: the state interface the compiler walks, the :class:`Game` base, and an explicit tree builder.

To the compiler a game is anything with ``name`` and ``initial_state()``; the command line
uses the rest of :class:`Game` (``problem``, ``spiel_game``). A state is one of

- a **chance** node: ``is_chance()``; ``chance_outcomes()`` gives ``[(label, prob), ...]``;
- a **decision** node: ``player()`` in {0, 1}, ``infoset_key()`` (hashable, unique per
  player), ``legal_actions()`` (labels, the same at every node of an infoset);
- a **terminal**: ``is_terminal()``; ``payoff()`` is player 0's payoff, or a pair
  ``(u0, u1)`` that must be constant-sum.

and ``apply(label)`` returns the child. Rules classes (``treeplex.games``) and the
explicit nodes below implement the same interface, so one compiler serves both.

Sign convention everywhere: player 0 maximizes player 0's payoff, player 1 minimizes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Protocol, Sequence

from .compile import compile_game
from ..errors import GameError  # noqa: F401  (re-exported)
from ..core.memory import check_compile
from .problem import Problem


class State(Protocol):
    def is_terminal(self) -> bool: ...
    def is_chance(self) -> bool: ...
    def player(self) -> int: ...
    def infoset_key(self) -> Hashable: ...
    def legal_actions(self) -> Sequence[str]: ...
    def chance_outcomes(self) -> Sequence[tuple[str, float]]: ...
    def apply(self, action: str) -> "State": ...
    def payoff(self) -> float | tuple[float, float]: ...


class Game:
    """Base of games. ``payoff_unit`` and ``big_blind`` (mbb/g) go to the compiled problem;
    ``spiel_game`` is the pyspiel game of an OpenSpiel game (None otherwise)."""

    name: str = "game"
    payoff_unit: str = "payoff units"
    big_blind: float | None = None
    spiel_game = None

    def initial_state(self) -> State:  # pragma: no cover - abstract
        raise NotImplementedError

    def problem(self, max_memory: str | None = None) -> Problem:
        """The sequence-form problem: the game is walked once (:func:`~treeplex.compile_game`)
        after its size is checked against ``max_memory`` (:func:`~treeplex.core.memory.check_compile`,
        an :class:`InputError` if it would not fit). Structured games override this."""
        check_compile(self, self.name, max_memory)
        return compile_game(self)


class RulesState:
    """Convenience base for rules classes: a state is terminal, chance, or a decision."""

    def is_terminal(self) -> bool:
        return False

    def is_chance(self) -> bool:
        return False

    def chance_outcomes(self) -> Sequence[tuple[str, float]]:
        raise NotImplementedError

    def player(self) -> int:
        raise NotImplementedError

    def infoset_key(self) -> Hashable:
        raise NotImplementedError

    def legal_actions(self) -> Sequence[str]:
        raise NotImplementedError

    def payoff(self) -> float | tuple[float, float]:
        raise NotImplementedError


# ---------------------------------------------------------------- explicit tree


@dataclass(eq=False)
class Terminal(RulesState):
    """Leaf with player 0's payoff, or a constant-sum pair ``(u0, u1)``."""

    value: float | tuple[float, float]

    def is_terminal(self) -> bool:
        return True

    def payoff(self):
        return self.value


@dataclass(eq=False)
class Chance(RulesState):
    """Chance node: ``outcomes`` is a list of ``(label, probability, child)``."""

    outcomes: list[tuple[str, float, State]]

    def is_chance(self) -> bool:
        return True

    def chance_outcomes(self):
        return [(label, p) for label, p, _ in self.outcomes]

    def apply(self, action):
        for label, _, child in self.outcomes:
            if label == action:
                return child
        raise GameError(f"chance node has no outcome {action!r}")


@dataclass(eq=False)
class Decision(RulesState):
    """Decision node of ``player`` (0 or 1) in information set ``infoset``.

    ``actions`` maps action label -> child, in order.
    """

    player_: int
    infoset: Hashable
    actions: dict[str, State] = field(default_factory=dict)

    def player(self) -> int:
        return self.player_

    def infoset_key(self):
        return self.infoset

    def legal_actions(self):
        return list(self.actions)

    def apply(self, action):
        try:
            return self.actions[action]
        except KeyError:
            raise GameError(f"infoset {self.infoset!r} has no action {action!r}") from None


def decision(player: int, infoset: Hashable, actions: dict[str, State]) -> Decision:
    """Build a decision node; see :class:`Decision`."""
    return Decision(player, infoset, dict(actions))


def chance(outcomes: Sequence[tuple[str, float, State]]) -> Chance:
    """Build a chance node from ``(label, probability, child)`` triples."""
    return Chance(list(outcomes))


def terminal(payoff: float | tuple[float, float]) -> Terminal:
    """Build a leaf with player 0's payoff (or a constant-sum pair)."""
    return Terminal(payoff)


@dataclass
class ExplicitGame(Game):
    """A game given as an explicit tree of :class:`Chance`, :class:`Decision`, :class:`Terminal`."""

    root: State
    name: str = "explicit"

    def initial_state(self) -> State:
        return self.root

    def problem(self, max_memory: str | None = None) -> Problem:
        """Compiled without a size check: the tree is already in memory."""
        return compile_game(self)
