"""``treeplex report RESULTS.sqlite [-o DIR]``: a batch's spots side by side, and by board texture.

Per solved spot, from its stored solution (what ``solve --out`` writes):

* ``freq_<action>``: the root's range-weighted action frequencies (OOP, player 0, acts first);
* ``oop_ev``, ``oop_equity``: the root node's ``range_ev`` and ``range_equity`` (chips of the
  pot OOP ends with, and its share of the pot by checking down, over all deals);
* ``ip_ev = pot - oop_ev`` and ``ip_equity = 1 - oop_equity``: IP's at the root, exactly
  (both players' EVs add up to the pot, and their equities to 1, over the same deals; IP's
  own first node is after OOP's check, a conditional average, so it is not used).

* ``lock_ev_oop``, ``lock_ev_ip``: for a locked spot, the EV each player gains from its locks,
  chips (locked value minus its baseline's, the same spot solved without locks:
  :mod:`treeplex.run.whatif`), and ``lock_ev_err`` its bound (the two solves' gaps summed);
  these columns appear when the batch has locked spots.
* ``rake_cost_oop``, ``rake_cost_ip`` (chips) and ``rake_cost_oop_mbb``, ``rake_cost_ip_mbb``
  (mbb/g): for a raked spot, what the rake costs each player, its own value in the spot
  without rake minus its own value in the raked one (the raked game is not zero-sum: the two
  add up to the expected rake; :mod:`treeplex.run.whatif`), and ``rake_cost_err`` the bound
  (the two solves' gaps summed); these columns appear when the batch has raked spots.

Spots without these (not postflop, e.g. river endgames or kuhn) show value and
exploitability only. Boards are grouped twice (:mod:`treeplex.scale.flops`, on the board's first
three cards): by texture class (paired, monotone, two-tone, rainbow) and by high card
(A-high ... 2-high); a group's numbers are means weighted by the spots' ``weight`` (a flop's
number of combos from ``batch --flops``; 1 when absent). ``-o DIR`` writes
``report.csv`` (per spot), ``textures.csv`` (per group) and ``report.png``.
"""

from __future__ import annotations

import csv
import json
import os

from .batch import load_strategy, read_rows
from ..errors import InputError
from .flops import TEXTURES, high_card, texture

BASE = ["spot", "game", "board", "texture", "high_card", "weight", "pot", "algorithm", "value", "exploitability",
        "iterations", "oop_ev", "ip_ev", "oop_equity", "ip_equity"]
NUMBERS = ["oop_ev", "ip_ev", "oop_equity", "ip_equity"]
LOCK = ["lock_ev_oop", "lock_ev_ip", "lock_ev_err"]
RAKE = ["rake_cost_oop", "rake_cost_ip", "rake_cost_oop_mbb", "rake_cost_ip_mbb", "rake_cost_err"]


def spot_rows(db: str) -> list[dict]:
    """One dict per solved spot (columns :data:`BASE` and ``freq_<action>``)."""
    out = []
    for r in read_rows(db):
        if r["status"] != "done":
            continue
        sol = load_strategy(r["strategy"], f"{db}: spot {r['hash'][:12]}")
        spec = json.loads(r["spec"])
        row = {"spot": r["hash"][:12], "game": r["game"], "board": sol.get("board", ""), "texture": "",
               "high_card": "", "weight": spec.get("weight", 1), "pot": sol.get("pot"), "algorithm": r["algorithm"],
               "value": r["value"], "exploitability": r["exploitability"], "iterations": r["iterations"]}
        if row["board"]:
            row["texture"], row["high_card"] = texture(row["board"]), high_card(row["board"])
        root = next((n for n in sol.get("nodes", []) if n.get("history") == ""), None)
        if root is not None:
            row.update({f"freq_{a}": f for a, f in zip(root["actions"], root["frequencies"])})
        if root is not None and root.get("range_ev") is not None:
            row.update(oop_ev=root["range_ev"], ip_ev=sol["pot"] - root["range_ev"],
                       oop_equity=root["range_equity"], ip_equity=1.0 - root["range_equity"])
        gain = sol.get("lock_ev_gain")
        if gain is not None:
            row.update(lock_ev_oop=gain["chips"][0], lock_ev_ip=gain["chips"][1], lock_ev_err=gain["error_bound_chips"])
        cost = sol.get("rake_ev_cost")
        if cost is not None:
            bb = sol.get("big_blind")  # (checked finite by check_whatif, as the chips)
            mbb = [1000 * c / bb if bb else None for c in cost["chips"]]
            row.update(rake_cost_oop=cost["chips"][0], rake_cost_ip=cost["chips"][1], rake_cost_oop_mbb=mbb[0],
                       rake_cost_ip_mbb=mbb[1], rake_cost_err=cost["error_bound_chips"])
        out.append(row)
    return out


