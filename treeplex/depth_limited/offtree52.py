"""Responding to an off-tree preflop bet on nlfh52 (the paper's §5 and §6.1 on the public tree x hands).

The abstraction G (an :class:`~treeplex.poker.nlfh52.NLFH52`) has its blueprint; the real
game Gx is the same game with one more raise size ``x`` at a preflop node (``off_tree``).
The bettor makes it; the responder answers with

- **RPAT** (:mod:`.translation`): the bet is read as the abstraction's size just below (with
  probability f(x)) or just above it, once per hand; the responder plays the blueprint as if
  that size had been bet (a mixture of the two translated realization plans);
- **depth-limited solving** after the bet: the subgame of Gx rooted after it (:mod:`.nlfh52`),
  the bettor choosing among k continuations at the flop; a leaf's values are the average of
  the two leaves with the same later actions after the bracketing sizes, each scaled by the pot
  ratio (§6.1; :func:`.leaves.bracket`; where the size above is all-in, that leaf is the
  called all-in's showdown, the same for every continuation), its folds and called all-ins
  exact in Gx; with the
  resolve gadget (the bettor's alt: its best-response value at the node where it bet, in G,
  against the responder's blueprint: the off-tree bet must not gain over the sizes already
  there). After the flop both players' play below the bet is solved again with the
  responder's new preflop play and the bettor's range for the bracket's sizes, unsafely
  (:func:`flop_resolve`; the paper's is safe, not here yet), or (``round2="none"``) the
  responder plays the two bracketing lines' blueprints mixed half and half.

Everything else is the blueprint, translated label by label (:func:`.translation.translate`);
the bettor never bets ``x`` itself. Exploitability is exact: gap / 2 of the profile in Gx.
The lower bound is the blueprint computed the same way in Gx, where ``x`` is in the
abstraction.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..poker.nlfh import frac_label
from ..poker.nlfh52 import NLFH52, flop_text
from ..poker.public_tree import CHANCE
from .leaves import bracket
from .nlfh52 import LeafTable52, LeafValues52, View52, build_subgame, compose, root_alt, solve_subgame52
from .translation import nearest_label, rpat_bracket, rpat_probability, translate


def offtree_game(game: NLFH52, params: dict, at: str, size: float) -> tuple[NLFH52, int, int]:
    """(Gx, id of the node where the bet is made, id of the node after it): ``game`` (made from
    ``params``) with the raise ``size`` (x pot) added at the preflop history ``at``; refused in
    one line if it is not a raise of its own there, strictly between two of the abstraction's."""
    if at not in {game.tree.history[v] for v in range(len(game.preflop.actor))}:
        raise InputError(f"--at {at!r}: not a preflop decision node of {game.name}")
    label = frac_label(size)
    node = game.betting.node(at)
    if label in node.actions:
        raise InputError(f"--bet {size:g}: that size is in the abstraction at {at or 'the first action'!r}")
    gx = NLFH52(**params, off_tree={at: (size,)})
    xnode = gx.betting.node(at)
    to = xnode.raise_sizes().get(label)
    if to is None or to in node.raise_sizes().values():
        raise InputError(f"--bet {size:g}: not a raise of its own at {at or 'the first action'!r} (it rounds to the "
                         "chips of a raise the abstraction has, to the minimum raise or to all-in)")
    x = xnode.fraction_of(to)
    try:
        rpat_bracket(node, x)
    except Exception as e:  # a GameError: one line
        raise InputError(f"--bet {size:g}: {e}") from None
    for end, *_ in gx.preflop.ends:  # every flop line after the bet must have one after each bracketing size
        if end.kind != "deal" or end.allin or not any(src is xnode and lab == label for src, lab in end.path()):
            continue
        for lab, _ in bracket(node, x, "average"):
            dst = translate(end, game.betting, substitute=(xnode, lab))
            if dst.kind != "deal":
                raise InputError(f"--bet {size:g}: the flop line {end.hist_str!r} after it translates to "
                                 f"{dst.hist_str!r} after {lab}, a {dst.kind} of the abstraction, not a flop deal: "
                                 "no leaf values for it")
    hist = {gx.tree.history[v]: v for v in range(len(gx.preflop.actor))}
    return gx, hist[at], hist[f"{at},{label}" if at else label]


