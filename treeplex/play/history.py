"""Hand histories as ACPC dealer log lines:
``STATE:<hand>:<betting>:<cards>:<outcome>:<players>``, seats in ACPC order.

ACPC's heads-up no-limit game (``holdem.nolimit.2p.reverse_blinds.game``: ``blind = 100 50``,
``firstPlayer = 2 1 1 1``) seats the big blind first: ACPC position 0 is player 1 here (the
big blind), position 1 is player 0 (the small blind). Cards are ``hole|hole`` by position, then
``/flop/turn/river`` as far as dealt; the outcome is each position's chips, ``|``-separated.
Example: ``STATE:0:r300c/cr600f:Kh2c|Ac7d/QsTd4c:-300|300:Bob|Alice``.
"""

from __future__ import annotations

from ..errors import InputError
from ..poker.cards import parse_cards
from .engine import BOARD_SEEN, Hand, Table, cards_text, replay


def position(player: int) -> int:
    """ACPC position of player ``player`` (0 = small blind): the big blind sits first."""
    return 1 - player


def cards_field(h: Hand, seen=(True, True)) -> str:
    """``hole|hole/flop/turn/river`` by ACPC position; ``seen[pos]`` False leaves it empty."""
    holes = [cards_text(h.hole(1 - pos)) if seen[pos] else "" for pos in (0, 1)]
    n = BOARD_SEEN[min(len(h.rounds) - 1, 3)]
    b = h.cards[4:4 + n]
    parts = [b[:3], b[3:4], b[4:5]][:max(0, len(h.rounds) - 1)]
    return "|".join(holes) + "".join("/" + cards_text(p) for p in parts)


def state_line(h: Hand, number: int, names_by_player) -> str:
    u = h.payoff()
    by_pos = [-u, u]  # position 0 is player 1
    names = [_name(names_by_player[1]), _name(names_by_player[0])]
    return f"STATE:{number}:{h.betting()}:{cards_field(h)}:{by_pos[0]}|{by_pos[1]}:{names[0]}|{names[1]}"


def _name(name: str) -> str:
    """A player's name with the field separators ``:`` and ``|`` (and spaces) replaced by ``_``."""
    return "".join("_" if ch in ":| \t" else ch for ch in name)


def parse_cards_field(text: str, where: str) -> list[int]:
    """The 9 cards (engine order; -1 for empty) of a ``hole|hole/flop/turn/river`` field."""
    parts = text.split("/")
    holes = parts[0].split("|")
    if len(holes) != 2 or len(parts) > 4:
        raise InputError(f"{where}: bad cards {text!r}; expected hole|hole/flop/turn/river")
    cards = [-1] * 9
    for pos in (0, 1):
        c = parse_cards(holes[pos], where) if holes[pos] else []
        if len(c) not in (0, 2):
            raise InputError(f"{where}: {holes[pos]!r} is not 2 hole cards")
        p = 1 - pos
        cards[2 * p:2 * p + len(c)] = c
    want = (3, 1, 1)
    k = 4
    for i, part in enumerate(parts[1:]):
        c = parse_cards(part, where)
        if len(c) != want[i]:
            raise InputError(f"{where}: round {i + 2} deals {want[i]} board cards, got {part!r}")
        cards[k:k + len(c)] = c
        k += len(c)
    known = [c for c in cards if c >= 0]
    if len(set(known)) != len(known):
        raise InputError(f"{where}: a card repeats in {text!r}")
    return cards


def parse_state(line: str, table: Table = Table()) -> dict:
    """A STATE line -> {number, hand (replayed), outcome by position, names by position}."""
    f = line.strip().split(":")
    if len(f) != 6 or f[0] != "STATE":
        raise InputError(f"history: {line.strip()!r} is not STATE:<hand>:<betting>:<cards>:<outcome>:<players>")
    try:
        number = int(f[1])
        outcome = [int(x) for x in f[4].split("|")]
    except ValueError:
        raise InputError(f"history: bad hand number or outcome in {line.strip()!r}") from None
    h = replay(parse_cards_field(f[3], "history"), f[2], table)
    return {"number": number, "hand": h, "outcome": outcome, "names": f[5].split("|")}
