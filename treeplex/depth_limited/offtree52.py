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
  there). After the flop, with the responder's new preflop play locked, the flop below the
  bet is solved again (one solve of the flop below every line after the bet, with what is
  above it fixed: :class:`~treeplex.poker.flop_lines.FlopLines`) either

  - safely (``round2="safe"``, §5 with Brown & Sandholm 2017's Reach subgame solving):
    every bettor hand orbit o enters line l through a resolve gadget whose alt is its step-1
    leaf value, max_j sum_o' v_j(l, o, o') r(o') (r: the responder's reach), raised by its gift
    m(o) / n(o), m(o) = root alt - its step-1 value of entering, shared over the n(o) lines
    the responder's play lets it reach (all in player 0's chips times chance and reach). As
    long as every gadget holds, no bettor hand gains more by the bet in Gx than
    max(root alt, step-1 value): :func:`flop_alts`, :func:`safe_flop_problem`;
  - unsafely, with the bettor's range for the bracket's sizes (:func:`flop_resolve`);

  or (``round2="none"``) the responder plays the two bracketing lines' blueprints mixed half
  and half.

  The re-solve may start warm from the flop play above (the translated blueprint's), both
  players' plans as a prior (the unified view's "Initialization with a Prior"; the bettor
  entering every gadget): ``round2_kw["prior_weight"]`` > 0. At 50 BB weight 3 cut the
  re-solve's gap by a third at 200 iterations and weight 10 raised it; within 30 s per line
  at NLFH-50/S64 weight 3 halved it (docs/research.md).
  The lines do not interact (each gadget and infoset is below one line), so the re-solve of
  one line alone, which is what play needs once the preflop has ended there, gives the same
  strategy on it as the re-solve of all. ``round2_kw["budget"]`` re-solves them so, line by
  line, each in at most that many seconds from the start of its build (the paper's
  real-time setting: a time budget per decision; :class:`ByLine`).

Everything else is the blueprint, translated label by label (:func:`.translation.translate`);
the bettor never bets ``x`` itself. Exploitability is exact: gap / 2 of the profile in Gx.
The lower bound is the blueprint computed the same way in Gx, where ``x`` is in the
abstraction.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..model.gadget import MarginPayoff, maxmargin_treeplex
from ..model.problem import Problem
from ..poker.flop_lines import FlopLines
from ..poker.fused import FusedProfile
from ..poker.fused_lines import FusedLines
from ..poker.nlfh import frac_label
from ..poker.nlfh52 import NLFH52, flop_text
from ..poker.public_tree import CHANCE
from .leaves import bracket
from .nested import best_leaf_sums, gifted_bounds
from .nlfh52 import (LeafTable52, LeafValues52, Solution52, View52, build_subgame, compose, enter_values, root_alt,
                     solve_subgame52)
from .sets import br_values
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
    gx.products_checked = game.products_checked  # the pipeline's estimate counts the game with the bet
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

    def behavioral(self, p: int, b_g: np.ndarray, label: str | None = None, nodes=None) -> np.ndarray:
        """Player p's behavioral in Gx (full layout); ``label``: the G size read instead of the
        off-tree one below it (None: each node's nearest label); ``nodes``: only at these of
        p's nodes (the other rows 0)."""
        tx, tg, H = self.x.tree, self.g.tree, self.x.H
        out = np.zeros(self.x.game.n_seqs(p))
        out[0] = 1.0
        for v in tx.nodes_of(p) if nodes is None else nodes:
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
    """The responder's RPAT plan in Gx (solver layout): f x plan(as the size below) + (1 - f) x
    plan(as the size above), realization plans mixed once per hand."""
    x_pub = tr.x.game.betting.node(tr.x.tree.history[after])
    parent = tr.g.game.betting.node(tr.x.tree.history[int(tr.x.tree.node_up_id[after])])
    x = x_pub.parent.fraction_of(x_pub.parent.raise_to_of(x_pub.label))
    (a, la), (bb, lb) = rpat_bracket(parent, x)
    f = rpat_probability(x, a, bb)
    plan = f * tr.x.plan(responder, tr.behavioral(responder, b_g, la)) \
        + (1 - f) * tr.x.plan(responder, tr.behavioral(responder, b_g, lb))
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
                       fl: FlopLines) -> np.ndarray:
    """``base`` with the responder's flop play below the bet's lines (``fl``) replaced by the
    bracket's translated blueprints mixed by their weights as realization plans from each
    line: on ``fl``'s layout, whose infosets above the lines hang from the empty sequence (the
    preflop counted as 1), translated only there."""
    T, nodes = fl.treeplex(responder), fl.nodes[responder]
    mix = sum(w * T.plan_from_behavioral(fl.behavioral(responder, tr.behavioral(responder, b_g, lab, nodes)))
              for lab, w in picks)
    return fl.full_behavioral(responder, T.behavioral_from_plan(mix), base)


