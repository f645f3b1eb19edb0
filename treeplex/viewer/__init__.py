"""``treeplex view FILE [--compare B.json] [--html OUT.html]``: a saved solution in the browser.

The page is one self-contained HTML file (``page.html`` with ``viewer.css`` and ``viewer.js``
inlined, plain HTML/CSS/JS, no library) with the solution data inlined as JSON. Its
Content-Security-Policy (``default-src 'none'``) blocks every fetch,
image, font, frame and connection the page could make, runs only the one script whose sha256
it names (no inline script that data could reach), and forbids form submission
(``form-action 'none'``) and a ``<base>`` element (``base-uri 'none'``); it cannot stop a
user's own click on a link (``navigate-to`` was dropped from CSP and no browser applies it). ``view`` writes it
(``--html``) or serves it from 127.0.0.1 on a free port until Ctrl-C, answering only requests
whose Host header names that address (a DNS-rebinding page cannot read it).
"""

from __future__ import annotations

import json
import math
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files

from ..errors import InputError
from ..model.strategy import read_solution


def kind(data: dict) -> str:
    """``"poker"`` (per-hand strategies at betting nodes) or ``"profile"`` (infoset strategies)."""
    return "poker" if "nodes" in data else "profile"


def page_html(paths: list[str], max_memory: str | None = None) -> str:
    """The viewer page for the solution at ``paths[0]``, compared with ``paths[1]`` if given
    (each file's size checked against ``max_memory`` before it is read: :func:`read_solution`)."""
    solutions = [read_solution(p, max_memory) for p in paths]
    kinds = {kind(d) for d in solutions}
    if len(kinds) > 1:
        raise InputError(f"cannot compare {paths[0]} ({kind(solutions[0])}) with {paths[1]} ({kind(solutions[1])})")
    payload = {"files": [{"name": os.path.basename(p), "data": _finite(d)} for p, d in zip(paths, solutions)],
               "whatif": _finite(whatif_rows(solutions, [os.path.basename(p) for p in paths]))}
    text = json.dumps(payload, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
    here = files(__package__)
    page = here.joinpath("page.html").read_text()
    script = here.joinpath("viewer.js").read_text()
    page = page.replace("{{viewer.css}}", here.joinpath("viewer.css").read_text())
    page = page.replace("{{script-hash}}", script_hash(script)).replace("{{viewer.js}}", script)
    return page.replace("{{data}}", text)


def whatif_rows(solutions: list[dict], names: list[str]) -> list[dict]:
    """The page's "what changed and what it costs" rows: each player's EV gain (chips, and
    mbb/g and % of the pot where the file has a big blind and a pot) with its bound (the two
    solves' gaps summed), for A's locks against the baseline A records
    (:mod:`treeplex.run.whatif`), for A's rake against its unraked baseline (the gain is minus
    the rake's cost, each player's own value), and for A against B (A's value minus B's,
    player 0's)."""
    a = solutions[0]
    rows = []
    if "lock_ev_gain" in a:
        b = a["baseline"]
        g = a["lock_ev_gain"]
        rows.append({"what": f"A's locks against its baseline ({b.get('file') or 'solved with A'})",
                     "chips": g["chips"], "bound": g["error_bound_chips"]})
    if "rake_ev_cost" in a:
        b = a["baseline"]
        c = a["rake_ev_cost"]
        rows.append({"what": f"A's rake against its baseline without rake ({b.get('file') or 'solved with A'})",
                     "chips": [-x for x in c["chips"]], "bound": c["error_bound_chips"]})
    if (len(solutions) == 2 and all(isinstance(d.get("value"), (int, float)) for d in solutions)
            and solutions[0].get("game") == solutions[1].get("game")):  # a difference of one game's values
        d = solutions[0]["value"] - solutions[1]["value"]
        gaps = [x.get("gap") for x in solutions]
        rows.append({"what": f"A ({names[0]}) minus B ({names[1]})", "chips": [d, -d],
                     "bound": sum(gaps) if all(isinstance(x, (int, float)) for x in gaps) else None})
    for r in rows:
        if a.get("big_blind"):
            r["mbb"] = [1000 * c / a["big_blind"] for c in r["chips"]]
        if a.get("pot"):
            r["pct_pot"] = [100 * c / a["pot"] for c in r["chips"]]
    return rows


def script_hash(script: str) -> str:
    """The CSP source ``sha256-...`` of the page's one script element, whose text is
    ``"\n" + script + "\n"`` (page.html): the only script the page may run (CSP 3, hash source)."""
    import base64
    import hashlib

    return "sha256-" + base64.b64encode(hashlib.sha256(("\n" + script + "\n").encode()).digest()).decode()


def _finite(obj):
    """``obj`` with NaN and infinities as None: JSON.parse in the browser rejects them."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def _has_display() -> bool:
    """Whether a graphical browser can open here (not on a headless Linux box)."""
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def serve(html: str, open_browser: bool = True, port: int = 0) -> None:
    """Serve ``html`` at http://127.0.0.1:PORT/ (a free port unless given) until interrupted."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InputError(f"--port must be 0 (a free port) or 1..65535, got {port!r}")
    body = html.encode()
    hosts: set = set()  # the Host headers this server answers, once its port is known

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            if self.headers.get("Host", "").lower() not in hosts:  # DNS rebinding: another site's name
                self.send_error(421, "Misdirected Request")
                return
            if self.path not in ("/", "/index.html"):
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # quiet
            pass

    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    except OSError as e:
        raise InputError(f"--port {port}: cannot listen on 127.0.0.1:{port} ({e.strerror or e})") from None
    with server:
        bound = server.server_address[1]
        hosts.update({f"127.0.0.1:{bound}", f"localhost:{bound}"})
        url = f"http://127.0.0.1:{bound}/"
        print(f"treeplex view: serving at {url} (Ctrl-C to stop)", flush=True)
        if open_browser and _has_display():
            import threading
            import webbrowser

            threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()  # a text browser may block
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
