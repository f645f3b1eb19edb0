"""Read and write Gambit's extensive-form ``.efg`` files (the "EFG 2 R" format).

A file is a header and then the game tree's nodes in prefix order (a node, then the
subtrees of its actions in order)::

    EFG 2 R "title" { "Player 1" "Player 2" } "optional comment"
    c "node" 1 "deal" { "J" 1/3 "Q" 1/3 "K" 1/3 } 0
    p "node" 1 1 "infoset" { "pass" "bet" } 0
    t "node" 1 "outcome" { 1, -1 }
    ...

- ``c "name" infoset [ "infoset name" ] [ { "action" prob ... } ] outcome ...`` is a chance
  node, ``p "name" player infoset [ "infoset name" ] [ { "action" ... } ] outcome ...`` a
  decision ("personal") node of player 1 or 2, and ``t "name" outcome ...`` a terminal.
- ``outcome`` is ``number [ "outcome name" ] [ { payoff1 payoff2 } ]``; 0 means none.
- The infoset name and action list, and the outcome name and payoffs, may be left out
  on later uses of the same infoset or outcome number (Gambit writes them only once in
  older files); the first definition is used. A later definition that disagrees with the
  first one (other actions, probabilities or payoffs) is an error. Names may always
  differ; the first one is kept.
- Infoset numbers are per player; chance nodes are player 0 in that numbering. Nodes of
  the same player with the same infoset number are one information set.
- Lists may be separated by spaces and/or commas. Numbers are integers, decimals
  (``0.5``, ``1e-3``) or fractions (``1/3``). Labels are double-quoted; ``\\"`` is a quote
  and ``\\\\`` a backslash inside a label (other backslashes are kept as they are).
- Empty or repeated action labels within an infoset are renamed as Gambit does:
  ``""`` becomes ``"_1"``, and ``"x", "x"`` become ``"x_1", "x_2"``.

Semantics for this package: exactly two players (file players 1 and 2 are our players 0
and 1). Outcomes on non-terminal nodes count too: a terminal's payoff is the sum of the
outcomes on its path from the root. Terminals get the pair ``(u0, u1)``, so the compiler
accepts constant-sum games and refuses general-sum ones. Chance probabilities must be
>= 0 here; their sum (1 within 1e-9) and perfect recall are checked by
:func:`~treeplex.model.compile.compile_game`. An infoset's key is ``"number:name"`` (just
``"number"`` when it has no name): readable, and unique because of the number.

Files written by OpenSpiel's ``open_spiel.python.algorithms.gambit.export_gambit`` load:
they give every chance node its own infoset, write probabilities with 16 decimals
(``0.3333333333333333``, so sums are 1 only within ~1e-16), leave infoset and outcome names
empty, and do not escape quotes in labels.

Errors raise :class:`~treeplex.model.game.GameError` with a message ``"file:line: what is wrong"``.
Reading is linear: one regular expression splits the whole text into tokens, and the tree
is built with an explicit stack, so deep trees are fine.

:func:`write_efg` writes any game (rules class or explicit tree) in this format: one
outcome per terminal with payoffs ``(u0, -u0)`` (or the pair the game gives), chance
probabilities as ``repr(float)`` so that they read back exactly, infoset numbers per player
in first-visit order, and ``str(infoset_key)`` as the infoset name.
"""

from __future__ import annotations

import gc
import itertools
import math
import os
import re
from fractions import Fraction
from typing import IO

from ..model.game import ExplicitGame, Game, GameError, chance, decision, terminal

# Whitespace, then a token: a quoted label (with backslash escapes), a brace or comma, a bare
# word (number, node type, or garbage), or a lone quote that starts an unterminated label.
_TOKEN = re.compile(r'\s*("[^"\\]*(?:\\.[^"\\]*)*"|[{},]|[^\s{},"]+|")', re.S)
_ESCAPE = re.compile(r'\\(["\\])')
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_FRACTION = re.compile(r"([+-]?\d+)/(\d+)")