def dl_response(tr: Translator, table_g: LeafTable52, lv_g: LeafValues52, b_x: list[np.ndarray], bet_node: int,
                after: int, *, safe: bool = True, round2: str = "unsafe", solver: str = "lp", round2_kw=None,
                **solve_kw) -> tuple[np.ndarray, dict]:
    """The responder's depth-limited response in Gx: (its full-layout behavioral, a dict with
    the solution ``solution``, the subgame ``subgame``, the bracket ``picks``, the seconds of
    the response to the bet itself ``step1_seconds`` (up to the flop) and the flop re-solve's
    result ``round2``). ``b_x``: both players' translated blueprints in Gx.
    ``round2``: after the flop, ``"unsafe"`` re-solves both players' flop play below the bet's
    lines with the responder's new preflop and the bettor's range for the bracket's sizes
    (:func:`flop_resolve`); ``"safe"`` re-solves it with the bettor's every hand behind a
    resolve gadget whose alt is its step-1 leaf value raised by its gift (:func:`flop_alts`,
    :func:`safe_flop_resolve`; gifts need ``safe``); ``"maxmargin"`` the same with the
    Maxmargin gadget (:func:`safe_flop_problem`'s ``margin``) where its solution holds every
    bettor hand to its alt, else with the resolve gadget (Maxmargin then spends its play on the
    one bound it cannot meet and leaves every other hand free); ``round2_kw`` go to the
    re-solve's solver, DCFR for 500 iterations by default, its gap checked once at the end
    unless they give a target or ``check_every``, started warm from the flop play above with
    their ``prior_weight`` (> 0; not with Maxmargin), or line by line within their ``budget``
    seconds each (:class:`ByLine` in ``info["round2"]``; not with Maxmargin); ``"none"``: the
    bracket's translated blueprints, half and half."""
    t0 = time.perf_counter()
    vx, vg = tr.x, tr.g
    bettor = int(vx.tree.actor[bet_node])
    responder = 1 - bettor
    if table_g.chooser != bettor:
        raise ValueError(f"the leaf table's chooser is player {table_g.chooser}, the bettor is {bettor}")
    if round2 not in ("safe", "maxmargin", "unsafe", "none"):
        raise InputError(f"--round2 {round2}: on nlfh52 the flop after the bet is re-solved safely (safe, or "
                         "maxmargin), unsafely (unsafe) or played by the translated blueprint (none)")
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
    lines = [e["id"] for e in vx.lines if tr.after_bet(vx.game.betting.node(e["history"]))]
    b = half_and_half_flop(tr, responder, lv_g.blueprint[responder], picks, b, FlopLines(vx.game, lines))
    info = {"solution": sol, "subgame": sub, "picks": picks, "round2": None,
            "step1_seconds": time.perf_counter() - t0}
    if round2 == "none":
        return b, info
    lock = [None, None]
    lock[responder] = b
    kw = dict(round2_kw or {})
    warm = float(kw.pop("prior_weight", 0.0) or 0.0)
    budget = kw.pop("budget", None)
    if warm < 0 or (warm and round2 == "maxmargin"):
        raise InputError(f"the flop re-solve's prior weight must be >= 0 and is not taken by Maxmargin, got {warm:g} "
                         f"with --round2 {round2}")
    if budget is not None and (not budget > 0 or round2 == "maxmargin"):
        raise InputError(f"the flop re-solve's budget per line must be > 0 seconds and is not taken by Maxmargin, got "
                         f"{budget} with --round2 {round2}")
    if budget is None:
        kw.setdefault("max_iters", 500)  # a fixed count: the gap is in the whole game's chips x chance
    if "target_gap" not in kw:
        kw.setdefault("check_every", kw.get("max_iters", 10**9))  # one gap check, at the end (they were 15% of a
        # response); with a budget, where it runs out
    if round2 == "unsafe":
        lock[bettor] = with_bracket_range(tr, bettor, b_x[bettor], bet_node, picks)
        resolve = lambda ls, **k: flop_resolve(vx, lock, ls, "dcfr", warm=warm, **k)  # noqa: E731
    else:
        lock[bettor] = b_x[bettor]  # its range below the lines is the gadgets' (every hand)
        alts = flop_alts(vx, table, sol, b, lines)
        resolve = lambda ls, **k: safe_flop_resolve(vx, lock, ls, bettor, alts, "dcfr", warm=warm, **k)  # noqa: E731
    if budget is not None:
        both, res = by_line(lock, lines, budget, resolve, **kw)
    elif round2 == "unsafe":
        both, res = resolve(lines, **kw)
    else:
        sf = resolve(lines, margin=round2 == "maxmargin", **kw)
        if round2 == "maxmargin" and sf.margin(sf.res.y if bettor == 0 else sf.res.x) < 0:
            sf = resolve(lines, **kw)  # a bound it cannot hold: Resolve
        both, res = sf.behaviorals(), sf.res
        info["safe_flop"] = sf
    info["round2"] = res
    return both[responder], info


