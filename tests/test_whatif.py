"""What-ifs: a locked solve records its baseline and each player's EV gain; the viewer shows
it; ``treeplex report`` aggregates it per board texture. Every gain is checked against two
separate solves (the locked and the unlocked spot, each by the exact LP) and against the
root's range EVs of the two saved solutions."""

import json
import re

import pytest

import treeplex as tp
from treeplex.cli import main
from treeplex.poker.postflop import PostflopGame
from treeplex.scale.batch import run_batch
from treeplex.scale.report import spot_rows, write_report
from treeplex.viewer import page_html

SPOT = dict(board="AhKd7c2s9h", pot=20, stack=20, range0="AA,KK,QQ,AK,KQ,JT", range1="AA,KK,QQ,AQ,JJ,T9",
            bet="50%", deck="9TJQKA27", **{"raise": "2x"})
LOCK = {"node": "x", "player": 1, "strategy": {"x": 0.8, "b10": 0.2}}


def _solve_cli(*args) -> dict:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["solve", *map(str, args), "--json", "--no-strategies"]) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("whatif")
    (d / "base.json").write_text(json.dumps({"game": "postflop", **SPOT}))
    (d / "locked.json").write_text(json.dumps({"game": "postflop", **SPOT, "locks": [LOCK]}))
    base = _solve_cli(d / "base.json", "--out", d / "base_out.json")
    locked = _solve_cli(d / "locked.json", "--out", d / "locked_out.json")
    exact = {"base": tp.solve_lp(PostflopGame(**SPOT).problem()).value,
             "locked": tp.solve_lp(PostflopGame(**SPOT, locks=[LOCK]).problem()).value}
    return d, base, locked, exact


def _root_ev(path) -> float:
    data = json.loads(path.read_text())
    return next(n for n in data["nodes"] if n["history"] == "")["range_ev"]


def test_locked_solve_records_its_baseline_and_the_ev_gain(files):
    """The gain equals the locked LP's value minus the unlocked LP's (two separate solves here),
    and the difference of the two files' root range EVs (OOP's chips of the pot); IP gains the
    opposite; mbb/g at the spot's big blind (10 chips)."""
    d, base, locked, exact = files
    gain = locked["lock_ev_gain"]
    want = exact["locked"] - exact["base"]
    assert abs(want) > 0.1
    assert gain["chips"][0] == pytest.approx(want, abs=1e-8) and gain["chips"][1] == pytest.approx(-want, abs=1e-8)
    assert gain["mbb_per_game"][0] == pytest.approx(want / 10 * 1000, abs=1e-6)
    assert gain["pct_pot"][0] == pytest.approx(100 * want / 20, abs=1e-7)
    assert gain["chips"][0] == pytest.approx(_root_ev(d / "locked_out.json") - _root_ev(d / "base_out.json"), abs=1e-5)
    assert locked["baseline"]["file"] is None and locked["baseline"]["value"] == pytest.approx(base["value"], abs=1e-9)
    saved = json.loads((d / "locked_out.json").read_text())
    assert saved["lock_ev_gain"] == locked["lock_ev_gain"] and saved["locks"][0]["node"] == "x"


def test_baseline_from_a_file_and_an_iterative_gain_within_its_bound(files):
    """``--baseline FILE`` takes the saved unlocked solve; DCFR's gain is within its reported
    bound (the two gaps) of the exact gain."""
    d, base, _, exact = files
    r = _solve_cli(d / "locked.json", "--baseline", d / "base_out.json", "--algorithm", "dcfr", "--target", "1%pot")
    assert r["baseline"]["file"] == str(d / "base_out.json") and r["baseline"]["value"] == base["value"]
    assert r["lock_ev_gain"]["chips"][0] == pytest.approx(r["value"] - base["value"], abs=1e-12)
    want = exact["locked"] - exact["base"]
    assert 0 < r["lock_ev_gain"]["error_bound_chips"] and \
        abs(r["lock_ev_gain"]["chips"][0] - want) <= r["lock_ev_gain"]["error_bound_chips"]


