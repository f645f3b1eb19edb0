"""Bet and raise sizes in the syntax poker solvers use, and the rule that turns them into chips.

A size list is comma-separated (``"33%,75%,a"``); each entry is

=========  ================================================================================
``N%``     N percent of the pot. For a bet: of the pot. For a raise: of the pot after
           calling, added on top of the call (raise-to = opponent's bet + N% x pot after call).
``Nx``     raises only: raise to N times the opponent's bet this street.
``Nc``     an amount in chips: a bet of N chips, or a raise of N chips on top of the call.
``e``      geometric: the fraction f of the pot (after calling) that, bet on each remaining
           street (this one included), puts the stack in by the river:
           f = ((2 spr + 1)^(1/n) - 1) / 2 with spr = stack behind after calling / pot.
           ``eN`` uses N streets instead of the remaining count.
``a``      all-in.
=========  ================================================================================

:func:`street_actions` applies a player's sizes at a node the way postflop-solver does (the
fastest open-source postflop solver, so that trees and node counts compare): amounts are
rounded to whole chips, clamped between the minimum raise and the stack, all-in is added when
the stack is at most ``add_allin_threshold`` x pot, and a bet after which the stack left
would be at most ``force_allin_threshold`` x the new pot becomes all-in. Equal amounts merge,
and so do close ones with ``merging_threshold`` t > 0 (:func:`merge_close`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError

PCT, PREV, CHIPS, GEO, ALLIN = "pct", "x", "chips", "geo", "allin"


@dataclass(frozen=True)
class Size:
    kind: str  # PCT, PREV, CHIPS, GEO or ALLIN
    value: float = 0.0  # fraction of the pot, multiplier, chips, or streets (0 = remaining)

    def __str__(self) -> str:
        if self.kind == PCT:
            return f"{100 * self.value:g}%"
        if self.kind == PREV:
            return f"{self.value:g}x"
        if self.kind == CHIPS:
            return f"{self.value:g}c"
        if self.kind == GEO:
            return "e" if self.value == 0 else f"e{self.value:g}"
        return "a"


def parse_sizes(text, where: str, raise_sizes: bool = False) -> tuple[Size, ...]:
    """``"33%,75%,a"`` -> sizes; ``where`` names the field in errors (e.g. ``sizes.turn.bet``)."""
    if isinstance(text, (list, tuple)):
        text = ",".join(str(t) for t in text)
    if not isinstance(text, str):
        raise InputError(f"{where}: expected a size list such as '33%,75%,a', got {text!r}")
    out: list[Size] = []
    for tok in (t.strip().lower() for t in text.split(",")):
        if not tok:
            continue
        if tok in ("a", "allin", "all-in"):
            out.append(Size(ALLIN))
            continue
        kind, num = {"%": (PCT, tok[:-1]), "x": (PREV, tok[:-1]), "c": (CHIPS, tok[:-1])}.get(tok[-1], (None, None))
        if tok[0] == "e":
            kind, num = GEO, tok[1:] or "0"
        if kind is None:
            raise InputError(f"{where}: cannot read size {tok!r}; use N% (pot), Nx (raises), Nc (chips), e or a")
        try:
            v = float(num)
        except ValueError:
            raise InputError(f"{where}: cannot read size {tok!r}; the number {num!r} is not a number") from None
        if not math.isfinite(v) or v < 0 or (v == 0 and kind != GEO) or (kind == GEO and v != int(v)):
            raise InputError(f"{where}: size {tok!r} must be a positive finite number")
        if kind == PREV and not raise_sizes:
            raise InputError(f"{where}: {tok!r} (times the previous bet) is a raise size, not a bet size")
        if kind == PREV and v <= 1:
            raise InputError(f"{where}: raise {tok!r} must be more than 1x the previous bet")
        out.append(Size(kind, v / 100 if kind == PCT else v))
    return tuple(out)


@dataclass(frozen=True)
class StreetSizes:
    """One player's sizes on one street: opening bets, raises, and donk bets (None: use ``bet``)."""

    bet: tuple[Size, ...] = ()
    raise_: tuple[Size, ...] = ()
    donk: tuple[Size, ...] | None = None

    def to_dict(self) -> dict:
        d = {"bet": ",".join(map(str, self.bet)), "raise": ",".join(map(str, self.raise_))}
        if self.donk is not None:
            d["donk"] = ",".join(map(str, self.donk))
        return d


