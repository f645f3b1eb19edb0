"""Iterative solvers. ``ALGORITHMS`` maps every name a module here gives ``@register`` to its
class, importing the module on first use: adding a solver is adding one file with ``@register``."""

from .base import ALGORITHMS, Solver, register

__all__ = ["ALGORITHMS", "Solver", "register"]
