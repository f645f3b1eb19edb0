"""The treeplex and its passes: sequence-form sets (`Treeplex`), the history tree, the numba
kernels of both, the dilated entropy and its xi-perturbed form, and what kernels run on
(threads, the JIT aside, memory estimates). Imports nothing of treeplex above ``errors``."""
