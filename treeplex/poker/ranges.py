"""Ranges: a weight per two-card hand, as float64[1326] in the hand order of :mod:`.cards`.

A range comes from

- a Pio-style string, comma-separated tokens, each optionally ``:weight`` (0 <= weight <= 1,
  default 1); a later token overrides an earlier one for the same combos:

  ==============  =====================================================
  ``AA``          a pair (6 combos)
  ``AKs AKo AK``  suited (4), offsuit (12), both (16)
  ``AsKh``        one combo
  ``QQ-88``       pairs from QQ down to 88
  ``AKs-ATs``     same first rank, second rank from K down to T
  ``TT+ ATs+``    TT..AA; ATs, AJs, AQs, AKs (second rank up to one below the first)
  ==============  =====================================================

- an array of 1326 non-negative weights (hand order of :data:`.cards.HAND_CARDS`);
- a dict ``{"AsKh": 0.5, ...}`` of combos;
- ``None``: the uniform range (every hand weight 1).

Errors name the range and the bad token.
"""

from __future__ import annotations


import numpy as np

from ..errors import InputError, nonnegative
from .cards import HAND_INDEX, N_HANDS, RANKS, SUITS, hand_name, parse_card


def _class_combos(r1: int, r2: int, kind: str) -> list[int]:
    """Hands of rank class (r1, r2); kind is 's', 'o' or '' (both) for non-pairs."""
    out = []
    for s1 in range(4):
        for s2 in range(4):
            a, b = 4 * r1 + s1, 4 * r2 + s2
            if a == b or (r1 == r2 and s1 >= s2):
                continue
            if r1 != r2 and ((kind == "s" and s1 != s2) or (kind == "o" and s1 == s2)):
                continue
            out.append(int(HAND_INDEX[a, b]))
    return out


def _rank(ch: str) -> int:
    i = RANKS.find(ch.upper())
    if i < 0 or len(ch) != 1:
        raise ValueError(f"unknown rank {ch!r}")
    return i


def _parse_class(text: str) -> tuple[int, int, str]:
    """'AKs' -> (12, 11, 's'); 'QQ' -> (10, 10, ''). The higher rank comes first."""
    if len(text) not in (2, 3):
        raise ValueError("expected a hand class like AA, AKs, AKo, AK")
    r1, r2 = _rank(text[0]), _rank(text[1])
    kind = text[2].lower() if len(text) == 3 else ""
    if kind not in ("", "s", "o"):
        raise ValueError(f"suffix {text[2]!r} is not 's' or 'o'")
    if r1 == r2 and kind:
        raise ValueError("a pair has no 's'/'o' suffix")
    if r1 < r2:
        raise ValueError(f"write the higher rank first ({text[1]}{text[0]}{kind})")
    return r1, r2, kind


def _token_combos(tok: str) -> list[int]:
    """Combos of one token without its weight; ValueError says what is wrong."""
    if len(tok) == 4 and tok[1].lower() in SUITS and tok[3].lower() in SUITS:
        a, b = parse_card(tok[:2], "combo"), parse_card(tok[2:], "combo")
        if a == b:
            raise ValueError("the two cards are the same")
        return [int(HAND_INDEX[a, b])]
    if tok.endswith("+"):
        r1, r2, kind = _parse_class(tok[:-1])
        if r1 == r2:
            return [h for r in range(r1, 13) for h in _class_combos(r, r, "")]
        return [h for r in range(r2, r1) for h in _class_combos(r1, r, kind)]
    if "-" in tok:
        lo_text, _, hi_text = tok.partition("-")
        a1, a2, ka = _parse_class(lo_text)
        b1, b2, kb = _parse_class(hi_text)
        if a1 == a2 and b1 == b2:
            top, bottom = max(a1, b1), min(a1, b1)
            return [h for r in range(bottom, top + 1) for h in _class_combos(r, r, "")]
        if a1 != b1 or ka != kb or a1 == a2 or b1 == b2:
            raise ValueError("a range A-B needs two pairs, or the same first rank and suffix (AKs-ATs)")
        top, bottom = max(a2, b2), min(a2, b2)
        return [h for r in range(bottom, top + 1) for h in _class_combos(a1, r, ka)]
    r1, r2, kind = _parse_class(tok)
    return _class_combos(r1, r2, kind)


def parse_range(text: str) -> np.ndarray:
    """Pio-style range string -> float64[1326] weights (see the module docstring)."""
    w = np.zeros(N_HANDS)
    if not str(text).strip():
        raise InputError("range is empty")
    for raw in str(text).split(","):
        tok = raw.strip().replace(" ", "")
        if not tok:
            continue
        hands, _, weight_text = tok.partition(":")
        weight = 1.0
        if weight_text:
            try:
                weight = float(weight_text)
            except ValueError:
                raise InputError(f"range {text!r}: bad weight in token {tok!r}") from None
            if not (0.0 <= weight <= 1.0):
                raise InputError(f"range {text!r}: weight {weight} in token {tok!r} is not in [0, 1]")
        try:
            combos = _token_combos(hands)
        except (ValueError, InputError) as e:
            raise InputError(f"range {text!r}: bad token {tok!r}: {e}") from None
        w[combos] = weight
    return w


def make_range(spec, name: str = "range") -> np.ndarray:
    """A range from a string, a 1326-array, a ``{combo: weight}`` dict, or None (uniform)."""
    if spec is None:
        return np.ones(N_HANDS)
    if isinstance(spec, str):
        return parse_range(spec)
    if isinstance(spec, dict):
        w = np.zeros(N_HANDS)
        for combo, weight in spec.items():
            try:
                h = _token_combos(str(combo))
            except (ValueError, InputError) as e:
                raise InputError(f"{name}: bad combo {combo!r}: {e}") from None
            w[h] = nonnegative(weight, f"{name}: the weight of combo {combo!r}")
        return w
    try:
        w = np.asarray(spec, dtype=np.float64)
    except (TypeError, ValueError):  # ragged nesting, strings: not 1,326 numbers
        raise InputError(f"{name}: expected a range string, a dict or 1326 numbers") from None
    if w.shape != (N_HANDS,):
        raise InputError(f"{name}: expected {N_HANDS} weights (one per hand), got shape {w.shape}")
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if len(bad):
        raise InputError(f"{name}: weight {w[bad[0]]!r} of hand {hand_name(bad[0])} (index {bad[0]}) is negative or not finite")
    return w.copy()