@dataclass
class ByLine:
    """The flop re-solved line by line (:func:`by_line`): per line its id, solver result and
    seconds (build, warm start and solve, which its deadline covers, then its last gap check,
    ``results[i].check_seconds``, and the result's evaluation, which it does not). The lines'
    gaps add up to the re-solve's."""

    lines: list[int] = field(default_factory=list)
    results: list = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    @property
    def gap(self) -> float:
        return float(sum(r.gap for r in self.results))

    @property
    def iterations(self) -> int:
        """The iterations of the line that took the longest (the one its budget binds)."""
        return self.results[int(np.argmax(self.seconds))].iterations if self.results else 0


def by_line(lock: list[np.ndarray], lines: list[int], budget: float, resolve, **solve_kw
            ) -> tuple[list[np.ndarray], ByLine]:
    """Each line's flop re-solved alone, as play meets it: ``resolve(lines, deadline=...,
    into=..., **solve_kw)`` (:func:`flop_resolve` or :func:`safe_flop_resolve` with their
    other arguments bound) with a deadline ``budget`` seconds after its start; both players'
    behaviorals are ``lock`` with every line's re-solved flop written in. One iteration of the
    last line first, untimed: numba's compile of the re-solve's kernels (from its cache after a
    first run on an install), which play makes before its first decision."""
    out, log = [lock[0].copy(), lock[1].copy()], ByLine()
    if lines:
        resolve(list(lines)[-1:], **{**solve_kw, "max_iters": 1, "check_every": 1})
    for line in lines:
        t0 = time.perf_counter()
        got = resolve([line], deadline=t0 + budget, into=out, **solve_kw)
        res = got.res if isinstance(got, SafeFlop) else got[1]
        log.lines.append(line)
        log.results.append(res)
        log.seconds.append(time.perf_counter() - t0)
    return out, log


def _time_left(deadline: float | None, solve_kw: dict) -> dict:
    """``solve_kw`` with a time limit of the seconds left before ``deadline`` (at least 1 ms) and
    the deadline itself (the driver's wall-clock stop: the solver's setup counts too)."""
    if deadline is None:
        return solve_kw
    return {**solve_kw, "time_limit": max(deadline - time.perf_counter(), 1e-3), "deadline": deadline}


