"""RPS+ (depth-limited paper, section 2): single state values cannot recover the equilibrium;
multi-valued leaves offering the opponent's three pure strategies do."""

import numpy as np
import pytest

import treeplex as tp
from treeplex.depth_limited import DepthLimitedGame, solve_subgame
from treeplex.games.rps_plus import BEATS, RPSPlus


def u(a: str, b: str) -> float:
    """RPS+ payoff to player 0 (closed form: 1, or 2 when Scissors is involved)."""
    if a == b:
        return 0.0
    stake = 2.0 if "S" in (a, b) else 1.0
    return stake if BEATS[a] == b else -stake


EQ = {"R": 0.4, "P": 0.4, "S": 0.2}  # the paper's equilibrium, both players


def depth_one(values):
    """RPS+ cut after player 0's move; player 1 (one infoset: it sees nothing) picks a value."""
    return DepthLimitedGame(RPSPlus().initial_state(), is_leaf=lambda s: len(s.moves) == 1,
                            leaf_values=lambda s: values(s.moves), leaf_key=lambda s: "move", chooser=1)


def test_single_equilibrium_values_cannot_recover_the_equilibrium():
    # Each state's value under the equilibrium is 0 (section 2: "all the red states have value 0").
    single = depth_one(lambda a: [sum(EQ[b] * u(a, b) for b in "RPS")])
    p = tp.compile_game(single)
    assert np.allclose(p.A.to_sparse().toarray(), 0.0)  # every strategy is optimal in the subgame
    # ... for instance pure Rock, which loses 1 to Paper in the real game (exploitability 1/2 x gap 1)
    full = tp.compile_game(RPSPlus())
    rock = np.array([1.0, 1.0, 0.0, 0.0])
    eq_y = np.array([1.0, 0.4, 0.4, 0.2])
    assert tp.evaluate(full, rock, eq_y).br1 == pytest.approx(-1.0)
    # and the solver's answer is not the equilibrium
    sol = solve_subgame(single)
    x = sol.strategies[0]["move"]
    assert max(abs(x[a] - EQ[a]) for a in "RPS") > 0.05


def test_three_pure_continuations_recover_040_040_020():
    multi = depth_one(lambda a: [u(a, b) for b in "RPS"])
    sol = solve_subgame(multi, k=3)
    x = sol.strategies[0]["move"]
    for a in "RPS":
        assert x[a] == pytest.approx(EQ[a], abs=1e-6)
    assert sol.value == pytest.approx(0.0, abs=1e-9)
    assert sol.cost["leaves"] == 3 and sol.cost["k"] == 3


def test_guide_example(capsys):
    # the depth-limited guide's RPS+ block runs and prints what its comments say
    import pathlib
    import re

    guide = (pathlib.Path(__file__).parent.parent / "docs" / "guide" / "depth-limited.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", guide, re.S) if "RPSPlus" in b)
    exec(compile(block, "docs/guide/depth-limited.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["{'R': 1.0, 'P': 0.0, 'S': 0.0}", "{'R': 0.4, 'P': 0.4, 'S': 0.2}"]
    assert all(f"# {line}" in block for line in printed)  # the comments show the same numbers
