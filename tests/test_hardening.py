"""Issue 18: bad input is refused in one line (exit 2), crafted files do not crash, results are not lost."""

import json

import pytest

from treeplex.cli import main
from treeplex.model.compile import compile_game
from treeplex.errors import GameError
from treeplex.model.game import ExplicitGame, chance, decision, terminal


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def refused(capsys, *argv, needle=""):
    """Run the CLI, assert a one-line refusal with exit 2 that contains ``needle``; return it."""
    code, _, err = run_cli(capsys, *argv)
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert needle in err, err
    return err


EFG = 'EFG 2 R "x" {{ "a" "b" }}\np "" 1 1 "i" {{ "l" "r" }} 0\nt "" 1 "o1" {{ {u} }}\nt "" 2 "o2" {{ -1 1 }}\n'
CHANCE_EFG = 'EFG 2 R "x" {{ "a" "b" }}\nc "" 1 "" {{ "h" {p} "t" 1/2 }} 0\nt "" 1 "o1" {{ 1 -1 }}\nt "" 2 "o2" {{ -1 1 }}\n'


# ------------------------------------------------------------ 1. non-finite numbers


@pytest.mark.parametrize("text, line", [
    (EFG.format(u="1 1e999"), 3),  # was accepted as zero-sum: u0 + u1 = inf never differs from inf
    (EFG.format(u="-1e999 1"), 3),
    (EFG.format(u="1 " + "9" * 400 + "/1"), 3),  # a fraction that overflows a float
    (CHANCE_EFG.format(p="1e999"), 2),
])
def test_efg_non_finite_refused_with_line(tmp_path, capsys, text, line):
    f = tmp_path / "g.efg"
    f.write_text(text)
    err = refused(capsys, "solve", f, needle=f"g.efg:{line}:")
    assert "not a finite number" in err


@pytest.mark.parametrize("payoff", [(1.0, float("inf")), (float("nan"), 1.0), float("inf"), float("nan")])
def test_rules_game_non_finite_payoff_refused(payoff):
    game = ExplicitGame(decision(0, "i", {"l": terminal(payoff), "r": terminal((-1.0, 1.0))}))
    with pytest.raises(GameError, match="not finite"):
        compile_game(game)


def test_rules_game_nan_probability_refused():
    game = ExplicitGame(chance([("h", float("nan"), terminal(1.0)), ("t", 0.5, terminal(-1.0))]))
    with pytest.raises(GameError, match="probability nan"):
        compile_game(game)


@pytest.mark.parametrize("text, needle", [
    ('{"pot": NaN, "board": "AsKd7h2c3s"}', "NaN is not finite"),
    ('{"pot": 1e999, "board": "AsKd7h2c3s"}', "1e999 is not finite"),
    ('{"pot": Infinity, "board": "AsKd7h2c3s"}', "Infinity is not finite"),
    ('{"pot": 100, "board": "AsKd7h2c3s", "range0": {"AA": -Infinity}}', "not finite"),
    ("[1, 2]", "is a JSON object"),
    ("{", "bad JSON"),
])
def test_json_spec_refused(tmp_path, capsys, text, needle):
    f = tmp_path / "spec.json"
    f.write_text(text)
    refused(capsys, "info", f, needle=needle)


@pytest.mark.parametrize("edit, needle", [
    (lambda s: s["player0"].__setitem__("J:", {"p": "x", "b": 0.5}), "not a number"),
    (lambda s: s["player0"].__setitem__("J:", [0.5, 0.5]), "expected {action: probability}"),
    (lambda s: s.__setitem__("player0", [1]), "not a strategy file"),
])
def test_warm_start_bad_values_refused(tmp_path, capsys, edit, needle):
    out = tmp_path / "k.json"
    assert main(["solve", "kuhn", "--out", str(out), "--no-strategies"]) == 0
    d = json.loads(out.read_text())
    edit(d["strategies"])
    out.write_text(json.dumps(d))
    refused(capsys, "solve", "kuhn", "--algorithm", "cfr+", "--max-iters", 5, "--warm-start", out, needle=needle)


