"""Every command shown in a code block of README.md and docs/ runs and exits 0.

Code blocks are fenced (```) or indented by four spaces. A line that starts with ``treeplex `` is
a command (a trailing ``\\`` joins the next line), and so is ``.venv/bin/python experiments/...``
or ``benchmarks/...`` (run by this interpreter); commands of one block run in order in one
temporary folder, so a block's ``solve --out turn.json`` feeds its ``show turn.json``. A command
that ends in ``# test: VARIANT`` runs VARIANT instead: the same command at a small size (smaller
ranges, a looser target), written next to the documented one. ``python`` blocks run as scripts.
Files a command reads but no earlier command of its block writes (``flop.json``, ``spot.json``,
``path/to/game.efg``, ...) are made by ``FIXTURES`` first. Commands that cannot run here are
listed in ``NOT_RUN`` with the reason; a test checks that each of them is still in the docs.
"""

import hashlib
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))

# command (as documented, comment removed) -> why it does not run in this test
NOT_RUN = {
    "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/treeplex solve leduc":
        "creates a virtual environment and installs from the package index; every other command here "
        "runs the same `treeplex solve` code",
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/pytest -q":
        "the whole test suite: CI runs it (.ci/run)",
    "treeplex view turn.json": "serves the page until Ctrl-C (tests/test_viewer.py drives the server in a browser)",
    "treeplex view strategy.json": "serves the page until Ctrl-C (tests/test_viewer.py drives the server in a browser)",
    "treeplex view river.json": "serves the page until Ctrl-C (tests/test_viewer.py drives the server in a browser)",
    "treeplex batch specs.jsonl --db results.sqlite --engine ray":
        "needs Ray (extra 'distributed', not in the test extra); tests/test_ray.py and tests/test_batch.py run "
        "the Ray engine where it is installed",
    ".venv/bin/python experiments/depth_limited_nlfh.py": "about 3 minutes (figure 1 of the depth-limited paper)",
    "treeplex play --agent human --vs bp.npz --abstraction abs.npz --hands 20":
        "reads a person's actions from the terminal; tests/test_play.py drives the human agent with scripted input",
    "treeplex play --agent bp.npz --abstraction abs.npz --serve 48777 --hands 1000":
        "waits for a client; tests/test_play.py runs --serve and --connect as a pair on a free port",
    "treeplex play --agent random --connect localhost:48777":
        "needs the dealer above; tests/test_play.py runs --serve and --connect as a pair on a free port",
}
# small files the documented commands read: (text, or a treeplex command that writes the file)
_FLOP = {"game": "postflop", "board": "KsQhTd", "pot": 20, "stack": 30, "deck": "TJQKA", "bet": "a",
         "range0": "AsKh,QdJd,TsTc", "range1": "AcAd,JsTs,KdQs"}
_BUNCHED = {"game": "postflop", "board": "Ah8d5c2sKs", "pot": 60, "stack": 100,  # README and poker.md: Bunching
            "range0": "AK,AQ,KQ,A5s,76s,64s,QJs,JTs,T9s,88,55", "range1": "AJ,AT,KJ,QQ,JJ,TT,A2s,K9s,98s,33",
            "bet": "50%,a", "raise": "a",
            "bunching": {"open": ["22+,A2s+,K9s+,Q9s+,J9s+,T9s,98s,87s,76s,65s,ATo+,KJo+",
                                  "22+,A2s+,K8s+,Q8s+,J8s+,T8s+,97s+,86s+,75s+,65s,54s,A9o+,KTo+,QTo+,JTo",
                                  "22+,A2s+,K5s+,Q7s+,J7s+,T7s+,96s+,85s+,75s+,64s+,54s,A7o+,K9o+,Q9o+,J9o+,T9o",
                                  "22+,A2s+,K2s+,Q4s+,J6s+,T6s+,96s+,85s+,74s+,64s+,53s+,43s,A2o+,K8o+,Q9o+,J9o+,"
                                  "T9o"]}}
