"""Equilibrium refinement: approximate extensive-form perfect equilibrium (EFPE) by
xi-perturbed strategy spaces (Kroer, Farina & Sandholm 2017), and the infoset-regret
measure of refinement (their section 4)."""

from .infoset_regret import InfosetRegret, InfosetRegrets

__all__ = ["InfosetRegret", "InfosetRegrets"]
