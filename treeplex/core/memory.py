"""Sizes before memory runs out: estimate what a game and the LP need, and refuse what does not fit.

``estimate_histories(game)`` walks a rules game following only the likeliest outcome of
every chance node and multiplies by the number of outcomes: exact for games whose tree below
a chance node has the same shape for every outcome (suited deals), a little high where it
does not (deals by rank: 4% on leduc(ranks=5), 6% on a small nlfh), and it visits only one
deal's betting tree. The byte figures are measured peaks (Leduc, this machine):
compiling takes about ``COMPILE_BYTES_PER_HISTORY``, the LP about ``LP_BYTES_PER_NONZERO``.
"""

from __future__ import annotations

import re

from ..errors import InputError

COMPILE_BYTES_PER_HISTORY = 120  # measured ~95 B at peak on leduc(ranks=24), 1.0e6 histories
LP_BYTES_PER_NONZERO = 500  # measured ~400 B at peak (HiGHS, both LPs) on leduc(ranks=16)
_UNITS = {"": 1, "B": 1, "K": 2**10, "KB": 2**10, "KIB": 2**10, "M": 2**20, "MB": 2**20, "MIB": 2**20,
          "G": 2**30, "GB": 2**30, "GIB": 2**30, "T": 2**40, "TB": 2**40, "TIB": 2**40}


def available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo, lowered to this process's address-space limit
    (``ulimit -v``) if it has one; None where neither is known."""
    sizes = []
    try:
        with open("/proc/meminfo") as f:
            sizes += [int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:")]
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            sizes.append(soft)
    except (ImportError, OSError, ValueError):
        pass
    return min(sizes) if sizes else None


def parse_bytes(text: str) -> int:
    """``"4G"``, ``"512MB"``, ``"1.5GiB"`` or a number of bytes; :class:`InputError` otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)\s*", str(text))
    unit = m.group(2).upper() if m else ""
    if not m or unit not in _UNITS or float(m.group(1)) * _UNITS[unit] < 1:
        raise InputError(f"--max-memory must be a size such as 4G, 512M or 1000000 (bytes), got {text!r}")
    return int(float(m.group(1)) * _UNITS[unit])


def limit_bytes(max_memory: str | None) -> tuple[int | None, str]:
    """(limit in bytes or None for none, how to name it) from ``--max-memory`` or the machine."""
    if max_memory is not None:
        return parse_bytes(max_memory), "--max-memory"
    return available_bytes(), "the available memory; see --max-memory"


def show(n: float) -> str:
    """1.2 GB style."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.3g} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return ""  # pragma: no cover


def estimate_histories(game, cap: float = float("inf"), budget: int = 500_000) -> tuple[int, bool]:
    """(histories, exact) of a rules game (see the module docstring). The walk stops once the
    count passes ``cap`` or after ``budget`` visited states; the count is then a lower bound
    (``exact`` False)."""
    total = visits = 0
    stack = [(game.initial_state(), 1)]
    while stack:
        visits += 1
        if visits > budget or total > cap:
            return total, False
        state, mult = stack.pop()
        total += mult
        if state.is_terminal():
            continue
        if state.is_chance():
            outcomes = list(state.chance_outcomes())
            if outcomes:
                likeliest = max(outcomes, key=lambda o: o[1])[0]  # by rank: a deal that leaves the most to deal
                stack.append((state.apply(likeliest), mult * len(outcomes)))
        else:
            stack.extend((state.apply(a), mult) for a in state.legal_actions())
    return total, True


def check_compile(game, name: str, max_memory: str | None) -> None:
    """Refuse, before building it, a rules game whose compiled form would not fit the limit."""
    limit, what = limit_bytes(max_memory)
    if limit is None:
        return
    n, exact = estimate_histories(game, cap=limit / COMPILE_BYTES_PER_HISTORY)
    if n * COMPILE_BYTES_PER_HISTORY > limit:
        raise InputError(f"{name}: {'' if exact else 'at least '}{n:.3g} histories, about "
                         f"{show(n * COMPILE_BYTES_PER_HISTORY)} to build, above {show(limit)} ({what})")


def lp_bytes(problem) -> int:
    """Estimated peak memory of the LP of ``problem`` (from the nonzeros of its payoff matrix)."""
    nnz = getattr(problem.A, "nnz", 0) + problem.X.n_seqs + problem.Y.n_seqs
    return LP_BYTES_PER_NONZERO * nnz


def lp_fits(problem, max_memory: str | None) -> tuple[bool, str]:
    """(whether the LP fits the limit, a line saying what it needs against what)."""
    limit, what = limit_bytes(max_memory)
    need = lp_bytes(problem)
    return limit is None or need <= limit, f"the LP needs about {show(need)}, above {show(limit or 0)} ({what})"
