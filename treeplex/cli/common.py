"""What several subcommands share: the game's range and memory options, ``--range0/--range1``
as ``load_game`` keywords, and ``--param KEY=VALUE`` items as solver keywords."""

from __future__ import annotations

import argparse
import ast

from ..errors import InputError


def add_memory_arg(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--max-memory", default=None, metavar="SIZE",
                    help="refuse games (and the LP) estimated to need more (e.g. 4G; default: the available memory)")


def add_range_args(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--range0", default=None, help="river: player 0's range, Pio style ('QQ-88,AKs,AA:0.5')")
    sp.add_argument("--range1", default=None, help="river: player 1's range")


def overrides(args) -> dict:
    """``load_game`` keywords from ``--range0/--range1``."""
    return {k: v for k in ("range0", "range1") if (v := getattr(args, k, None)) is not None}


def _parse_value(text: str):
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_params(items: list[str]) -> dict:
    """``--param KEY=VALUE`` items as keywords (values as Python literals, true/false, else text)."""
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise InputError(f"--param {item!r}: expected KEY=VALUE")
        params[key.strip()] = _parse_value(value)
    return params
