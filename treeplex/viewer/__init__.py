"""``treeplex view FILE [--compare B.json] [--html OUT.html]``: a saved solution in the browser.

The page is one self-contained HTML file (``page.html`` with ``viewer.css`` and ``viewer.js``
inlined, plain HTML/CSS/JS, no library) with the solution data inlined as JSON: it makes no
network request (its Content-Security-Policy forbids them). ``view`` writes it (``--html``)
or serves it from 127.0.0.1 on a free port until Ctrl-C.
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


def page_html(paths: list[str]) -> str:
    """The viewer page for the solution at ``paths[0]``, compared with ``paths[1]`` if given."""
    solutions = [read_solution(p) for p in paths]
    kinds = {kind(d) for d in solutions}
    if len(kinds) > 1:
        raise InputError(f"cannot compare {paths[0]} ({kind(solutions[0])}) with {paths[1]} ({kind(solutions[1])})")
    payload = {"files": [{"name": os.path.basename(p), "data": _finite(d)} for p, d in zip(paths, solutions)]}
    text = json.dumps(payload, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
    here = files(__package__)
    page = here.joinpath("page.html").read_text()
    for name in ("viewer.css", "viewer.js"):
        page = page.replace("{{" + name + "}}", here.joinpath(name).read_text())
    return page.replace("{{data}}", text)


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
    body = html.encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
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

    with ThreadingHTTPServer(("127.0.0.1", port), Handler) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        print(f"treeplex view: serving at {url} (Ctrl-C to stop)", flush=True)
        if open_browser and _has_display():
            import threading
            import webbrowser

            threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()  # a text browser may block
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
