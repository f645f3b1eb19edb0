"""Hardening of the surfaces of nlfh52, node locks and what-ifs, compression=16 and the
memory estimate by path: each bad input is refused in one line (exit 2) naming the problem
and where; a file read back that does not belong to the run is refused, never used."""

import copy
import json

import pytest

from test_hardening import refused, run_cli

SPOT = dict(board="AhKd7c2s9h", pot=20, stack=20, range0="AA,KK,QQ,AK,KQ,JT", range1="AA,KK,QQ,AQ,JJ,T9",
            bet="50%", deck="9TJQKA27", **{"raise": "2x"})
FREQ = "x:1:freq:x=0.3,b10=0.2,b20=0.5"


# ------------------------------------------------------------ --baseline FILE is checked against the spot


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """(folder, the unlocked spot's ``solve --out`` file as a dict); spots of other ranges
    with the same name solved beside it."""
    from treeplex.cli import main

    d = tmp_path_factory.mktemp("baseline")
    for name, spot in (("base", SPOT), ("more", {**SPOT, "range1": SPOT["range1"] + ",99"}),
                       ("fewer", {**SPOT, "range1": "AA,KK,QQ,AQ,JJ"}),
                       ("weighted", {**SPOT, "range1": "AA:0.5,KK,QQ,AQ,JJ,T9"}),
                       ("fewer0", {**SPOT, "range0": "AA,KK,QQ,AK,KQ"})):
        (d / f"{name}.json").write_text(json.dumps({"game": "postflop", **spot}))
        if name != "base":
            assert main(["solve", str(d / f"{name}.json"), "--out", str(d / f"{name}_out.json"), "--json"]) == 0
    assert main(["solve", str(d / "base.json"), "--out", str(d / "base_out.json"), "--json"]) == 0
    return d, json.loads((d / "base_out.json").read_text())


def _node(data, history):
    return next(n for n in data["nodes"] if n["history"] == history)


@pytest.mark.parametrize("edit, needle", [
    # each was a traceback (KeyError, TypeError, AttributeError, ValueError)
    (lambda e: _node(e, "x").pop("weight"), "node 1 ('x'): 'weight' must map hands to range weights"),
    (lambda e: _node(e, "x").__setitem__("weight", [1, 2]), "'weight' must map hands to range weights"),
    (lambda e: _node(e, "x")["weight"].__setitem__("AdAc", "x"), "hand AdAc: weight 'x' is not a finite number"),
    (lambda e: e.__setitem__("value", "abc"), "value 'abc' is not a finite number"),
    (lambda e: e.__setitem__("gap", "abc"), "gap 'abc' is not a finite number"),
    # each was used: a silently different spread or EV gain; the zero row hung the LP on NaN
    (lambda e: _node(e, "x")["hands"].__setitem__("AdAc", [0, 0, 0]), "hand AdAc: probabilities sum to 0"),
    (lambda e: _node(e, "x")["weight"].__setitem__("AdAc", float("nan")), "hand AdAc: weight nan"),
    (lambda e: _node(e, "x")["weight"].__setitem__("AdAc", -5.0), "hand AdAc: weight -5.0"),
    (lambda e: e.__setitem__("value", float("nan")), "value nan is not a finite number"),
    (lambda e: e.__setitem__("value", True), "value True is not a finite number"),
    (lambda e: _node(e, "x")["hands"].__setitem__("2c2d", [1, 0, 0]), "hand 2c2d is not in player 1's range"),
    (lambda e: e["nodes"].append(copy.deepcopy(_node(e, "x"))), "node 8 ('x'): written twice"),
    (lambda e: e["sizes"]["river"][0].__setitem__("bet", "75%"), "bet sizes"),
    (lambda e: e.__setitem__("pot", 99), "pot 99, this spot 20.0: not the same spot"),
    (lambda e: _node(e, "x").__setitem__("player", 0), "player 0 with actions"),
])
def test_corrupt_baseline_refused(baseline, capsys, edit, needle):
    d, data = baseline
    bad = copy.deepcopy(data)
    edit(bad)
    f = d / "bad.json"
    f.write_text(json.dumps(bad))  # json writes NaN as NaN, as a hand-edited file may
    refused(capsys, "solve", d / "base.json", "--lock", FREQ, "--baseline", f, needle=needle)


@pytest.mark.parametrize("other, needle", [
    ("more", "hand 9d9c is not in player 1's range here"),
    ("fewer", "node 1 ('x'): player 1's range weights differ from this spot's"),
    ("weighted", "player 1's range weights differ"),
    ("fewer0", "node 0 ('root'): player 0's range weights differ"),
])
def test_baseline_of_another_spot_with_the_same_name_refused(baseline, capsys, other, needle):
    """The name postflop(board, pot, stack) leaves the ranges out: a solve of other ranges was
    taken as the baseline (another EV gain, another spread), for frequency and plain locks."""
    d, data = baseline
    f = d / f"{other}_out.json"
    assert json.loads(f.read_text())["game"] == data["game"]
    refused(capsys, "solve", d / "base.json", "--lock", FREQ, "--baseline", f, needle=needle)
    refused(capsys, "solve", d / "base.json", "--lock", "x:1:x=0.8,b10=0.2", "--baseline", f, needle=needle)


