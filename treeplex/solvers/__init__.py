"""Iterative solvers. Importing this package registers every algorithm in ``ALGORITHMS``."""

from .base import ALGORITHMS, Solver, register
from . import egt  # noqa: E402,F401  (registers egt, egt-as, mirror-prox)
from . import cfr  # noqa: E402,F401  (registers cfr, cfr-rm+, cfr+, lcfr, dcfr, dcfr+, pcfr+, sapcfr+, pdcfr+, hedge)
from . import cfr_schedules  # noqa: E402,F401  (registers hs-pcfr+, hs-dcfr, apcfr+)

__all__ = ["ALGORITHMS", "Solver", "register"]
