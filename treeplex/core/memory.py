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
LP_DEFAULT_NNZ = 1_000_000  # above this many nonzeros the exact LP is no default (README postflop spec: 13M, > 150 s)
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


PROBE_AFTER = 20_000  # visits of the exact walk before random paths are tried (see estimate_histories)
PROBES = 16


def rss() -> int:
    """This process's resident bytes now (0 where /proc is not there)."""
    try:
        with open("/proc/self/statm") as f:
            import os

            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def measured(fn, every: float = 0.01):
    """(fn(), its seconds, the peak of this process's resident bytes while it ran, sampled
    every ``every`` seconds by a thread: what a phase of a run needs, for benchmarks and
    experiments; 0 where /proc is not there)."""
    import threading
    import time

    peak, done = [rss()], threading.Event()

    def sample():
        while not done.wait(every):
            peak[0] = max(peak[0], rss())

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    t0 = time.perf_counter()
    try:
        out = fn()
    finally:
        done.set()
        th.join()
    return out, time.perf_counter() - t0, max(peak[0], rss())


def probe_histories(game, probes: int = PROBES, seed: int = 0, max_steps: int = 100_000) -> float:
    """Knuth's estimate of the number of histories: the median, over ``probes`` random paths,
    of the sum over a path's depths of the product of the branching factors above (uniform
    actions and outcomes). Each path holds one state at a time; all paths together take at
    most ``max_steps`` steps (a path cut there counts what it reached)."""
    import random

    rng, estimates, steps = random.Random(seed), [], 0
    for _ in range(probes):
        state, mult, total = game.initial_state(), 1.0, 0.0
        while True:
            total += mult
            steps += 1
            if state.is_terminal() or steps > max_steps or mult > 1e200:
                break
            options = ([o[0] for o in state.chance_outcomes()] if state.is_chance() else state.legal_actions())
            if not options:
                break
            mult *= len(options)
            state = state.apply(options[rng.randrange(len(options))])
        estimates.append(total)
    estimates.sort()
    return estimates[len(estimates) // 2]


def estimate_histories(game, cap: float = float("inf"), budget: int = 500_000,
                       max_bytes: float = float("inf")) -> tuple[float, bool]:
    """(histories, exact) of a rules game: :func:`count_histories` without how it counted."""
    n, how = count_histories(game, cap, budget, max_bytes)
    return n, how == "exact"


def count_histories(game, cap: float = float("inf"), budget: int = 500_000,
                    max_bytes: float = float("inf")) -> tuple[float, str]:
    """(histories, how) of a rules game (the module docstring), ``how`` "exact", "at least"
    or "about". The walk holds one state and its untried actions per depth, and stops once the count passes ``cap``, after
    ``budget`` visited states, or once the walk itself has grown this process by
    ``max_bytes``; the count is then a lower bound ("at least"). A walk still under
    ``cap`` after :data:`PROBE_AFTER` visits asks :func:`probe_histories`: a median
    estimate above ``cap`` is returned at once ("about"), so a game far too big for
    the walk (chess) is told in seconds."""
    total = visits = 0
    rss0 = rss()
    stack = [(game.initial_state(), 1, None)]
    while stack:
        state, mult, rest = stack[-1]
        if rest is not None:  # an inner node: its next untried child
            if not rest:
                stack.pop()
                continue
            stack.append((state.apply(rest.pop()), mult, None))
            continue
        visits += 1
        if visits > budget or total > cap:
            return total, "at least"
        if visits % 4096 == 0 and rss() - rss0 > max_bytes:
            return total, "at least"
        if visits == PROBE_AFTER and cap < float("inf"):
            guess = probe_histories(game)
            if guess > cap:
                return guess, "about"
        total += mult
        if state.is_terminal():
            stack.pop()
            continue
        if state.is_chance():
            outcomes = list(state.chance_outcomes())
            stack.pop()
            if outcomes:
                likeliest = max(outcomes, key=lambda o: o[1])[0]  # by rank: a deal that leaves the most to deal
                stack.append((state.apply(likeliest), mult * len(outcomes), None))
        else:
            stack[-1] = (state, mult, list(reversed(state.legal_actions())))
    return total, "exact"


def check_compile(game, name: str, max_memory: str | None) -> None:
    """Refuse, before building it, a rules game whose compiled form would not fit the limit:
    its histories counted (or estimated) by a walk that stops at the limit and holds a
    quarter of it at most (:func:`count_histories`)."""
    limit, what = limit_bytes(max_memory)
    if limit is None:
        return
    n, how = count_histories(game, cap=limit / COMPILE_BYTES_PER_HISTORY, max_bytes=limit / 4)
    if n * COMPILE_BYTES_PER_HISTORY > limit:
        how = {"exact": "", "at least": "at least ", "about": "about "}[how]
        from_paths = f" (median of {PROBES} random paths)" if how == "about " else ""
        raise InputError(f"{name}: {how}{n:.3g} histories{from_paths}, about "
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


def lp_default(problem, max_memory: str | None) -> tuple[bool, str]:
    """(whether the exact LP is the default on ``problem``, a line saying why not): it must fit
    the limit (:func:`lp_fits`) and have at most :data:`LP_DEFAULT_NNZ` nonzeros (a postflop
    or river spot of the guides has millions: minutes and gigabytes). ``--algorithm lp``
    still asks for it."""
    if problem.general_sum:
        return False, "the game is general-sum (a raked spot), which the LP does not solve"
    fits, why = lp_fits(problem, max_memory)
    if not fits:
        return False, why
    nnz = getattr(problem.A, "nnz", 0)
    if nnz > LP_DEFAULT_NNZ:
        return False, (f"the exact LP on {nnz:,} nonzeros would take minutes and gigabytes (the default LP "
                       f"stops at {LP_DEFAULT_NNZ:,}; --algorithm lp asks for it)")
    return True, ""