def test_the_spot_own_baseline_still_read(baseline, capsys):
    """The checks pass the file of the spot itself; the spread from it equals the one solved
    in process (same locked value)."""
    d, data = baseline
    code, out, err = run_cli(capsys, "solve", d / "base.json", "--lock", FREQ, "--baseline", d / "base_out.json",
                             "--json", "--no-strategies")
    assert code == 0, err
    a = json.loads(out)
    code, out, err = run_cli(capsys, "solve", d / "base.json", "--lock", FREQ, "--json", "--no-strategies")
    assert code == 0, err
    assert a["value"] == pytest.approx(json.loads(out)["value"], abs=1e-4)
    assert a["baseline"]["value"] == data["value"]


# ------------------------------------------------------------ checkpoints of the fused engine

SHORT52 = "nlfh52(stack=300, flops=S2, bets=1,a, deck=JcJdQcQdKcKdAcAd)"  # fused 23 KB, sequence form 76 KB


def test_fused_checkpoint_makes_no_sequence_form(tmp_path, capsys, monkeypatch):
    """A run the fused engine takes by size (fused=None), with --checkpoint under a
    --max-memory the sequence form passes: was refused at the first checkpoint ("the sequence
    form needs about ..."), saving the state made the sequence form's backend."""
    from treeplex.poker import postflop

    monkeypatch.setattr(postflop, "FUSED_MIN_SEQS", 10)
    ck = tmp_path / "run.npz"
    args = ["solve", SHORT52, "--algorithm", "dcfr", "--max-memory", "50K", "--no-strategies", "--json"]
    code, out, err = run_cli(capsys, *args, "--max-iters", "3", "--checkpoint", ck)
    assert code == 0, err
    code, out, err = run_cli(capsys, *args, "--max-iters", "6", "--resume", ck)
    assert code == 0, err
    resumed = json.loads(out)
    code, out, err = run_cli(capsys, *args, "--max-iters", "6")
    straight = json.loads(out)
    assert resumed["iterations"] == 6 and resumed["gap"] == pytest.approx(straight["gap"], rel=1e-6)
    # the sequence form itself is still refused under that limit
    refused(capsys, *args, "--max-iters", "3", "--param", "fused=false", needle="the sequence form needs about")


@pytest.fixture(scope="module")
def compressed_checkpoint(tmp_path_factory):
    from treeplex.cli import main

    ck = tmp_path_factory.mktemp("ck") / "c16.npz"
    assert main(["solve", SHORT52, "--algorithm", "dcfr", "--param", "fused=true", "--param", "compression=16",
                 "--max-iters", "5", "--checkpoint", str(ck), "--no-strategies", "--json"]) == 0
    return ck


@pytest.mark.parametrize("field, edit, needle", [
    ("scale0", lambda a: -a, "state/scale0 has negative entries"),  # was resumed with flipped regrets
    ("root1", lambda a: a - 2 * a.max() - 1, "state/root1 has negative entries"),
    ("scale1", lambda a: a[:, 1:], "state/scale1 is float64"),
    ("scale0", lambda a: a.astype("float32"), "expected float64"),
    ("R0", lambda a: a.astype("int32"), "state/R0 is int32"),
])
def test_corrupt_compressed_checkpoint_refused(compressed_checkpoint, tmp_path, capsys, field, edit, needle):
    import numpy as np

    data = dict(np.load(compressed_checkpoint))
    assert data[f"state/{field}"].size and data["state/R0"].dtype == np.int16
    data[f"state/{field}"] = edit(data[f"state/{field}"])
    bad = tmp_path / "bad.npz"
    np.savez(bad, **data)
    refused(capsys, "solve", SHORT52, "--max-iters", "8", "--resume", bad, needle=needle)


def test_compressed_checkpoint_resumed_only_compressed(compressed_checkpoint, capsys):
    refused(capsys, "solve", SHORT52, "--max-iters", "8", "--resume", compressed_checkpoint, "--param",
            "compression=0", needle="was run with compression=16, not with compression=0")
    code, out, err = run_cli(capsys, "solve", SHORT52, "--max-iters", "8", "--resume", compressed_checkpoint,
                             "--json", "--no-strategies")
    assert code == 0 and json.loads(out)["iterations"] == 8, err


# ------------------------------------------------------------ nlfh52 parameters

DECK8 = "deck=JcJdQcQdKcKdAcAd"


