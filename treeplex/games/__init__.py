"""Built-in games, the name parser (``make_game("leduc(ranks=5)")``) and :func:`load_game`."""

from __future__ import annotations

import ast
import importlib
import os
import re

from ..errors import check_params, defaults_of, read_json
from ..model.game import GameError

# name -> "module:class", imported when the game is made (the poker engines import numba)
GAMES = {
    "kuhn": "treeplex.games.kuhn:Kuhn",
    "leduc": "treeplex.games.leduc:Leduc",
    "simple_poker": "treeplex.games.simple_poker:SimplePoker",
    "rps_plus": "treeplex.games.rps_plus:RPSPlus",
    "nlfh": "treeplex.poker.nlfh:NLFH",
    "river": "treeplex.poker.river:RiverGame",  # builds its own structured Problem: RiverGame(...).problem()
    "postflop": "treeplex.poker.postflop:PostflopGame",  # flop, turn or river start, from the board's length
    "nlfh52": "treeplex.poker.nlfh52:NLFH52",  # NLFH (preflop + flop) on the public-tree engine
}


def game_class(name: str) -> type:
    """The class of built-in game ``name`` (a key of ``GAMES``)."""
    module, cls = GAMES[name].split(":")
    return getattr(importlib.import_module(module), cls)

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
        if call.args or any(kw.arg is None for kw in call.keywords):
            raise GameError(f"game parameters must be key=value in {spec!r}")
        for kw in call.keywords:
            if kw.arg in params:
                raise GameError(f"parameter {kw.arg!r} is given twice in {spec!r}")
            try:
                params[kw.arg] = ast.literal_eval(kw.value)
            except Exception:  # noqa: BLE001 - bare words (abstraction=libratus), or {[]: 1} etc.
                params[kw.arg] = _bare_word(ast.unparse(kw.value))
    return name, params


def _bare_word(text: str):
    """A bare word of a game name: ``true``/``false`` (any case) as booleans, as ``--param``
    reads them; anything else stays text (a board, an abstraction name)."""
    return {"true": True, "false": False}.get(text.strip().lower(), text)


def _plain_params(spec: str, args: str) -> dict:
    """Fallback for values Python cannot parse, e.g. ``board=7h2cAsKd3s``: split on commas.
    Commas inside a value stay in it (``bet=33%,75%,a``): a part without ``=`` continues the
    previous value."""
    pairs: list[list[str]] = []
    for part in args.split(","):
        key, eq, value = part.partition("=")
        if eq and key.strip().isidentifier():
            pairs.append([key.strip(), value.strip()])
        elif pairs and not eq:
            pairs[-1][1] += "," + part.strip()
        else:
            raise GameError(f"cannot parse parameters of {spec!r}; expected key=value, ...")
    params: dict = {}
    for key, value in pairs:
        if key in params:
            raise GameError(f"parameter {key!r} is given twice in {spec!r}")
        try:
            params[key] = ast.literal_eval(value)
        except Exception:  # noqa: BLE001 - a bare word such as a board, 7h2cAsKd3s
            params[key] = _bare_word(value)
    return params


def make_game(spec: str, **overrides):
    """Build a built-in game from its name, e.g. ``"kuhn"`` or ``"leduc(ranks=5)"``.

    ``overrides`` are extra parameters (e.g. ``range0=...`` from the CLI) that replace the spec's.
    """
    name, params = parse_game_name(spec)
    params.update(overrides)
    if name not in GAMES:
        raise GameError(f"unknown game {name!r}; built-in games: {', '.join(sorted(GAMES))}")
    check_params(defaults_of(game_class(name)), params, name)
    try:
        return game_class(name)(**params)
    except TypeError as e:
        raise GameError(f"bad parameters for {name}: {e}") from None
    except ValueError as e:
        raise GameError(str(e)) from None


def load_game(spec: str, **overrides):
    """The game ``spec`` names: a built-in name (``"leduc(ranks=5)"``), ``"openspiel:NAME(k=v,...)"``
    (any two-player zero-sum pyspiel game, :mod:`treeplex.io.openspiel`), a Gambit ``.efg`` path,
    or a ``.json``/``.toml`` spec file (``"game": "postflop"``, else a river endgame).

    ``overrides`` (e.g. ``range0``/``range1`` from the command line) replace game parameters.
    """
    if spec.startswith("openspiel:"):
        from ..io.openspiel import load_openspiel

        if overrides:
            raise GameError(f"{spec}: options {sorted(overrides)} do not apply to OpenSpiel games")
        return load_openspiel(spec)
    if spec.endswith((".json", ".toml")):
        from ..poker.postflop import load_postflop_spec
        from ..poker.river import load_spec

        _check_file(spec)
        data = _read_toml(spec) if spec.endswith(".toml") else read_json(spec, "spec")
        if isinstance(data, dict) and data.get("game") == "postflop":
            if overrides.get("locks") and isinstance(data.get("locks", []), list):  # --lock adds to the spec's
                overrides = {**overrides, "locks": [*(data.get("locks") or []), *overrides["locks"]]}
            return load_postflop_spec({**data, **overrides}, where=spec)
        if not isinstance(data, dict):
            raise GameError(f"{spec}: a river spec is a JSON object {{\"pot\": ..., \"board\": ...}}, "
                            f"not a {type(data).__name__}")
        return load_spec({**data, **overrides}, where=spec)
    if spec.endswith(".efg") or os.path.exists(spec):
        from ..io.efg import read_efg

        _check_file(spec)
        return read_efg(spec)
    return make_game(spec, **overrides)


def _check_file(path: str) -> None:
    if os.path.isdir(path):
        raise GameError(f"{path} is a directory, not a game file")
    if not os.path.isfile(path):
        raise GameError(f"no such file: {path}")


def _read_toml(path: str) -> dict:
    import tomllib

    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except (ValueError, UnicodeDecodeError) as e:
        raise GameError(f"{path}: bad TOML ({e})") from None


def load_problem(spec: str, max_memory: str | None = None, **overrides):
    """The Problem of the game ``spec`` names (:meth:`Game.problem <treeplex.model.game.Game.problem>`)."""
    return problem_for(load_game(spec, **overrides), spec, max_memory)


def problem_for(game, spec: str, max_memory: str | None = None):
    """``game.problem(max_memory)``, named ``spec`` for .efg files."""
    problem = game.problem(max_memory)
    if spec.endswith(".efg"):
        problem.name = spec
    return problem