def _numbers(rows: list[dict]) -> list[str]:
    """:data:`NUMBERS`, :data:`LOCK` where some spot is locked, :data:`RAKE` where some is raked."""
    return (NUMBERS + (LOCK if any("lock_ev_oop" in r for r in rows) else [])
            + (RAKE if any("rake_cost_oop" in r for r in rows) else []))


def group_rows(rows: list[dict]) -> list[dict]:
    """Weighted means per texture class, then per high card, of the numbers and frequencies."""
    freqs = _freq_columns(rows)
    groups = []
    for by, key, order in (("texture", "texture", TEXTURES), ("high card", "high_card", None)):
        names = order or sorted({r[key] for r in rows if r[key]}, key=lambda h: "AKQJT98765432".index(h[0]))
        for name in names:
            members = [r for r in rows if r[key] == name and r.get("oop_ev") is not None]
            if not members:
                continue
            g = {"group_by": by, "class": name, "spots": len(members),
                 "weight": sum(r["weight"] for r in members)}
            for col in _numbers(rows) + freqs:
                have = [r for r in members if r.get(col) is not None]
                w = sum(r["weight"] for r in have)
                g[col] = sum(r["weight"] * r[col] for r in have) / w if w else None
            groups.append(g)
    return groups


def _freq_columns(rows) -> list[str]:
    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k.startswith("freq_") and k not in cols]
    return cols


def format_tables(rows: list[dict], groups: list[dict]) -> str:
    freqs = _freq_columns(rows)
    spot_cols = ["spot", "board", "texture", "value", "exploitability", *_numbers(rows), *freqs]
    lines = [_table(rows, spot_cols)]
    if groups:
        lines += ["", _table(groups, ["group_by", "class", "spots", "weight", *_numbers(rows), *freqs])]
    return "\n".join(lines)


def _table(rows: list[dict], cols: list[str]) -> str:
    def cell(v):
        if v is None or v == "":
            return "-"
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    cells = [[cell(r.get(c)) for c in cols] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
    out = ["  ".join(c.ljust(w) for c, w in zip(cols, widths))]
    out += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(out)


def write_csv(path: str, rows: list[dict], cols: list[str]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows({c: ("" if r.get(c) is None else r.get(c)) for c in cols} for r in rows)


def plot_report(path: str, rows: list[dict], groups: list[dict]) -> None:
    """Left: OOP's equity against its EV share of the pot, per spot, by texture. Right: the
    root's mean action frequencies per texture class."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    for name in TEXTURES:
        pts = [r for r in rows if r["texture"] == name and r.get("oop_ev") is not None]
        if pts:
            a.scatter([r["oop_equity"] for r in pts], [r["oop_ev"] / r["pot"] for r in pts], s=12, label=name)
    a.set_xlabel("OOP equity at the root")
    a.set_ylabel("OOP EV / pot at the root")
    a.set_title("per spot")
    if a.has_data():
        a.legend(fontsize=8)
    tex = [g for g in groups if g["group_by"] == "texture"]
    bottom = [0.0] * len(tex)
    for col in _freq_columns(rows):
        vals = [g.get(col) or 0.0 for g in tex]
        b.bar([g["class"] for g in tex], vals, bottom=bottom, label=col[5:])
        bottom = [x + v for x, v in zip(bottom, vals)]
    b.set_ylabel("root action frequency (OOP)")
    b.set_title("by texture (weighted mean)")
    if tex:
        b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(db: str, folder: str | None = None) -> str:
    """The tables as text; with ``folder``, also its CSV files and plot (named at the end)."""
    rows = spot_rows(db)
    if not rows:
        raise InputError(f"{db}: no solved spot to report")
    groups = group_rows(rows)
    text = format_tables(rows, groups)
    if folder:
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise InputError(f"-o {folder} is not a folder")
        os.makedirs(folder, exist_ok=True)
        freqs = _freq_columns(rows)
        paths = [os.path.join(folder, n) for n in ("report.csv", "textures.csv", "report.png")]
        try:
            lock = _numbers(rows)[len(NUMBERS):]
            write_csv(paths[0], rows, BASE + lock + freqs)
            write_csv(paths[1], groups, ["group_by", "class", "spots", "weight", *_numbers(rows), *freqs])
            plot_report(paths[2], rows, groups)
        except OSError as e:
            raise InputError(f"-o {folder}: cannot write ({e.strerror or e})") from None
        text += "\n\nwrote " + ", ".join(paths)
    return text

