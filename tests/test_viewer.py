"""``treeplex view``: solution files, the self-contained page, and the page in headless chromium.

The browser tests drive Debian's chromium over the DevTools protocol (tests/cdp.py); they are
skipped, saying why, when chromium or websocket-client is missing (CI installs both). Set
TREEPLEX_VIEWER_SCREENSHOT=PATH to keep the comparison view's screenshot (docs/viewer.png).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request

import numpy as np
import pytest

from treeplex.cli import main
from treeplex.poker.show import class_grid
from treeplex.model.strategy import FORMAT_VERSION

from cdp import find_chromium

RIVER = ["river(pot=1000,board=KsQd7h4c2s)", "--range0", "QQ+,AK,KT+,T8s,76s", "--range1", "JJ-99,KQ,QJ"]
FLOP = ["postflop(board=KsQhTd,pot=20,stack=30,bet=50%,raise=2x,deck=TJQKA)", "--range0", "JJ-TT,AK",
        "--range1", "AA-QQ,KQ", "--out-streets", "2"]  # a short deck of 20 cards keeps the solves short


def solve(tmp, name, game, *flags):
    path = tmp / name
    assert main(["solve", *game, *flags, "--out", str(path), "--no-strategies", "--json"]) == 0
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("viewer")
    return {
        "river": solve(tmp, "river.json", RIVER, "--algorithm", "cfr+", "--max-iters", "200"),
        "flopA": solve(tmp, "flopA.json", FLOP, "--algorithm", "dcfr", "--max-iters", "30"),
        "flopB": solve(tmp, "flopB.json", FLOP, "--algorithm", "cfr", "--max-iters", "3"),
        "kuhnA": solve(tmp, "kuhnA.json", ["kuhn"]),
        "kuhnB": solve(tmp, "kuhnB.json", ["kuhn"], "--algorithm", "cfr", "--max-iters", "5"),
        "tmp": tmp,
    }


def view(*args) -> tuple[int, str]:
    """Exit code and stderr of ``treeplex view ARGS`` run in this process."""
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["view", *map(str, args)])
    return code, err.getvalue()


# ------------------------------------------------------------------ files and the page, no browser


def test_out_records_the_run_and_the_saved_streets(files):
    flop = json.loads(files["flopA"].read_text())
    assert flop["format_version"] == FORMAT_VERSION and flop["algorithm"] == "dcfr"
    assert flop["exploitability"] == pytest.approx(flop["gap"] / 2) and flop["payoff_unit"] == "chips"
    assert flop["saved_streets"] == ["flop", "turn"]
    turn = [n for n in flop["nodes"] if "/" in n["history"]]
    assert turn and all(len(n["board"]) == 8 for n in turn)  # 3 flop cards + the turn, never the river
    kuhn = json.loads(files["kuhnA"].read_text())
    assert kuhn["format_version"] == FORMAT_VERSION and set(kuhn["strategies"]) == {"player0", "player1"}
    assert main(["solve", "kuhn", "--out-streets", "2", "--out", str(files["tmp"] / "x.json")]) == 2


@pytest.mark.parametrize("text, message", [
    ('{"nodes": [{"history": ""', "bad or truncated JSON"),
    ("[1, 2]", "not a solution file"),
    ('{"game": "kuhn"}', "no 'nodes' or 'strategies'"),
    ('{"format_version": 99, "strategies": {}}', "format_version 99 is newer than this treeplex reads"),
    ('{"nodes": [{"history": "", "player": 0, "actions": ["x"], "hands": {"AsKs": [0.5, 0.5]}}]}',
     "node 0 is malformed"),
    ('{"strategies": {"player0": {}}}', "'strategies' must be"),
    # issue 31: these passed the check and left the page blank
    ('{"strategies": {"player0": {"K": {"b": NaN, "p": 1}}, "player1": {}}}',
     "player0 infoset 'K': action 'b' has probability nan, not a number in [0, 1]"),
    ('{"strategies": {"player0": {}, "player1": {"Q": {"b": "half"}}}}',
     "player1 infoset 'Q': action 'b' has probability 'half'"),
    ('{"nodes": [{"history": "", "player": 0, "actions": ["x", "b5"], "hands": {"AsKs": [NaN, 0.5]}}]}',
     "node 0 (history ''): hand AsKs: probability nan is not a number in [0, 1]"),
    ('{"nodes": [{"history": "", "player": 0, "actions": ["x"], "hands": {"AsKs": ["1"]}}]}',
     "hand AsKs: probability '1' is not"),
    ('{"nodes": [{"history": "", "player": 0, "actions": [1], "hands": {"AsKs": [1]}}]}',
     "'actions' must be action names"),
    ('{"nodes": [{"history": "", "player": 0, "actions": ["x"], "hands": {"hand": [1]}}]}',
     "hand 'hand' is not two cards"),
    ('{"nodes": [{"history": "x", "player": 1, "actions": ["x"], "hands": {"AsKs": [1]}}]}',
     "no node at the root"),
    ('{"nodes": [{"history": "", "player": 0, "actions": ["x"], "hands": {"AsKs": [1]}, "frequencies": [null]}]}',
     "'frequencies' must be one number in [0, 1] per action"),
])
def test_bad_files_give_one_line_and_exit_2(tmp_path, text, message):
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    code, err = view(bad, "--html", tmp_path / "out.html")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.html").exists()


def test_compare_needs_the_same_kind_of_solution(files, tmp_path):
    code, err = view(files["kuhnA"], "--compare", files["river"], "--html", tmp_path / "out.html")
    assert code == 2 and "cannot compare" in err


def test_page_is_self_contained(files, tmp_path):
    out = tmp_path / "page.html"
    assert view(files["river"], "--html", out)[0] == 0
    html = out.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # no external resource
    assert "default-src 'none'" in html  # and the page may not load one
    assert "<script src" not in html and "<link" not in html
    assert len(html) < 2 * os.path.getsize(files["river"]) + 100_000


def test_serves_on_loopback_only(files):
    proc = subprocess.Popen([sys.executable, "-m", "treeplex.cli", "view", str(files["kuhnA"]), "--no-open"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        with urllib.request.urlopen(url, timeout=10) as r:
            assert r.status == 200 and "treeplex-data" in r.read().decode()
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(url + "other", timeout=10)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_csp_names_the_page_script_by_hash(files, tmp_path):
    """No 'unsafe-inline' script: the CSP's sha256 source is the hash of the page's one script
    element (recomputed here from the page), and forms and <base> are forbidden."""
    import base64
    import hashlib

    out = tmp_path / "page.html"
    assert view(files["kuhnA"], "--html", out)[0] == 0
    html = out.read_text()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html).group(1)
    policy = dict((d.split()[0], d.split()[1:]) for d in csp.split(";"))
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert policy["script-src"] == [f"'sha256-{digest}'"]
    assert policy["default-src"] == ["'none'"] and policy["form-action"] == ["'none'"]
    assert policy["base-uri"] == ["'none'"] and "unsafe-inline" not in " ".join(policy["script-src"])


def _serve(path, *flags):
    proc = subprocess.Popen([sys.executable, "-m", "treeplex.cli", "view", str(path), "--no-open", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    return proc, re.search(r"http://127\.0\.0\.1:(\d+)/", line)


def test_server_refuses_a_foreign_host_header(files):
    """DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends Host: evil.example:PORT."""
    import http.client

    proc, m = _serve(files["kuhnA"])
    try:
        port = int(m.group(1))
        for host, status in ((f"evil.example:{port}", 421), (f"127.0.0.1:{port}", 200), (f"localhost:{port}", 200),
                             ("127.0.0.1", 421), ("", 421)):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.putrequest("GET", "/", skip_host=True)
            if host:
                c.putheader("Host", host)
            c.endheaders()
            assert c.getresponse().status == status, host
            c.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("port, needle", [("99999", "--port must be 0 (a free port) or 1..65535"),
                                          ("-1", "--port must be 0 (a free port) or 1..65535"),
                                          ("BUSY", "cannot listen on 127.0.0.1:")])
def test_bad_ports_are_refused(files, port, needle):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = port.replace("BUSY", str(busy.getsockname()[1]))
        code, err = view(files["kuhnA"], "--port", port, "--no-open")
    assert code == 2 and err.count("\n") == 1 and needle in err


# ------------------------------------------------------------------ in the browser


@pytest.fixture(scope="module")
def browser():
    if find_chromium() is None:
        pytest.skip("chromium is not installed (apt-get install chromium chromium-driver); "
                    "the browser tests of treeplex view need it")
    pytest.importorskip("websocket", reason="websocket-client (the test extra) drives chromium")
    from cdp import Browser

    b = Browser()
    yield b
    b.close()


def open_page(browser, tmp, *args):
    out = tmp / f"page{len(os.listdir(tmp))}.html"
    assert view(*args, "--html", out)[0] == 0
    browser.errors.clear()
    browser.requests.clear()
    browser.open(out.as_uri())
    assert browser.errors == []
    assert browser.requests == [out.as_uri()]  # the page fetched nothing


def go_to(browser, action, hist):
    browser.click(f'#actions button[data-action="{action}"]')
    browser.wait(f'document.querySelector("#node")?.dataset.hist === {json.dumps(hist)} '
                 f'|| (!!document.querySelector("#chance") && {json.dumps(hist)}.length > 0)')


def grid_widths(browser):
    """Per grid cell (row-major, 13x13): the widths (%) of its action segments, or None."""
    return browser.js("""[...document.querySelectorAll('#grid .cell')].map(c => {
        const segs = [...c.querySelectorAll('.seg')];
        return segs.length ? segs.map(s => parseFloat(s.style.width)) : null; })""")


def test_river_grid_matches_the_json(browser, files):
    data = json.loads(files["river"].read_text())
    open_page(browser, files["tmp"], files["river"])
    root = data["nodes"][0]
    bet = next(a for a in root["actions"] if a.startswith("b"))
    go_to(browser, bet, bet)
    node = next(n for n in data["nodes"] if n["history"] == bet)
    assert browser.js("document.querySelector('#crumbs').textContent").endswith(f"bet {bet[1:]}")
    widths = grid_widths(browser)
    expect = [class_grid(node, a) for a in range(len(node["actions"]))]
    for k, cell in enumerate(widths):
        i, j = divmod(k, 13)
        if np.isnan(expect[0][i, j]):
            assert cell is None
        else:
            assert cell == pytest.approx([100 * g[i, j] for g in expect], abs=1e-3)
    assert sum(c is not None for c in widths) > 5
    # aggregates: the node's frequencies
    shown = browser.js("""[...document.querySelectorAll('#aggregates tr.freq td')].map(td => td.textContent)""")
    assert shown == [f"{100 * f:.1f}%" for f in node["frequencies"]]
    # hover details: every combo of the class, one probability per action
    combos = {h: q for h, q in node["hands"].items() if node["weight"][h] > 0}
    hand = max(combos, key=lambda h: max(combos[h]) - min(combos[h]))
    cls = browser.js(f"handClass({json.dumps(hand)})")
    browser.hover(f'#grid .cell[data-class="{cls}"]')
    browser.wait(f'document.querySelector("#detail h3")?.textContent === "{cls}"')
    row = browser.js(f"""[...document.querySelectorAll('#detail tr[data-combo="{hand}"] td[data-action]')]
                         .map(td => td.textContent)""")
    assert row == [f"{100 * q:.1f}%" for q in node["hands"][hand]]
    shot = files["tmp"] / "river.png"
    browser.screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_turn_card_switch_and_comparison(browser, files):
    a, b = (json.loads(files[k].read_text()) for k in ("flopA", "flopB"))
    open_page(browser, files["tmp"], files["flopA"], "--compare", files["flopB"])
    head = browser.js("[...document.querySelectorAll('#files .expl')].map(e => Number(e.dataset.value))")
    assert head == pytest.approx([a["exploitability"], b["exploitability"]])
    go_to(browser, "x", "x")
    go_to(browser, "x", "x-x")  # check-check: the turn card is dealt
    cards = browser.js("[...document.querySelectorAll('#chance .cardbtn')].map(e => e.dataset.card)")
    assert len(cards) == 20 - 3  # 3 of the short deck's 20 cards are on the flop
    browser.click(f'#chance .cardbtn[data-card="{cards[0]}"]')
    browser.wait(f'document.querySelector("#node")?.dataset.hist === "x-x/{cards[0]}/"')
    # switch the turn card in the breadcrumbs: the same line on another card
    other = cards[-1]
    browser.js(f"""(() => {{ const s = document.querySelector('#crumbs select.card');
        s.value = {json.dumps(other)}; s.dispatchEvent(new Event('change')); }})()""")
    hist = f"x-x/{other}/"
    browser.wait(f'document.querySelector("#node")?.dataset.hist === "{hist}"')
    na = next(n for n in a["nodes"] if n["history"] == hist)
    nb = next(n for n in b["nodes"] if n["history"] == hist)
    assert na["board"] == "KsQhTd" + other
    rows = browser.js("""[...document.querySelectorAll('#aggregates tr.freq')].map(tr =>
        [...tr.querySelectorAll('td')].map(td => td.textContent))""")
    assert rows == [[f"{100 * fa:.1f}%", f"{100 * fb:.1f}%", f"{100 * (fa - fb):.1f}%"]
                    for fa, fb in zip(na["frequencies"], nb["frequencies"])]
    # the difference grid: total variation distance between the two class strategies
    browser.click('.tabs button[data-grid="diff"]')
    browser.wait("!!document.querySelector('#grid.mode-diff')")
    tvs = browser.js("[...document.querySelectorAll('#grid .cell')].map(c => c.dataset.tv ? Number(c.dataset.tv) : null)")
    ga = [class_grid(na, k) for k in range(len(na["actions"]))]
    gb = [class_grid(nb, k) for k in range(len(nb["actions"]))]
    for k, tv in enumerate(tvs):
        i, j = divmod(k, 13)
        expect = None if np.isnan(ga[0][i, j]) else 0.5 * sum(abs(x[i, j] - y[i, j]) for x, y in zip(ga, gb))
        assert tv == pytest.approx(expect, abs=1e-9)
    assert any(tv for tv in tvs)
    assert browser.js("document.querySelectorAll('#differences tbody tr').length") == 15
    if os.environ.get("TREEPLEX_VIEWER_SCREENSHOT"):
        browser.click('.tabs button[data-grid="a"]')
        browser.wait("!!document.querySelector('#grid.mode-a')")
        browser.hover('#grid .cell[data-class="JJ"]')
        browser.screenshot(os.environ["TREEPLEX_VIEWER_SCREENSHOT"])


def test_infoset_table_search_and_comparison(browser, files):
    a, b = (json.loads(files[k].read_text())["strategies"] for k in ("kuhnA", "kuhnB"))
    open_page(browser, files["tmp"], files["kuhnA"], "--compare", files["kuhnB"])
    total = sum(len(s) for s in a.values())
    assert browser.js("document.querySelectorAll('#infosets tbody tr').length") == total
    browser.click("#search")
    browser.send("Input.insertText", text="pb")
    keys = sorted(k for s in a.values() for k in s if "pb" in k.lower())
    assert 0 < len(keys) < total
    browser.wait(f"document.querySelectorAll('#infosets tbody tr').length === {len(keys)}")
    shown = browser.js("[...document.querySelectorAll('#infosets tbody tr')].map(tr => "
                       "[tr.dataset.player, tr.dataset.key, tr.querySelector('.delta').textContent])")
    for player, key, delta in shown:
        pa, pb = a[player][key], b[player][key]
        assert float(delta) == pytest.approx(max(abs(pa[x] - pb[x]) for x in pa), abs=1e-4)
    assert sorted(k for _, k, _ in shown) == keys


HOSTILE = ['<img src=x onerror="window.__pwn=1">', '</script><script>window.__pwn=2</script>',
           '<b id="inj">x</b>', '<svg onload="window.__pwn=3">', '"><iframe src="javascript:window.__pwn=4">']


def test_a_minimal_poker_node_renders(browser, tmp_path):
    """issue 31: a file with only history, player, actions and hands (no frequencies, weights,
    board or pot) passed the check and left the page blank; now it draws, frequencies from hands."""
    path = tmp_path / "minimal.json"
    path.write_text(json.dumps({"nodes": [{"history": "", "player": 0, "actions": ["x", "b5"],
                                           "hands": {"AsKs": [0.25, 0.75], "QdQc": [1, 0]}}]}))
    open_page(browser, tmp_path, path)
    assert browser.js('document.querySelector("#node").dataset.hist') == ""
    assert browser.js('[...document.querySelectorAll("#actions .freq")].map(e => e.textContent)') == \
        ["62.5%", "37.5%"]
    assert grid_widths(browser)[1] == [25.0, 75.0]  # AKs: row A, column K


def test_strings_from_a_hostile_file_are_text(browser, files, tmp_path):
    """A solution file whose game name, algorithm, infoset and action labels (and file name)
    are markup: the page shows them as text and no injected element or script exists."""
    data = json.loads(files["kuhnA"].read_text())
    data["game"], data["algorithm"] = HOSTILE[0], HOSTILE[3]
    for k, (player, table) in enumerate(sorted(data["strategies"].items())):
        data["strategies"][player] = {HOSTILE[(k + i) % len(HOSTILE)] + key:
                                      {HOSTILE[(i + 2) % len(HOSTILE)] + a: p for a, p in probs.items()}
                                      for i, (key, probs) in enumerate(table.items())}
    path = tmp_path / '<img src=x onerror="window.__pwn=5">.json'
    path.write_text(json.dumps(data))
    open_page(browser, tmp_path, path)
    assert browser.js("window.__pwn === undefined")
    tags = "[...document.querySelectorAll('*')].map(e => e.tagName).sort().join()"
    assert browser.js("document.querySelectorAll('img, svg, iframe, #inj, [onerror], [onload]').length") == 0
    hostile_tags = browser.js(tags)
    open_page(browser, tmp_path, files["kuhnA"])  # the same solution with plain labels: the same elements
    assert browser.js(tags) == hostile_tags
    open_page(browser, tmp_path, path)
    assert browser.js("[...document.scripts].map(s => s.type || 'js')") == ["application/json", "js"]
    text = browser.js("document.body.textContent")
    assert HOSTILE[0] in text and HOSTILE[3] in text and path.name in text