def round_chips(v: float) -> int:
    """Half away from zero, as postflop-solver rounds (Rust's ``f32::round``)."""
    return int(math.floor(v + 0.5))


def raise_to(x: float, pot: float, opp: float, min_to: float, max_to: float) -> float:
    """The no-limit pot-fraction rule, in chips: a raise (or bet) of x times ``pot``, the pot
    after calling, puts in ``opp + round_chips(x * pot)`` (``opp``: the opponent's chips, to be
    matched), clamped to [``min_to``, ``max_to``] (the minimum raise, the all-in). Shared by
    :mod:`.betting`, :mod:`.nlfh` and :func:`street_actions`."""
    return min(max_to, max(min_to, opp + round_chips(x * pot)))


def street_actions(sizes: tuple[Size, ...], facing_bet: bool, pot: int, to_call: int, opp_street: int,
                   max_to: int, min_to: int, streets_left: int, add_allin: float, force_allin: float,
                   allin_offered: bool, merging: float = 0.0) -> list[int]:
    """Bet/raise-to amounts (chips put in this street by the actor) offered at a node.

    ``pot`` is the pot after the actor calls, ``to_call`` what calling costs, ``opp_street``
    the opponent's chips in this street, ``max_to`` the actor's all-in amount and ``min_to``
    the minimum raise-to; ``merging``: :func:`merge_close`'s threshold. Returns sorted
    distinct amounts, all-in as ``max_to``.
    """
    spr = (max_to - opp_street) / pot
    out = []
    for s in sizes:
        if s.kind == ALLIN:
            amt = max_to
        elif s.kind == PCT:
            amt = raise_to(s.value, pot, opp_street if facing_bet else 0, min_to, max_to)
        elif s.kind == PREV:
            amt = round_chips(opp_street * s.value)
        elif s.kind == CHIPS:
            amt = (opp_street if facing_bet else 0) + round_chips(s.value)
        else:  # geometric
            n = int(s.value) or streets_left
            amt = (opp_street if facing_bet else 0) + round_chips(pot * ((2 * spr + 1) ** (1 / n) - 1) / 2)
        out.append(amt)
    if allin_offered and max_to - (opp_street if facing_bet else 0) <= round_chips(pot * add_allin):
        out.append(max_to)
    final = set()
    for amt in out:
        amt = min(max(amt, min_to), max_to)
        new_pot = pot + 2 * (amt - opp_street)
        if max_to <= amt + round_chips(new_pot * force_allin):
            amt = max_to
        final.add(amt)
    return merge_close(sorted(final), pot, opp_street if facing_bet else 0, merging)


MERGE_EPS = 2e-7  # postflop-solver's tolerance (2 ulps of f32): a size exactly at the bound merges


def merge_close(amounts: list[int], pot: int, offset: int, t: float) -> list[int]:
    """postflop-solver's ``merging_threshold`` t: of sorted bet/raise-to ``amounts``, keep the
    largest; going down, keep an amount only if its size r = (amount - offset) / pot (offset:
    the opponent's chips this street; pot: after calling) is below (r_kept - t) / (1 + t),
    r_kept the size of the last amount kept, else it merges into that one. t = 0 keeps every
    distinct amount."""
    if t <= 0:
        return amounts
    kept, cur = [], None
    for amt in reversed(amounts):
        r = (amt - offset) / pot
        if cur is None or r < (cur - t) / (1 + t) * (1 - MERGE_EPS):
            kept.append(amt)
            cur = r
    return kept[::-1]