def test_warm_start_nan_refused(tmp_path, capsys):
    f = tmp_path / "w.json"
    f.write_text('{"player0": {"J:": {"p": NaN, "b": 1}}, "player1": {}}')
    refused(capsys, "solve", "kuhn", "--algorithm", "cfr+", "--max-iters", 5, "--warm-start", f, needle="not finite")


def test_directory_as_game_file(tmp_path, capsys):
    refused(capsys, "info", tmp_path, needle="is a directory")


# ------------------------------------------------------------ 2. LP exactness


def _kuhn_with_payoff(tmp_path, big: str):
    """Kuhn with the first terminal's payoffs at (-big, big)."""
    text = (tmp_path / "kuhn.efg")
    assert main(["export", "kuhn", "-o", str(text)]) == 0
    s = text.read_text()
    t = s.replace('t "" 1 "" { -1, 1 }', f't "" 1 "" {{ -{big}, {big} }}', 1)
    assert t != s
    f = tmp_path / f"kuhn{big}.efg"
    f.write_text(t)
    return f


@pytest.mark.parametrize("big", ["1e12", "1e16"])
def test_lp_refuses_payoff_ranges_it_cannot_resolve(tmp_path, capsys, big):
    # was: 1e12 reported gap 0.056 as "exact"; 1e16 ended in exit 1 (HiGHS model error)
    refused(capsys, "solve", _kuhn_with_payoff(tmp_path, big), needle="the LP cannot resolve these payoffs")


def test_lp_large_payoffs_within_range_exact(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "solve", _kuhn_with_payoff(tmp_path, "1e8"), "--json", "--no-strategies")
    d = json.loads(out)
    assert code == 0 and d["stopped_by"] == "exact"
    assert d["gap"] <= 1e-9 * 1e8 / 6
    assert d["value"] == pytest.approx(d["br_value_player0"], abs=1e-9 * 1e8)


def test_lp_drops_unresolvable_entries_of_negligible_total(tmp_path, capsys):
    # 4e-9 beside payoffs of 1 to 2 (a ratio above 1e9): the depth-limited experiment's self-
    # generative subgames have one such computed leaf value among 61k entries of up to 83
    code, out, err = run_cli(capsys, "solve", _kuhn_with_payoff(tmp_path, "4e-10"), "--json", "--no-strategies")
    d = json.loads(out)
    assert code == 0 and d["stopped_by"] == "exact" and d["gap"] <= 1e-9, err
    zero = json.loads(run_cli(capsys, "solve", _kuhn_with_payoff(tmp_path, "0"), "--json", "--no-strategies")[1])
    assert abs(d["value"] - zero["value"]) <= 4e-10 / 6 + 1e-12  # moved by at most the dropped entry


def test_lp_ignores_rounding_residue(tmp_path, capsys):
    # a payoff of 1e-15 among payoffs of 1 (what a computed leaf value can leave instead of 0)
    code, out, err = run_cli(capsys, "solve", _kuhn_with_payoff(tmp_path, "1e-15"), "--json", "--no-strategies")
    d = json.loads(out)
    assert code == 0 and d["stopped_by"] == "exact" and d["gap"] <= 1e-9, err


def test_lp_never_exact_above_tolerance(monkeypatch):
    import treeplex.model.lp as lp
    from treeplex import make_game, solve

    calls = []
    real = lp._solve_side
    monkeypatch.setattr(lp, "_solve_side", lambda *a: calls.append(a[-1]) or real(*a))
    monkeypatch.setattr(lp, "EXACT_GAP", -1.0)  # no profile can meet it
    res = solve(compile_game(make_game("kuhn")), "lp")
    assert res.stopped_by == "lp-approximate"
    assert calls == [None, None, lp.TIGHT, lp.TIGHT]  # polished once with tight tolerances
    monkeypatch.setattr(lp, "EXACT_GAP", 1e-9)
    assert solve(compile_game(make_game("kuhn")), "lp").stopped_by == "exact"


