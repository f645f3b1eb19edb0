"""Built-in games, the name parser (``make_game("leduc(ranks=5)")``) and :func:`load_game`."""

from __future__ import annotations

import ast
import json
import os
import re

from ..game import GameError
from .kuhn import Kuhn
from .leduc import Leduc
from .rps_plus import RPSPlus
from .simple_poker import SimplePoker
from ..poker.nlfh import NLFH
from ..poker.river import RiverGame

GAMES = {
    "kuhn": Kuhn,
    "leduc": Leduc,
    "simple_poker": SimplePoker,
    "rps_plus": RPSPlus,
    "nlfh": NLFH,
    "river": RiverGame,  # builds its own structured Problem: RiverGame(...).problem()
}

_NAME = re.compile(r"^\s*([A-Za-z_][\w]*)\s*(?:\((.*)\))?\s*$", re.S)


def parse_game_name(spec: str) -> tuple[str, dict]:
    """``"leduc(ranks=5)"`` -> ``("leduc", {"ranks": 5})``; values are Python literals."""
    m = _NAME.match(spec)
    if not m:
        raise GameError(f"cannot parse game name {spec!r}; expected NAME or NAME(key=value, ...)")
    name, args = m.group(1), m.group(2)
    params: dict = {}
    if args and args.strip():
        try:
            call = ast.parse(f"f({args})", mode="eval").body
        except SyntaxError:
            return name, _plain_params(spec, args)
        if call.args:
            raise GameError(f"game parameters must be key=value in {spec!r}")
        for kw in call.keywords:
            try:
                params[kw.arg] = ast.literal_eval(kw.value)
            except ValueError:
                params[kw.arg] = ast.unparse(kw.value)  # bare words, e.g. abstraction=libratus
    return name, params


def _plain_params(spec: str, args: str) -> dict:
    """Fallback for values Python cannot parse, e.g. ``board=7h2cAsKd3s``: split on commas."""
    params: dict = {}
    for part in args.split(","):
        key, eq, value = part.partition("=")
        if not eq or not key.strip().isidentifier():
            raise GameError(f"cannot parse parameters of {spec!r}; expected key=value, ...")
        try:
            params[key.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            params[key.strip()] = value.strip()
    return params


def make_game(spec: str, **overrides):
    """Build a built-in game from its name, e.g. ``"kuhn"`` or ``"leduc(ranks=5)"``.

    ``overrides`` are extra parameters (e.g. ``range0=...`` from the CLI) that replace the spec's.
    """
    name, params = parse_game_name(spec)
    params.update(overrides)
    if name not in GAMES:
        raise GameError(f"unknown game {name!r}; built-in games: {', '.join(sorted(GAMES))}")
    try:
        return GAMES[name](**params)
    except TypeError as e:
        raise GameError(f"bad parameters for {name}: {e}") from None
    except ValueError as e:
        raise GameError(str(e)) from None


def load_game(spec: str, **overrides):
    """The game ``spec`` names: a built-in name (``"leduc(ranks=5)"``), ``"openspiel:NAME(k=v,...)"``
    (any two-player zero-sum pyspiel game, :mod:`treeplex.openspiel`), a Gambit ``.efg`` path,
    or a river endgame ``.json`` spec file.

    ``overrides`` (e.g. ``range0``/``range1`` from the command line) replace game parameters.
    """
    if spec.startswith("openspiel:"):
        from ..openspiel import load_openspiel

        if overrides:
            raise GameError(f"{spec}: options {sorted(overrides)} do not apply to OpenSpiel games")
        return load_openspiel(spec)
    if spec.endswith(".json"):
        from ..poker.river import load_spec

        if not os.path.isfile(spec):
            raise GameError(f"no such file: {spec}")
        return load_spec({**_read_json(spec), **overrides}, where=spec)
    if spec.endswith(".efg") or os.path.isfile(spec):
        from ..efg import read_efg

        if not os.path.isfile(spec):
            raise GameError(f"no such file: {spec}")
        return read_efg(spec)
    return make_game(spec, **overrides)


def _read_json(path: str) -> dict:
    try:
        with open(path) as f:
            return json.load(f)
    except ValueError as e:
        raise GameError(f"{path}: bad JSON ({e})") from None
