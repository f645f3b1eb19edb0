"""``--target`` in the user's unit, converted to the saddle-point gap the driver stops on.

One parser for every engine; it needs only the :class:`~treeplex.model.problem.Problem`:

==========================  ===============================================  ================
text                        meaning                                          gap
==========================  ===============================================  ================
``1e-3`` or ``gap=1e-3``    saddle-point gap BR_0(y) - BR_1(x), payoff units  1e-3
``exploitability=1e-3``     exploitability = gap / 2, payoff units            2e-3
``1mbb`` (``1mbb/g``)       exploitability in mbb/g (poker: ``big_blind``)    2 * 1e-3 * bb
``0.5%pot``                 exploitability as % of the starting pot (poker)   2 * 0.005 * pot
==========================  ===============================================  ================

mbb/g = chips / big blind * 1000; the starting pot is ``problem.stats["pot"]`` (river
endgames: the pot at the start of the river; ``nlfh``: the blinds).
"""

from __future__ import annotations

import math
import re

from ..errors import InputError

ITERATIVE_DEFAULT = "pdcfr+"  # the solver a stop rule implies when none is named: fastest to 1e-6 on Leduc (benchmarks/cfr_speed.py)
POKER_DEFAULT = "dcfr-ps"  # ... and on river, turn and flop spots: postflop-solver's DCFR schedule


def iterative_default(problem) -> str:
    """The iterative solver used when none is named: :data:`POKER_DEFAULT` on a spot with a
    starting pot (river and postflop spots, where it needs the fewest iterations to 0.5% of
    the pot: TURN 57 against 76 for DCFR and 135 for PDCFR+, RIVER 29, 29, 36;
    ``benchmarks/postflop.py --algorithm A``), else :data:`ITERATIVE_DEFAULT`."""
    return POKER_DEFAULT if "pot" in getattr(problem, "stats", {}) else ITERATIVE_DEFAULT

_UNIT = re.compile(r"^(?:(?P<pre>gap|exploitability)\s*=\s*(?P<a>.+)|(?P<b>.+?)\s*(?P<post>mbb(?:/g)?|%\s*pot))$",
                   re.I)

HELP = ("stop when the strategy is this close to equilibrium: GAP (saddle-point gap, payoff units, "
        "e.g. 1e-3), exploitability=E (gap / 2), Nmbb (exploitability in mbb/g, poker), "
        "P%%pot (exploitability as %% of the starting pot, poker)")


def target_gap(text: str | float | None, problem) -> float | None:
    """The saddle-point gap (payoff units) that ``text`` asks for; None for None.

    See the module docstring for the forms. Raises :class:`InputError` naming the text for
    anything else, and for poker units on a game without a big blind or a starting pot.
    """
    if text is None:
        return None
    if isinstance(text, (int, float)):
        return _positive(float(text), str(text))
    s = str(text).strip()
    m = _UNIT.match(s)
    if m is None:
        unit, v = "gap", s
    elif m.group("pre"):
        unit, v = m.group("pre").lower(), m.group("a")
    else:
        unit, v = ("mbb" if m.group("post").lower().startswith("mbb") else "%pot"), m.group("b")
    v = _positive(_number(v, s), s)
    if unit == "gap":
        return v
    if unit == "exploitability":
        return 2.0 * v
    if unit == "mbb":
        if not problem.big_blind:
            raise InputError(f"--target {s!r}: mbb/g needs a poker game with a big blind; {problem.name} has none "
                             "(use exploitability=E in payoff units)")
        return 2.0 * v * problem.big_blind / 1000.0
    pot = problem.stats.get("pot")
    if not pot:
        raise InputError(f"--target {s!r}: %pot needs a poker game with a starting pot; {problem.name} has none "
                         "(use exploitability=E in payoff units)")
    return 2.0 * v / 100.0 * float(pot)


def _number(v: str, text: str) -> float:
    try:
        return float(v)
    except ValueError:
        raise InputError(f"--target {text!r}: expected GAP, exploitability=E, Nmbb or P%pot (e.g. 1e-3, "
                         "exploitability=1e-3, 1mbb, 0.5%pot)") from None


def _positive(v: float, text: str) -> float:
    if not (v > 0 and math.isfinite(v)):
        raise InputError(f"--target {text!r}: must be a finite number > 0")
    return v