def flop_resolve(vx: View52, b: list[np.ndarray], lines: list[int], solver: str = "dcfr", warm: float = 0.0,
                 deadline: float | None = None, into: list[np.ndarray] | None = None, **solve_kw
                 ) -> tuple[list[np.ndarray], object]:
    """Unsafe re-solving of the flop below the chance nodes ``lines`` (the paper's step after the
    depth limit, without its safety): both players' flop play there is solved again with the
    rest of ``b`` (full-layout behaviorals) fixed, i.e. with the ranges the preflop play brings:
    the flop below the lines alone (:class:`~treeplex.poker.flop_lines.FlopLines`), each
    player's fixed reach into a line folded into the payoffs, an equilibrium of the real game
    with every other infoset locked. Returns both players' behaviorals (``b`` with the flop
    below ``lines`` replaced; written into the arrays ``into`` instead if given) and the
    solver's result. ``warm`` > 0: the solver starts from ``b``'s flop play there with that
    prior weight (:func:`flop_prior`); ``deadline`` (a ``time.perf_counter()`` time): it stops
    there."""
    from ..run.driver import solve

    fl = FlopLines(vx.game, lines)
    P = fl.problem(tuple(vx.line_reach(p, b[p], fl.lines) for p in (0, 1)), name=f"flop re-solve of {vx.game.name}",
                   payoff_unit="chips", big_blind=vx.game.big_blind)
    prior = flop_prior(P, fl, b, warm)  # before the time left is read: the deadline covers its setup
    res = solve(P, solver, **_time_left(deadline, solve_kw), **prior)
    out = [fl.full_behavioral(p, beh, b[p] if into is None else into[p], inplace=into is not None)
           for p, beh in enumerate(result_behaviorals(P, res))]
    return out, res


def result_behaviorals(P: Problem, res) -> tuple[np.ndarray, np.ndarray]:
    """Both players' behaviorals (``P``'s layout) of a flop re-solve's result ``res``: read
    from the fused walk's state where it ran there (:meth:`.FusedLines.behaviorals`; a plan
    pair made and taken back costs about 1 s after the deadline on the call's line at
    NLFH-50/S64), else from its plans."""
    if isinstance(res.plans, FusedProfile) and isinstance(res.plans.engine.tree, FusedLines):
        return res.plans.engine.tree.behaviorals(res.plans.players, res.plans.which)
    return tuple(T.behavioral_from_plan(x) for T, x in zip(P.treeplexes, (res.x, res.y)))


@dataclass
class SafeFlop:
    """The safe flop re-solve's problem (the flop below ``lines.lines``, the chooser's infosets
    behind resolve gadgets), its gadgets ``(line, orbit)`` in order, their ``alt``, the fixed
    play ``b`` above and off the lines (full-layout behaviorals) and the solver's result ``res``."""

    problem: Problem
    lines: FlopLines
    gadgets: list[tuple[int, int]]
    alt: np.ndarray
    b: list[np.ndarray]
    res: object = None
    resolve: Problem | None = None  # the resolve gadget's problem (``problem`` itself unless Maxmargin)

    @property
    def gadget(self) -> str:
        """Which gadget ``problem`` has: "resolve" or "maxmargin"."""
        return "resolve" if self.resolve is None else "maxmargin"

    def enter_values(self, other: np.ndarray) -> np.ndarray:
        """[G] the chooser's best-response value of "enter" at each gadget against the other
        player's plan ``other`` (player 0's chips times chance and reach, as ``alt``)."""
        P = self.resolve or self.problem
        A = P.A
        sign = 1.0 if A.chooser == 0 else -1.0
        g = sign * (A.matvec(other, count=False) if A.chooser == 0 else A.rmatvec(other, count=False))
        return sign * br_values(P.treeplexes[A.chooser], g)[2 + 2 * np.arange(len(self.gadgets))]

    def margin(self, other: np.ndarray) -> float:
        """The smallest margin over the reached gadgets, in the chooser's sense, per unit of
        weight: min_g sign (alt_g - enter_g) / w_g against the other player's plan (``problem``
        a Maxmargin one); negative where some bound is not held."""
        A = self.problem.A
        sign = 1.0 if A.chooser == 0 else -1.0
        g = A.reached
        return float(np.min(sign * (self.alt[g] - self.enter_values(other)[g]) / A.w[g]))

    def behaviorals(self, into: list[np.ndarray] | None = None) -> list[np.ndarray]:
        """Both players' full-layout behaviorals: ``b`` with the flop below the lines the
        solution's (the chooser's without its gadgets); written into ``into`` if given."""
        out = []
        for p, beh in enumerate(result_behaviorals(self.problem, self.res)):
            beh = self.problem.A.inner_vector(beh) if p == self.problem.A.chooser else beh
            out.append(self.lines.full_behavioral(p, beh, self.b[p] if into is None else into[p],
                                                  inplace=into is not None))
        return out


