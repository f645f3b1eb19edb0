"""``treeplex view FILE``: a saved solution in the browser (tree, 13x13 grids, comparison)."""

from __future__ import annotations

import argparse


def options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("file", help="a solution written by solve --out (postflop, river or any game's profile)")
    sp.add_argument("--compare", default=None, metavar="B.json", help="a second solution of the same game to compare")
    sp.add_argument("--html", default=None, metavar="OUT.html", help="write the page to this file instead of serving it")
    sp.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    sp.add_argument("--no-open", action="store_true", help="do not open a browser, only print the address")
    sp.add_argument("--max-memory", default=None, metavar="SIZE",
                    help="refuse a file estimated to need more to read and show (default: the memory available)")


def run(args) -> int:
    from ..viewer import page_html, serve

    html = page_html([args.file] + ([args.compare] if args.compare else []), args.max_memory)
    if args.html:
        with open(args.html, "w") as f:
            f.write(html)
        print(f"wrote {args.html} ({len(html.encode()) / 1024:.0f} KiB)")
        return 0
    serve(html, open_browser=not args.no_open, port=args.port)
    return 0
