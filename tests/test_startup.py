"""Start-up: small games run without numba or scipy, and give numba's bits.

A small game is solved on NumPy (the array backend, and ``Treeplex``/``SparsePayoff``'s NumPy
passes) until the process's small runs have lasted ``backends.TIER_UP`` solver seconds
(``driver.NUMPY_BUDGET``), then on numba (``driver._onto_numba``). These tests check that the
first part imports neither numba nor scipy, that the NumPy passes equal the numba kernels bit
for bit, and that a run moved onto numba mid-way continues the same iterates. (Other test
files start with the budget spent: ``conftest.py``.)
"""

import importlib
import subprocess
import sys

import numpy as np
import pytest
from random_games import random_game

import treeplex as tp
from treeplex import backends
from treeplex.core import dilated_entropy
from treeplex.run import driver
from treeplex.model import problem as problem_module
from treeplex.core import treeplex as treeplex_module
from treeplex.core.csr_kernels import csr_matvec
from treeplex.core.dilated_entropy import dilated_weights
from treeplex.solvers import ALGORITHMS

QUIET = """
import sys
from treeplex.cli import main
main({argv!r})
heavy = sorted(m for m in ("numba", "scipy", "matplotlib") if m in sys.modules)
print("HEAVY", heavy)
"""


@pytest.mark.parametrize("argv", [["solve", "kuhn"], ["solve", "leduc", "--algorithm", "cfr+", "--max-iters", "30"],
                                  ["solve", "leduc", "--algorithm", "egt", "--max-iters", "30"],
                                  ["solve", "leduc", "--algorithm", "hedge", "--max-iters", "30"]])
def test_small_games_import_neither_numba_nor_scipy(argv):
    out = subprocess.run([sys.executable, "-c", QUIET.format(argv=argv)], capture_output=True, text=True, check=True)
    assert "HEAVY []" in out.stdout, out.stdout[-500:]


def test_registry_lists_every_registered_algorithm_without_importing():
    for name in set(ALGORITHMS.module_of.values()):
        importlib.import_module(name)
    assert set(ALGORITHMS.classes) == set(ALGORITHMS)
    assert all(ALGORITHMS[n].name in ALGORITHMS for n in ALGORITHMS)


def _games():
    return [tp.compile_game(tp.load_game("leduc")), tp.compile_game(tp.load_game("kuhn"))] + [
        tp.compile_game(random_game(seed=s)) for s in range(12)]


def test_numpy_treeplex_passes_equal_the_numba_kernels(monkeypatch):
    rng = np.random.default_rng(0)
    for P in _games():
        for X in P.treeplexes:
            g = rng.normal(size=X.n_seqs)
            ties = np.round(g)  # first-argmax rule on ties
            b = X.behavioral_from_plan(rng.random(X.n_seqs) * X.uniform())

            def passes():
                return [X.best_response_value(g), X.best_response_value(g, -1.0), *X.best_response(g),
                        *X.best_response_behavioral(ties), X.plan_from_behavioral(b), X.uniform(),
                        dilated_weights(X)]

            numpy = passes()
            monkeypatch.setattr(treeplex_module, "NUMPY_SEQS", -1)
            monkeypatch.setattr(dilated_entropy, "NUMPY_SEQS", -1)
            compiled = passes()
            monkeypatch.undo()
            for a, c in zip(numpy, compiled):
                assert np.array_equal(a, c)
        depth = np.zeros(X.n_infosets, dtype=np.int32)  # the definition, infoset by infoset
        for j in range(X.n_infosets):
            pj = X.seq_infoset[X.parent[j]]
            depth[j] = 0 if pj < 0 else depth[pj] + 1
        assert np.array_equal(X.depth, depth)


def test_numpy_csr_products_equal_the_numba_kernel():
    rng = np.random.default_rng(1)
    for P in _games():
        A = P.A
        for own, v in ((0, rng.normal(size=A.shape[1])), (1, rng.normal(size=A.shape[0]))):
            assert np.array_equal(A._product(own, v, None), csr_matvec(*A.csr[own], v))


@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr", "egt"])
def test_a_run_moved_onto_numba_continues_the_same_iterates(monkeypatch, algorithm):
    leduc = tp.load_game("leduc")
    # EGT's iterates amplify the last-ulp differences of NumPy's and numba's exp/log about 10x
    # per 3 iterations (measured on Leduc), so its runs are compared after 15 iterations, at 1e-9
    n, atol = (15, 1e-9) if algorithm == "egt" else (60, 1e-12)
    ref = tp.solve(tp.compile_game(leduc), algorithm, max_iters=n, backend="numba")
    monkeypatch.setattr(driver, "NUMPY_BUDGET", 1e-9)  # move after the first iteration
    P = tp.compile_game(leduc)
    assert backends.starts_on_numpy(P)
    moved = tp.solve(P, algorithm, max_iters=n)
    assert P.backend.name == "numba" and moved.iterations == n and moved.gradients == ref.gradients
    np.testing.assert_allclose(moved.x, ref.x, rtol=0, atol=atol)
    np.testing.assert_allclose(moved.y, ref.y, rtol=0, atol=atol)


def test_large_or_structured_problems_start_on_numba(monkeypatch):
    P = tp.compile_game(tp.load_game("leduc"))
    monkeypatch.setattr(problem_module, "NUMPY_NNZ", 10)
    assert not backends.starts_on_numpy(P)
    P.use_backend("array")
    monkeypatch.setattr(problem_module, "NUMPY_NNZ", 1 << 16)
    assert not backends.starts_on_numpy(P)  # a backend chosen by the caller stays


def test_a_second_solve_of_a_small_problem_decides_its_backend_again(monkeypatch):
    monkeypatch.setattr(driver, "NUMPY_BUDGET", driver.TIER_UP)  # a fresh process's
    P = tp.compile_game(tp.load_game("kuhn"))
    tp.solve(P, "cfr+", max_iters=5)  # short: stays on NumPy
    assert P.backend.name == "array" and backends.starts_on_numpy(P)
    monkeypatch.setattr(driver, "NUMPY_BUDGET", 1e-9)
    tp.solve(P, "cfr+", max_iters=5)
    assert P.backend.name == "numba" and not backends.starts_on_numpy(P)  # moved: numba from now on
    Q = tp.compile_game(tp.load_game("kuhn"))
    Q.use_backend("array")  # the caller's choice is kept
    tp.solve(Q, "cfr+", max_iters=5)
    assert Q.backend.name == "array" and not backends.starts_on_numpy(Q)


def test_the_numpy_budget_is_spent_over_the_whole_process(monkeypatch):
    monkeypatch.setattr(driver, "NUMPY_BUDGET", 1.0)
    P = tp.compile_game(tp.load_game("kuhn"))
    r = tp.solve(P, "cfr+", max_iters=20)
    assert P.backend.name == "array" and driver.NUMPY_BUDGET == pytest.approx(1.0 - r.seconds)
    monkeypatch.setattr(driver, "NUMPY_BUDGET", 0.0)  # spent: small runs start on numba
    Q = tp.compile_game(tp.load_game("kuhn"))
    tp.solve(Q, "cfr+", max_iters=20)
    assert Q.backend.name == "numba"
