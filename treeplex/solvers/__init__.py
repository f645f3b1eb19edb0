"""Iterative solvers. Importing this package registers every algorithm in ``ALGORITHMS``."""

from .base import ALGORITHMS, Solver, register
from . import egt  # noqa: E402,F401  (registers egt, egt-as, mirror-prox)

__all__ = ["ALGORITHMS", "Solver", "register"]