def test_frequency_lock_from_a_file_baseline_matches_the_solved_one(files):
    """A range-wide frequency lock spread from the saved baseline (6-decimal mixtures) gives the
    locked value of the one spread from the baseline solved in process."""
    d = files[0]
    lock = "x:1:freq:x=0.3,b10=0.2,b20=0.5"
    a = _solve_cli(d / "base.json", "--lock", lock, "--baseline", d / "base_out.json")
    b = _solve_cli(d / "base.json", "--lock", lock)
    assert a["value"] == pytest.approx(b["value"], abs=1e-4) and abs(a["value"] - b["baseline"]["value"]) > 0.1


@pytest.mark.parametrize("args, msg", [
    (["base.json", "--baseline", "base_out.json"], "--baseline applies to postflop spots with locks"),
    (["locked.json", "--baseline", "locked_out.json"], "a locked solve; the baseline is the spot without locks"),
    (["base.json", "--lock", "x:1:freq:x=1", "--baseline", "none"], "a frequency lock is spread over hands"),
    (["locked.json", "--baseline", "nothing.json"], "cannot read"),
])
def test_bad_baselines_are_one_line(files, capsys, args, msg):
    d = files[0]
    code = main(["solve", *[str(d / a) if a.endswith(".json") else a for a in args]])
    err = capsys.readouterr().err
    assert code == 2 and msg in err and err.count("\n") == 1


def test_viewer_shows_the_ev_gain(files):
    """The page's what-if rows: A's gain against its recorded baseline and A minus B, both the
    LP gain; B's own page has none."""
    d, _, _, exact = files
    html = page_html([str(d / "locked_out.json"), str(d / "base_out.json")])
    data = json.loads(re.search(r'id="treeplex-data">(.*?)</script>', html, re.S).group(1))
    rows = data["whatif"]
    want = exact["locked"] - exact["base"]
    assert len(rows) == 2 and all(r["chips"][0] == pytest.approx(want, abs=1e-8) for r in rows)
    assert rows[1]["mbb"][1] == pytest.approx(-want * 100, abs=1e-6)
    plain = page_html([str(d / "base_out.json")])
    assert '"whatif":[]' in plain


def test_report_aggregates_the_lock_gains_per_texture(tmp_path):
    """A batch of the same lock on three boards (two rainbow flops, one two-tone): each spot's
    lock_ev_oop is its locked LP value minus its unlocked LP value, and a texture's is their
    mean (weight 1 each)."""
    boards = ["AhKd7c2s9h", "AhQdTc2s9h", "AhKh7c2s9d"]
    spots = [{"game": {"game": "postflop", **{**SPOT, "board": b}, "locks": [LOCK]}} for b in boards]
    specs = tmp_path / "specs.jsonl"
    specs.write_text("".join(json.dumps(s) + "\n" for s in spots))
    db = str(tmp_path / "r.sqlite")
    assert run_batch(str(specs), db, workers=1)["done"] == 3
    gains = {}
    for b in boards:
        g = {**SPOT, "board": b}
        gains[b] = (tp.solve_lp(PostflopGame(**g, locks=[LOCK]).problem()).value
                    - tp.solve_lp(PostflopGame(**g).problem()).value)
    rows = {r["board"]: r for r in spot_rows(db)}
    for b in boards:
        assert rows[b]["lock_ev_oop"] == pytest.approx(gains[b], abs=1e-8)
        assert rows[b]["lock_ev_ip"] == pytest.approx(-gains[b], abs=1e-8)
    text = write_report(db, str(tmp_path / "out"))
    assert "lock_ev_oop" in text
    import csv

    with open(tmp_path / "out" / "textures.csv") as f:
        groups = {r["class"]: r for r in csv.DictReader(f) if r["group_by"] == "texture"}
    rainbow = [b for b in boards if rows[b]["texture"] == "rainbow"]
    assert len(rainbow) == 2 and len(groups) == 2
    assert float(groups["rainbow"]["lock_ev_oop"]) == pytest.approx(sum(gains[b] for b in rainbow) / 2, abs=1e-8)


