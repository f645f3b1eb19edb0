"""Gambit .efg reader and writer (treeplex.io.efg)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from treeplex import GameError, chance, compile_game, decision, make_game, solve_lp, terminal
from treeplex.io.efg import parse_efg, read_efg, write_efg
from treeplex.model.game import Decision, ExplicitGame

DATA = Path(__file__).parent / "data"
KUHN_VALUE = -1 / 18
LEDUC_VALUE = -0.0856064


def _value(game) -> float:
    return solve_lp(compile_game(game)).value


def _nonzeros(problem) -> list[tuple[int, int, float]]:
    A = problem.A.to_sparse().tocoo()
    return sorted(zip(A.row.tolist(), A.col.tolist(), A.data.tolist()))


# ------------------------------------------------------------------ round trips


@pytest.mark.parametrize("name, value, tol", [("kuhn", KUHN_VALUE, 1e-9), ("leduc", LEDUC_VALUE, 1e-6)])
def test_round_trip_builtin_games(name, value, tol):
    game = make_game(name)
    text = write_efg(game)
    assert text.startswith("EFG 2 R ")
    back = read_efg(text)
    p1, p2 = compile_game(game), compile_game(back)
    for T1, T2 in ((p1.X, p2.X), (p1.Y, p2.Y)):
        assert (T1.n_infosets, T1.n_seqs) == (T2.n_infosets, T2.n_seqs)
        assert T1.action_labels == T2.action_labels
        # keys read back as "number:name", the name being str(original key)
        assert [k.split(":", 1)[1] for k in T2.infoset_keys] == [str(k) for k in T1.infoset_keys]
        assert np.array_equal(T1.parent, T2.parent)
    # same matrix: the writer and the compiler walk the tree in the same order
    assert p1.A.nnz == p2.A.nnz
    assert sorted(v for _, _, v in _nonzeros(p1)) == sorted(v for _, _, v in _nonzeros(p2))
    assert _nonzeros(p1) == _nonzeros(p2)
    v1, v2 = solve_lp(p1).value, solve_lp(p2).value
    assert v2 == pytest.approx(value, abs=tol)
    assert v2 == pytest.approx(v1, abs=1e-9)


def test_write_to_path_and_file_object(tmp_path):
    game = make_game("kuhn")
    path = tmp_path / "kuhn.efg"
    text = write_efg(game, path, title="Kuhn poker")
    assert path.read_text(encoding="utf-8") == text
    assert text.startswith('EFG 2 R "Kuhn poker" { "Player 1" "Player 2" }')
    buf = io.StringIO()
    assert write_efg(game, buf) == buf.getvalue()
    for source in (path, str(path)):
        back = read_efg(source)
        assert back.name == "Kuhn poker"
        assert _value(back) == pytest.approx(KUHN_VALUE, abs=1e-9)


def test_write_pair_payoffs_and_exact_probabilities():
    # chance probabilities that are not short decimals must read back bit for bit
    p = 0.1 + 0.2  # 0.30000000000000004
    game = ExplicitGame(
        chance(
            [
                ("a", p, terminal((3.0, 7.0))),
                ("b", 1.0 - p, decision(0, "d", {"x": terminal((10.0, 0.0)), "y": terminal((1 / 3, 29 / 3))})),
            ]
        )
    )
    back = read_efg(write_efg(game))
    outcomes = back.root.outcomes
    assert [q for _, q, _ in outcomes] == [p, 1.0 - p]
    assert outcomes[0][2].payoff() == (3.0, 7.0)
    assert outcomes[1][2].actions["y"].payoff() == (1 / 3, 29 / 3)
    # constant-sum (10) is accepted; the value is player 0's: p*3 + (1-p)*10
    assert _value(back) == pytest.approx(p * 3 + (1 - p) * 10, abs=1e-9)


def test_quoted_labels_with_escapes_round_trip():
    key = 'say "hi" \\ to me'
    labels = ['a "quoted" one', "back\\slash", 'end\\"mix']
    game = ExplicitGame(decision(0, key, {label: terminal(i) for i, label in enumerate(labels)}), name='q"t')
    text = write_efg(game)
    assert '\\"quoted\\"' in text and "back\\\\slash" in text
    back = read_efg(text)
    assert back.name == 'q"t'
    root = back.root
    assert isinstance(root, Decision)
    assert root.infoset == f"1:{key}"
    assert list(root.actions) == labels
    assert [root.actions[a].payoff() for a in labels] == [(0.0, -0.0), (1.0, -1.0), (2.0, -2.0)]


def test_hand_written_escapes_and_gambit_label_renaming():
    text = r'''EFG 2 R "t" { "A" "B" }
p "" 1 1 "He said \"no\"" { "" "" "x" "x" "ok\"" } 0
t "" 1 "" { 1 -1 }
t "" 2 "" { 2 -2 }
t "" 3 "" { 3 -3 }
t "" 4 "" { 4 -4 }
t "" 5 "" { 5 -5 }
'''
    root = parse_efg(text).root
    assert root.infoset == '1:He said "no"'
    # empty and repeated labels are made unique the way Gambit does
    assert list(root.actions) == ["_1", "_2", "x_1", "x_2", 'ok"']


# ------------------------------------------------------------------ other writers' files


def test_openspiel_export_of_kuhn():
    # tests/data/kuhn_openspiel.efg is the output of OpenSpiel's
    # open_spiel.python.algorithms.gambit.export_gambit(pyspiel.load_game("kuhn_poker")):
    # probabilities like 0.3333333333333333, a chance infoset per chance node, empty
    # infoset names, one outcome per terminal.
    path = DATA / "kuhn_openspiel.efg"
    assert "0.3333333333333333" in path.read_text()
    game = read_efg(path)
    assert game.name == "kuhn_poker()"
    assert game.player_names == ("Pl0", "Pl1")
    problem = compile_game(game)
    assert (problem.X.n_infosets, problem.Y.n_infosets) == (6, 6)
    assert problem.X.infoset_keys == ["1", "2", "3", "4", "5", "6"]
    assert problem.X.action_labels[0] == ("Pass", "Bet")
    assert solve_lp(problem).value == pytest.approx(KUHN_VALUE, abs=1e-9)


def test_fraction_probabilities_and_outcomes_along_the_path():
    # tests/data/path_outcomes.efg: chance deals lo (1/3) or hi (2/3); the root carries
    # outcome "ante" (1, -1), which every terminal gets.
    #   lo: Max picks L (1 + 2 = 3) over R (1 + 0 = 1)                       -> 3
    #   hi: Max's node carries outcome "refund" (-1, 1), so the path is at 0;
    #       then matching pennies: 3 if Max's L/R matches Min's l/r, else 0  -> 0 + 3/2
    #   value = 1/3 * 3 + 2/3 * 3/2 = 2
    # Min's second node, outcome 5 and 4 reuse earlier definitions without repeating them.
    game = read_efg(DATA / "path_outcomes.efg")
    assert game.comment.startswith("Fraction probabilities")
    probs = [p for _, p, _ in game.root.outcomes]
    assert probs == [1 / 3, 2 / 3]
    lo = game.root.outcomes[0][2]
    assert lo.actions["L"].payoff() == (3.0, -3.0)
    assert lo.actions["R"].payoff() == (1.0, -1.0)
    hi = game.root.outcomes[1][2]
    assert hi.actions["R"].actions["r"].payoff() == (3.0, -3.0)
    assert hi.actions["R"].infoset == hi.actions["L"].infoset == "1:Min"
    assert _value(game) == pytest.approx(2.0, abs=1e-9)


def test_deep_tree_reads_without_recursion():
    depth = 20_000
    lines = ['EFG 2 R "deep" { "A" "B" }']
    for k in range(1, depth + 1):
        lines.append(f'p "" {1 + k % 2} {k} "" {{ "stop" "go" }} 0')
        lines.append(f't "" {k} "" {{ {k % 3 - 1}, {1 - k % 3} }}')
    lines.append('t "" 0')
    problem = compile_game(parse_efg("\n".join(lines)))
    assert problem.stats["histories"] == 2 * depth + 1


# ------------------------------------------------------------------ errors

HEADER = 'EFG 2 R "bad" { "A" "B" }\n'


def _error(text: str) -> str:
    with pytest.raises(GameError) as info:
        parse_efg(text, filename="bad.efg")
    return str(info.value)


@pytest.mark.parametrize(
    "body, line, words",
    [
        # missing '}' after the action list: the outcome number is read as an action
        ('p "" 1 1 "x" { "a" "b" 0\nt "" 1 "" { 1 -1 }\nt "" 2 "" { -1 1 }\n', 2, "action label"),
        # missing '}' after payoffs: reported at the list's line, naming the next line
        ('p "" 1 1 "x" { "a" "b" } 0\nt "" 1 "" { 1 -1\nt "" 2 "" { -1 1 }\n', 3, "on line 4"),
        # garbage instead of the outcome number
        ('p "" 1 1 "x" { "a" "b" } zero\nt "" 1 "" { 1 -1 }\nt "" 2 "" { -1 1 }\n', 2, "outcome number"),
        ('p "" 1 1 "x" { "a" "b" } 0\nt "" 1 "" { 1 -1 }\nq "" 2 "" { -1 1 }\n', 4, "unknown node type 'q'"),
        ('p "" 1 1 "x" { "a" "b" } 0\nt "" 1 "" { 1 -1 }\n', 3, "unexpected end of file"),
        ('t "" 1 "" { 1 -1 0 }\n', 2, "2 payoffs"),
        ('t "" 1 "" { 1 oops }\n', 2, "payoff"),
        ('p "" 3 1 "x" { "a" } 0\nt "" 0\n', 2, "player 3"),
        ('p "" 1 1 "x" { } 0\n', 2, "empty action list"),
        ('p "" 1 1 0\nt "" 0\n', 2, "before its actions"),
        ('t "" 7\n', 2, "outcome 7 is used before"),
        ('t "" 0 "x" { 1 -1 }\n', 2, "outcome 0"),
        ('c "" 1 "" { "a" 0.5 "b" -0.5 } 0\nt "" 0\nt "" 0\n', 2, "must be >= 0"),
        ('c "" 1 "" { "a" 0.5 "b" half } 0\nt "" 0\nt "" 0\n', 2, "probability of chance action 'b'"),
        ('t "" 0\nt "" 0\n', 3, "after the end of the game tree"),
        ('t "unclosed 0\n', 2, "not closed"),
        (
            'c "" 1 "" { "a" 0.5 "b" 0.5 } 0\n'
            'p "" 1 1 "x" { "l" "r" } 0\nt "" 0\nt "" 0\n'
            'p "" 1 1 "x" { "l" "m" "r" } 0\nt "" 0\nt "" 0\nt "" 0\n',
            6,
            "has 3 actions here but 2 on line 3",
        ),
        (
            'c "" 1 "" { "a" 0.5 "b" 0.5 } 0\n'
            't "" 1 "" { 1 -1 }\nt "" 1 "" { 2 -2 }\n',
            4,
            "outcome 1 has payoffs",
        ),
    ],
)
def test_broken_input_names_the_line(body, line, words):
    message = _error(HEADER + body)
    assert message.startswith(f"bad.efg:{line}: "), message
    assert words in message, message


def test_bad_headers():
    assert _error('NFG 1 R "x" { "A" "B" } { 1 1 }').startswith("bad.efg:1: not a Gambit extensive-form file")
    assert "only two-player" in _error('EFG 2 R "x" { "A" "B" "C" }\nt "" 0\n')
    assert "version 2" in _error('EFG 3 R "x" { "A" "B" }\nt "" 0\n')
    assert _error('EFG 2 R "x"\n{ "A" "B"\nt "" 0\n').startswith("bad.efg:3: ")


def test_missing_file():
    with pytest.raises(GameError, match="cannot read"):
        read_efg("/nonexistent/game.efg")


def test_general_sum_is_refused():
    text = HEADER + 'p "" 1 1 "x" { "a" "b" } 0\nt "" 1 "" { 1 -1 }\nt "" 2 "" { 2 0 }\n'
    with pytest.raises(GameError, match="general-sum"):
        compile_game(parse_efg(text))


def test_chance_probabilities_must_sum_to_one():
    text = HEADER + 'c "" 1 "" { "a" 0.5 "b" 0.4 } 0\nt "" 1 "" { 1 -1 }\nt "" 2 "" { 2 -2 }\n'
    game = parse_efg(text)  # each probability is fine; the sum is the compiler's check
    with pytest.raises(GameError, match="sum to 0.9"):
        compile_game(game)


def test_imperfect_recall_is_refused():
    game = read_efg(DATA / "imperfect_recall.efg")
    with pytest.raises(GameError, match="imperfect recall"):
        compile_game(game)
