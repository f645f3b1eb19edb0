"""treeplex: equilibria of two-player zero-sum extensive-form games over treeplexes.

Player 0 maximizes x^T A y, player 1 minimizes it; every value is player 0's payoff.
"""

from .compile import compile_game
from .driver import Result, solve
from .errors import InputError
from .game import Chance, Decision, ExplicitGame, GameError, Terminal, chance, decision, terminal
from .games import load_game, make_game
from .metrics import Evaluation, evaluate, exploitability, gap
from .problem import PayoffOperator, Problem, SparsePayoff
from .treeplex import Treeplex

__all__ = [
    "Chance", "Decision", "Evaluation", "ExplicitGame", "GameError", "InputError", "PayoffOperator", "Problem",
    "Result", "SparsePayoff", "Terminal", "Treeplex", "chance", "compile_game", "decision", "evaluate",
    "exploitability", "gap", "load_game", "make_game", "solve", "solve_lp", "terminal",
]


def __getattr__(name):
    """``solve_lp`` imports scipy's HiGHS on first use (start-up cost of every command)."""
    if name == "solve_lp":
        from .lp import solve_lp

        return solve_lp
    raise AttributeError(f"module 'treeplex' has no attribute {name!r}")
