"""The flop rounds below some ends of an ``nlfh52`` game's preflop round, as a game of their own.

Re-solving the flop below chance nodes L (the *lines*) with the play above them fixed needs
only the flop's sequences and terminals below L. Player p's fixed reach into line l with
hand h, pi_p(l, h) (the product of its preflop probabilities on the way), multiplies every
payoff below l, so the sub-game's payoff matrix is

    A_L[s0, s1] = pi_0(l, h0) pi_1(l, h1) A[s0, s1]     (s_p: hand h_p's flop sequences below l)

and each player's flop infosets below l hang from its empty sequence (or, for a player behind
resolve gadgets, from a gadget's "enter": :mod:`treeplex.model.gadget`, with pi = 1). For any
flop play, x^T A y of the real game is x_L^T A_L y_L plus a constant of the fixed play (the
terminals off L), so both have the same equilibria there and the same gap.

The operator is the engine's (:class:`.streets_operator.StreetsPayoff`) over the terminals
below L on the flop sequences renumbered, between the suit reduction's gather and scatter
(:mod:`.isomorphism`) with the reach scale S_p: A_L = E0^T S0 M S1 E1. Every flop terminal
follows both players' flop actions (the round ends on the second player's), so no terminal
reads a preflop sequence; that is checked.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..core.treeplex import DeferredTreeplex, Treeplex
from ..model.gadget import GadgetPayoff, gadget_treeplex
from ..model.problem import DeferredPayoff, PayoffOperator, Problem
from .cards import HAND_CARDS
from .isomorphism import hand_orbits
from .public_tree import DECISION
from .streets_operator import StreetsPayoff


class FlopLines:
    """The flop of ``game`` (an :class:`~.nlfh52.NLFH52`, its problem built) below the chance
    nodes ``lines``. Per player p, in the sub-game's (orbit) layout: node v's orbit o owns
    ``rbase[p][v] + o k_v + a``; ``idx[p]`` maps each full sequence below the lines (hand by
    hand, ``pos[p]`` its index in the game's full layout) to its orbit sequence, ``cell[p]``
    to its (line, hand) as ``line * H + h``."""

    def __init__(self, game, lines):
        t = game.tree
        self.game, self.lines = game, [int(l) for l in lines]
        self.H = H = len(game.hands[0])
        line_index = np.full(t.n_chance, -1, np.int64)
        line_index[self.lines] = np.arange(len(self.lines))
        lon = t.line_of_node
        self.line = np.where(lon >= 0, line_index[np.maximum(lon, 0)], -1)  # per node: the line index, -1 off L
        self.preflop_orbit = hand_orbits(game.hands[0], list(game.symmetries))
        self.nodes, self.rbase, self.fbase, self.idx, self.pos, self.cell, self.n = [], [], [], [], [], [], []
        for p in (0, 1):
            nodes = np.flatnonzero((self.line >= 0) & (t.actor == p))
            k = t.n_actions[nodes].astype(np.int64)
            width = np.array([self._width(p, v) for v in nodes], np.int64)
            rbase = np.full(t.n_nodes, -1, np.int64)
            fbase = np.full(t.n_nodes, -1, np.int64)
            rbase[nodes] = 1 + np.cumsum(width * k) - width * k
            fbase[nodes] = 1 + np.cumsum(H * k) - H * k
            idx, pos, cell = [np.zeros(1, np.int64)], [np.zeros(1, np.int64)], [np.zeros(1, np.int64)]
            for v, kv in zip(nodes.tolist(), k.tolist()):
                a = np.arange(kv)[None, :]
                idx.append((rbase[v] + self._orbits(p, v)[:, None] * kv + a).ravel())
                pos.append((game.bases[p][v] + np.arange(H)[:, None] * kv + a).ravel())
                cell.append(np.repeat(self.line[v] * H + np.arange(H), kv))
            self.nodes.append(nodes)
            self.rbase.append(rbase)
            self.fbase.append(fbase)
            self.idx.append(np.concatenate(idx))
            self.pos.append(np.concatenate(pos))
            self.cell.append(np.concatenate(cell))
            self.n.append(int(1 + (width * k).sum()))

    def _orbits(self, p: int, v: int) -> np.ndarray:
        r = self.game.reduction
        return np.arange(self.H) if r is None else r.orbits[p][v]

    def _width(self, p: int, v: int) -> int:
        return int(self._orbits(p, v).max()) + 1

    def infosets(self, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(start, end, parent) of player p's orbit infosets (v, o) below the lines, in tree
        order; a parent above the lines is written -1 - (line index x O + preflop orbit of
        the infoset's hands): the caller hangs it from the empty sequence or a gadget."""
        t, O = self.game.tree, int(self.preflop_orbit.max()) + 1
        start, end, parent = [], [], []
        for v in self.nodes[p].tolist():
            kv, orb = int(t.n_actions[v]), self._orbits(p, v)
            first = np.unique(orb, return_index=True)[1]  # a member hand of each orbit
            s = self.rbase[p][v] + np.arange(len(first)) * kv
            u, a = int(t.last_node[v, p]), int(t.last_act[v, p])
            if u >= 0 and self.line[u] >= 0:
                par = self.rbase[p][u] + self._orbits(p, u)[first] * int(t.n_actions[u]) + a
            else:
                par = -1 - (self.line[v] * O + self.preflop_orbit[first])
            start.append(s)
            end.append(s + kv)
            parent.append(par)
        cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0, np.int64)  # noqa: E731
        return cat(start), cat(end), cat(parent)

    def treeplex(self, p: int) -> Treeplex:
        """Player p's treeplex, its infosets above the lines hanging from the empty sequence."""
        start, end, parent = self.infosets(p)
        return Treeplex(start, end, np.maximum(parent, 0))

    def problem(self, reach: tuple, chooser: int | None = None, alt: np.ndarray | None = None, **kw) -> "LinesProblem":
        """The re-solve of the flop below the lines as a problem (``kw``: the Problem's name,
        payoff unit, ...): ``reach[p]`` ([lines, H] pi_p) folded into the payoffs; with a
        ``chooser`` (its reach None), its infosets behind resolve gadgets paying ``alt``
        ([lines x O], :class:`~treeplex.model.gadget.GadgetPayoff`). Its treeplexes and operator
        are built on first use: a CFR-family solver runs it on the fused walk
        (:class:`.fused_lines.FusedLines`, its ``game``), which needs neither."""
        from .fused_lines import FusedLines

        G = 0 if chooser is None else len(alt)
        inner = DeferredPayoff(tuple(self.n), lambda: self.operator(reach))

        def treeplex(p):
            return gadget_treeplex(*self.infosets(p), G) if p == chooser else self.treeplex(p)

        Ts = [DeferredTreeplex(self.n[p] + (2 * G if p == chooser else 0), lambda p=p: treeplex(p)) for p in (0, 1)]
        A = inner if chooser is None else GadgetPayoff(inner, chooser, alt)
        P = LinesProblem(Ts[0], Ts[1], A, **kw)
        P.game = FusedLines(self, reach, chooser, alt, P)
        return P

    def operator(self, reach: tuple) -> "LinesPayoff":
        """A_L with ``reach[p]`` ([lines, H] pi_p, or None: 1) folded in (module docstring)."""
        g, t = self.game, self.game.tree
        terms = np.flatnonzero((t.term_up_kind == DECISION) & (self.line[np.maximum(t.term_up_id, 0)] >= 0))
        base, stride = [], []
        for p in (0, 1):
            u, a = t.term_last_node[terms, p], t.term_last_act[terms, p]
            if np.any(u < 0) or np.any(self.line[np.maximum(u, 0)] < 0):
                raise ValueError(f"a flop terminal below the lines without an action of player {p} in the flop")
            base.append(self.fbase[p][u] + a)
            stride.append(t.n_actions[u].astype(np.int64))
        kind = t.kinds[terms].astype(np.int8)
        value = np.where(kind == 0, t.payoff0[terms], t.stake[terms]) * t.chance[terms]
        n_full = [len(self.idx[p]) for p in (0, 1)]
        M = StreetsPayoff(n_full, [HAND_CARDS[h] for h in g.hands], g.weight, g._boards(), g._river_orders(), kind,
                          value, t.term_board[terms], base, stride)
        scale = [np.ones(n_full[p]) if reach[p] is None else np.asarray(reach[p], np.float64).ravel()[self.cell[p]]
                 for p in (0, 1)]
        for s in scale:
            s[0] = 0.0  # the empty sequence reaches no terminal below the lines
        return LinesPayoff(M, self.idx, scale, tuple(self.n), len(g.symmetries))

    def behavioral(self, p: int, b: np.ndarray) -> np.ndarray:
        """Player p's behavioral in this sub-game's layout: the flop below the lines of ``b`` (a
        full-layout behavioral of the game, constant on the orbits), the inverse of
        :meth:`full_behavioral` there."""
        out = np.ones(self.n[p])
        out[self.idx[p][1:]] = b[self.pos[p][1:]]
        return out

    def full_behavioral(self, p: int, beh: np.ndarray, b: np.ndarray, inplace: bool = False) -> np.ndarray:
        """``b`` (a full-layout behavioral of the game) with the flop below the lines replaced
        by ``beh`` (player p's behavioral in this sub-game's layout): a copy, or ``b`` itself
        changed ``inplace``."""
        out = b if inplace else b.copy()
        out[self.pos[p][1:]] = beh[self.idx[p][1:]]
        return out


