"""Equilibrium refinement: approximate extensive-form perfect equilibrium (EFPE) by
xi-perturbed strategy spaces (Kroer, Farina & Sandholm 2017), and the infoset-regret
measure of refinement (their section 4).

- :func:`lower_bounds`, :class:`PerturbedTreeplex`: Q^xi (uniform, per-infoset or per-action xi);
- :class:`PerturbedDilatedEntropy`: the DGF of section 3 (Lemma 1, Theorems 2-4 weights);
- :func:`solve_efpe`, :func:`make_efpe_solver`: EGT, EGT/as, perturbed CFR family or LP on Gamma_xi;
- :class:`InfosetRegret`: per-infoset regrets, their max, and the largest possible (:meth:`InfosetRegret.bound`).
"""

from ..model.metrics import perturbed_evaluation, perturbed_gap
from .efpe import make_efpe_solver, perturbation, solve_efpe
from .infoset_regret import InfosetRegret, InfosetRegrets
from .lp import solve_lp_perturbed
from ..core.perturbed import PerturbedDilatedEntropy, PerturbedTreeplex, lower_bounds

__all__ = [
    "InfosetRegret", "InfosetRegrets", "PerturbedDilatedEntropy", "PerturbedTreeplex", "lower_bounds",
    "make_efpe_solver", "perturbation", "perturbed_evaluation", "perturbed_gap", "solve_efpe", "solve_lp_perturbed",
]
