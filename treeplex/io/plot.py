"""Convergence plots from solver traces: the EGT paper's figures 2 and 3 side by side.

``plot_traces(["cfr.csv", "egt.csv"], "out.png")`` draws, on log-log axes, the saddle-point
gap of the reported (average) strategy against iterations (left, figure 2) and against
gradient computations, i.e. products A y or A^T x (right, figure 3). Traces are the CSV files
written by ``treeplex solve --trace`` (:func:`treeplex.run.progress.write_trace`).
"""

from __future__ import annotations

import csv
import os

from ..errors import InputError


def read_trace(path: str) -> tuple[dict, list[dict]]:
    """(meta, rows) of a trace CSV; meta comes from the leading '# key=value ...' line."""
    if not os.path.isfile(path):
        raise InputError(f"no such trace file: {path}")
    meta: dict = {}
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    if lines and lines[0].startswith("#"):
        meta = dict(item.split("=", 1) for item in lines[0][1:].split() if "=" in item)
        lines = lines[1:]
    rows = []
    for i, row in enumerate(csv.DictReader(lines), start=2 if meta else 1):
        try:
            rows.append({k: float(v) for k, v in row.items() if v not in ("", None)})
        except ValueError:
            raise InputError(f"{path}: line {i} is not numeric: {row}") from None
    missing = {"iteration", "gradients", "gap_average"} - set(rows[0] if rows else {})
    if missing:
        raise InputError(f"{path}: not a treeplex trace (missing columns {sorted(missing)})")
    return meta, rows


def check_image_name(out: str) -> None:
    """Refuse an image file name whose extension matplotlib cannot write."""
    from matplotlib.backend_bases import FigureCanvasBase

    ext = os.path.splitext(out)[1][1:].lower()
    kinds = FigureCanvasBase.get_supported_filetypes()
    if ext not in kinds:
        raise InputError(f"-o {out}: cannot draw a {'.' + ext if ext else 'file without an extension'}; "
                         f"use one of {', '.join('.' + k for k in sorted(kinds))}")


X_LABELS = {"iteration": "iterations", "gradients": "gradient computations (products A y, A^T x)",
            "seconds": "solver seconds", "nodes_touched": "history nodes touched (sampling)",
            "samples": "sampled traversals"}


def plot_traces(paths: list[str], out: str, labels: list[str] | None = None, current: bool = False,
                title: str | None = None, x: tuple = ("iteration", "gradients")) -> str:
    """Draw the traces to ``out`` (PNG, or any format matplotlib knows by extension).

    ``current`` also draws the gap of the last iterate, dashed. ``x``: the trace columns on
    the horizontal axes, one panel each (:data:`X_LABELS`; ``nodes_touched`` and ``samples``
    are in the traces of the sampling solvers). Returns ``out``.
    """
    x = tuple(x)
    unknown = [k for k in x if k not in X_LABELS]
    if not x or unknown:
        raise InputError(f"--x: unknown column(s) {unknown}; choose from {', '.join(X_LABELS)}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(x), figsize=(5.5 * len(x) + (2 if len(paths) > 6 else 0), 4.2), squeeze=False)
    axes = axes[0]
    colors = plt.get_cmap("tab10" if len(paths) <= 10 else "tab20").colors
    games = set()
    for k, path in enumerate(paths):
        meta, rows = read_trace(path)
        games.add(meta.get("game", ""))
        label = labels[k] if labels and k < len(labels) else meta.get("algorithm") or os.path.basename(path)
        rows = [r for r in rows if 0 < r["gap_average"] < float("inf")]
        if not rows:
            raise InputError(f"{path}: no positive finite gap to draw on a log scale")
        for xkey in x:
            if xkey not in rows[0]:
                raise InputError(f"{path}: the trace has no column {xkey!r}")
        for ax, xkey in zip(axes, x):
            color = colors[k % len(colors)]
            ax.plot([r[xkey] for r in rows], [r["gap_average"] for r in rows], label=label, color=color)
            if current:
                pts = [r for r in rows if r.get("gap_current", 0) > 0]
                ax.plot([r[xkey] for r in pts], [r["gap_current"] for r in pts], ls="--", lw=0.8, color=color)
    for ax, xlabel in zip(axes, (X_LABELS[k] for k in x)):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("saddle-point gap (payoff units)")
        ax.grid(True, which="both", alpha=0.3)
    if len(paths) <= 6:
        axes[0].legend(fontsize=8)
    else:
        axes[-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    title = title or " / ".join(sorted(g for g in games if g)) or "convergence"
    fig.suptitle(title + (" (solid: average, dashed: current iterate)" if current else ""))
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