def _parse_number(token: str) -> float | None:
    """Value of a decimal or fraction token (inf when it overflows a float), or None if it is not a number."""
    if _DECIMAL.fullmatch(token):
        return float(token)
    m = _FRACTION.fullmatch(token)
    if m and int(m.group(2)) != 0:
        try:
            return float(Fraction(int(m.group(1)), int(m.group(2))))
        except OverflowError:
            return math.inf
    return None


def _unquote(token: str) -> str:
    s = token[1:-1]
    return _ESCAPE.sub(r"\1", s) if "\\" in s else s


def _quote(label) -> str:
    return '"' + str(label).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _show(token: str) -> str:
    return repr(token if len(token) <= 40 else token[:37] + "...")


def _normalize_labels(labels: list[str]) -> tuple[str, ...]:
    """Make labels unique and non-empty the way Gambit does ("" -> "_1"; "x", "x" -> "x_1", "x_2")."""
    if "" not in labels and len(set(labels)) == len(labels):
        return tuple(labels)
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    used = set(labels)
    visited: dict[str, int] = {}
    out = []
    for label in labels:
        if counts[label] == 1 and label != "":
            out.append(label)
            continue
        while True:
            visited[label] = visited.get(label, 0) + 1
            candidate = f"{label}_{visited[label]}"
            if candidate not in used:
                break
        used.add(candidate)
        out.append(candidate)
    return tuple(out)


class _Infoset:
    """An information set as first defined in the file."""

    __slots__ = ("key", "labels", "raw", "probs", "tokens", "at")

    def __init__(self, key, labels, raw, probs, tokens, at):
        self.key = key  # infoset key for decision nodes
        self.labels = labels  # normalized action labels
        self.raw = raw  # action labels as written, to compare later definitions
        self.probs = probs  # chance probabilities, or None for a player's infoset
        self.tokens = tokens  # the tokens between the braces, to recognize repeats quickly
        self.at = at  # token index of the node that defined it


_PAD = 8  # empty tokens after the end, so that looking a few tokens ahead needs no bounds checks