def safe_flop_resolve(vx: View52, b: list[np.ndarray], lines: list[int], chooser: int, alt: dict[int, np.ndarray],
                      solver: str = "dcfr", margin: bool = False, warm: float = 0.0, deadline: float | None = None,
                      into: list[np.ndarray] | None = None, **solve_kw) -> SafeFlop:
    """:func:`safe_flop_problem` solved by ``solver`` (``solve_kw`` to it); ``warm`` > 0: from
    ``b``'s flop play below the lines with that prior weight, the chooser entering every
    gadget (:func:`flop_prior`; the resolve gadget only); ``deadline``: stopped there (a
    ``time.perf_counter()`` time); ``into``: both behaviorals written there
    (:meth:`SafeFlop.behaviorals`)."""
    from ..run.driver import solve

    sf = safe_flop_problem(vx, b, lines, chooser, alt, margin)
    if warm and margin:
        raise InputError("a warm start of the Maxmargin gadget's re-solve: its root's choice has no prior")
    prior = flop_prior(sf.problem, sf.lines, b, warm, chooser)  # inside the deadline, as in flop_resolve
    sf.res = solve(sf.problem, solver, **_time_left(deadline, solve_kw), **prior)
    if into is not None:
        sf.behaviorals(into=into)
    return sf


def flop_prior(P: Problem, fl: FlopLines, b: list[np.ndarray], weight: float, chooser: int | None = None) -> dict:
    """The solver's warm-start arguments for a flop re-solve ``P`` over ``fl``: {} for weight
    0, else ``prior`` = both players' plans of ``b``'s flop play below the lines (full-layout
    behaviorals; the ``chooser``'s behind resolve gadgets, entering each) and ``prior_weight``."""
    if not weight:
        return {}
    plans = []
    for p, T in enumerate(P.treeplexes):
        beh = fl.behavioral(p, b[p])
        if p == chooser:  # gadget g's (alt, enter) = sequences (1 + 2g, 2 + 2g), then the inner ones
            G = (T.n_seqs - len(beh)) // 2
            beh = np.concatenate((beh[:1], np.tile([0.0, 1.0], G), beh[1:]))
        plans.append(T.plan_from_behavioral(beh))
    return {"prior": tuple(plans), "prior_weight": float(weight)}


def flop_alts(vx: View52, table: LeafTable52, sol: Solution52, b_resp: np.ndarray, lines: list[int],
              gifts: bool = True) -> dict[int, np.ndarray]:
    """Per line l after the bet, [O] the chooser's alt at the safe flop re-solve's gadgets
    (player 0's chips times chance and the responder's reach): its step-1 leaf value, the best
    of the k values of ``table`` against the responder's step-1 play ``b_resp`` (full-layout
    behavioral; :func:`.nested.best_leaf_sums`), raised with ``gifts`` (and a step-1 root
    gadget) by the step-1 margin m(o) = alt - "enter" value of the step-1 gadget (>= 0 for the
    chooser) shared over the n(o) lines the responder's play lets hand orbit o reach: m / n at
    each (:func:`.nested.gifted_bounds`), capped at the stack times the line's chance mass."""
    sub = sol.subgame
    c, r = sub.chooser, sub.searcher
    sign = 1.0 if c == 0 else -1.0
    plan = vx.full(r, vx.plan(r, b_resp))
    index = {e["id"]: i for i, e in enumerate(vx.lines)}
    bound, mass = {}, {}
    for l in lines:
        u, a = vx.lines[index[l]]["last"][r]
        reach = plan[vx.bases[r][u] + vx.first * int(vx.tree.n_actions[u]) + a]  # [O] the responder's
        w = np.outer(np.ones(vx.O), reach) if c == 0 else np.outer(reach, np.ones(vx.O))
        bound[l] = best_leaf_sums(table.values[:, index[l]], w, c)[0]
        mass[l] = vx.leaf_mass @ reach if c == 0 else reach @ vx.leaf_mass  # [O] the chooser's pairs x flops
    if not gifts or sub.alt is None:
        return bound
    margin = np.maximum(0.0, sign * (sub.alt - enter_values(sub, sol.plans)))
    n = np.sum([mass[l] > 0 for l in lines], axis=0)
    return {l: gifted_bounds(bound[l], np.where(mass[l] > 0, margin / np.maximum(n, 1), 0.0),
                             vx.game.stack * mass[l], c) for l in lines}