def test_the_page_draws_the_ev_gain(files):
    """In headless chromium (skipped without it): the header's what-if table has A's gain for
    each player, as the file records it, and the page fetched nothing."""
    from cdp import find_chromium

    if find_chromium() is None:
        pytest.skip("chromium is not installed; tests/test_viewer.py says how to get it")
    pytest.importorskip("websocket", reason="websocket-client (the test extra) drives chromium")
    from cdp import Browser

    d = files[0]
    out = d / "whatif.html"
    assert main(["view", str(d / "locked_out.json"), "--compare", str(d / "base_out.json"), "--html", str(out)]) == 0
    b = Browser()
    try:
        b.open(out.as_uri())
        assert b.errors == [] and b.requests == [out.as_uri()]
        rows = b.js("[...document.querySelectorAll('#whatif tr')].map(r => r.dataset.chips ?? null)")
        text = b.js("document.querySelector('#whatif').textContent")
    finally:
        b.close()
    gain = json.loads((d / "locked_out.json").read_text())["lock_ev_gain"]["chips"][0]
    assert [float(x) for x in rows[1:]] == pytest.approx([gain, gain], abs=1e-12)
    assert f"+{gain:.4g} chips" in text and "player 1 at x" in text


def test_python_api_records_the_what_if_as_the_cli(files):
    """``tp.solve(spot, ..., whatif=True)`` solves the baseline first, as ``treeplex solve``
    does: on the frequency-locked spot (passed as the game: its problem needs the baseline) the
    exact LPs give the CLI's gain, and it is the two separate LPs' difference; ``whatif=FILE``
    reads the CLI's saved baseline; without ``whatif`` the result carries none."""
    d, base, locked, exact = files
    res = tp.solve(PostflopGame(**SPOT, locks=[LOCK]), "lp", whatif=True)
    gain = res.whatif["lock_ev_gain"]
    assert res.value == pytest.approx(locked["value"], abs=1e-9)
    assert res.whatif["baseline"]["value"] == pytest.approx(base["value"], abs=1e-9)
    assert gain["chips"] == pytest.approx(locked["lock_ev_gain"]["chips"], abs=1e-9)
    assert gain["chips"][0] == pytest.approx(exact["locked"] - exact["base"], abs=1e-8)
    assert gain["mbb_per_game"] == pytest.approx(locked["lock_ev_gain"]["mbb_per_game"], abs=1e-6)
    from_file = tp.solve(PostflopGame(**SPOT, locks=[LOCK]), "dcfr", max_iters=50, whatif=str(d / "base_out.json"))
    cli = _solve_cli(d / "locked.json", "--baseline", d / "base_out.json", "--algorithm", "dcfr", "--max-iters", "50")
    assert from_file.whatif["baseline"]["file"] == str(d / "base_out.json")
    assert from_file.whatif["lock_ev_gain"]["chips"] == pytest.approx(cli["lock_ev_gain"]["chips"], abs=1e-9)
    assert tp.solve(PostflopGame(**SPOT).problem(), "dcfr", max_iters=5).whatif is None


@pytest.mark.parametrize("game, kw, msg", [
    (lambda: PostflopGame(**SPOT).problem(), {"whatif": True}, "applies to postflop spots with locks or rake"),
    (lambda: tp.load_game("kuhn").problem(), {"whatif": True}, "applies to postflop spots with locks or rake"),
    (lambda: PostflopGame(**SPOT, rake=0.05), {"whatif": 1}, "whatif must be True, False or a solve --out file"),
    (lambda: PostflopGame(**SPOT, rake=0.05), {"whatif": True, "checkpoint": "c.npz"}, "need whatif=FILE"),
])
def test_python_api_bad_what_ifs(game, kw, msg):
    with pytest.raises(tp.InputError, match=re.escape(msg)):
        tp.solve(game(), "dcfr", max_iters=5, **kw)
