"""treeplex: equilibria of two-player zero-sum extensive-form games over treeplexes.

Player 0 maximizes x^T A y, player 1 minimizes it; every value is player 0's payoff.
"""

import importlib

# name -> the module that defines it, imported on first use (PEP 562): ``import treeplex``
# stays free of numpy until something is used, so that the command line can set numpy's
# threads first (see :mod:`treeplex.cli`)
_EXPORTS = {
    "compile_game": "model.compile", "Result": "run.driver", "solve": "run.driver", "InputError": "errors",
    "Chance": "model.game", "Decision": "model.game", "ExplicitGame": "model.game", "GameError": "model.game",
    "Terminal": "model.game", "chance": "model.game", "decision": "model.game", "terminal": "model.game",
    "load_game": "games", "make_game": "games",
    "Evaluation": "model.metrics", "evaluate": "model.metrics", "exploitability": "model.metrics",
    "gap": "model.metrics", "PayoffOperator": "model.problem", "Problem": "model.problem",
    "SparsePayoff": "model.problem", "Treeplex": "core.treeplex", "solve_lp": "model.lp",
}
# the modules that lived at the top level before the layer packages (``tp.metrics`` still works)
_MOVED = {name: f"{package}.{name}" for package, names in {
    "core": "treeplex treeplex_kernels tree csr_kernels dilated_entropy dilated_entropy_kernels jit threads memory",
    "model": "game compile problem metrics strategy lp",
    "io": "efg openspiel files plot",
    "run": "driver schedule progress checkpoint targets lazy_sampling",
    "scale": "batch split ray_engine report flops",
}.items() for name in names.split()}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    """An exported name (from its module), or a submodule (``treeplex.model.metrics``, also as
    ``treeplex.metrics``), imported on first use."""
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    module = f"{__name__}.{_MOVED.get(name, name)}"
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:
            raise
    raise AttributeError(f"module 'treeplex' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