class Translator:
    """Full-layout behaviorals of G carried onto Gx, node by node: each Gx node's history is
    replayed in G (:func:`.translation.translate`, with ``substitute`` at the off-tree node) and
    the G node's probabilities go to this node's nearest labels; a node with no counterpart of
    the same player plays check/call."""

    def __init__(self, view_g: View52, view_x: View52, bet_node: int):
        self.g, self.x = view_g, view_x
        tg = view_g.tree
        self.g_id = {tg.history[v]: v for v in range(tg.n_nodes)}
        self.bet_pub = view_x.game.betting.node(view_x.tree.history[bet_node])
        self.off_label = next(a for a in self.bet_pub.actions if a not in view_g.game.betting.node(
            view_x.tree.history[bet_node]).actions)

    def after_bet(self, node) -> bool:
        """Whether public ``node``'s path takes the off-tree raise."""
        return any(src is self.bet_pub and lab == self.off_label for src, lab in node.path())

    def pub(self, view: View52, v: int):
        """(public node of the betting tree, board) of tree node v."""
        parts = view.tree.history[v].split("/")
        hist = parts[0] if len(parts) == 1 else f"{parts[0]}/{parts[2]}"
        return view.game.betting.node(hist), int(view.tree.board[v])

    def behavioral(self, p: int, b_g: np.ndarray, label: str | None = None) -> np.ndarray:
        """Player p's behavioral in Gx (full layout); ``label``: the G size read instead of the
        off-tree one below it (None: each node's nearest label)."""
        tx, tg, H = self.x.tree, self.g.tree, self.x.H
        out = np.zeros(self.x.game.n_seqs(p))
        out[0] = 1.0
        for v in tx.nodes_of(p):
            node, board = self.pub(self.x, v)
            sub = (self.bet_pub, label) if label is not None and self.after_bet(node) else None
            dst = translate(node, self.g.game.betting, substitute=sub)
            k = int(tx.n_actions[v])
            rows = np.zeros((H, k))
            labels = tx.actions[v]
            hist = dst.hist_str
            if board:
                pre, _, post = hist.partition("/")
                hist = f"{pre}/{flop_text(tg.boards[board])}/{post}"
            u = self.g_id.get(hist) if dst.kind == "decision" and dst.to_act == p else None
            if u is None:
                rows[:, labels.index("c" if "c" in labels else "x")] = 1.0
            else:
                ku = int(tg.n_actions[u])
                bu = b_g[self.g.bases[p][u]:self.g.bases[p][u] + H * ku].reshape(H, ku)
                for a, la in enumerate(tg.actions[u]):
                    rows[:, labels.index(nearest_label(la, dst, node))] += bu[:, a]
            out[self.x.bases[p][v]:self.x.bases[p][v] + H * k] = rows.ravel()
        return out


def rpat_response(tr: Translator, responder: int, b_g: np.ndarray, after: int) -> tuple[np.ndarray, dict]:
    """The responder's RPAT plan in Gx (full layout): f x plan(as the size below) + (1 - f) x
    plan(as the size above), realization plans mixed once per hand."""
    x_pub = tr.x.game.betting.node(tr.x.tree.history[after])
    parent = tr.g.game.betting.node(tr.x.tree.history[int(tr.x.tree.node_up_id[after])])
    x = x_pub.parent.fraction_of(x_pub.parent.raise_to_of(x_pub.label))
    (a, la), (bb, lb) = rpat_bracket(parent, x)
    f = rpat_probability(x, a, bb)
    T = tr.x.full_treeplexes[responder]
    plan = f * T.plan_from_behavioral(tr.behavioral(responder, b_g, la)) \
        + (1 - f) * T.plan_from_behavioral(tr.behavioral(responder, b_g, lb))
    return plan, {"f": f, "below": la, "above": lb, "x": x}