def safe_flop_problem(vx: View52, b: list[np.ndarray], lines: list[int], chooser: int, alt: dict[int, np.ndarray],
                      margin: bool = False) -> SafeFlop:
    """Safe re-solving of the flop below the chance nodes ``lines`` (Burch et al. 2014's resolve
    gadget, Brown & Sandholm 2017): the flop below the lines alone
    (:class:`~treeplex.poker.flop_lines.FlopLines`), the other player's fixed reach into each
    line (``b``: full-layout behaviorals) folded into the payoffs, the ``chooser``'s flop
    infosets below line l with hand orbit o hanging from a gadget infoset of their own, alt
    (payoff ``alt[l][o]``, player 0's chips times chance and the other's reach) or enter: the
    chooser's range there is every hand, each free to take its alt. The other player's flop
    play there minimizes, for player 0 = chooser, sum_o max(alt, enter). Up to a constant
    of ``b`` (the terminals off the lines), the real game with every other infoset locked.

    ``margin``: Reach-Maxmargin instead (Brown & Sandholm 2017, §4; :class:`.gadget.MarginPayoff`):
    the chooser picks the one (line, orbit) whose step-1 bound its flop play exceeds most per
    unit of its weight w (chance times the other's reach: ``pair_block`` times the other's
    reach into the line), so the other player raises the smallest margin alt - enter rather
    than only holding every enter to its alt. Where the alts are loose (most gadgets not
    binding), the resolve gadget's equilibria are all the plays that keep every hand under
    its alt, and a solver may return any of them."""
    fl = FlopLines(vx.game, lines)
    gadgets = [(l, o) for l in fl.lines for o in range(vx.O)]
    reach = [None, None]
    reach[1 - chooser] = vx.line_reach(1 - chooser, b[1 - chooser], fl.lines)
    alts = np.array([alt[l][o] for l, o in gadgets])
    name = f"safe flop re-solve of {vx.game.name}"
    resolve = fl.problem(tuple(reach), chooser, alts, name=name, payoff_unit="chips", big_blind=vx.game.big_blind)
    if not margin:
        return SafeFlop(resolve, fl, gadgets, alts, b)
    Ts = [fl.treeplex(0), fl.treeplex(1)]
    inner = resolve.A.inner
    r_other = reach[1 - chooser][:, vx.first]  # [lines, O]: orbit-constant
    w = (r_other @ (vx.pair_block.T if chooser == 0 else vx.pair_block)).ravel()  # gadget (l, o) -> l * O + o
    reached = np.flatnonzero(w > 1e-12 * w.max(initial=0.0))
    start, end, parent = fl.infosets(chooser)
    owner = np.full(int(end.max(initial=1)), -1, np.int64)  # each inner sequence's gadget
    for j in np.argsort(start, kind="stable"):  # a parent sequence comes before its infoset
        owner[start[j]:end[j]] = -1 - parent[j] if parent[j] < 0 else owner[parent[j]]
    Ts[chooser] = maxmargin_treeplex(start, end, parent, reached)
    problem = Problem(Ts[0], Ts[1], MarginPayoff(inner, chooser, alts, w, owner, reached), name=name + " (maxmargin)",
                      payoff_unit="chips", big_blind=vx.game.big_blind)
    return SafeFlop(problem, fl, gadgets, alts, b, resolve=resolve)


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
