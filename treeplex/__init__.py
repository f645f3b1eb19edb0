"""treeplex: equilibria of two-player zero-sum extensive-form games over treeplexes.

Player 0 maximizes x^T A y, player 1 minimizes it; every value is player 0's payoff.
"""

import importlib

# name -> the module that defines it, imported on first use (PEP 562): ``import treeplex``
# stays free of numpy until something is used, so that the command line can set numpy's
# threads first (see :mod:`treeplex.cli`)
_EXPORTS = {
    "compile_game": "compile", "Result": "driver", "solve": "driver", "InputError": "errors",
    "Chance": "game", "Decision": "game", "ExplicitGame": "game", "GameError": "game", "Terminal": "game",
    "chance": "game", "decision": "game", "terminal": "game", "load_game": "games", "make_game": "games",
    "Evaluation": "metrics", "evaluate": "metrics", "exploitability": "metrics", "gap": "metrics",
    "PayoffOperator": "problem", "Problem": "problem", "SparsePayoff": "problem", "Treeplex": "treeplex",
    "solve_lp": "lp",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    """An exported name (from its module), or a submodule (``treeplex.metrics``), imported on
    first use."""
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    try:
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module 'treeplex' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