def offtree_table(tr: Translator, table_g: LeafTable52, lv_x: LeafValues52, after: int) -> tuple[LeafTable52, list]:
    """The chooser's leaf table of Gx below ``after``: per Gx line, the bracketing G lines'
    blocks averaged (1/2 each) and scaled by the pot ratio; other lines 0 (outside the subgame).
    Returns it and the bracket [(label, weight)]."""
    vx, vg = tr.x, tr.g
    x_pub = vx.game.betting.node(vx.tree.history[after])
    parent_g = translate(x_pub.parent, vg.game.betting)
    x = x_pub.parent.fraction_of(x_pub.parent.raise_to_of(x_pub.label))
    picks = bracket(parent_g, x, "average")
    g_line = {e["history"]: l for l, e in enumerate(vg.lines)}
    g_allin = {e["history"]: i for i, e in enumerate(vg.ends) if e["kind"] == CHANCE and not e["line"]}
    vals = np.zeros((table_g.k, len(vx.lines), vx.O, vx.O))
    for l, e in enumerate(vx.lines):
        leaf = vx.game.betting.node(e["history"])
        if not tr.after_bet(leaf):
            continue
        for lab, w in picks:
            dst = translate(leaf, vg.game.betting, substitute=(x_pub.parent, lab))
            if dst.kind == "deal" and dst.hist_str in g_line:
                block = table_g.values[:, g_line[dst.hist_str]]
            elif dst.kind == "deal" and dst.hist_str in g_allin:  # a called all-in: its showdown, every continuation
                block = table_g.terminals[g_allin[dst.hist_str]][None]
            else:
                raise InputError(f"leaf {e['history']!r} translates to a {dst.kind} node {dst.hist_str!r} of the "
                                 "abstraction, not to a flop deal")
            vals[:, l] += w * block * (leaf.contrib[0] / dst.contrib[0])
    return LeafTable52(vx, table_g.chooser, vals, list(table_g.names), [], dict(lv_x.terminals)), picks


def half_and_half_flop(tr: Translator, responder: int, b_g: np.ndarray, picks: list, base: np.ndarray,
                       after: int) -> np.ndarray:
    """``base`` with the responder's flop play below ``after`` replaced by the bracket's
    translated blueprints mixed by their weights as realization plans from each leaf."""
    vx, t, H = tr.x, tr.x.tree, tr.x.H
    pseudo = [(w, vx.pseudo_plan(responder, tr.behavioral(responder, b_g, lab))) for lab, w in picks]
    below = {e["id"] for e in vx.lines if tr.after_bet(vx.game.betting.node(e["history"]))}
    out = base.copy()
    for v in np.flatnonzero(np.isin(vx.line_of_node, list(below)) & (t.actor == responder)):
        k = int(t.n_actions[v])
        sl = slice(vx.bases[responder][v], vx.bases[responder][v] + H * k)
        mix = sum(w * pp[sl].reshape(H, k) for w, pp in pseudo)
        tot = mix.sum(axis=1, keepdims=True)
        out[sl] = np.where(tot > 0, mix / np.where(tot > 0, tot, 1.0), 1.0 / k).ravel()
    return out


def dl_response(tr: Translator, table_g: LeafTable52, lv_g: LeafValues52, b_x: list[np.ndarray], bet_node: int,
                after: int, *, safe: bool = True, round2: str = "unsafe", solver: str = "lp", round2_kw=None,
                **solve_kw) -> tuple[np.ndarray, dict]:
    """The responder's depth-limited response in Gx: (its full-layout behavioral, a dict with
    the solution ``solution``, the subgame ``subgame``, the bracket ``picks`` and the flop
    re-solve's result ``round2``). ``b_x``: both players' translated blueprints in Gx.
    ``round2``: after the flop, ``"unsafe"`` re-solves both players' flop play below the bet's
    lines with the responder's new preflop and the bettor's range for the bracket's sizes
    (:func:`flop_resolve`, ``round2_kw`` to its solver, DCFR for 500 iterations by default); ``"none"``: the
    bracket's translated blueprints, half and half."""
    vx, vg = tr.x, tr.g
    bettor = int(vx.tree.actor[bet_node])
    responder = 1 - bettor
    if table_g.chooser != bettor:
        raise ValueError(f"the leaf table's chooser is player {table_g.chooser}, the bettor is {bettor}")
    if round2 not in ("unsafe", "none"):
        raise InputError(f"--round2 {round2}: on nlfh52 the flop after the bet is re-solved unsafely (unsafe) or "
                         "played by the translated blueprint (none); safe re-solving is not there yet")
    lv_x = LeafValues52(vx, b_x)
    table, picks = offtree_table(tr, table_g, lv_x, after)
    reach_x = vx.reach_to(after, b_x)
    g_parent = tr.g_id[vx.tree.history[bet_node]]
    if safe:
        reach = [None, None]
        reach[bettor], reach[responder] = np.ones(vx.O), reach_x[responder]
        alt = root_alt(lv_g, bettor, g_parent, tuple(reach))
    else:  # the bettor's range: its blueprint's for the bracketing sizes
        reach = list(reach_x)
        rg = np.zeros(vx.O)
        tg = vg.tree
        for lab, w in picks:
            child = next(int(tg.child_id[s]) for s in range(tg.child_ptr[g_parent], tg.child_ptr[g_parent + 1])
                         if tg.actions[g_parent][s - tg.child_ptr[g_parent]] == lab)
            rg += w * vg.reach_to(child, lv_g.blueprint)[bettor]
        reach[bettor] = rg
        alt = None
    sub = build_subgame(vx, table, after, tuple(reach), alt=alt)
    sol = solve_subgame52(sub, solver, **solve_kw)
    b = compose(sol, b_x, players=(responder,))[responder]
    b = half_and_half_flop(tr, responder, lv_g.blueprint[responder], picks, b, after)
    info = {"solution": sol, "subgame": sub, "picks": picks, "round2": None}
    if round2 == "unsafe":
        lock = [None, None]
        lock[bettor] = with_bracket_range(tr, bettor, b_x[bettor], bet_node, picks)
        lock[responder] = b
        lines = {e["id"] for e in vx.lines if tr.after_bet(vx.game.betting.node(e["history"]))}
        kw = round2_kw or {"max_iters": 500}  # a fixed count: the locked game's gap is over the whole game
        both, res = flop_resolve(vx, lock, lines, "dcfr", **kw)
        b = both[responder]
        info["round2"] = res
    return b, info


