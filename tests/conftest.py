"""Test configuration: long experiments are marked ``slow`` and skipped unless TREEPLEX_SLOW=1;
every test starts with the driver's whole NumPy budget (a fresh process's), so whether a small
solve runs on NumPy does not depend on the tests before it."""

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
def _fresh_numpy_budget(monkeypatch):
    from treeplex import driver

    monkeypatch.setattr(driver, "NUMPY_BUDGET", driver.TIER_UP)
