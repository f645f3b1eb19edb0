"""The state the backends share: one player's CFR state, its flat form for checkpoints, and the
first play (uniform, or lower-bounded on a perturbed treeplex) with its bounds."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


class HostArrays:
    """NumPy on the host, as a backend hands arrays to checkpoints: for a state that no
    backend holds (the fused engine's), so that saving or loading it makes none."""

    @staticmethod
    def asarray(a, dtype=np.float64) -> np.ndarray:
        return np.asarray(a, dtype=dtype)

    @staticmethod
    def to_numpy(a):
        return a


@dataclass
class RegretState:
    """One player's CFR state (flat arrays over its sequences)."""

    b: np.ndarray  # local (behavioral) strategy to play next
    R: np.ndarray  # cumulative (discounted) regrets
    x: np.ndarray  # its realization plan
    xsum: np.ndarray  # weighted sum of the plans played
    logprior: np.ndarray  # log of Hedge's prior per sequence (empty: uniform)


def flat_state(players) -> dict:
    """{FIELDp: array} of per-player state dataclasses, for checkpoints."""
    return {f"{f.name}{p}": getattr(s, f.name) for p, s in enumerate(players) for f in fields(s)}


def host_bounds(treeplexes, lower) -> tuple:
    """Per player, None or (l per sequence, L = sum of l per infoset) as float64 NumPy, for
    lower bounds ``lower`` = (l_X, l_Y) or None; backends move them where their passes run."""
    if lower is None:
        return (None, None)
    out = []
    for T, l in zip(treeplexes, lower):
        l = np.ascontiguousarray(l, dtype=np.float64)
        out.append((l, np.add.reduceat(l, T.start) if T.n_infosets else np.zeros(0)))
    return tuple(out)


def first_play(T, lower=None) -> tuple[np.ndarray, np.ndarray]:
    """(b, x) in float64 NumPy: uniform local strategies, or l + (1 - L) uniform on a
    perturbed treeplex (``lower`` = (l, L) of :func:`host_bounds`), and their plan."""
    sizes = T.end - T.start
    b = np.ones(T.n_seqs)
    b[1:] = 1.0 / np.repeat(sizes, sizes)
    if lower is not None:
        l, L = lower
        b[1:] = l[1:] + np.repeat(1.0 - L, sizes) * b[1:]
    return b, T.plan_from_behavioral(b)
