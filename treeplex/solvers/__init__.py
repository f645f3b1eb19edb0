"""Iterative solvers. Importing this package imports every module in it, which registers
every algorithm in ``ALGORITHMS``: adding a solver is adding one file with ``@register``."""

import importlib
import pkgutil

from .base import ALGORITHMS, Solver, register

for _m in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_m.name}")

__all__ = ["ALGORITHMS", "Solver", "register"]
