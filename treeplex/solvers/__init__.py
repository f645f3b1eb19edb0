"""Iterative solvers. Importing this package registers every algorithm in ``ALGORITHMS``."""

from .base import ALGORITHMS, Solver, register

__all__ = ["ALGORITHMS", "Solver", "register"]
