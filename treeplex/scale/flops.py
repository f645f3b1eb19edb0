"""Suit-isomorphic flops, their texture classes, and batch specs for a set of them.

Two flops are isomorphic when a permutation of the suits maps one onto the other; the 22,100
flops of a 52-card deck fall into 1,755 classes. Each class is written as its
representative (cards by rank, high first; suits named in order of first use: s, h, d, c)
with ``weight`` = the number of flops in it (it sums to C(52, 3) over all classes).

Two groupings of flops, each a partition (every flop in exactly one class):

* the **texture class**, first rule that applies: ``paired`` (two or three cards of one
  rank, trips included), ``monotone`` (three cards of one suit), ``two-tone`` (exactly two
  of one suit), ``rainbow`` (three suits). On the full deck: 325 paired, 286 monotone,
  858 two-tone, 286 rainbow.
* the **high card**: the flop's highest rank, ``A-high`` ... ``2-high`` (as solvers'
  aggregate reports group them; paired flops included: AAK is A-high).
"""

from __future__ import annotations

import functools
import itertools
import json

from ..errors import InputError, read_json
from ..poker.cards import RANKS, card_name, flop_texture, parse_cards

TEXTURES = ("paired", "monotone", "two-tone", "rainbow")
HIGH_CARDS = tuple(f"{r}-high" for r in reversed(RANKS))
SUBSETS = ("all",) + TEXTURES + HIGH_CARDS
SUIT_ORDER = (3, 2, 1, 0)  # representatives name suits s, h, d, c in order of first use


def iso_flops(deck=None) -> list[tuple[tuple[int, int, int], int]]:
    """[(representative flop, number of flops in its class)] over ``deck`` (card ids, every
    suit of its ranks; default 52 cards), ordered by the representatives' ranks, high first."""
    return _iso_flops(tuple(sorted(range(52) if deck is None else deck)))


@functools.lru_cache(maxsize=4)
def _iso_flops(cards: tuple) -> list:
    if {r * 4 + s for r in {c // 4 for c in cards} for s in range(4)} != set(cards):
        raise InputError("suit-isomorphic flops need a deck with every suit of its ranks")
    classes: dict[tuple, int] = {}
    for flop in itertools.combinations(cards, 3):
        key = _class_key(flop)
        classes[key] = classes.get(key, 0) + 1
    return [(tuple(-r * 4 + SUIT_ORDER[s] for r, s in key), n) for key, n in sorted(classes.items())]


def canonical_flop(flop) -> tuple[int, int, int]:
    """The representative of ``flop``'s class (card ids, rank high first)."""
    return tuple(-r * 4 + SUIT_ORDER[s] for r, s in _class_key(flop))


def _class_key(flop) -> tuple:
    """The smallest ((-rank, suit position), ...) over the 24 relabelings of the suits."""
    return min(tuple(sorted((-(c // 4), perm[SUIT_ORDER.index(c % 4)]) for c in flop))
               for perm in itertools.permutations(range(4)))


def texture(board) -> str:
    """The texture class (module docstring) of a board's flop: card ids or text."""
    return flop_texture(_flop(board))


def high_card(board) -> str:
    """``"A-high"`` ... ``"2-high"``: the flop's highest rank."""
    return RANKS[max(c // 4 for c in _flop(board))] + "-high"


def _flop(board) -> list[int]:
    cards = parse_cards(board, "board") if isinstance(board, str) else list(board)
    return cards[:3]


def flop_subset(subset: str, deck=None) -> list[tuple[str, int]]:
    """[(flop text, weight)] of ``subset``: ``all``, a texture class or a high card (``K-high``)."""
    if subset not in SUBSETS:
        raise InputError(f"--flops {subset!r}: choose all, a texture ({', '.join(TEXTURES)}) "
                         "or a high card (A-high ... 2-high)")
    out = []
    for rep, weight in iso_flops(deck):
        if subset in ("all", texture(rep), high_card(rep)):
            out.append(("".join(card_name(c) for c in rep), weight))
    return out


def write_flop_specs(subset: str, template_path: str, output: str) -> int:
    """Write one batch line per flop of ``subset`` to ``output``: the template with its board
    replaced. The template is a postflop spec (JSON object with the PostflopGame keys, no
    board or a 3-card one) or a batch line whose ``game`` is such an object or a ``postflop(...)``
    name; it must give pot and stack. Returns the count."""
    from .batch import check_spec
    from ..poker.postflop import parse_deck

    template = read_json(template_path, "template")
    if not isinstance(template, dict):
        raise InputError(f"{template_path}: the template is a JSON object (a postflop spec or a batch line)")
    inner = template.get("game")
    if isinstance(inner, str) and inner.replace(" ", "").startswith("postflop("):  # a batch line, game by name
        from ..games import parse_game_name

        inner = parse_game_name(inner)[1]
    elif inner is not None and not isinstance(inner, dict) and inner != "postflop":
        raise InputError(f"{template_path}: the template's game must be a postflop spec, got {inner!r}")
    line = {**template, "game": inner} if isinstance(inner, dict) else {"game": template}
    game = {k: v for k, v in line["game"].items() if k != "game"}
    missing = [k for k in ("pot", "stack") if k not in game]
    if missing:
        raise InputError(f"{template_path}: the template has no {' and no '.join(missing)} (a postflop spec needs both)")
    board = game.get("board")
    if board is not None and (not isinstance(board, str) or len(parse_cards(board, "board")) != 3):
        raise InputError(f"{template_path}: the template's board must be a flop (3 cards) or absent, got {board!r}")
    check_spec({**line, "game": game}, template_path)
    deck = parse_deck(game.get("deck"))
    flops = flop_subset(subset, deck)
    if not flops:
        raise InputError(f"--flops {subset}: no such flop in the template's deck")
    with open(output, "w", encoding="utf-8") as f:
        for text, weight in flops:
            f.write(json.dumps({**line, "game": {**game, "board": text}, "weight": weight}) + "\n")
    return len(flops)