# ------------------------------------------------------------ 3, 5. checkpoints


@pytest.fixture
def checkpoint(tmp_path, capsys):
    """A CFR+ checkpoint of Leduc after 50 iterations, and its arrays."""
    import numpy as np

    path = tmp_path / "ck.npz"
    assert main(["solve", "leduc", "--algorithm", "cfr+", "--max-iters", "50", "--checkpoint", str(path),
                 "--no-strategies"]) == 0
    capsys.readouterr()
    with np.load(path) as data:
        return path, dict(data)


def _meta_edit(key, value):
    def edit(d):
        meta = json.loads(str(d["meta"]))
        *parents, last = key.split(".")
        target = meta
        for k in parents:
            target = target[k]
        if value is KeyError:
            del target[last]
        else:
            target[last] = value
        d["meta"] = __import__("numpy").array(json.dumps(meta))
    return edit


def _array_edit(name, make):
    def edit(d):
        if make is KeyError:
            del d[name]
        else:
            d[name] = make(d[name])
    return edit


def _nan_at_3(a):
    a = a.copy()
    a[3] = float("nan")
    return a


@pytest.mark.parametrize("edit, needle", [
    (_array_edit("state/R0", lambda a: a[:10]), "state/R0 is float64 (10,), expected float64 (337,)"),  # was SIGSEGV
    (_array_edit("state/R0", lambda a: a.repeat(1000)), "state/R0 is float64 (337000,)"),
    (_array_edit("state/xsum0", _nan_at_3), "state/xsum0 has non-finite entries"),
    (_array_edit("state/R1", KeyError), "fields ['R1'] missing"),
    (_array_edit("state/R0", lambda a: a.astype("float32")), "is float32"),
    (_array_edit("state/R0", lambda a: a.astype("int64")), "is int64"),
    (_array_edit("state/logprior1", lambda a: a.repeat(5)[:5] if len(a) else __import__("numpy").zeros(5)),
     "state/logprior1 is float64 (5,)"),
    (_meta_edit("scalars.iteration", -3), "'iteration' is -3"),
    (_meta_edit("scalars.iteration", "7"), "'iteration' is '7'"),
    (_meta_edit("scalars.epoch", None), "'epoch' is None"),
    (_meta_edit("scalars.gradients", True), "'gradients' is True"),
    (_meta_edit("driver", KeyError), "'driver' is missing"),
    (_meta_edit("driver.trace", 5), "driver.trace"),
    (_meta_edit("driver.seconds", -1), "driver.seconds"),
    (_meta_edit("params", [1]), "'params' is missing or not a dict"),
    (_meta_edit("version", 1), "format version 1, expected 3"),
    (_meta_edit("problem.treeplexes_sha256", "0" * 64), "checkpoint is for"),
    (_meta_edit("problem.payoff_probe", 1.5), "checkpoint is for"),
])
def test_damaged_checkpoint_refused(tmp_path, capsys, checkpoint, edit, needle):
    import numpy as np

    _, arrays = checkpoint
    edit(arrays)
    bad = tmp_path / "bad.npz"
    np.savez(bad, **arrays)
    refused(capsys, "solve", "leduc", "--resume", bad, "--no-strategies", needle=needle)


