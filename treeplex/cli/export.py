"""``treeplex export GAME``: the game as a Gambit ``.efg`` file."""

from __future__ import annotations

import argparse
import sys

from ..errors import InputError
from ..games import load_game
from ..io.files import check_output


def options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("game")
    sp.add_argument("--format", choices=["efg"], default="efg")
    sp.add_argument("-o", "--output", default=None)


def run(args) -> int:
    from ..io.efg import efg_lines

    if args.output:
        check_output(args.output, "-o", inputs={args.game: "the game file"})
    game = load_game(args.game)
    lines = efg_lines(game, title=game.name)
    if not args.output:
        sys.stdout.writelines(lines)
        return 0
    try:  # streamed: a large game is never held as text
        with open(args.output, "w", encoding="utf-8") as f:
            f.writelines(lines)
    except OSError as e:
        raise InputError(f"cannot write {args.output} ({e.strerror or e})") from None
    return 0