def test_nlfh52_one_bet_size_as_a_number():
    """``bets=1`` (the name parser reads a number) was refused: "bets must be pot fractions such
    as '0.5,1,a', got 1"; it is the one size, as the text '1' or the list [1]."""
    from treeplex.games import make_game
    from treeplex.poker.nlfh52 import NLFH52

    for x in ("1", "0.5"):
        g = make_game(f"nlfh52(stack=300, flops=S2, {DECK8}, bets={x})")
        ref = NLFH52(stack=300, flops="S2", deck="JcJdQcQdKcKdAcAd", bets=[float(x)])
        assert g.bets == ref.bets == ((float(x),), (float(x),)) and g.sizes() == ref.sizes()


@pytest.mark.parametrize("value", ["1.5", "true", "abc"])
def test_nlfh52_max_raises_must_be_a_whole_number(capsys, value):
    # 1.5 and true were taken (n_raises < 1.5: two raises; True: one) under a name that said otherwise
    refused(capsys, "info", f"nlfh52(stack=300, flops=S2, {DECK8}, max_raises={value})", "--count",
            needle="max_raises must be a whole number >= 1 or None")


# ------------------------------------------------------------ lock specs


@pytest.mark.parametrize("lock, needle", [
    ({"node": "x", "player": 1.0, "strategy": {"x": 1}}, "player must be 0 (OOP) or 1 (IP), got 1.0"),  # was TypeError
    ({"node": "x", "player": 1, "frequency": {"x": True}}, "frequency['x'] must be a probability"),  # was 1.0
    ({"node": "x", "player": 1, "strategy": {"x": 1}, "hands": ""}, "locks[0]: hands must be range text"),
])
def test_bad_lock_in_the_spec_refused(tmp_path, capsys, lock, needle):
    f = tmp_path / "spot.json"
    f.write_text(json.dumps({"game": "postflop", **SPOT, "locks": [lock]}))
    refused(capsys, "solve", f, needle=needle)


@pytest.mark.parametrize("text, needle", [
    ("x:1:x=0.5,b10=0.5,x=0.5", "action 'x' is given twice"),  # was x=0.5, b10=0.5: the first x dropped
    ("x:1:freq:x=0.5,x=0.5", "action 'x' is given twice"),
    ("x:1:x=1:", "locks[0]: hands must be range text"),  # was "range is empty", with no where
])
def test_bad_lock_text_refused(tmp_path, capsys, text, needle):
    f = tmp_path / "spot.json"
    f.write_text(json.dumps({"game": "postflop", **SPOT}))
    refused(capsys, "solve", f, "--lock", text, needle=needle)


# ------------------------------------------------------------ what-if records in view and report

LOCK = {"node": "x", "player": 1, "strategy": {"x": 0.8, "b10": 0.2}}


@pytest.fixture(scope="module")
def locked_out(baseline):
    from treeplex.cli import main

    d = baseline[0]
    (d / "locked.json").write_text(json.dumps({"game": "postflop", **SPOT, "locks": [LOCK]}))
    assert main(["solve", str(d / "locked.json"), "--out", str(d / "locked_out.json"), "--json"]) == 0
    return d, json.loads((d / "locked_out.json").read_text())


WHATIF_EDITS = [  # each was a traceback in view (KeyError, TypeError, AttributeError) or a NaN row
    (lambda e: e.pop("baseline"), "a locked solve's baseline must be an object"),
    (lambda e: e.__setitem__("baseline", "x"), "a locked solve's baseline must be an object"),
    (lambda e: e.__setitem__("lock_ev_gain", "x"), "lock_ev_gain must hold chips"),
    (lambda e: e["lock_ev_gain"].__setitem__("chips", [1]), "lock_ev_gain must hold chips"),
    (lambda e: e["lock_ev_gain"].__setitem__("chips", [float("nan"), 1.0]), "lock_ev_gain must hold chips"),
    (lambda e: e["lock_ev_gain"].pop("error_bound_chips"), "lock_ev_gain must hold chips"),
    (lambda e: e.__setitem__("big_blind", "x"), "big_blind 'x' is not a finite number >= 0"),
    (lambda e: e.__setitem__("pot", "x"), "pot 'x' is not a finite number >= 0"),
]


@pytest.mark.parametrize("edit, needle", WHATIF_EDITS)
def test_view_refuses_a_bad_whatif_record(locked_out, tmp_path, capsys, edit, needle):
    d, data = locked_out
    bad = copy.deepcopy(data)
    edit(bad)
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad))
    refused(capsys, "view", f, "--html", tmp_path / "o.html", needle=needle)
    refused(capsys, "view", d / "base_out.json", "--compare", f, "--html", tmp_path / "o.html", needle=needle)


