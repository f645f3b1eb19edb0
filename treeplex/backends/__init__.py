"""Backends: where the treeplex passes run. A :class:`~treeplex.model.problem.Problem` owns one
(``problem.backend``, numba unless chosen otherwise), and every solver makes its passes
through it, never through a kernel of its own.

A backend declares these passes over player p's treeplex (p = 0 for X, 1 for Y), each with
the lower bounds of a xi-perturbed treeplex (EFPE paper) as an optional argument ``lower``
(from :meth:`bounds`):

- ``regret_state(p, dtype, lower)``: the first :class:`RegretState` (uniform play);
- ``cfr_iteration(players, coef, avg, plain, alternating, lower)``: one CFR iteration, the
  gradients from ``problem.A`` and a regret update per player (regret matching, RM+,
  discounting, prediction and Hedge are the scalars ``coef``; see
  :mod:`treeplex.backends.numba_regret`); the backend may fuse products and passes;
- ``counterfactual_values(p, g, b)``: the bottom-up values of local strategy b;
- ``dilated_entropy(p, weights, lower)``: the DGF object whose ``sbr`` (smoothed best
  response) and ``prox`` passes EGT, mirror prox and dual averaging call;
- ``best_response(p, g, lower)``: (max_x <g, x>, the maximizing plan);
- ``lerp(a, b, tau)``: (1 - tau) a + tau b (EGT's interpolations);
- ``asarray``, ``to_numpy``: moving arrays to and from where the backend keeps them;
- ``name``, and ``auto``: whether :func:`treeplex.run.driver.solve` picked it itself.

Backends: ``numba`` (:mod:`.numba_backend`, the reference) and the level-vectorized array
backend (:mod:`.array_backend`) on NumPy (``array``) or on CuPy on a CUDA device (``gpu``).

Gradient computations are counted by the operator alone: products go through
``problem.A.matvec``/``rmatvec``, or, fused into a kernel, are reported with
``problem.A.charge(n)``.
"""

from __future__ import annotations

from ..errors import InputError
from .state import HostArrays, RegretState, first_play, flat_state, host_bounds  # noqa: F401  (re-exported)


BACKENDS = ("numba", "array", "gpu")
TIER_UP = 1.0  # solver seconds on NumPy after which a run moves onto numba (about numba's warm start-up)


def starts_on_numpy(problem) -> bool:
    """Whether :func:`treeplex.run.driver.solve` starts ``problem`` on the array backend on NumPy:
    it has no backend yet (or only the one a previous such run started it on), its operator's products are NumPy (a small CSR game, or a small
    river spot's dense products) and its treeplexes small enough that NumPy's passes cost about what
    numba's start-up does (importing numba and loading or compiling its kernels takes 1-1.5 s
    warm, 4-5 s on a first run; a NumPy CFR iteration on Leduc takes about 1 ms). The driver
    moves a longer run onto numba after ``TIER_UP`` seconds: paying start-up only when it is
    worth it, like a ski rental, costs at most about twice the better of the two."""
    from ..core.treeplex import NUMPY_SEQS

    chosen = problem._backend is not None and not problem._backend.auto
    return (not chosen and problem.locks is None and problem.A.numpy_products
            and max(problem.n_seqs) <= NUMPY_SEQS)


def make_backend(name: str, problem):
    """The backend ``name`` for ``problem``: "numba" (the default), "array" (the level-vectorized
    array backend on NumPy) or "gpu" (the same on CuPy; an InputError without CuPy and a
    CUDA device)."""
    if name == "numba":
        from .numba_backend import NumbaBackend

        return NumbaBackend(problem)
    if name == "array":
        from .array_backend import ArrayBackend

        return ArrayBackend(problem)
    if name == "gpu":
        from .array_backend import gpu_backend

        return gpu_backend(problem)
    raise InputError(f"unknown backend {name!r}; choose from: {', '.join(BACKENDS)}")