class _Reader:
    def __init__(self, text: str, filename: str):
        self.text = text
        self.filename = filename
        self.toks = _TOKEN.findall(text)
        self.n = len(self.toks)
        self.toks += [""] * _PAD
        self.i = 0  # index of the next token
        self.infosets: dict[tuple[int, int], _Infoset] = {}  # (file player, number); chance = 0
        self.outcomes: dict[int, tuple[tuple[float, float], int]] = {}  # number -> (payoffs, at)
        self.values: dict[str, float] = {}  # number token -> value

    # ------------------------------------------------------------- errors

    def line(self, at: int) -> int:
        """Line number of token ``at`` (the last line for the end of the file)."""
        if at >= self.n:
            return self.text.rstrip().count("\n") + 1
        m = next(itertools.islice(_TOKEN.finditer(self.text), at, None))
        return self.text.count("\n", 0, m.start(1)) + 1

    def fail(self, message: str, at: int):
        raise GameError(f"{self.filename}:{self.line(at)}: {message}")

    def found(self, at: int) -> str:
        return "the end of the file" if at >= self.n else _show(self.toks[at])

    def elsewhere(self, at: int, open_at: int) -> str:
        """' (on line N)' when token ``at`` is on another line than the list's opening brace."""
        line = self.line(at)
        return f" (on line {line})" if line != self.line(open_at) else ""

    # ------------------------------------------------------------- tokens

    def label(self, what: str) -> str:
        at = self.i
        t = self.toks[at]
        if t[:1] != '"' or len(t) < 2:
            if t == '"':
                self.fail("a quoted label is not closed (no matching '\"' before the end of the file)", at)
            self.fail(f"expected {what} (a quoted label), found {self.found(at)}", at)
        self.i = at + 1
        return _unquote(t) if "\\" in t else t[1:-1]

    def integer(self, what: str) -> int:
        at = self.i
        t = self.toks[at]
        if not (t.isascii() and t.isdigit()):
            self.fail(f"expected {what}, found {self.found(at)}", at)
        self.i = at + 1
        return int(t)

    def value(self, at: int, what: str) -> float | None:
        """Value of the number token at ``at`` (cached), or None if it is not a number; a
        number too large for a float (``1e999``) is an error naming ``what``."""
        t = self.toks[at]
        v = self.values.get(t)
        if v is None:
            v = _parse_number(t)
            if v is not None and not math.isfinite(v):
                self.fail(f"{what} {_show(t)} is not a finite number (too large for a float)", at)
            if v is not None:
                self.values[t] = v
        return v

    def expect(self, token: str, what: str) -> None:
        if self.toks[self.i] != token:
            self.fail(f"expected {token!r} {what}, found {self.found(self.i)}", self.i)
        self.i += 1

    # ------------------------------------------------------------- structure

    def header(self) -> tuple[str, list[str], str]:
        toks = self.toks
        if toks[self.i] != "EFG":
            self.fail("not a Gambit extensive-form file: it must start with 'EFG 2 R'", self.i)
        self.i += 1
        if toks[self.i] != "2":
            self.fail(f"only version 2 of the EFG format is supported, found {self.found(self.i)}", self.i)
        self.i += 1
        if toks[self.i] not in ("R", "D"):
            self.fail(f"expected 'R' or 'D' after 'EFG 2', found {self.found(self.i)}", self.i)
        self.i += 1
        title = self.label("the game title")
        players_at = self.i
        self.expect("{", "to open the list of players")
        players = []
        while toks[self.i] != "}":
            if toks[self.i] == ",":
                self.i += 1
            else:
                players.append(self.label("a player name or '}'"))
        self.i += 1
        if len(players) != 2:
            self.fail(f"the game has {len(players)} players; only two-player zero-sum games are supported", players_at)
        comment = self.label("the comment") if toks[self.i][:1] == '"' else ""
        return title, players, comment

    def braced(self, what: str):
        """Positions of the entries of the ``{ ... }`` list whose '{' is at the cursor (commas
        skipped); the cursor ends after the '}'. The caller may consume tokens after an entry."""
        open_at = self.i
        self.i += 1
        while True:
            at = self.i
            if at >= self.n:
                self.fail(f"unexpected end of file in {what} (missing '}}')", open_at)
            t = self.toks[at]
            self.i = at + 1
            if t == "}":
                return
            if t != ",":
                yield at

    def action_list(self, is_chance: bool) -> tuple[list[str], tuple[float, ...] | None]:
        """``{ "a" "b" ... }``, or ``{ "a" p "b" q ... }`` at chance nodes."""
        toks, open_at = self.toks, self.i
        labels: list[str] = []
        probs: list[float] = []
        for at in self.braced("an action list"):
            t = toks[at]
            if t[:1] != '"' or len(t) < 2:
                self.fail(
                    f"expected an action label in quotes or '}}' in the action list, found {_show(t)}"
                    + self.elsewhere(at, open_at)
                    + " (is the closing '}' missing?)",
                    open_at,
                )
            labels.append(_unquote(t))
            if is_chance:
                if toks[self.i] == ",":
                    self.i += 1
                at = self.i
                p = self.value(at, f"the probability of chance action {labels[-1]!r}") if at < self.n else None
                if p is None:
                    self.fail(
                        f"expected the probability of chance action {labels[-1]!r}, found {self.found(at)}"
                        + self.elsewhere(at, open_at),
                        open_at,
                    )
                if not p >= 0.0 or not math.isfinite(p):
                    self.fail(f"chance action {labels[-1]!r} has probability {toks[at]}; it must be >= 0", at)
                probs.append(p)
                self.i = at + 1
        if not labels:
            self.fail("empty action list: a chance or decision node needs at least one action", open_at)
        return labels, (tuple(probs) if is_chance else None)

    def infoset(self, player: int, number: int, at: int) -> _Infoset:
        """Optional infoset name and action list; the infoset they define or refer to."""
        toks = self.toks
        known = self.infosets.get((player, number))
        j = self.i
        if known is not None:
            # fast path: the same name-and-action-list text as before (files written by
            # Gambit and OpenSpiel repeat it at every node)
            m = len(known.tokens)
            if (
                toks[j + 1] == "{"
                and toks[j][:1] == '"'
                and toks[j + 2 + m] == "}"
                and toks[j + 2 : j + 2 + m] == known.tokens
                and len(toks[j]) > 1
            ):
                self.i = j + 3 + m
                return known
        name = self.label("an infoset name") if toks[j][:1] == '"' else None
        labels = probs = None
        open_at = self.i
        if toks[open_at] == "{":
            labels, probs = self.action_list(player == 0)
        who = "chance" if player == 0 else f"player {player}"
        if known is None:
            if labels is None:
                self.fail(f"{who} infoset {number} is used before its actions are given", at)
            key = f"{number}:{name}" if name else str(number)
            tokens = toks[open_at + 1 : self.i - 1]
            known = _Infoset(key, _normalize_labels(labels), tuple(labels), probs, tokens, at)
            self.infosets[(player, number)] = known
        elif labels is not None and (tuple(labels) != known.raw or probs != known.probs):
            first = self.line(known.at)
            if len(labels) != len(known.raw):
                self.fail(
                    f"{who} infoset {number} has {len(labels)} actions here but {len(known.raw)} "
                    f"on line {first}",
                    at,
                )
            if tuple(labels) != known.raw:
                self.fail(f"{who} infoset {number} has actions {labels} here but {list(known.raw)} on line {first}", at)
            self.fail(
                f"chance infoset {number} has probabilities {list(probs)} here but {list(known.probs)} "
                f"on line {first}",
                at,
            )
        return known

    def payoffs(self) -> tuple[float, float]:
        """``{ u1 u2 }`` (commas optional)."""
        toks, values, open_at = self.toks, self.values, self.i
        pay: list[float] = []
        for at in self.braced("a payoff list"):
            t = toks[at]
            v = values.get(t)
            if v is None:
                v = self.value(at, "the payoff")
                if v is None:
                    self.fail(
                        f"expected a payoff (a number) or '}}' in the payoff list, found {_show(t)}"
                        + self.elsewhere(at, open_at)
                        + " (is the closing '}' missing?)",
                        open_at,
                    )
            pay.append(v)
        if len(pay) != 2:
            self.fail(f"an outcome needs 2 payoffs, one per player, but has {len(pay)}", open_at)
        return pay[0], pay[1]

    def outcome(self) -> tuple[float, float] | None:
        """``number [ "name" ] [ { u1 u2 } ]``: the payoffs, or None for outcome 0."""
        toks, at = self.toks, self.i
        if toks[at] == "0" and toks[at + 1] != "{" and toks[at + 1][:1] != '"':
            self.i = at + 1  # fast path: no outcome
            return None
        number = self.integer("an outcome number (a whole number, 0 for none)")
        name = self.label("an outcome name") if toks[self.i][:1] == '"' else None
        pay = self.payoffs() if toks[self.i] == "{" else None
        if number == 0:
            if name is not None or pay is not None:
                self.fail("outcome 0 means 'no outcome' and cannot have a name or payoffs", at)
            return None
        known = self.outcomes.get(number)
        if pay is None:
            if known is None:
                self.fail(f"outcome {number} is used before its payoffs are given", at)
            return known[0]
        if known is None:
            self.outcomes[number] = (pay, at)
        elif known[0] != pay:
            self.fail(
                f"outcome {number} has payoffs {list(pay)} here but {list(known[0])} on line {self.line(known[1])}",
                at,
            )
        return pay

    def tree(self):
        """Read the nodes in prefix order; return the root.

        The common cases are decoded inline (this loop runs once per node); anything
        unusual, and every error, goes through the general methods above.
        """
        toks, values, outcomes = self.toks, self.values, self.outcomes
        root = None
        # open nodes that still miss children: [node, infoset, next child, payoff so far u0, u1]
        frames: list[list] = []
        while True:
            at = i = self.i
            kind = toks[i]
            if kind != "p" and kind != "t" and kind != "c":
                if at >= self.n:
                    self.fail("unexpected end of file: the game tree is incomplete (a node lacks children)", at)
                self.fail(f"unknown node type {_show(kind)}; expected 'c' (chance), 'p' (player) or 't' (terminal)", at)
            name = toks[i + 1]
            if name[:1] == '"' and len(name) > 1:
                self.i = i = i + 2
            else:
                self.i = i + 1
                self.label("a node name")  # raises
            if kind == "t":
                info = None
            else:
                if kind == "c":
                    player = 0
                else:
                    t = toks[i]
                    if t == "1" or t == "2":
                        player = int(t)
                        self.i = i = i + 1
                    else:
                        player = self.integer("a player number (1 or 2)")
                        self.fail(f"player {player} does not exist; players are 1 and 2", at)
                t = toks[i]
                if t.isdigit() and t.isascii():
                    self.i = i + 1
                    number = int(t)
                else:
                    number = self.integer("an infoset number (a whole number)")
                info = self.infoset(player, number, at)

            # outcome; inline: "0" alone, or a new outcome 'number "name" { u1 u2 }' (or "u1, u2")
            acc0, acc1 = (frames[-1][3], frames[-1][4]) if frames else (0.0, 0.0)
            i = self.i
            t, t1 = toks[i], toks[i + 1]
            if t == "0" and t1 != "{" and t1[:1] != '"':
                self.i = i + 1
            else:
                u0 = u1 = end = None
                if toks[i + 2] == "{" and t1[:1] == '"' and len(t1) > 1:
                    a, b, c = toks[i + 3], toks[i + 4], toks[i + 5]
                    if c == "}":
                        u0, u1, end = values.get(a), values.get(b), i + 6
                    elif b == "," and toks[i + 6] == "}":
                        u0, u1, end = values.get(a), values.get(c), i + 7
                if u0 is not None and u1 is not None and t.isdigit() and t.isascii() and int(t) not in outcomes:
                    outcomes[int(t)] = ((u0, u1), i)
                    self.i = end
                else:
                    u0, u1 = self.outcome() or (0.0, 0.0)
                acc0 += u0
                acc1 += u1

            if info is None:
                node = terminal((acc0, acc1))
            elif player == 0:
                node = chance([])
            else:
                node = decision(player - 1, info.key, {})
            if frames:  # attach to the parent, as the child of its next action
                frame = frames[-1]
                parent, pinfo, k = frame[0], frame[1], frame[2]
                if pinfo.probs is not None:
                    parent.outcomes.append((pinfo.labels[k], pinfo.probs[k], node))
                else:
                    parent.actions[pinfo.labels[k]] = node
                if k + 1 == len(pinfo.labels):
                    frames.pop()
                else:
                    frame[2] = k + 1
            else:
                root = node
            if info is not None:
                frames.append([node, info, 0, acc0, acc1])
            if not frames:
                break
        if self.i < self.n:
            self.fail(f"unexpected {self.found(self.i)} after the end of the game tree", self.i)
        return root