def test_broken_checkpoint_files_refused(tmp_path, capsys, checkpoint):
    import numpy as np

    path, arrays = checkpoint
    raw = path.read_bytes()
    cases = {"empty.npz": b"", "half.npz": raw[: len(raw) // 2], "text.npz": b"hello"}
    for k in range(0, len(raw), max(1, len(raw) // 40)):  # a bit flipped every 2.5% of the file
        flipped = bytearray(raw)
        flipped[k] ^= 0x10
        cases[f"flip{k}.npz"] = bytes(flipped)
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    np.save(tmp_path / "R0.npy", arrays["state/R0"])
    for name in [*cases, "R0.npy"]:
        code, out, err = run_cli(capsys, "solve", "leduc", "--resume", tmp_path / name, "--json", "--no-strategies")
        assert code in (0, 2) and "Traceback" not in err, (name, err)
        if code == 2:
            assert err.count("\n") == 1 and "not a treeplex checkpoint" in err or "checkpoint" in err, (name, err)
        else:  # a flip the format does not see (e.g. a zip timestamp): the state passed every check
            assert json.loads(out)["iterations"] == 1000
    refused(capsys, "solve", "leduc", "--resume", tmp_path / "R0.npy", needle="a single .npy array")
    refused(capsys, "solve", "leduc", "--resume", tmp_path / "empty.npz", needle="not a treeplex checkpoint")
    refused(capsys, "solve", "leduc", "--resume", tmp_path, needle="is a directory")


@pytest.mark.parametrize("argv, needle", [
    (["--algorithm", "dcfr"], "is a checkpoint of 'cfr+', not of 'dcfr'"),
    (["--param", "alternating=false"], "was run without alternating"),
    (["--algorithm", "cfr+", "--param", "prior_weight=3"], "was run without prior_weight"),
])
def test_resume_with_other_algorithm_or_params_refused(capsys, checkpoint, argv, needle):
    path, _ = checkpoint
    refused(capsys, "solve", "leduc", "--resume", path, *argv, needle=needle)


def test_resume_with_same_algorithm_runs(capsys, checkpoint):
    path, _ = checkpoint
    code, out, _ = run_cli(capsys, "solve", "leduc", "--resume", path, "--algorithm", "cfr+", "--max-iters", 60,
                           "--json", "--no-strategies")
    assert code == 0 and json.loads(out)["iterations"] == 60


def test_checkpoint_carries_dict_state(tmp_path):
    """A JSON-able dict in a solver's state (a numpy Generator's ``bit_generator.state``,
    with 128-bit integers) comes back from a checkpoint as the same dict, beside arrays and numbers."""
    import math

    import numpy as np

    from treeplex import make_game
    from treeplex.run.checkpoint import load_checkpoint, save_checkpoint

    problem = compile_game(make_game("kuhn"))
    rng = np.random.default_rng(7)
    rng.random(3)
    state = {"w": np.arange(4.0), "iteration": np.int64(3), "rng": rng.bit_generator.state}
    path = str(tmp_path / "ck.npz")
    save_checkpoint(path, problem, "fake", {}, state,
                    {"trace": [], "seconds": 0.0, "check_seconds": 0.0, "restart_gap": math.inf})
    _, _, loaded, _ = load_checkpoint(path, problem)
    assert set(loaded) == {"w", "iteration", "rng"} and loaded["iteration"] == 3
    assert np.array_equal(loaded["w"], state["w"]) and loaded["rng"] == state["rng"]
    again = np.random.default_rng()
    again.bit_generator.state = loaded["rng"]
    assert again.random(5).tolist() == rng.random(5).tolist()


def test_checkpoint_targets_refused(tmp_path, capsys):
    import os

    real = tmp_path / "real.npz"
    real.write_bytes(b"keep")
    link = tmp_path / "link.npz"
    link.symlink_to(real)
    base = ["solve", "kuhn", "--algorithm", "cfr+", "--max-iters", 5, "--checkpoint"]
    refused(capsys, *base, "/dev/full", needle="is not a regular file")  # was: /dev/full replaced by a file
    assert not os.path.isfile("/dev/full")
    refused(capsys, *base, link, needle="symbolic link")
    assert link.is_symlink() and real.read_bytes() == b"keep"
    refused(capsys, *base, tmp_path, needle="is a directory")
    refused(capsys, *base, tmp_path / "no" / "ck.npz", needle="no such directory")


def test_checkpoint_write_is_atomic_and_cleans_up(tmp_path, monkeypatch):
    import os

    import numpy as np

    from treeplex.io import files

    target = tmp_path / "ck.npz"
    stale = [tmp_path / "ck.npz.tmp", tmp_path / "ck.npz.999999999.x1y2.tmp"]  # old fixed name; dead process
    live = tmp_path / f"ck.npz.{os.getpid()}.abcd.tmp"  # a writer that is still running
    for f in [*stale, live]:
        f.write_bytes(b"partial")
    assert main(["solve", "kuhn", "--algorithm", "cfr+", "--max-iters", "5", "--checkpoint", str(target),
                 "--no-strategies"]) == 0
    assert not any(f.exists() for f in stale) and live.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["ck.npz", live.name])
    before = target.read_bytes()
    synced, names = [], []
    import tempfile

    real_fsync, real_mkstemp = os.fsync, tempfile.mkstemp
    monkeypatch.setattr(files.os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    monkeypatch.setattr(tempfile, "mkstemp",
                        lambda **kw: names.append(kw) or real_mkstemp(**kw))

    def fail(f):
        f.write(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        files.atomic_write(str(target), fail)
    assert target.read_bytes() == before  # untouched
    assert names[0]["dir"] == str(tmp_path) and names[0]["prefix"] == f"ck.npz.{os.getpid()}."
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["ck.npz", live.name])  # no temporary left
    files.atomic_write(str(target), lambda f: np.save(f, np.zeros(3)))
    assert len(synced) == 2  # the file, then its directory


# ------------------------------------------------------------ 4. output files


@pytest.mark.parametrize("flag", ["--out", "--trace"])
def test_output_paths_checked_before_solving(tmp_path, capsys, monkeypatch, flag):
    import treeplex.run.driver as driver

    monkeypatch.setattr(driver, "solve", lambda *a, **k: pytest.fail("solved before checking the output path"))
    base = ["solve", "leduc", "--algorithm", "cfr+", "--max-iters", 10]
    refused(capsys, *base, flag, tmp_path / "no" / "s.json", needle="no such directory")
    refused(capsys, *base, flag, tmp_path, needle="is a directory")
    game = tmp_path / "g.efg"
    assert main(["export", "kuhn", "-o", str(game)]) == 0
    text = game.read_text()
    refused(capsys, "solve", game, flag, game, needle="is the game file")
    assert game.read_text() == text
    refused(capsys, "solve", game, "--algorithm", "cfr+", "--max-iters", 5, "--checkpoint", game,
            needle="--checkpoint " + str(game) + " is the game file")
    assert game.read_text() == text
    other = {"--out": "--trace", "--trace": "--out"}[flag]
    refused(capsys, "solve", "kuhn", flag, tmp_path / "x", other, tmp_path / "x", needle="it would be overwritten")
    refused(capsys, "solve", "kuhn", "--algorithm", "cfr+", "--max-iters", 5, "--checkpoint", tmp_path / "c.npz",
            flag, tmp_path / "c.npz", needle="is the --checkpoint file")


def test_failed_write_prints_result_and_names_file(tmp_path, capsys):
    out = tmp_path / "s.json"
    code, stdout, err = run_cli(capsys, "solve", "kuhn", "--algorithm", "cfr+", "--max-iters", 20, "--json",
                                "--no-strategies", "--trace", "/dev/full", "--out", out)
    assert code == 2 and err.count("\n") == 1 and "cannot write /dev/full" in err
    assert json.loads(stdout)["iterations"] == 20  # the result is not lost
    assert json.loads(out.read_text())["algorithm"] == "cfr+"  # the trace failure did not stop --out


# ------------------------------------------------------------ 6. sizes before memory runs out


def test_history_estimate_matches_the_compiled_games():
    from treeplex import make_game
    from treeplex.core.memory import estimate_histories

    for spec in ("kuhn", "leduc(suited=True)", "nlfh(ranks=3, suits=4, hole=1, flop=1, stack=300, bets='1')"):
        n, exact = estimate_histories(make_game(spec))
        assert exact and n == compile_game(make_game(spec)).stats["histories"], spec
    # dealt by rank, a pair leaves fewer ranks to deal: the likeliest deal's count is high by a little
    for spec, rel in (("leduc(ranks=5)", 0.05), ("nlfh(ranks=4, suits=2, hole=1, flop=1, stack=500)", 0.1)):
        n, _ = estimate_histories(make_game(spec))
        assert n == pytest.approx(compile_game(make_game(spec)).stats["histories"], rel=rel)


@pytest.mark.parametrize("argv, needle", [
    (["info", "leduc(ranks=1000)"], "leduc(ranks=1000): at least"),  # was: grew past 3 GB
    (["info", "nlfh"], "histories, about"),  # was: never finished
    (["solve", "leduc(ranks=40)", "--max-memory", "100M"], "above 100 MB (--max-memory)"),
    (["info", "leduc", "--max-memory", "10K"], "leduc: at least "),
    (["info", "leduc", "--max-memory", "lots"], "--max-memory must be a size"),
    (["info", "leduc", "--max-memory", "0"], "--max-memory must be a size"),
    (["solve", "kuhn", "--algorithm", "lp", "--max-memory", "10K"], "the LP needs about"),
])
def test_oversized_refused_with_estimate(capsys, argv, needle):
    refused(capsys, *argv, needle=needle)


def test_no_algorithm_and_lp_too_large_picks_iterative(capsys):
    code, out, _ = run_cli(capsys, "solve", "kuhn", "--max-memory", "10K", "--json", "--no-strategies")
    d = json.loads(out)
    assert code == 0 and d["algorithm"] == "pdcfr+" and d["iterations"] == 1000
    assert "the LP needs about" in d["note"] and "solved by pdcfr+ instead" in d["note"]
    code, out, _ = run_cli(capsys, "solve", "kuhn", "--max-memory", "10K", "--no-strategies")
    assert "note            the LP needs about" in out


def test_memory_capped_process_refuses_before_allocating():
    # 2 GiB of address space: leduc(ranks=100) (~9 GB to build) must be refused from its estimate,
    # not die in a MemoryError half-way; the limit itself lowers the default --max-memory
    import os
    import resource
    import subprocess
    import sys

    import treeplex

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))

    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(treeplex.__file__))}
    r = subprocess.run([sys.executable, "-m", "treeplex.cli", "info", "leduc(ranks=100)"], preexec_fn=cap,
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert r.stderr.count("\n") == 1 and "histories, about" in r.stderr and "available memory" in r.stderr


# ------------------------------------------------------------ B. refusals that are one line, exit 2


@pytest.mark.parametrize("argv, needle", [
    # was a traceback
    (["depth-limited", "--game", "nlfh(foo=1)"], "unexpected keyword argument 'foo'"),
    (["depth-limited", "--game", "nlfh(stack='x')"], "stack must be a finite number"),
    # was exit 1
    (["info", "river(board=Qs9h7d4c2s,stack=1e308)"], "stack must be a positive number of chips up to"),
    (["solve", "kuhn", "--algorithm", "dcfr", "--param", "alpha=x"], "alpha must be a finite number"),
    # were hangs
    (["solve", "kuhn", "--target", "-1"], "--target '-1': must be a finite number > 0"),
    (["solve", "kuhn", "--target", "nan"], "--target 'nan': must be a finite number > 0"),
    (["solve", "kuhn", "--target", "0", "--algorithm", "cfr+"], "--target '0': must be a finite number > 0"),
    (["solve", "kuhn", "--time-limit", "nan"], "--time-limit) must be a positive number"),
    # were accepted
    (["solve", "kuhn", "--max-iters", "-5"], "--max-iters) must be a positive whole number"),
    (["solve", "kuhn", "--time-limit", "-1"], "--time-limit) must be a positive number"),
    (["solve", "kuhn", "--max-iters", "5", "--check-every", "0"], "--check-every) must be a positive"),
    (["solve", "kuhn", "--algorithm", "dcfr", "--param", "alpha=nan"], "alpha must be a finite number"),
    (["solve", "kuhn", "--algorithm", "dcfr", "--param", "alpha=-1"], "alpha must be a finite number >= 0"),
    (["solve", "kuhn", "--algorithm", "pdcfr+", "--param", "gamma=1e999"], "gamma must be a finite number"),
    (["solve", "kuhn", "--algorithm", "cfr+", "--param", "alternating=maybe"], "alternating must be true or false"),
    (["solve", "kuhn", "--algorithm", "cfr+", "--param", "alternating=[1,2]"], "alternating must be true or false"),
    (["solve", "kuhn", "--algorithm", "cfr+", "--param", "prior_weight=-2"], "prior_weight must be"),
    (["depth-limited", "--k", "0"], "--k must be at least 1"),
    (["depth-limited", "--k", "-1"], "--k must be at least 1"),
    (["depth-limited", "--bet", "nan"], "--bet must be a positive pot fraction"),
    (["solve", "kuhn", "--algorithm", ""], "unknown algorithm ''"),
    (["info", "leduc(suited='yes')"], "suited must be true or false"),
    (["info", "leduc(ranks=3, ranks=4)"], "'ranks' is given twice"),
    (["info", "river(board=7h2cAsKd3s,board=7h2cAsKd3s)"], "'board' is given twice"),
    (["info", "river(board=Qs9h7d4c2s,first=0.0)"], "first must be 0 or 1"),
    (["info", "leduc(ranks={[]: 1})"], "ranks must be a finite number"),
    (["info", "leduc(**x)"], "must be key=value"),
    # argparse: one line and a pointer to --help
    (["solve", "kuhn", "--report", "bogus"], "(see treeplex solve --help)"),
    (["solve"], "(see treeplex solve --help)"),
    ([], "(see treeplex --help)"),
    (["depth-limited", "--bogus"], "(see treeplex depth-limited --help)"),
])
def test_refused_in_one_line(capsys, argv, needle):
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's exit
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert needle in err, err


def test_target_alone_is_capped(monkeypatch):
    import treeplex.run.driver as driver
    import treeplex.run.schedule as schedule
    from treeplex import make_game

    assert schedule.TARGET_ONLY_ITERS == 1_000_000  # as the --target help says
    monkeypatch.setattr(schedule, "TARGET_ONLY_ITERS", 500)
    res = driver.solve(compile_game(make_game("rps_plus")), "cfr+", target_gap=1e-300)  # never met
    assert res.stopped_by == "max_iters" and res.iterations == 500


def test_plot_refusals(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    assert main(["solve", "kuhn", "--algorithm", "cfr+", "--max-iters", "20", "--trace", str(trace),
                 "--no-strategies"]) == 0
    capsys.readouterr()
    refused(capsys, "plot", trace, "-o", tmp_path / "x.unknownext", needle="cannot draw a .unknownext")
    refused(capsys, "plot", trace, "-o", trace, needle="is a trace to draw")
    nan = tmp_path / "nan.csv"
    nan.write_text("iteration,gradients,gap_average\n1,2,nan\n")
    refused(capsys, "plot", nan, "-o", tmp_path / "x.png", needle="no positive finite gap")


# ------------------------------------------------------------ issue 31: batches, split solves, Ray addresses


def _closed_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("address, needle", [
    ("garbage", "expected auto, HOST:PORT"), ("ray://", "expected auto, HOST:PORT"),
    ("ray://x:99999", "port 1..65535"), ("h:0", "port 1..65535"), ("CLOSED", "no Ray cluster answers there"),
    ("ray://CLOSED", "no Ray cluster answers there")])
@pytest.mark.parametrize("command", ["batch", "split-solve"])
def test_ray_addresses_are_refused_before_ray_starts(tmp_path, capsys, command, address, needle):
    """Checked before Ray is imported (it is not installed in the dev venv: this is the path
    that needs no cluster); ray.init used to retry 127.0.0.1:1 for minutes."""
    address = address.replace("CLOSED", f"127.0.0.1:{_closed_port()}")
    if command == "batch":
        specs = tmp_path / "s.jsonl"
        specs.write_text('{"game": "kuhn"}\n')
        argv = ["batch", specs, "--db", tmp_path / "r.sqlite"]
    else:
        spec = tmp_path / "spot.json"
        spec.write_text(json.dumps({"board": "KsQh9d8c", "deck": "89TJQKA", "pot": 20, "stack": 30}))
        argv = ["split-solve", spec]
    refused(capsys, *argv, "--engine", "ray", "--address", address, needle=needle)
    assert not (tmp_path / "r.sqlite").exists()


def test_lazy_honors_the_ranges(capsys):
    """--lazy with --range0/--range1 solves the game with those ranges (it used to drop them
    and solve the full-range river): its table never holds more infosets per player than the
    compiled game with the ranges has (counted by ``info``, another code path)."""
    game = "river(pot=100,board=AsKd7h2c3s)"
    ranges = ["--range0", "AA,KK", "--range1", "QQ,JJ"]
    code, out, err = run_cli(capsys, "info", game, *ranges, "--json")
    assert code == 0, err
    compiled = json.loads(out)["infosets"]
    code, out, err = run_cli(capsys, "solve", game, *ranges, "--lazy", "--max-iters", "200", "--param",
                             "evaluation=sampled", "--param", "br_iters=5", "--param", "playouts=5", "--json")
    assert code == 0, err
    seen = json.loads(out)["memory"]["infosets_per_player"]
    assert 0 < seen[0] <= compiled[0] and 0 < seen[1] <= compiled[1]


@pytest.mark.parametrize("param, needle", [("playouts=0", "playouts must be a whole number >= 1"),
                                           ("br_iters=-5", "br_iters must be a whole number >= 1"),
                                           ("br_iters=1.5", "br_iters must be a whole number >= 1"),
                                           ("report_every=0", "report_every must be a number of seconds > 0"),
                                           ("report_every=-1", "report_every must be a finite number >= 0")])
def test_lazy_parameters_are_refused(capsys, param, needle):
    refused(capsys, "solve", "kuhn", "--lazy", "--max-iters", "5", "--param", param, needle=needle)


def test_openspiel_parameters_that_break_the_first_state_are_refused(capsys):
    pytest.importorskip("pyspiel")
    refused(capsys, "info", "openspiel:liars_dice(numdice=-1)", needle="OpenSpiel cannot start 'liars_dice(numdice=-1)'")


BASE_SPEC = {"game": "postflop", "board": "KsQh9d", "pot": 10, "stack": 100}


@pytest.mark.parametrize("change, needle", [
    ({"board": 12345}, "board: expected card text such as 'QsJh2h', got 12345"),
    ({"range0": [[1, 2], [3]]}, "range0: expected a range string, a dict or 1326 numbers"),
    ({"range1": ["a", "b"]}, "range1: expected a range string, a dict or 1326 numbers"),
    ({"bet": "1e308%"}, "size '1e308%' is above"),
    ({"bet": "50%", "raise": "1e308x"}, "size '1e308x' is above"),
    ({"bet": "1e13c"}, "size '1e13c' is above")])
def test_postflop_spec_values_are_refused(tmp_path, capsys, change, needle):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({**BASE_SPEC, **change}))
    refused(capsys, "info", path, "--max-memory", "1G", needle=needle)


@pytest.mark.parametrize("command", ["info", "view"])
def test_deeply_nested_json_is_refused(tmp_path, capsys, command):
    path = tmp_path / "deep.json"
    path.write_text('{"game": "postflop", "x": ' + "[" * 5000 + "]" * 5000 + "}")
    refused(capsys, command, path, *(["--html", tmp_path / "o.html"] if command == "view" else []),
            needle="JSON nested too deeply")