def flop_resolve(vx: View52, b: list[np.ndarray], lines: set[int], solver: str = "dcfr", **solve_kw
                 ) -> tuple[list[np.ndarray], object]:
    """Unsafe re-solving of the flop below the chance nodes ``lines`` (the paper's step after the
    depth limit, without its safety): both players' flop play there is solved again with every
    other infoset locked to ``b`` (full-layout behaviorals), i.e. with the ranges the preflop
    play brings; the real game's problem with node locks (:mod:`treeplex.core.locks`), so the
    result is an equilibrium of that locked game. Returns both players' behaviorals (``b`` with
    the flop below ``lines`` replaced) and the solver's result."""
    from dataclasses import replace as dc_replace

    from ..core.locks import Locks
    from ..run.driver import solve

    t, g = vx.tree, vx.game
    P = g.problem()
    locks = []
    free_nodes = np.isin(vx.line_of_node, list(lines))
    for p, T in enumerate(P.treeplexes):
        red = vx.reduced(p, b[p])
        free = np.zeros(T.n_seqs, dtype=bool)
        for v in np.flatnonzero(free_nodes & (t.actor == p)):
            k = int(t.n_actions[v])
            if g.reduction is None:
                lo, width = vx.bases[p][v], vx.H
            else:
                lo, width = g.reduction.rbase[p][v], int(g.reduction.orbits[p][v].max()) + 1
            free[lo:lo + width * k] = True
        seqs = np.flatnonzero(~free)[1:].astype(np.int64)  # not the empty sequence
        locks.append(Locks(seqs, red[seqs], T.n_seqs))
    locked = dc_replace(P, locks=tuple(locks), _backend=None)
    res = solve(locked, solver, **solve_kw)
    out = [vx.full_behavioral(p, x) for p, x in enumerate((res.x, res.y))]
    return out, res


def with_bracket_range(tr: Translator, bettor: int, b: np.ndarray, bet_node: int, picks: list) -> np.ndarray:
    """The bettor's behavioral ``b`` (Gx, full layout) making the off-tree raise at ``bet_node``
    as often as the bracket's sizes together, weighted by ``picks`` (its range for the raise:
    what the flop is re-solved against), the rest of the row scaled down to keep a distribution."""
    vx, H = tr.x, tr.x.H
    labels = vx.tree.actions[bet_node]
    k = len(labels)
    sl = slice(vx.bases[bettor][bet_node], vx.bases[bettor][bet_node] + H * k)
    rows = b[sl].reshape(H, k).copy()
    off = labels.index(tr.off_label)
    q = sum(w * rows[:, labels.index(lab)] for lab, w in picks)
    rows *= (1.0 - q)[:, None] / np.maximum(rows.sum(axis=1, keepdims=True) - rows[:, [off]], 1e-300)
    rows[:, off] = q
    out = b.copy()
    out[sl] = rows.ravel()
    return out