FIXTURES = {
    "path/to/game.efg": ["export", "kuhn", "--format", "efg", "-o", "path/to/game.efg"],
    "other.csv": ["solve", "kuhn", "--algorithm", "cfr+", "--max-iters", "50", "--trace", "other.csv"],
    "spec.json": json.dumps({"pot": 2100, "board": "Qs9h7d4c2s", "range0": "AA,KK,AKs", "range1": "QQ,JJ,AQs",
                             "abstraction": "libratus"}),
    "spot.json": json.dumps({"game": "postflop", "board": "Ah8d5c2sKs", "pot": 550, "stack": 1200,
                             "range0": "99,A5s", "range1": "AA,KQs", "sizes": {"turn": {"bet": "50%,a", "raise": "2.5x"},
                             "river": {"bet": "50%,a", "raise": "a"}}}),
    "locked.json": json.dumps({"game": "postflop", "board": "AhKd7c2s9h", "pot": 20, "stack": 20,
                               "deck": "9TJQKA27", "range0": "AA,KK,QQ,AK,KQ,JT", "range1": "AA,KK,QQ,AQ,JJ,T9",
                               "bet": "50%", "raise": "2x",
                               "locks": [{"node": "x", "player": 1, "strategy": {"x": 0.8, "b10": 0.2}}]}),
    "bunched.json": json.dumps(_BUNCHED),
    "unbunched.json": json.dumps({k: v for k, v in _BUNCHED.items() if k != "bunching"}),
    "unlocked.json": json.dumps({"game": "postflop", "board": "AhKd7c2s9h", "pot": 20, "stack": 20,
                                 "deck": "9TJQKA27", "range0": "AA,KK,QQ,AK,KQ,JT", "range1": "AA,KK,QQ,AQ,JJ,T9",
                                 "bet": "50%", "raise": "2x"}),
    "flop.json": json.dumps({"game": _FLOP, "algorithm": "cfr+", "max_iters": 10}),  # the flops of a 5-rank deck
    "raked.json": json.dumps({"game": "postflop", "board": "AhKd7c2s9h", "pot": 20, "stack": 20, "deck": "9TJQKA27",
                              "range0": "AA,KK,QQ,AK,KQ,JT", "range1": "AA,KK,QQ,AQ,JJ,T9", "bet": "50%",
                              "raise": "2x", "rake": 0.05, "rake_cap": 3}),
    "split.json": json.dumps({"game": "postflop", "board": "KsQh9d8c", "deck": "89TJQKA", "pot": 20, "stack": 30,
                              "bet": "50%", "raise": "2x", "range0": "AA,KK,QJ", "range1": "AQ,JJ,T8"}),
}


def code_blocks(text: str):
    """(language, first line number, lines) of each fenced or indented code block."""
    lines, i, out = text.split("\n"), 0, []
    while i < len(lines):
        fence = re.match(r"^\s*```(\w*)", lines[i])
        if fence:
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            out.append((fence.group(1) or "text", i + 2, lines[i + 1:j]))
            i = j + 1
        elif lines[i].startswith("    ") and lines[i].strip() and (i == 0 or not lines[i - 1].strip()):
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            out.append(("indented", i + 1, [line[4:] for line in lines[i:j]]))
            i = j
        else:
            i += 1
    return out


def split_comment(line: str) -> tuple[str, str]:
    """(command, comment) at the first `` #`` outside quotes."""
    quote = None
    for k, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (k == 0 or line[k - 1] == " "):
            return line[:k].strip(), line[k + 1:].strip()
    return line.strip(), ""


def commands(body: list[str]) -> list[tuple[str, str]]:
    """(documented command, command to run) for each shell line of a block."""
    out, cur = [], ""
    for raw in body:
        line = raw.strip()
        cur = f"{cur} {line}".strip() if cur else line
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip()
            continue
        if cur:
            command, comment = split_comment(cur)
            test = re.search(r"(?:^|#)\s*test:\s*(.+)$", comment)
            if command and not command.startswith(("{", "[")):
                out.append((command, test.group(1).strip() if test else command))
        cur = ""
    return out