def parse_efg(text: str, filename: str = "<string>") -> ExplicitGame:
    """Parse the text of a Gambit ``.efg`` file; ``filename`` is used in error messages."""
    if text.startswith("\ufeff"):
        text = text[1:]
    reader = _Reader(text, filename)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of new objects, none garbage: the collector would only slow this down
    try:
        title, players, comment = reader.header()
        root = reader.tree()
    finally:
        if gc_was_enabled:
            gc.enable()
    name = title or os.path.splitext(os.path.basename(filename))[0] or "efg"
    game = ExplicitGame(root, name=name)
    game.title = title
    game.player_names = tuple(players)
    game.comment = comment
    return game


def read_efg(source) -> ExplicitGame:
    """Read a Gambit ``.efg`` game from a path, or from the file's text if ``source`` starts with "EFG"."""
    if isinstance(source, bytes):
        source = source.decode("utf-8", errors="replace")
    if isinstance(source, str) and re.match(r"\ufeff?\s*EFG\s", source):
        return parse_efg(source)
    path = os.fspath(source)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise GameError(f"{path}: cannot read the file: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return parse_efg(text, filename=str(path))


# ------------------------------------------------------------------------ writer


def _number(x) -> str:
    """Shortest text that reads back as the same float: '1', '-0.5', '0.1', '1e-05'."""
    x = float(x)
    if not math.isfinite(x):
        raise GameError(f"cannot write the non-finite number {x!r} to an .efg file")
    text = repr(x)
    return text[:-2] if text.endswith(".0") else text


def write_efg(game: Game, file_or_path: str | os.PathLike | IO[str] | None = None, title: str | None = None) -> str:
    """Write ``game`` in Gambit's ``.efg`` format; return the text, and save it if a file or path is given.

    The text is that of :func:`efg_lines`, which yields it node by node (for large games).
    """
    text = "".join(efg_lines(game, title))
    if file_or_path is not None:
        if hasattr(file_or_path, "write"):
            file_or_path.write(text)
        else:
            with open(file_or_path, "w", encoding="utf-8") as f:
                f.write(text)
    return text


def efg_lines(game: Game, title: str | None = None):
    """The ``.efg`` text of ``game``, one line at a time.

    Walks the game once, depth-first (iteratively). Each chance node gets its own chance
    infoset; each decision node the number of its ``infoset_key()`` (numbered per player in
    first-visit order), named ``str(key)``; each terminal its own outcome.
    """
    names = getattr(game, "player_names", None) or ("Player 1", "Player 2")
    if title is None:
        title = getattr(game, "title", None) or getattr(game, "name", "game")
    yield f"EFG 2 R {_quote(title)} {{ {_quote(names[0])} {_quote(names[1])} }}\n"
    comment = getattr(game, "comment", "")
    if comment:
        yield _quote(comment) + "\n"
    yield "\n"
    numbers: tuple[dict, dict] = ({}, {})  # per player: infoset key -> number
    n_chance = n_outcomes = 0
    stack = [game.initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            u = state.payoff()
            u0, u1 = (u[0], u[1]) if isinstance(u, tuple) else (u, 0.0 - float(u))
            n_outcomes += 1
            yield f't "" {n_outcomes} "" {{ {_number(u0)}, {_number(u1)} }}\n'
        elif state.is_chance():
            outcomes = list(state.chance_outcomes())
            n_chance += 1
            actions = " ".join(f"{_quote(label)} {_number(p)}" for label, p in outcomes)
            yield f'c "" {n_chance} "" {{ {actions} }} 0\n'
            stack.extend(state.apply(label) for label, _ in reversed(outcomes))
        else:
            player = state.player()
            if player not in (0, 1):
                raise GameError(f"cannot write a decision node of player {player!r}; players are 0 and 1")
            key = state.infoset_key()
            table = numbers[player]
            number = table.get(key)
            if number is None:
                number = table[key] = len(table) + 1
            labels = list(state.legal_actions())
            actions = " ".join(_quote(label) for label in labels)
            yield f"p \"\" {player + 1} {number} {_quote(key)} {{ {actions} }} 0\n"
            stack.extend(state.apply(label) for label in reversed(labels))
