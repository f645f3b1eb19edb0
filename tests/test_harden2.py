"""Issue 31, the items a second pass closed: time limits inside a lazy traversal, the
history estimate that refuses before it allocates, viewer files that would render blank,
the exact LP on large postflop spots, memory guards, and the Ray batch watchdog."""

import pytest

from tests.test_hardening import refused


# ------------------------------------------------------------ 2. the history estimate stops early


class _Counted:
    """A rules game that counts the states it hands out."""

    def __init__(self, game):
        self.game, self.applied = game, 0

    def initial_state(self):
        return _CountedState(game=self, s=self.game.initial_state())


class _CountedState:
    def __init__(self, game, s):
        self.g, self.s = game, s

    def __getattr__(self, name):
        return getattr(self.s, name)

    def apply(self, a):
        self.g.applied += 1
        return _CountedState(self.g, self.s.apply(a))


def test_chess_history_estimate_stops_after_a_bounded_walk():
    pytest.importorskip("pyspiel")
    from treeplex.core.memory import PROBE_AFTER, count_histories
    from treeplex.games import load_game

    game = _Counted(load_game("openspiel:chess"))
    n, how = count_histories(game, cap=2**31 / 120)
    assert how == "about" and n > 1e100
    # the exact walk stopped at PROBE_AFTER visits, the random paths at their step cap
    assert game.applied <= PROBE_AFTER + 100_000


def test_chess_info_refused_from_the_estimate(capsys):
    pytest.importorskip("pyspiel")
    # was: grew to 4.7 GB (the walk's stack held ~30 states per depth) before refusing
    refused(capsys, "info", "openspiel:chess", "--max-memory", "2G",
            needle="openspiel:chess: about")


def test_exact_counts_unchanged_by_the_probe(monkeypatch):
    from treeplex import make_game
    from treeplex.core import memory
    from treeplex.model.compile import compile_game

    # the random paths, asked early, must not stop a count that is under the cap
    monkeypatch.setattr(memory, "PROBE_AFTER", 10)
    for spec in ("leduc(ranks=13,suited=True)", "kuhn", "leduc(ranks=5)"):
        g = make_game(spec)
        exact = compile_game(g).stats["histories"]
        n, how = memory.count_histories(g, cap=2 * exact)
        assert how == "exact" and n == pytest.approx(exact, rel=0.05), spec
