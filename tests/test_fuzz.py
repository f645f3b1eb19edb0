"""Property tests of the command line (issue 18): whatever the input, exit 0 with a verified
result or exit 2 with one line on stderr; never a traceback, never exit 1, never a hang.

Inputs: mutated ``.efg`` files (random valid games with tokens deleted, repeated or replaced)
and CLI argument lists drawn from good and bad values of every option. Calls are in-process
(``main()``), each under a SIGALRM guard that turns a hang into a failure. The example budget
is fixed and small so the file runs in seconds (``TREEPLEX_FUZZ_EXAMPLES=5000`` hunts longer,
with fresh random examples).
"""

import json
import math
import os
import signal
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from random_games import random_game
from treeplex.cli import main
from treeplex.io.efg import write_efg

HANG_SECONDS = 20
EXAMPLES = int(os.environ.get("TREEPLEX_FUZZ_EXAMPLES", 150))  # more (and random) for a longer hunt
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="TREEPLEX_FUZZ_EXAMPLES" not in os.environ,
                database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang


def run(capsys, argv):
    """(exit code, stdout, stderr) of ``main(argv)``, failing on a hang."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    try:
        code = main(argv)
    except SystemExit as e:  # argparse
        code = e.code
    except Hang:
        pytest.fail(f"hang: treeplex {' '.join(argv)}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    out = capsys.readouterr()
    return code, out.out, out.err


def check_invariant(argv, code, out, err):
    assert "Traceback" not in err, (argv, err)
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        assert err.count("\n") == 1 and err.strip(), (argv, err)
        return
    if argv[0] == "solve" and "--json" in argv:  # a verified result
        d = json.loads(out.splitlines()[-1] if out.strip() else out)
        tol = 1e-6 * max(1.0, abs(d["br_value_player0"]), abs(d["br_value_player1"]))
        assert all(math.isfinite(d[k]) for k in ("value", "gap", "br_value_player0", "br_value_player1"))
        assert d["br_value_player1"] - tol <= d["value"] <= d["br_value_player0"] + tol, (argv, d)
        assert d["gap"] >= -tol
        if d["algorithm"] == "lp" and d["stopped_by"] == "exact":
            assert d["gap"] <= tol, (argv, d)


WEIRD = ["{", "}", '"', '""', ",", "0", "1", "2", "3", "-1", "1/3", "1/0", "0.5", "1e999", "-1e999", "nan", "inf",
         "p", "c", "t", '"x"', "EFG", "\\", "\x00", "9" * 40, '"a\\"b"', "\n"]


@st.composite
def efg_texts(draw):
    """A random small valid game as .efg text, then up to 4 token edits."""
    text = write_efg(random_game(draw(st.integers(0, 10_000)), max_depth=3))
    tokens = text.split(" ")
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(tokens) - 1))
        op = draw(st.sampled_from(["delete", "repeat", "replace", "insert"]))
        if op == "delete" and len(tokens) > 1:
            del tokens[i]
        elif op == "repeat":
            tokens.insert(i, tokens[i])
        else:
            new = draw(st.sampled_from(WEIRD))
            if op == "replace":
                tokens[i] = new
            else:
                tokens.insert(i, new)
    return " ".join(tokens)


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory() as d:
        yield d


@FUZZ
@given(text=efg_texts(), algorithm=st.sampled_from([[], ["--algorithm", "cfr+", "--max-iters", "30"]]))
def test_efg_files(capsys, workdir, text, algorithm):
    path = os.path.join(workdir, "g.efg")
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
        f.write(text)
    argv = ["solve", path, "--json", "--no-strategies", *algorithm]
    check_invariant(argv, *run(capsys, argv))


def _options(workdir):
    """(flag, values) pairs; values mix good and bad."""
    return [
        ("--algorithm", ["lp", "cfr+", "pdcfr+", "dcfr", "egt", "hedge", "", "nope", "LP"]),
        ("--target", ["1e-2", "0.5", "-1", "0", "nan", "inf", "x", "1e999", "1e-300"]),
        ("--max-iters", ["1", "20", "0", "-5", "x", "1.5", "1e3"]),
        ("--time-limit", ["0.05", "-1", "nan", "0", "x"]),
        ("--check-every", ["5", "0", "-1", "x"]),
        ("--report", ["average", "current", "best", "bogus"]),
        ("--param", ["alpha=2", "alpha=x", "alpha=nan", "alpha=-1", "alternating=false", "alternating=maybe",
                     "alternating=[1,2]", "gamma=1e999", "eta=0", "mu=0.1", "mu=-1", "=", "x", "nosuch=1",
                     "prior_weight=-2", "schedule=constant", "schedule=7", "weights=kroer2017", "weights=x"]),
        ("--out", [os.path.join(workdir, "s.json"), "/dev/full", workdir, os.path.join(workdir, "no", "s.json")]),
        ("--trace", [os.path.join(workdir, "t.csv"), "/dev/full", workdir]),
        ("--checkpoint", [os.path.join(workdir, "ck.npz"), "/dev/full", workdir]),
        ("--resume", [os.path.join(workdir, "ck.npz"), os.path.join(workdir, "missing.npz"), workdir]),
        ("--warm-start", [os.path.join(workdir, "s.json"), os.path.join(workdir, "t.csv"), "/dev/null"]),
        ("--max-memory", ["1G", "10K", "0", "x", "-1"]),
        ("--refine", ["efpe", "x"]),
        ("--xi", ["0.01", "-1", "nan", "0.9"]),
        ("--restart", None),
        ("--infoset-regret", None),
    ]


GAMES = ["kuhn", "rps_plus", "simple_poker", "leduc(ranks=2)", "leduc(suited='yes')", "leduc(ranks=3, ranks=4)",
         "kuhn(1)", "nosuch", "leduc(ranks=1e999)", "river(board=Qs9h7d4c2s,first=0.0)", "", "(", "leduc(**x)",
         "nlfh(ranks=2, suits=2, hole=1, flop=1, stack=300, bets='1')"]


@FUZZ
@given(data=st.data())
def test_cli_arguments(capsys, workdir, data):
    options = _options(workdir)
    command = data.draw(st.sampled_from(["solve", "solve", "solve", "info", "export"]))
    argv = [command, data.draw(st.sampled_from(GAMES)), "--max-iters", "200"] if command == "solve" else \
        [command, data.draw(st.sampled_from(GAMES))]
    if command == "solve":
        for flag, values in data.draw(st.lists(st.sampled_from(options), max_size=4)):
            argv += [flag] if values is None else [flag, data.draw(st.sampled_from(values))]
        argv += data.draw(st.sampled_from([["--json", "--no-strategies"], ["--no-strategies"]]))
    elif command == "export":
        argv += data.draw(st.sampled_from([[], ["-o", os.path.join(workdir, "e.efg")], ["-o", "/dev/full"],
                                           ["-o", workdir], ["--format", "x"]]))
    check_invariant(argv, *run(capsys, argv))


SPEC_VALUES = {
    "pot": [2100, 100.5, 0, -1, "x", None, [1], 1e12, 1e13],
    "board": ["Qs9h7d4c2s", "AsKd7h2c3s", "Qs9h7d4c2", "QsQs7d4c2s", [1, 2, 3, 4, 5], [1, 2, 3], 12345, "", None],
    "range0": ["AA,KK", "QQ-88,AKs", "AA:0.5", "ZZ", "AA:x", "", {"AA": 1}, {"AA": -1}, [0.5] * 3, 7],
    "range1": ["QQ+", "KK", "AA:2", {"KK": "x"}, None],
    "abstraction": ["check_down", "fcpa", "nope", {"first_bet": [1]}, {"first_bet": [-1]}, {"players": 3}, 5],
    "stack": [20000, 100, 0, "x", 1e12, True],
    "big_blind": [100, 0, -5],
    "first": [0, 1, 2, 0.0, True, "0"],
    "showdown": ["sweep", "dense", "x"],
    "bogus": [1],
}


@settings(FUZZ, max_examples=max(10, EXAMPLES // 5))
@given(data=st.data())
def test_river_spec_files(capsys, workdir, data):
    spec = {"board": "Qs9h7d4c2s", "range0": "AA,KK", "range1": "QQ+", "abstraction": "check_down"}  # small
    for key in data.draw(st.lists(st.sampled_from(sorted(SPEC_VALUES)), max_size=3, unique=True)):
        spec[key] = data.draw(st.sampled_from(SPEC_VALUES[key]))
    path = os.path.join(workdir, "spec.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    argv = ["solve", path, "--algorithm", "cfr+", "--max-iters", "3", "--json", "--no-strategies"]
    check_invariant(argv, *run(capsys, argv))


# ------------------------------------------------------------------ issue 31: the new inputs

SMALL = max(8, EXAMPLES // 6)  # each example builds a tree or a page: a few seconds per test in all
BAD = [None, True, -1, 0, 0.5, 1e308, -1e308, "", "x", "nan", "1e308%", "1c", [], [1, [2]], {"a": 1}, "\ud800"]
POSTFLOP_VALUES = {
    "board": ["KsQhTdJc9s", "KsQhTd", "KsQhTdJc", "AsAs9c9d8h", "Xx", 12345, ["Ks", "Qh", "Td"]],
    "pot": [10, 0, -5, 1e308, "10"], "stack": [20, 0, 1e308, "big"],
    "range0": ["AA,KK", "QQ+:0.5", "AKs", "", "ZZ", "AA:-1", "AA:nan", [0.5] * 3, {"AsAh": 1}],
    "range1": ["QQ-TT", "KQ,JT", "random", "AA:1e308"],
    "bet": ["50%", "a", "1c", "1e308%", "0%", "-50%", "50%,100%", "e", "e3", "x", "2x"],
    "raise": ["2x", "1x", "1c", "1e308x", "a", "50%"],
    "add_allin_threshold": [1.5, 0, -1, "x", 1e308], "force_allin_threshold": [0.15, -0.1, "nan"],
    "raise_cap": [0, 1, 2, -1, 1e9, "3"], "deck": ["9TJQKA", "TJQKA", "", "AA", "23"],
    "isomorphism": [True, False, 0, "yes"],
}


@settings(FUZZ, max_examples=SMALL)
@given(data=st.data())
def test_postflop_spec_files(capsys, workdir, data):
    """A small river spot (short deck) with up to four keys replaced by good or bad values."""
    spec = {"game": "postflop", "board": "KsQhTdJc9s", "deck": "9TJQKA", "pot": 10, "stack": 20,
            "range0": "AA,KK", "range1": "QQ,JJ", "bet": "a"}
    for key in data.draw(st.lists(st.sampled_from(sorted(POSTFLOP_VALUES)), max_size=4, unique=True)):
        spec[key] = data.draw(st.sampled_from(POSTFLOP_VALUES[key] + BAD))
    path = os.path.join(workdir, "postflop.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    argv = ["info", path, "--max-memory", "256M", "--json"]
    check_invariant(argv, *run(capsys, argv))


@settings(FUZZ, max_examples=SMALL)
@given(data=st.data())
def test_postflop_names(capsys, data):
    parts = ["board=KsQhTdJc9s", "deck='9TJQKA'", "pot=10", "stack=20"]
    for key in data.draw(st.lists(st.sampled_from(["bet", "raise", "raise_cap", "pot", "board"]), max_size=2,
                                  unique=True)):
        value = data.draw(st.sampled_from([str(v) for v in POSTFLOP_VALUES[key]] + ["(", ")", "'", ","]))
        parts.append(f"{key}={value}")
    argv = ["info", "postflop(" + ",".join(parts) + ")", "--max-memory", "256M"]
    check_invariant(argv, *run(capsys, argv))


SPOT_VALUES = {"game": ["kuhn", "leduc(ranks=2)", "nosuchgame", "", 5, {"board": "Ks"}, "postflop(board=Xx)"],
               "algorithm": ["cfr+", "lp", "nope", 3], "max_iters": [5, 0, -5, 1.5, 10**30],
               "time_limit": [1, 0, -1, "5"], "target": ["1%pot", "-1", "x", 0.1, []],
               "params": [{}, {"alpha": 2}, {"nope": 1}, []], "weight": [1, -3, 0.5, "w"],
               "range0": ["AA", 5], "extra": [1]}


@settings(FUZZ, max_examples=SMALL)
@given(data=st.data())
def test_batch_spec_lines(capsys, workdir, data):
    """A batch line, as JSON with fuzzed keys or as raw text: refused by read_specs in one line,
    or solved in-process by solve_spot into a done row or a failed row with one line."""
    from treeplex.errors import InputError
    from treeplex.scale.batch import read_specs, solve_spot

    if data.draw(st.booleans()):
        spot = {"game": "kuhn", "max_iters": 5}
        for key in data.draw(st.lists(st.sampled_from(sorted(SPOT_VALUES)), max_size=3, unique=True)):
            spot[key] = data.draw(st.sampled_from(SPOT_VALUES[key]))
        text = json.dumps(spot)
    else:
        text = "".join(data.draw(st.lists(st.sampled_from(WEIRD + ['{"game": "kuhn"', "\\ud800", "[]"]),
                                          max_size=6)))
    path = os.path.join(workdir, "specs.jsonl")
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
        f.write(text + "\n")
    try:
        spots = read_specs(path)
    except InputError as e:
        assert "\n" not in str(e) and str(e)
        return
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    try:
        row = solve_spot(spots[0].spec, workdir)
    except Hang:
        pytest.fail(f"hang: batch line {text!r}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert row["status"] in ("done", "failed")
    if row["status"] == "failed":
        assert row["error"] and "\n" not in row["error"]
    else:
        assert math.isfinite(row["value"]) and row["gap"] >= -1e-9


@pytest.fixture(scope="module")
def kuhn_solution(workdir):
    path = os.path.join(workdir, "kuhn_solution.json")
    assert main(["solve", "kuhn", "--out", path, "--no-strategies", "--json"]) == 0
    with open(path) as f:
        return json.load(f)


def _mutate(data, obj, depth=0):
    """``obj`` with some values (anywhere in it) replaced by bad ones."""
    if isinstance(obj, dict):
        return {k: (data.draw(st.sampled_from(BAD)) if data.draw(st.integers(0, 5)) == 0 else _mutate(data, v, depth + 1))
                for k, v in obj.items() if data.draw(st.integers(0, 12)) > 0}
    if isinstance(obj, list):
        return [_mutate(data, v, depth + 1) for v in obj]
    return obj


@settings(FUZZ, max_examples=SMALL)
@given(data=st.data())
def test_solution_files_for_view_and_show(capsys, workdir, kuhn_solution, data):
    """A solve --out file with keys dropped and values replaced: view --html and show exit 0 or 2."""
    sol = _mutate(data, kuhn_solution)
    if data.draw(st.booleans()):  # a minimal or broken poker solution
        sol["nodes"] = data.draw(st.sampled_from([[], [{}], [{"history": "", "actions": ["c"], "hands": {}}],
                                                  [{"history": "", "actions": ["c"], "hands": {"AsAh": ["x"]},
                                                    "weight": {"AsAh": float("nan")}}], "x", None]))
    path = os.path.join(workdir, "sol.json")
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
        json.dump(sol, f)
    for argv in (["view", path, "--html", os.path.join(workdir, "page.html")], ["show", path]):
        check_invariant(argv, *run(capsys, argv))