class LinesProblem(Problem):
    """A flop re-solve's problem (:meth:`FlopLines.problem`): its sequences are (node, orbit,
    action) below the lines, not numbered by a walk of a rules view."""

    tree = None


class LinesPayoff(PayoffOperator):
    """A_L = E0^T S0 M S1 E1 (:class:`FlopLines`): ``M`` the engine's operator on the full
    sequences below the lines, ``idx[p]`` E_p as an index array, ``scale[p]`` S_p's diagonal."""

    def __init__(self, M: StreetsPayoff, idx, scale, shape, n_symmetries: int):
        self.M, self.idx, self.scale, self.shape = M, idx, scale, shape
        self.n_symmetries = n_symmetries
        self.gradients = 0

    def _apply(self, own: int, v: np.ndarray) -> np.ndarray:
        oth = 1 - own
        g = self.M._product(own, _gather_scaled(np.asarray(v, np.float64), self.idx[oth], self.scale[oth]), None)
        return _scatter_scaled(g, self.idx[own], self.scale[own], self.shape[own])

    def _matvec(self, y):
        return self._apply(0, y)

    def _rmatvec(self, x):
        return self._apply(1, x)

    @property
    def nnz(self) -> int:
        return self.M.nnz

    def max_abs_entry(self) -> float:
        """Upper bound: an orbit pair sums at most |G|^2 of M's entries, each scaled by reaches <= 1."""
        return self.M.max_abs_entry() * self.n_symmetries ** 2

    def to_sparse(self):
        import scipy.sparse as sp

        E = [sp.csr_matrix((s, (np.arange(len(i)), i)), shape=(len(i), n))
             for i, s, n in zip(self.idx, self.scale, self.shape)]
        return (E[0].T @ self.M.to_sparse() @ E[1]).tocsr()


@nb.njit(cache=True)
def _gather_scaled(v, idx, scale):
    """S E v: out[i] = scale[i] v[idx[i]] (one pass, no temporaries)."""
    out = np.empty(len(idx))
    for i in range(len(idx)):
        out[i] = scale[i] * v[idx[i]]
    return out


@nb.njit(cache=True)
def _scatter_scaled(g, idx, scale, n):
    """E^T S g: out[idx[i]] += scale[i] g[i] in index order (np.bincount's sums, bit for bit)."""
    out = np.zeros(n)
    for i in range(len(idx)):
        out[idx[i]] += scale[i] * g[i]
    return out
