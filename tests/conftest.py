"""Test configuration: long experiments are marked ``slow`` and skipped unless TREEPLEX_SLOW=1;
every test starts with the driver's NumPy budget spent (small solves run on numba from their
first iteration, as they did before that budget existed, and whatever the tests before did).
``tests/test_startup.py`` sets the budget where it tests the NumPy start."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # tests/random_games.py and friends


def pytest_collection_modifyitems(config, items):
    if os.environ.get("TREEPLEX_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow experiment: run with TREEPLEX_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _numpy_budget_spent(monkeypatch):
    from treeplex.run import driver

    monkeypatch.setattr(driver, "NUMPY_BUDGET", 0.0)


@pytest.fixture(scope="session")
def tiny_hunl(tmp_path_factory):
    """A tiny HUNL abstraction (buckets 4,4,4, one flop class) and a blueprint of 4,000
    iterations on it, shared by the play and real-time tests: (abstraction, blueprint) paths."""
    from treeplex.abstraction.build import build
    from treeplex.cli import main

    d = tmp_path_factory.mktemp("hunl")
    ab, bp = str(d / "abs.npz"), str(d / "bp.npz")
    build(ab, (4, 4, 4), flops=1, seed=0, progress=False)
    assert main(["blueprint", "train", "--abstraction", ab, "-o", bp, "--iterations", "4000", "--quiet"]) == 0
    return ab, bp
