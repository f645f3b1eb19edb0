"""Headless chromium driven over the Chrome DevTools protocol (a websocket), for the viewer tests.

``Browser()`` starts a fresh headless chromium (own --user-data-dir, no network services) and
attaches to its page; ``open(url)`` loads a page and waits for ``body[data-ready]``;
``js(expr)`` evaluates an expression and returns its value; ``click``/``hover`` move the
real mouse over an element (Input.dispatchMouseEvent); ``screenshot(path)`` writes a PNG.
Page exceptions and the URLs the page requested are collected in ``errors`` and ``requests``.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--remote-debugging-port=0"]


def find_chromium() -> str | None:
    """$TREEPLEX_CHROMIUM, or the first chromium on PATH."""
    if os.environ.get("TREEPLEX_CHROMIUM"):
        return os.environ["TREEPLEX_CHROMIUM"]
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


class Browser:
    def __init__(self, width: int = 1360, height: int = 900, timeout: float = 30.0):
        import websocket  # websocket-client, in the test extra

        self.profile = tempfile.mkdtemp(prefix="treeplex-chromium-")
        self.proc = subprocess.Popen([find_chromium(), *FLAGS, f"--user-data-dir={self.profile}",
                                      f"--window-size={width},{height}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.timeout = timeout
        port = self._devtools_port()
        deadline = time.monotonic() + timeout
        while True:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout) as r:
                pages = [t for t in json.load(r) if t["type"] == "page"]
            if pages or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=timeout, suppress_origin=True)
        self.ids = itertools.count(1)
        self.errors: list[str] = []
        self.requests: list[str] = []
        for domain in ("Page", "Runtime", "Network"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _devtools_port(self) -> int:
        path = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with code {self.proc.returncode}")
            if os.path.exists(path):
                text = open(path).read().split()
                if text:
                    return int(text[0])
            time.sleep(0.05)
        raise RuntimeError("chromium did not open its DevTools port")

    def send(self, method: str, **params):
        """Send a command and return its result, recording events met on the way."""
        i = next(self.ids)
        self.ws.send(json.dumps({"id": i, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == i:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._event(msg)

    def _event(self, msg: dict) -> None:
        method, params = msg.get("method"), msg.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = params["exceptionDetails"]
            self.errors.append(d.get("exception", {}).get("description") or d.get("text", "exception"))
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])

    def js(self, expression: str):
        r = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression!r}: {r['exceptionDetails'].get('exception', {}).get('description')}")
        return r["result"].get("value")

    def open(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        self.wait("document.readyState === 'complete' && document.body && document.body.dataset.ready === '1'")

    def wait(self, condition: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not self.js(f"!!({condition})"):
            if self.errors:
                raise RuntimeError(f"page error: {self.errors[0]}")
            if time.monotonic() > deadline:
                raise TimeoutError(condition)
            time.sleep(0.05)

    def _center(self, selector: str) -> tuple[float, float]:
        rect = self.js(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            if (!e) return null; e.scrollIntoView({{block: 'nearest', inline: 'nearest'}});
            const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()""")
        if rect is None:
            raise LookupError(f"no element {selector!r}")
        return rect[0], rect[1]

    def hover(self, selector: str) -> None:
        x, y = self._center(selector)
        self.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)

    def click(self, selector: str) -> None:
        x, y = self._center(selector)
        self.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def screenshot(self, path: str) -> None:
        data = self.send("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            shutil.rmtree(self.profile, ignore_errors=True)
