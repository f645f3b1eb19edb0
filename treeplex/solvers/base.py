"""The solver interface every iterative method implements, and the algorithm registry.

A solver owns its iterates and exposes

- ``step()``: one iteration (it calls ``problem.A.matvec`` / ``rmatvec``, which count the
  gradient computations the EGT paper's section 7 counts);
- ``average()`` and ``current()``: realization plans (x, y) of the reported (averaged)
  strategy and of the last iterate;
- ``trace_extra()``: algorithm-specific numbers for the trace (mu, tau, ...);
- ``state_dict()`` / ``load_state_dict()``: everything needed to resume bit-for-bit.

Register a class with ``@register("name")`` and the driver and CLI can run it.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import InputError
from ..problem import Problem

ALGORITHMS: dict[str, type["Solver"]] = {}


def register(*names: str):
    """Class decorator: make the solver available under ``names`` (CLI ``--algorithm``)."""

    def wrap(cls):
        for n in names:
            ALGORITHMS[n] = cls
        cls.name = names[0]
        return cls

    return wrap


class Solver:
    name = "solver"
    restartable = False

    def __init__(self, problem: Problem):
        self.problem = problem
        self.iteration = 0
        self._grad_offset = -problem.A.gradients  # gradients counted from here

    @property
    def gradients(self) -> int:
        """Gradient computations (products A y or A^T x) this solver has made.

        Read off the problem's operator counter since the solver was created, so solvers
        that share one ``Problem`` must run one after another (or use one problem each).
        """
        return self.problem.A.gradients + self._grad_offset

    def step(self) -> None:
        raise NotImplementedError

    def average(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def current(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def trace_extra(self) -> dict:
        return {}

    def restart(self) -> None:
        """Warm-start from the average (driver option ``restart``); solvers that can set ``restartable``."""
        raise InputError(f"algorithm {self.name!r} does not support restarting")

    # -- checkpointing: arrays and scalars by name
    def state_dict(self) -> dict:
        state = {k: v for k, v in vars(self).items() if isinstance(v, (np.ndarray, int, float, bool))}
        state["_gradients"] = self.gradients
        return state

    def load_state_dict(self, state: dict) -> None:
        """Load a :meth:`state_dict` (e.g. from a checkpoint) after :meth:`check_state`."""
        self.check_state(state)
        for k, v in state.items():
            if k == "_gradients":
                continue
            cur = getattr(self, k, None)
            if isinstance(cur, np.ndarray) and cur.shape == np.shape(v):
                cur[...] = v
            elif isinstance(cur, np.ndarray):  # e.g. an optional array that a warm start filled
                setattr(self, k, np.array(v, dtype=cur.dtype))
            else:
                setattr(self, k, type(cur)(v) if cur is not None else v)
        self._grad_offset = int(state["_gradients"]) - self.problem.A.gradients

    def check_state(self, state: dict) -> None:
        """Refuse (:class:`InputError`) a state that does not fit this solver: other names,
        arrays of another shape or dtype or with non-finite entries, scalars of another type.
        An empty array named ``NAMEp`` (an optional one, e.g. ``logprior0``) may also be
        player p's full size."""
        from ..checkpoint import check_array

        own = self.state_dict()
        if set(state) != set(own):
            diff = sorted(set(own) ^ set(state))
            raise InputError(f"checkpoint state does not fit {self.name}: fields {diff} missing or unexpected")
        for k, ref in own.items():
            v = state[k]
            if isinstance(ref, np.ndarray):
                shape = ref.shape
                if ref.size == 0 and k[-1:] in "01" and isinstance(v, np.ndarray) and v.size:
                    shape = (self.problem.treeplexes[int(k[-1])].n_seqs,)
                check_array(f"state/{k}", v, shape, ref.dtype)
            elif isinstance(ref, (bool, np.bool_)):
                if not isinstance(v, (bool, np.bool_)):
                    raise InputError(f"checkpoint field {k!r} is {v!r}, expected true or false")
            elif isinstance(ref, numbers.Integral):
                if isinstance(v, bool) or not isinstance(v, numbers.Integral) or (v < 0 and k != "_grad_offset"):
                    raise InputError(f"checkpoint field {k!r} is {v!r}, expected a whole number >= 0")
            elif isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
                raise InputError(f"checkpoint field {k!r} is {v!r}, expected a finite number")
