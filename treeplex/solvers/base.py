"""The solver interface every iterative method implements, and the algorithm registry.

A solver owns its iterates and exposes

- ``step()``: one iteration (it calls ``problem.A.matvec`` / ``rmatvec``, which count the
  gradient computations the EGT paper's section 7 counts);
- ``average()`` and ``current()``: realization plans (x, y) of the reported (averaged)
  strategy and of the last iterate;
- ``trace_extra()``: algorithm-specific numbers for the trace (mu, tau, ...);
- ``state_dict()`` / ``load_state_dict()``: everything needed to resume bit-for-bit, listed
  explicitly (per-player state is a small dataclass; the RNG state is included).

Treeplex passes go through ``problem.backend`` (:mod:`treeplex.backends`), products through
``problem.A``; a solver is the schedule of those calls.

Register a class with ``@register("name")`` and the driver and CLI can run it.
"""

from __future__ import annotations

import importlib
import math
import numbers
import os
import re
from collections.abc import Mapping
from functools import cached_property

import numpy as np

from ..errors import InputError
from ..model.problem import Problem

_REGISTER = re.compile(r"^@register\((.*)\)\s*$", re.M)
_NAME = re.compile(r"""["']([^"']+)["']""")  # the quoted names in a @register line


class Registry(Mapping):
    """name -> solver class, for every ``@register`` in this package's modules.

    The names are read from the modules' source (a ``@register("a", "b")`` line), so listing
    or checking a name imports no solver; a class is imported on first lookup. That keeps
    numba (which some solver modules compile kernels with) out of a run that does not use them.
    """

    def __init__(self):
        self.classes: dict[str, type] = {}
        self.module_of: dict[str, str] = {}
        here = os.path.dirname(__file__)
        for file in sorted(f for f in os.listdir(here) if f.endswith(".py")):  # (os, not pathlib: start-up)
            with open(os.path.join(here, file), encoding="utf-8") as f:
                for names in _REGISTER.findall(f.read()):
                    for n in _NAME.findall(names):
                        self.module_of[n] = f"{__package__}.{file[:-3]}"

    def __getitem__(self, name: str) -> type:
        if name not in self.classes and name in self.module_of:
            importlib.import_module(self.module_of[name])
        return self.classes[name]

    def __iter__(self):
        return iter(self.module_of)

    def __len__(self) -> int:
        return len(self.module_of)


ALGORITHMS = Registry()


def register(*names: str):
    """Class decorator: make the solver available under ``names`` (CLI ``--algorithm``)."""

    def wrap(cls):
        for n in names:
            ALGORITHMS.classes[n] = cls
        cls.name = names[0]
        return cls

    return wrap


