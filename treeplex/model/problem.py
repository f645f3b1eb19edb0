"""The bilinear saddle-point problem  max_{x in X} min_{y in Y} x^T A y  and its payoff operator.

``A`` is player 0's payoff with chance probabilities folded in: for every terminal z,
A[seq0(z), seq1(z)] += chance(z) * u0(z). Player 0 maximizes, player 1 minimizes.

The payoff operator is the only thing solvers know about A: ``matvec(y) = A @ y`` (player 0's
gradient) and ``rmatvec(x) = A.T @ x`` (player 1's). Each call is one *gradient computation*
as the EGT paper (section 7) counts them; metrics pass ``count=False`` so that gap
evaluations are not charged to the solver.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np

from .strategy import profile_dict, profile_text
from ..core.tree import GameTree
from ..core.treeplex import DeferredTreeplex, Treeplex

NUMPY_NNZ = 1 << 16  # CSR products up to this many nonzeros run in NumPy


class PayoffOperator:
    """The payoff-operator protocol, and its gradient counter.

    A subclass implements ``_matvec`` and ``_rmatvec`` (new float64 arrays), ``nnz`` and
    either ``max_abs_entry`` or ``to_sparse``. ``csr`` is (A, A^T) as CSR triples
    (indptr, indices, data) when the operator is a CSR matrix, else None: a backend may then
    fuse the products into its passes and report them with :meth:`charge`. Every product is
    counted here, nowhere else. ``numpy_products`` says the products import no numba (a small
    game may then start on NumPy: :func:`treeplex.backends.starts_on_numpy`).
    """

    shape: tuple[int, int]
    gradients: int = 0
    csr: tuple | None = None
    numpy_products: bool = False
    general_sum: bool = False  # matvec and rmatvec read two payoff matrices (:class:`GeneralSumPayoff`)

    def matvec(self, y: np.ndarray, count: bool = True, out: np.ndarray | None = None) -> np.ndarray:
        """A @ y (player 0's payoff per sequence of X, given y), into ``out`` if given."""
        if count:
            self.gradients += 1
        return self._product(0, y, out)

    def rmatvec(self, x: np.ndarray, count: bool = True, out: np.ndarray | None = None) -> np.ndarray:
        """A.T @ x (player 0's payoff per sequence of Y, given x), into ``out`` if given."""
        if count:
            self.gradients += 1
        return self._product(1, x, out)

    def charge(self, products: int) -> None:
        """Count ``products`` products that a backend computed from :attr:`csr` itself."""
        self.gradients += products

    def _product(self, own: int, v: np.ndarray, out: np.ndarray | None) -> np.ndarray:
        """A @ v (own = 0) or A^T @ v (own = 1), into ``out`` if given. Operators that can
        write into ``out`` override this (no new array per product: solvers reuse one
        gradient buffer per player); the default copies ``_matvec``'s result."""
        result = self._matvec(v) if own == 0 else self._rmatvec(v)
        if out is None:
            return result
        out[...] = result
        return out

    def keep_scratch(self, keep: bool) -> None:
        """Whether products keep their work arrays for the next product (the default: a
        solver's loop) or free them after each (``False``: an operator of occasional products,
        such as the depth-limited pipeline's evaluations and best responses, where the poker
        operators' per-thread partial products are 8 B per sequence and run, kept for
        nothing). Operators without such arrays ignore it."""

    def on_device(self, xp):
        """This operator's products on arrays of the array module ``xp`` (an object with
        ``matvec`` and ``rmatvec`` taking and giving ``xp`` arrays), or None: the array backend
        then runs the host products with copies (a CSR operator it moves to the device itself)."""
        return None

    def _matvec(self, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def _rmatvec(self, x):  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def nnz(self) -> int:
        """Stored payoff entries (nonzeros of the matrix the operator stands for)."""
        return self.to_sparse().nnz

    def max_abs_entry(self) -> float:
        """||A|| = max_ij |A_ij|, the operator norm from l1 to l_inf (EFPE paper, Theorem 4)."""
        A = self.to_sparse()
        return float(abs(A).max()) if A.nnz else 0.0

    def to_sparse(self):
        """A as a scipy sparse matrix."""
        from ..errors import InputError

        raise InputError(f"{type(self).__name__} cannot be written as a matrix (nor give max |A_ij|, nnz)")

    @property
    def nbytes(self) -> int:
        return 0


class GeneralSumPayoff(PayoffOperator):
    """A general-sum game's two payoffs: ``matvec(y) = A0 y`` (player 0's utility gradient)
    and ``rmatvec(x) = B^T x`` with B = -A1, player 1's utility negated, so that
    ``-rmatvec(x)`` is player 1's utility gradient exactly as in the zero-sum case (A0 = B).
    Self-play regret minimization (the CFR family: each player's regrets on its own utility)
    runs on it unchanged; solvers of the saddle point max_x min_y x^T A y (LP, EGT, mirror
    prox, EFPE, ...) need A0 = B and refuse it (:attr:`Problem.general_sum`). ``parts`` =
    (operator of A0, operator of B), each a zero-sum-shaped operator whose other product is
    not used. Other attributes are player 0's operator's (per-hand data shared by both)."""

    general_sum = True

    def __init__(self, a0: PayoffOperator, b: PayoffOperator):
        if a0.shape != b.shape:
            raise ValueError(f"general-sum payoffs of shapes {a0.shape} and {b.shape}")
        self.parts = (a0, b)
        self.shape = a0.shape
        self.gradients = 0

    def map(self, f) -> "GeneralSumPayoff":
        """The same game with ``f`` applied to each part (e.g. a symmetry reduction)."""
        return GeneralSumPayoff(f(self.parts[0]), f(self.parts[1]))

    def _product(self, own, v, out):
        return self.parts[own]._product(own, v, out)

    def __getattr__(self, name):
        if name == "parts":
            raise AttributeError(name)
        return getattr(self.parts[0], name)

    @property
    def nnz(self) -> int:
        return sum(p.nnz for p in self.parts)

    def max_abs_entry(self) -> float:
        return max(p.max_abs_entry() for p in self.parts)

    @property
    def nbytes(self) -> int:
        return sum(p.nbytes for p in self.parts)


class DeferredPayoff(PayoffOperator):
    """A payoff operator built on first use (``build()``), like :class:`DeferredTreeplex`:
    the fused postflop engine walks the public tree and never forms a product, so on a
    flop spot it never pays the structured operator's terminal tables (about 55 MB on
    FLOP-FAST). Its shape and the flags a solver reads before choosing a path
    (``general_sum``, ``numpy_products``; ``csr`` is None) are known up front; products and
    every other attribute build the operator. Gradients are counted here, as for any operator."""

    csr = None

    def __init__(self, shape, build, general_sum: bool = False, numpy_products: bool = False):
        self.shape = (int(shape[0]), int(shape[1]))
        self.gradients = 0
        self.general_sum, self.numpy_products = general_sum, numpy_products
        self._build, self._op = build, None

    @property
    def built(self) -> PayoffOperator:
        if self._op is None:
            self._op = self._build()
        return self._op

    def _product(self, own, v, out):
        return self.built._product(own, v, out)

    def keep_scratch(self, keep: bool) -> None:
        self.built.keep_scratch(keep)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.built, name)

    @property
    def nnz(self) -> int:
        return self.built.nnz

    def max_abs_entry(self) -> float:
        return self.built.max_abs_entry()

    def to_sparse(self):
        return self.built.to_sparse()

    def on_device(self, xp):
        return self.built.on_device(xp)

    @property
    def nbytes(self) -> int:
        return 0 if self._op is None else self._op.nbytes


class SparsePayoff(PayoffOperator):
    """Generic operator: A in CSR, plus A.T in CSR for a fast transpose product.

    ``A`` is a scipy sparse matrix, or a COO triple ``(rows, cols, vals)`` with ``shape``
    (the compiler's; duplicates are summed, zeros dropped). The CSR arrays are built with
    numpy, so scipy is imported only by :meth:`to_sparse` (and the LP).

    Memory: 2 x (8 B value + 4 B index) per nonzero + 2 x 8 B per row pointer.
    The products are numba loops (:mod:`treeplex.core.csr_kernels`), which avoid scipy's per-call
    overhead on small games; up to ``NUMPY_NNZ`` nonzeros they are a NumPy ``bincount`` with
    the same bits, so that small games never import numba (start-up).
    """

    def __init__(self, A, shape: tuple[int, int] | None = None):
        if shape is None:  # a scipy sparse matrix
            coo = A.tocoo()
            A, shape = (coo.row, coo.col, coo.data), coo.shape
        rows, cols, vals = (np.asarray(a) for a in A)
        self.shape = (int(shape[0]), int(shape[1]))
        self.gradients = 0
        self._a = _csr(rows, cols, vals, self.shape)
        self._at = _csr(cols, rows, vals, self.shape[::-1])
        self._rows = [None, None]

    @property
    def nnz(self) -> int:
        return len(self._a[2])

    @property
    def csr(self) -> tuple[tuple, tuple]:
        """(indptr, indices, data) of A and of A^T (see :class:`PayoffOperator`)."""
        return self._a, self._at

    @property
    def numpy_products(self) -> bool:
        return self.nnz <= NUMPY_NNZ

    def max_abs_entry(self) -> float:
        return float(np.abs(self._a[2]).max(initial=0.0))

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self._a + self._at)

    def _product(self, own, v, out):
        m = self._a if own == 0 else self._at
        v = np.asarray(v, dtype=np.float64)
        if self.nnz > NUMPY_NNZ:
            from ..core.csr_kernels import csr_matvec, csr_matvec_into

            if out is None:
                return csr_matvec(*m, v)
            csr_matvec_into(*m, v, out)
            return out
        rows = self._rows[own]
        if rows is None:  # 4 B per nonzero, kept for small matrices only
            rows = self._rows[own] = np.repeat(np.arange(len(m[0]) - 1, dtype=np.int32), np.diff(m[0]))
        # bincount adds each row's products from 0.0 in storage order: the numba loop's bits
        r = np.bincount(rows, weights=m[2] * v[m[1]], minlength=len(m[0]) - 1)
        if out is None:
            return r
        out[...] = r
        return out

    def to_sparse(self):
        """A as a ``scipy.sparse.csr_matrix``."""
        import scipy.sparse as sp

        return sp.csr_matrix((self._a[2], self._a[1], self._a[0]), shape=self.shape)