def collect():
    """Test cases: ("shell", page:line, [(documented, run)]) per block, ("python", page:line, source)."""
    cases = []
    for page in PAGES:
        for lang, line, body in code_blocks(page.read_text()):
            where = f"{page.relative_to(ROOT)}:{line}"
            if lang == "python":
                cases.append(("python", where, "\n".join(body)))
                continue
            if lang in ("json", "toml"):
                continue
            cmds = [c for c in commands(body) if c[0].startswith(("treeplex ", "python", ".venv/", "/tmp/"))]
            if cmds:
                cases.append(("shell", where, cmds))
    return cases


CASES = collect()


def _run_treeplex(args: list[str], cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "treeplex.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def _fixtures(cmds: list[tuple[str, str]], cwd: pathlib.Path) -> None:
    text = " ".join(run for _, run in cmds)
    for name, made in FIXTURES.items():
        if name in text and not (cwd / name).exists():
            (cwd / name).parent.mkdir(parents=True, exist_ok=True)
            if isinstance(made, str):
                (cwd / name).write_text(made)
            else:
                assert _run_treeplex(made, cwd).returncode == 0, made


def _snapshot(cwd: pathlib.Path) -> dict[str, str]:
    """relative path -> sha256 of every file under ``cwd``."""
    return {str(p.relative_to(cwd)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(cwd.rglob("*")) if p.is_file()}


# (command, its input files' digests) -> the files it wrote: a command shown on two pages (the
# README's tour and the guides) runs once, and its outputs are copied where it is shown again
_DONE: dict[tuple[str, str], dict[str, bytes]] = {}


def _run_block(cmds, cwd):
    _fixtures(cmds, cwd)
    for documented, run in cmds:
        if documented in NOT_RUN:
            continue
        for part in run.split(" && "):
            argv = shlex.split(part)
            if argv[0] == ".venv/bin/python" and argv[1].startswith(("experiments/", "benchmarks/")):  # a script, at its test size
                env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
                r = subprocess.run([sys.executable, str(ROOT / argv[1]), *argv[2:]], cwd=cwd, env=env,
                                   capture_output=True, text=True, timeout=600)
                assert r.returncode == 0, f"{part}\nexit {r.returncode}\n{r.stderr[-2000:]}"
                continue
            assert argv[0] == "treeplex", f"{documented!r}: not a treeplex command and not in NOT_RUN"
            if any(a.startswith("openspiel:") for a in argv):
                pytest.importorskip("pyspiel", reason="OpenSpiel commands need open_spiel (extra 'openspiel')")
            before = _snapshot(cwd)
            key = (part, json.dumps({a: before[a] for a in argv if a in before}, sort_keys=True))
            if key in _DONE:
                for name, data in _DONE[key].items():
                    (cwd / name).parent.mkdir(parents=True, exist_ok=True)
                    (cwd / name).write_bytes(data)
                continue
            r = _run_treeplex(argv[1:], cwd)
            assert r.returncode == 0, f"{part}\nexit {r.returncode}\n{r.stderr[-2000:]}"
            after = _snapshot(cwd)
            _DONE[key] = {name: (cwd / name).read_bytes() for name, digest in after.items() if before.get(name) != digest}


@pytest.mark.parametrize("kind,where,body", CASES, ids=[f"{c[1]}:{c[0]}" for c in CASES])
def test_documented_command_runs(kind, where, body, tmp_path):
    if kind == "python":
        if "open_spiel" in body:
            pytest.importorskip("pyspiel", reason="needs open_spiel (extra 'openspiel')")
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        r = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
    else:
        _run_block(body, tmp_path)


def test_the_lists_name_documented_commands_only():
    """NOT_RUN does not outlive the commands it excuses."""
    documented = {c for kind, _, body in CASES if kind != "python" for c, _ in body}
    assert set(NOT_RUN) <= documented, sorted(set(NOT_RUN) - documented)


def test_the_parser_reads_blocks_variants_and_continuations():
    text = "intro\n\n    treeplex a  # test: treeplex b\n\n```\ntreeplex c \\\n   --x 1   # note\n```\n"
    blocks = code_blocks(text)
    assert [commands(b) for _, _, b in blocks] == [[("treeplex a", "treeplex b")], [("treeplex c --x 1",) * 2]]
    assert split_comment('treeplex solve "a#b" # c') == ('treeplex solve "a#b"', "c")