class Solver:
    """Base of every iterative method: counters, the optional lower bounds (EFPE) and the
    RNG, and checkpoint state (explicit: each solver lists its state in :meth:`state_dict`).

    ``lower=(l_X, l_Y)``: per-sequence lower bounds of the xi-perturbed treeplexes (EFPE
    paper; :func:`treeplex.refine.efpe.perturbation`), for solvers with
    ``supports_lower``: the solver then runs on X^l x Y^l, its name gains "/efpe" and its
    trace the gap inside the perturbed game. A solver without ``supports_locks`` refuses a
    problem with node locks.
    """

    name = "solver"
    supports_lower = False  # can run on a xi-perturbed treeplex (pass ``lower``)
    supports_locks = False  # respects node locks (``problem.locks``, :mod:`treeplex.core.locks`)
    supports_general_sum = False  # self-play on each player's own utility (a raked poker spot)
    restartable = False  # the driver may call restart()
    batch_steps = False  # run(n) is n step()s bit for bit: the driver may batch the cheap ones

    def __init__(self, problem: Problem, lower=None):
        self.problem = problem
        self.iteration = 0
        self.rng: np.random.Generator | None = None  # set by sampling solvers; checkpointed
        self._grad_offset = -problem.A.gradients  # gradients counted from here
        self.lower = None
        if problem.general_sum and not self.supports_general_sum:
            raise InputError(f"{self.name} solves zero-sum games and this one is general-sum (a raked spot: "
                             "u0 + u1 = -rake); use a CFR-family solver (cfr+, dcfr, dcfr-ps, lcfr, pcfr+, pdcfr+)")
        if problem.general_sum and lower is not None:
            raise InputError("--refine efpe refines equilibria of zero-sum games; this one is general-sum (raked)")
        if problem.locks is not None and not self.supports_locks:
            raise InputError(f"{self.name} cannot respect node locks; use lp or a CFR-family solver (cfr+, dcfr, "
                             "dcfr-ps, lcfr, pcfr+, pdcfr+) with fused=false")
        if problem.locks is not None and lower is not None:
            raise InputError("node locks and --refine efpe cannot be combined")
        if problem.locks is not None:
            from ..core.locks import partial_lower

            lower = partial_lower(problem)  # weighted locks: the solver's lower bounds
            if lower is not None and not self.supports_lower:
                raise InputError(f"{self.name} cannot respect weighted locks (hands with a weight below 1)")
            self.lower = lower
        elif lower is not None:
            if not self.supports_lower:
                raise InputError(f"{self.name} cannot run on a perturbed treeplex (--refine efpe)")
            self.lower = tuple(np.asarray(l, dtype=np.float64) for l in lower)
            self.name = f"{self.name}/efpe"

    @cached_property
    def bounds(self) -> tuple:
        """What the backend's passes take as ``lower`` (None per player without bounds), made
        on first use: it builds the backend and the treeplexes it reads, which the fused engine
        (weighted locks included) never uses."""
        return (None, None) if self.lower is None else self.backend.bounds(self.lower)

    @property
    def backend(self):
        """Where this solver's treeplex passes run: the problem's backend."""
        return self.problem.backend

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

    def restart(self) -> None:
        raise InputError(f"algorithm {self.name!r} does not support restarting")

    def trace_extra(self) -> dict:
        """Algorithm-specific numbers for the trace; on a perturbed treeplex, the gap there."""
        if self.lower is None:
            return {}
        from ..model.metrics import perturbed_gap

        return {"gap_perturbed": perturbed_gap(self.problem, self.lower, *self.average())}

    # -- checkpointing

    def state_dict(self) -> dict:
        """Everything a resumed run needs to continue bit for bit: name -> array, number, or
        (``rng``) the generator's state dict. Subclasses add their own fields."""
        state = {"iteration": self.iteration, "gradients": self.gradients}
        if self.rng is not None:
            state["rng"] = self.rng.bit_generator.state
        return state

    def set_state(self, state: dict) -> None:
        """Take the subclass's fields of a checked :meth:`state_dict`."""

    def load_state_dict(self, state: dict) -> None:
        """Load a :meth:`state_dict` (e.g. from a checkpoint) after :meth:`check_state`."""
        self.check_state(state)
        self.iteration = int(state["iteration"])
        self._grad_offset = int(state["gradients"]) - self.problem.A.gradients
        if self.rng is not None:
            try:
                self.rng.bit_generator.state = state["rng"]
            except (TypeError, ValueError, KeyError) as e:
                raise InputError(f"checkpoint field 'rng' is not a random generator state ({e})") from None
        self.set_state(state)

    def check_state(self, state: dict) -> None:
        """Refuse (:class:`InputError`) a state that does not fit this solver: other names,
        arrays of another shape or dtype or with non-finite entries, scalars of another type.
        An empty array named ``NAMEp`` (an optional one, e.g. ``logprior0``) may also be
        player p's full size."""
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
            elif isinstance(ref, dict):
                if not isinstance(v, dict) or v.get("bit_generator") != ref.get("bit_generator"):
                    raise InputError(f"checkpoint field {k!r} is not a {ref.get('bit_generator')} generator state")
            elif isinstance(ref, (bool, np.bool_)):
                if not isinstance(v, (bool, np.bool_)):
                    raise InputError(f"checkpoint field {k!r} is {v!r}, expected true or false")
            elif isinstance(ref, numbers.Integral):
                if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0:
                    raise InputError(f"checkpoint field {k!r} is {v!r}, expected a whole number >= 0")
            elif isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
                raise InputError(f"checkpoint field {k!r} is {v!r}, expected a finite number")


def load_players(players, state: dict, backend) -> None:
    """Set the per-player state dataclasses from a checked state's ``FIELDp`` entries."""
    from dataclasses import fields

    for p, s in enumerate(players):
        for f in fields(s):
            cur, v = getattr(s, f.name), state[f"{f.name}{p}"]
            setattr(s, f.name, backend.asarray(v, cur.dtype) if isinstance(v, np.ndarray) else type(cur)(v))


def average_plan(backend, xsum, fallback, T=None) -> np.ndarray:
    """The weighted average realization plan xsum / xsum[0] (``fallback`` while the sum is
    empty), as a float64 NumPy array. Sums stored in float32 drift from their children's over
    a run, and a plan whose children do not sum to their parent breaks the bracket
    BR_1(x) <= value <= BR_0(y); given the treeplex ``T``, such a plan is rebuilt from its
    ratios per infoset (the fused engine's convention, :func:`treeplex.poker.fused._average_strategy`)."""
    xsum, fallback = backend.to_numpy(xsum), backend.to_numpy(fallback)
    if xsum[0] <= 0.0:
        return np.array(fallback, dtype=np.float64)
    x = xsum / np.float64(xsum[0])
    if T is not None and xsum.dtype == np.float32:
        x = T.plan_from_behavioral(T.behavioral_from_plan(x))
    return x


def check_array(name: str, a, shape: tuple, dtype: np.dtype) -> None:
    """Refuse a checkpoint array of another shape or dtype, or with non-finite numbers."""
    if not isinstance(a, np.ndarray) or a.dtype != dtype or a.shape != shape:
        found = f"{a.dtype} {a.shape}" if isinstance(a, np.ndarray) else type(a).__name__
        raise InputError(f"checkpoint array {name} is {found}, expected {dtype} {shape}")
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        raise InputError(f"checkpoint array {name} has non-finite entries")
