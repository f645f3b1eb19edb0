"""``treeplex show FILE [NODE]``: one node of a saved poker solution as 13x13 text grids.

FILE is what ``treeplex solve ... --out FILE`` writes for a postflop or river game. NODE is
the node's number or its history (``x-b20``; the root when omitted). The grid has pairs on
the diagonal, suited hands above it and offsuit hands below (row = higher rank), as poker
solvers draw it; a cell is the range-weighted frequency (%) of an action over the combos of
that class the acting player holds at the node (``.`` where none).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .cards import RANKS

ORDER = RANKS[::-1]  # A K Q ... 2


def load_solution(path: str, max_memory: str | None = None) -> dict:
    from ..model.strategy import read_solution

    data = read_solution(path, max_memory)
    if "nodes" not in data:
        raise InputError(f"{path}: not a poker solution (no 'nodes'); treeplex view shows other games' strategies")
    return data


def find_node(data: dict, which: str | None) -> dict:
    nodes = data["nodes"]
    if which is None or which in ("", "root"):
        return nodes[0]
    for nd in nodes:
        if str(nd.get("node")) == which or nd.get("history") == which:
            return nd
    sample = ", ".join(repr(nd.get("history") or "root") for nd in nodes[:6])
    raise InputError(f"no node {which!r} in this file (it holds {len(nodes)} nodes, e.g. {sample})")


def hand_class(name: str) -> tuple[int, int]:
    """Grid cell (row, col) of a combo such as ``"AsKd"``."""
    r1, r2 = ORDER.index(name[0]), ORDER.index(name[2])
    hi, lo = min(r1, r2), max(r1, r2)
    if hi == lo:
        return hi, hi
    return (hi, lo) if name[1] == name[3] else (lo, hi)


def class_grid(node: dict, action: int) -> np.ndarray:
    """13x13 range-weighted frequency of ``action`` per hand class (NaN where none)."""
    num, den = np.zeros((13, 13)), np.zeros((13, 13))
    weight = node.get("weight", {})
    for hand, probs in node["hands"].items():
        w = float(weight.get(hand, 1.0))
        cell = hand_class(hand)
        num[cell] += w * probs[action]
        den[cell] += w
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def format_node(data: dict, node: dict) -> str:
    acts = node["actions"]
    who = "OOP" if node["player"] == 0 else "IP"
    lines = [f"node {node['node']}  history {node['history'] or '<root>'}  player {node['player']} ({who})  "
             f"board {node.get('board', data.get('board', '?'))}  pot {node['pot']:g}",
             "frequencies  " + "  ".join(f"{a} {100 * f:.1f}%" for a, f in zip(acts, node["frequencies"]))
             + f"   (reach {100 * node['reach']:.1f}% of the range)"]
    if node.get("range_ev") is not None:
        lines.append(f"range EV {node['range_ev']:.4g} chips (pot share)   range equity {100 * node['range_equity']:.2f}%")
    for a, label in enumerate(acts):
        grid = class_grid(node, a)
        lines += ["", f"{label}: frequency per hand class (%)", "     " + "".join(f"{r:>5s}" for r in ORDER)]
        for i, r in enumerate(ORDER):
            cells = "".join("    ." if np.isnan(q) else f"{100 * q:5.0f}" for q in grid[i])
            lines.append(f"{r:>4s} {cells}")
    return "\n".join(lines)
