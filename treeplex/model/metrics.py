"""Metrics of a strategy profile (x, y) in  max_x min_y x^T A y.

- ``value``: x^T A y, player 0's expected payoff.
- best-response values: BR_0(y) = max_{x'} x'^T A y (player 0's best payoff against y) and
  BR_1(x) = min_{y'} x^T A y' (player 0's payoff when player 1 best-responds to x).
- saddle-point gap: BR_0(y) - BR_1(x) = (BR_0(y) - v) + (v - BR_1(x)) >= 0, the sum of both
  players' best-response gains. Zero exactly at equilibrium.
- exploitability: gap / 2 (the OpenSpiel NashConv/2 convention).
- mbb/g: milli-big-blinds per game, chips / big_blind * 1000.

General-sum games (:class:`~treeplex.model.problem.GeneralSumPayoff`: a raked poker spot,
u_0 + u_1 = -rake at a raked terminal): ``value`` = u_0(x, y), player 0's expected payoff,
``value1`` = u_1(x, y), player 1's own; ``br0`` = max_x' u_0(x', y), ``br1`` = -max_y'
u_1(x, y') (player 1's best response in player 0's sign, as above). The gap is the Nash gap

    gap = [BR_0(y) - u_0(x, y)] + [BR_1(x) - u_1(x, y)] = br0 - br1 + rake,   rake = -(u_0 + u_1),

the sum of both players' best-response gains: >= 0, zero exactly at a Nash equilibrium, and
the saddle-point gap when the game is zero-sum (value1 = -value). Exploitability = gap / 2
(postflop-solver's with rake: the mean of the two players' gains).

With node locks (``problem.locks``, :mod:`treeplex.core.locks`) every best response is over
the locked treeplex (the lock's mixture at locked infosets): value, gap and exploitability
are those of the locked game. :func:`lock_gains` gives the other reading, each player's gain
by deviating anywhere (locks ignored) against the other's strategy.

Gap evaluations use uncounted operator products: they are not solver work.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .problem import Problem


@dataclass(frozen=True)
class Evaluation:
    """Everything about a profile, all in player 0's payoff units."""

    value: float  # x^T A y
    br0: float  # max_x' x'^T A y: player 0's best-response value
    br1: float  # min_y' x^T A y': player 0's payoff against player 1's best response
    value1: float | None = None  # general-sum games: player 1's own expected payoff (None: -value)

    @property
    def rake(self) -> float:
        """-(u_0 + u_1): what leaves the game (a poker spot's expected rake); 0 if zero-sum."""
        return 0.0 if self.value1 is None else -(self.value + self.value1)

    @property
    def gap(self) -> float:
        """Saddle-point gap BR_0(y) - BR_1(x); general-sum: the Nash gap br0 - br1 + rake."""
        return self.br0 - self.br1 + self.rake if self.value1 is not None else self.br0 - self.br1

    @property
    def exploitability(self) -> float:
        """gap / 2."""
        return self.gap / 2.0


def evaluate(problem: Problem, x: np.ndarray, y: np.ndarray) -> Evaluation:
    """Value, both best-response values and the gap of the profile (x, y) (in the locked
    game where ``problem.locks`` is set)."""
    if problem.locks is not None:
        from ..core.locks import lower_bounds

        return perturbed_evaluation(problem, lower_bounds(problem), x, y)
    Ay = problem.A.matvec(y, count=False)
    ATx = problem.A.rmatvec(x, count=False)
    br0 = problem.X.best_response_value(Ay)
    neg = problem.Y.best_response_value(ATx, sign=-1.0)
    return Evaluation(value=dot(x, Ay), br0=float(br0), br1=float(-neg),
                      value1=-dot(y, ATx) if problem.A.general_sum else None)


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """sum_i a[i] b[i] without BLAS: OpenBLAS's threads spin for about 0.1 s after a large
    dot, and on a 2-core machine that stole the core numba's threads need, measured 2.5x
    slower CFR+ steps for ~30 steps after each gap check on the Endgame-2 river."""
    return float(np.einsum("i,i", a, b))


def gap(problem: Problem, x: np.ndarray, y: np.ndarray) -> float:
    """Saddle-point gap of (x, y)."""
    return evaluate(problem, x, y).gap


def exploitability(problem: Problem, x: np.ndarray, y: np.ndarray) -> float:
    """gap / 2 (OpenSpiel convention)."""
    return evaluate(problem, x, y).exploitability


def best_response(problem: Problem, player: int, x_or_y: np.ndarray) -> tuple[float, np.ndarray]:
    """Best response of ``player`` to the other's plan: (player 0's payoff, pure plan)."""
    if player == 0:
        return problem.X.best_response(problem.A.matvec(x_or_y, count=False))
    v, y = problem.Y.best_response(-problem.A.rmatvec(x_or_y, count=False))
    return -v, y


def to_mbb(chips: float, big_blind: float) -> float:
    """Chips to milli-big-blinds: chips / big_blind * 1000."""
    return chips / big_blind * 1000.0


def perturbed_evaluation(problem: Problem, lower: tuple[np.ndarray, np.ndarray], x, y) -> Evaluation:
    """Value and best-response values of (x, y) inside Gamma_l, the xi-perturbed game of
    :mod:`treeplex.refine.efpe` (player 0's payoff units)."""
    from ..core.perturbed import PerturbedTreeplex  # not at import: small runs need no perturbed passes

    Ay = problem.A.matvec(y, count=False)
    ATx = problem.A.rmatvec(x, count=False)
    br0, _ = PerturbedTreeplex(problem.X, lower[0]).best_response(Ay)
    neg, _ = PerturbedTreeplex(problem.Y, lower[1]).best_response(-ATx)
    return Evaluation(value=dot(x, Ay), br0=float(br0), br1=float(-neg),
                      value1=-dot(y, ATx) if problem.A.general_sum else None)


def perturbed_gap(problem: Problem, lower: tuple[np.ndarray, np.ndarray], x, y) -> float:
    """Saddle-point gap of (x, y) in the perturbed game Gamma_l (zero at its equilibria)."""
    return perturbed_evaluation(problem, lower, x, y).gap


def lock_gains(problem: Problem, x, y) -> tuple[float, float]:
    """(player 0's, player 1's) gain by a best response with no lock against the other's
    plan, over the profile's value (each in its own payoff): BR_0(y) - x^T A y and
    x^T A y - BR_1(x) with unrestricted best responses. For the player without locks it is
    the same as in the locked game (zero at its equilibria); for a locked player it is what
    leaving the lock would gain."""
    Ay, ATx = problem.A.matvec(y, count=False), problem.A.rmatvec(x, count=False)
    v = dot(x, Ay)
    v1 = -dot(y, ATx)  # player 1's own payoff (-v when zero-sum)
    br0 = problem.X.best_response_value(Ay)
    neg = problem.Y.best_response_value(ATx, sign=-1.0)
    return float(br0 - v), float(neg - v1)