def test_view_compares_values_of_one_game_only(locked_out, tmp_path):
    """'A minus B' is a difference of one game's values: between two boards it was drawn as
    an EV gain."""
    from treeplex.viewer import whatif_rows

    d, data = locked_out
    base = json.loads((d / "base_out.json").read_text())
    rows = whatif_rows([data, base], ["a", "b"])
    assert [r["what"] for r in rows][1] == "A (a) minus B (b)"
    assert rows[1]["chips"][0] == pytest.approx(data["value"] - base["value"], abs=1e-12)
    other = {**base, "game": base["game"].replace("AhKd7c2s9h", "AhKd7c2sTh")}
    assert [r["what"] for r in whatif_rows([data, other], ["a", "b"])] == [rows[0]["what"]]


def test_report_refuses_a_bad_whatif_record(tmp_path, capsys):
    import sqlite3
    import zlib

    from treeplex.scale.batch import run_batch

    specs = tmp_path / "specs.jsonl"
    specs.write_text(json.dumps({"game": {"game": "postflop", **SPOT, "locks": [LOCK]}}) + "\n")
    db = str(tmp_path / "r.sqlite")
    assert run_batch(str(specs), db, workers=1)["done"] == 1
    code, out, err = run_cli(capsys, "report", db)
    assert code == 0 and "lock_ev_oop" in out, err
    con = sqlite3.connect(db)
    (blob,) = con.execute("SELECT strategy FROM spots").fetchone()
    sol = json.loads(zlib.decompress(blob))
    sol["lock_ev_gain"]["chips"] = "x"  # was: TypeError in report
    con.execute("UPDATE spots SET strategy = ?", (zlib.compress(json.dumps(sol).encode()),))
    con.commit()
    con.close()
    refused(capsys, "report", db, needle="lock_ev_gain must hold chips")


def test_fused_checkpoint_builds_no_treeplex(tmp_path):
    """The checkpoint's game signature hashed both treeplexes and multiplied two full-size
    vectors by the payoffs: on nlfh52(stack=2000, flops=S8), 2 fused iterations went from 362
    to 622 MB peak with --checkpoint (measured; 368 MB now). A public-tree game is identified
    by its digest, which builds neither."""
    from treeplex.core.treeplex import DeferredTreeplex
    from treeplex.games import make_game
    from treeplex.run.driver import solve

    p = make_game(SHORT52).problem()
    ck = str(tmp_path / "c.npz")
    solve(p, "dcfr", max_iters=3, fused=True, checkpoint=ck)
    assert all(isinstance(p.__dict__[k], DeferredTreeplex) for k in ("_X", "_Y"))
    res = solve(make_game(SHORT52).problem(), "dcfr", max_iters=6, fused=True, resume=ck)
    ref = solve(make_game(SHORT52).problem(), "dcfr", max_iters=6, fused=True)
    assert res.iterations == 6 and res.gap == pytest.approx(ref.gap, rel=1e-9)


@pytest.mark.parametrize("other", [
    "nlfh52(stack=300, flops=S2, bets=1,a, deck=JcJdQcQdKcKdAcAd, small_blind=40)",  # other payoffs, same sizes
    "nlfh52(stack=300, flops=S3, bets=1,a, deck=JcJdQcQdKcKdAcAd)",
])
def test_checkpoint_of_another_public_tree_game_refused(compressed_checkpoint, capsys, other):
    refused(capsys, "solve", other, "--max-iters", "8", "--resume", compressed_checkpoint, needle="checkpoint is for")


def test_checkpoint_of_another_range_refused(tmp_path, capsys):
    """Same name, same tree, other range weights: the digest holds the hands' weights."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"game": "postflop", **SPOT}))
    b.write_text(json.dumps({"game": "postflop", **SPOT, "range1": "AA:0.5,KK,QQ,AQ,JJ,T9"}))
    ck = tmp_path / "c.npz"
    code, _, err = run_cli(capsys, "solve", a, "--algorithm", "dcfr", "--max-iters", "3", "--checkpoint", ck)
    assert code == 0, err
    refused(capsys, "solve", b, "--max-iters", "6", "--resume", ck, needle="checkpoint is for")
    code, _, err = run_cli(capsys, "solve", a, "--max-iters", "6", "--resume", ck)
    assert code == 0, err


@pytest.mark.parametrize("args", [
    ["--param", "compression=16"],  # no stop rule: the default is the exact LP, which dropped it unsaid
    ["--algorithm", "lp", "--param", "alpha=2"],
])
def test_lp_refuses_solver_parameters(tmp_path, capsys, args):
    f = tmp_path / "spot.json"
    f.write_text(json.dumps({"game": "postflop", **SPOT}))
    refused(capsys, "solve", f, *args, needle="the exact LP takes no solver parameters")
    code, out, err = run_cli(capsys, "solve", f, "--json", "--no-strategies")
    assert code == 0 and json.loads(out)["algorithm"] == "lp", err