def _csr(rows, cols, vals, shape) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr int64, indices int32, data float64) of the COO entries: duplicates summed in
    input order, exact zeros dropped, columns sorted within each row."""
    n, m = shape
    key = rows.astype(np.int64) * m + cols.astype(np.int64)
    order = np.argsort(key, kind="stable")
    key, vals = key[order], np.asarray(vals, dtype=np.float64)[order]
    if len(key):
        first = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
        key, vals = key[first], np.add.reduceat(vals, first)
        keep = vals != 0.0
        key, vals = key[keep], vals[keep]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(key // m, minlength=n), out=indptr[1:])
    return indptr, (key % m).astype(np.int32), vals


@dataclass
class Problem:
    """A compiled two-player zero-sum game.

    ``stats`` holds node counts (histories, terminals, chance and decision nodes).
    ``payoff_unit`` names what one unit of payoff is (e.g. "chips"); ``big_blind`` is set
    for poker games so results can also be given in mbb/g. ``game`` is the game it was built
    from (None for a problem made from arrays). ``locks``: None, or per player None or a
    :class:`~treeplex.core.locks.Locks` (node locking: behavioral probabilities fixed at some
    infosets; solvers, best responses, gaps and the LP then live in the locked game).
    """

    X: Treeplex
    Y: Treeplex
    A: PayoffOperator
    name: str = "game"
    stats: dict = field(default_factory=dict)
    payoff_unit: str = "payoff units"
    big_blind: float | None = None
    game: object = None
    locks: tuple | None = None
    _backend: object = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.A.shape != self.n_seqs:
            raise ValueError(f"A has shape {self.A.shape}, treeplexes have {self.n_seqs[0]} and {self.n_seqs[1]} sequences")

    @property
    def general_sum(self) -> bool:
        """Whether the payoffs are general-sum (:class:`GeneralSumPayoff`: a raked poker spot)."""
        return self.A.general_sum

    @property
    def n_seqs(self) -> tuple[int, int]:
        """Both players' numbers of sequences (without building a deferred treeplex)."""
        return (self.__dict__["_X"].n_seqs, self.__dict__["_Y"].n_seqs)

    @property
    def treeplexes(self) -> tuple[Treeplex, Treeplex]:
        return (self.X, self.Y)

    @property
    def backend_name(self) -> str:
        """The backend's name, without creating it ("numba" until :meth:`use_backend` chose another)."""
        return "numba" if self._backend is None else self._backend.name

    @property
    def backend(self):
        """Where the solvers' treeplex passes run (:mod:`treeplex.backends`; numba unless
        :meth:`use_backend` chose another)."""
        if self._backend is None:
            self.use_backend("numba")
        return self._backend

    def use_backend(self, name: str) -> None:
        """Run the passes on backend ``name`` from now on: "numba", "array" (level-vectorized,
        NumPy) or "gpu" (the array backend on CuPy; an InputError without a CUDA device)."""
        if self._backend is None or self._backend.name != name:
            from ..backends import make_backend

            check = getattr(self.game, "check_sequence_form_memory", None)
            if check is not None:  # a game that can refuse its sequence form's memory before it is allocated
                check()

            self._backend = make_backend(name, self)
        self._backend.auto = False

    strategy_options: ClassVar[tuple[str, ...]] = ()  # keywords of :meth:`solution` (postflop: "streets")

    def strategy_dict(self, x: np.ndarray, y: np.ndarray) -> dict:
        """The profile (x, y) readably: {"player0": {infoset: {action: probability}}, "player1": ...}."""
        return profile_dict(self, x, y)

    def solution(self, x: np.ndarray, y: np.ndarray) -> dict:
        """What a solution file holds besides the run's meta (``solve --out``, ``batch``)."""
        return {"game": self.name, "strategies": self.strategy_dict(x, y)}

    def summary(self, x: np.ndarray, y: np.ndarray) -> str:
        """The strategies as text, for ``solve`` without ``--json``."""
        return profile_text(self.strategy_dict(x, y))

    @cached_property
    def tree(self) -> GameTree | None:
        """The history tree (:class:`~treeplex.core.tree.GameTree`, 49 bytes per history), walked
        from ``game`` on first access; None without a game. Structured problems, whose
        sequences are not numbered by a walk of the game, override it with None."""
        return None if self.game is None else GameTree.from_game(self.game, self)


def _treeplex_property(name: str):
    """Problem.X / Problem.Y: the treeplex, built on first access where the problem was given
    a :class:`~treeplex.core.treeplex.DeferredTreeplex` (after the game's
    ``check_sequence_form_memory``, where it has one: the problem itself was checked for its
    leanest path only)."""

    def get(self):
        t = self.__dict__[name]
        if isinstance(t, DeferredTreeplex):
            check = getattr(self.game, "check_sequence_form_memory", None)
            if check is not None:  # the sequence form's memory, refused before it is allocated
                check()
            t = self.__dict__[name] = t.build()
        return t

    def put(self, t):
        self.__dict__[name] = t

    return property(get, put)


Problem.X = _treeplex_property("_X")  # after @dataclass: its __init__ assigns through the property
Problem.Y = _treeplex_property("_Y")
