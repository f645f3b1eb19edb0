"""The flop below some lines of an ``nlfh52`` game, re-solved on the fused walk.

:class:`~.flop_lines.FlopLines` makes the flop below chance nodes L (the lines) a game of its
own, A_L = pi_0 pi_1 A, each player's fixed reach into a line folded in, the chooser's
infosets behind resolve gadgets where the re-solve is safe. :class:`FusedLines` is the same
game on the fused engine (:mod:`.fused`), 7-8x faster per sequence than the products of the
streets operator (docs/research.md): the walk of the whole game's public tree restricted to
its parallel items below L (:meth:`.fused.FusedTree.subtrees`: the subtrees of the first chance
nodes, which in ``nlfh52`` are the flop's chance nodes, the lines), entered at line l with
player p's reach pi_p(l, h) instead of what the preflop's walk would bring. The preflop is not
walked: its play is the fixed play the reaches come from.

Resolve gadgets (Burch et al. 2014; Brown & Sandholm 2017), gadget g = (l, o) per line and
preflop hand orbit of the chooser c: the walk enters line l with c's reach sigma_g(enter) at
the hands of o; after it, the gadget's counterfactual values are v_g(alt) = alt_g (in c's own
sign) and v_g(enter) = sum_{h in o} V_c(l, h), c's values at the line summed over the orbit
(the reduced game's infoset value), and its regrets and strategy sum take the walk's scalars
through the kernels of every node (:func:`~treeplex.backends.numba_regret.rm_block`,
:func:`.fused._strategy`), stored after c's own (offset ``size[c]``, alt then enter, action-major).

The strategy sums of the other player (of both, without gadgets) carry its reach into the line,
pi_p(l, h), where the sequence form's sub-game hangs its infosets from the empty sequence: a
factor constant per infoset (the preflop play is constant on preflop hand orbits, which flop
orbits refine), so the average strategy is the same; where pi_p(l, h) = 0 the sum stays empty
and the average is uniform (no payoff depends on it). Otherwise the iterates are the sequence
form's on the same problem, to rounding (tests/test_fused_lines.py).

Storage: the state is the engine's (:class:`.fused.FusedPlayer`) in the whole game's layout,
allocated as zeros: pages are mapped when first written, so only the nodes below L take memory.
Every regret-matching variant (predictive ones keep their next strategy P the same way); no
16-bit storage.
"""

from __future__ import annotations

import numpy as np

from ..backends.numba_regret import rm_block
from ..errors import InputError
from .fused import (BR_AVERAGE, BR_CURRENT, PRIOR, UPDATE, VALUE_AVERAGE, FusedPlayer, _average_strategy, _plan,
                    _plan_to_fused, _strategy, _uniform)
from .public_tree import CHANCE


class FusedLines:
    """The fused engine's tree for the flop below ``fl.lines`` (a :class:`~.flop_lines.FlopLines`):
    ``reach[p]`` [lines, H] player p's fixed reach into each line (None for the ``chooser``, who
    enters through resolve gadgets paying ``alt`` [lines x O], player 0's chips times chance and
    the other's reach, gadget g = line index x O + preflop orbit). As the problem's ``game``
    (:meth:`fused_tree`), it makes a CFR-family solver run the problem on the fused engine."""

    def __init__(self, fl, reach: tuple, chooser: int | None, alt: np.ndarray | None, problem):
        self.fl, self.chooser, self._problem = fl, chooser, problem
        self.tree = t = fl.game.fused_tree()
        nd = t.n_dec
        u = nd + np.asarray(fl.lines, np.int64)  # the lines' ids in the fused layout
        self.f = t.G[3][u].astype(np.int64)  # their places among the first chance nodes
        if not (t.kind[u] == CHANCE).all() or not np.isin(u, t.G[1][t.G[0][0]:t.G[0][1]]).all():
            raise ValueError("a line is not a chance node of the trunk (the preflop)")
        keep = np.isin(t.items[:, 0], self.f)
        local = np.full(t.n_first, -1, np.int64)
        local[self.f] = np.arange(len(self.f))
        self.items = np.ascontiguousarray(np.stack((local[t.items[keep, 0]], t.items[keep, 1]), axis=1))
        self.work = t.work[keep]  # (items indexed by line, as the reaches and values below)
        self.reach = [None if r is None else np.ascontiguousarray(r, np.float64) for r in reach]
        self.O = int(fl.preflop_orbit.max()) + 1
        self.G = 0 if chooser is None else len(fl.lines) * self.O
        if chooser is not None:
            self.alt = np.asarray(alt, np.float64) * (1.0 if chooser == 0 else -1.0)  # in c's own sign
            self.gadget = (np.arange(len(fl.lines))[:, None] * self.O + fl.preflop_orbit[None, :]).astype(np.int64)
        # each player's nodes below the lines and their sequences in the problem's layout
        shift = [2 * self.G if p == chooser else 0 for p in (0, 1)]
        self.want = [np.zeros(nd, np.bool_) for _ in (0, 1)]
        self.sbase = [np.full(nd, -1, np.int64) for _ in (0, 1)]
        for p in (0, 1):
            self.want[p][fl.nodes[p]] = True
            self.sbase[p][fl.nodes[p]] = fl.rbase[p][fl.nodes[p]] + shift[p]
        self.nolast = np.full((nd, 2), -1, np.int32)  # a plan with every parent 1: the behavioral
        self.dtype = np.dtype(np.float32)

    # what a solver reads of its problem's game
    def fused_tree(self):
        return self

    def fused_by_default(self) -> bool:
        return True

    def problem(self):
        return self._problem

    # what the engine (:class:`.fused.FusedEngine`) reads of its tree
    def set_locks(self, locks) -> None:
        if locks is not None:
            raise InputError("the flop re-solve on the fused walk takes no node locks")
        self.tree.set_locks(None)  # (the game's tree may hold another engine's)

    def new_player(self, p: int, dtype, predictive: bool, compressed: bool = False) -> FusedPlayer:
        """Zero regrets and sums in the whole game's layout (mapped where written), then the
        gadgets' (alt, enter) block for the chooser."""
        if compressed:
            raise InputError("the flop re-solve on the fused walk keeps no 16-bit storage (compression=16)")
        t = self.tree
        n = t.size[p] + (2 * self.G if p == self.chooser else 0)
        P = np.zeros(n if predictive else 0, dtype=dtype)
        if predictive:  # the first prediction: uniform, at the nodes below the lines and the gadgets
            _uniform(t.static, p, P, self.want[p])
            P[t.size[p]:] = 0.5
        return FusedPlayer(R=np.zeros(n, dtype=dtype), S=np.zeros(n, dtype=dtype), P=P, root=np.zeros(1),
                           scale=np.zeros((2, 0)))

    def _gadgets(self, s: FusedPlayer, average: bool) -> np.ndarray:
        """[2, G] the gadgets' strategy (alt, enter): the average or regret matching's."""
        out, tot = np.zeros((2, self.G)), np.zeros(self.G)
        off = self.tree.size[self.chooser]
        if average:
            _average_strategy(s.S, off, self.G, 2, out, tot)
        else:
            _strategy(s.R, s.P, off, self.G, 2, out, tot)
        return out

    def walk(self, players, mode, upd0, upd1, sc):
        """One walk (as :meth:`.fused.FusedTree.walk`) of the subtrees below the lines; returns
        each player's values (own payoff) as a row whose sum is its total: per gadget for the
        chooser (max(alt, enter) in a best response), per (line, hand) otherwise."""
        t, c, upd = self.tree, self.chooser, (upd0, upd1)
        if mode == UPDATE:
            for p in (0, 1):
                if upd[p]:
                    players[p].root[0] = sc[3] * players[p].root[0] + sc[4]
        st = tuple((s.R, s.S, s.P, s.scale) for s in players)
        fr = [None if p == c else self.reach[p] for p in (0, 1)]
        average = mode in (BR_AVERAGE, VALUE_AVERAGE)
        if c is not None:
            sigma = self._gadgets(players[c], average)
            fr[c] = np.ascontiguousarray(sigma[1][self.gadget])
            if mode == UPDATE and upd[c]:  # the gadgets' played strategy into the sum (reach 1)
                S, off = players[c].S, t.size[c]
                for i in (0, 1):
                    S[off + i * self.G:off + (i + 1) * self.G] = (
                        sc[3] * S[off + i * self.G:off + (i + 1) * self.G].astype(np.float64) + sc[4] * sigma[i])
        common = (t.static, t.G, t.hands, (t.orbit, tuple(t.rep)), st, sc, mode, upd0, upd1)
        fv = t.subtrees(self.items, self.work, tuple(fr), common)
        rows = [(fv[p] if p == c else self.reach[p] * fv[p]).reshape(1, -1) for p in (0, 1)]
        if c is not None:  # the other's payoff of the alts (against its empty sequence: no choice of its own)
            rows[1 - c] = np.concatenate((rows[1 - c][0], -sigma[0] * self.alt))[None, :]
        if c is not None and upd[c]:
            v = np.stack((self.alt, np.bincount(self.gadget.ravel(), fv[c].ravel(), minlength=self.G)))
            if mode == PRIOR:  # as .fused.prior_regrets, at the gadgets
                R = players[c].R[t.size[c]:]
                r = R.reshape(2, -1) + sc[0] * (sc[1] * (v - (sigma * v).sum(axis=0)) + np.abs(v).max(axis=0) * sigma)
                R[:] = (np.maximum(r, 0.0) if sc[3] > 0 else r).ravel()
            elif mode in (BR_AVERAGE, BR_CURRENT):
                rows[c] = v.max(axis=0)[None, :]
            else:
                played = np.zeros(self.G)
                if mode == UPDATE:
                    rm_block(players[c].R, players[c].P, t.size[c], self.G, 2, v, np.arange(2), sigma,
                             sc[0], sc[1], sc[2], played)
                else:
                    played = (sigma * v).sum(axis=0)
                rows[c] = played[None, :]
        return tuple(rows)

    fused_warm_start = True  # (a solver may start it from a prior: :meth:`warm_start`)

    def warm_start(self, players, plans, weight: float, clamp: bool) -> None:
        """Start fresh ``players`` (all zero) from the realization plans ``plans`` (the
        problem's layout): :meth:`treeplex.solvers.cfr.RegretSolver.warm_start`'s regrets
        R = w (r + c b), r the counterfactual regrets of the prior b against the prior
        opponent, c per infoset the largest |counterfactual value| against the prior opponent
        plus the same against the uniform one (the unified view's "Initialization with a
        Prior"), by three walks of mode PRIOR (:func:`.fused.prior_regrets`): both players
        against the prior, then each against the uniform opponent; ``clamp``: then
        R = max(R, 0). The walks read the strategies from predictions P set to the prior's and
        the uniform's. The first iteration then plays the prior, as the sequence form's (its
        b = prior): P stays the prior's (regret matching's kernel, given P, writes there the
        next strategy, RM of the new regrets, and the walks read it back: the same iterates as
        without P)."""
        t = self.tree
        prior, uniform = [], []
        for p, (s, T, plan) in enumerate(zip(players, self._problem.treeplexes, plans)):
            beh = T.behavioral_from_plan(np.asarray(plan, np.float64))
            uni = T.uniform_behavioral()
            for b, out in ((beh, prior), (uni, uniform)):
                P = np.zeros(len(s.R), s.R.dtype)  # (the walk's storage type: one compiled walk)
                _plan_to_fused(t.static, self.sbase[p], p, b, P, self.want[p])
                if p == self.chooser:  # the gadgets (alt, enter), action-major
                    P[t.size[p]:] = b[1:1 + 2 * self.G].reshape(-1, 2).T.ravel()
                out.append(P)
        sc = lambda x: (float(weight), x, (1.0, 1.0, 0.0), float(clamp and not x), 0.0)  # noqa: E731 (w, x, -, clamp, -)
        for s, P in zip(players, prior):
            s.P = P
        self.walk(players, PRIOR, True, True, sc(1.0))
        for p in (0, 1):
            players[p].P, players[1 - p].P = prior[p], uniform[1 - p]
            self.walk(players, PRIOR, p == 0, p == 1, sc(0.0))
        for s, P in zip(players, prior):
            s.P = P

    def behaviorals(self, players, which: str) -> tuple[np.ndarray, np.ndarray]:
        """Both players' behaviorals in the problem's layout (the average or the current), read
        from the walk's state below the lines (and the chooser's gadgets), no plan made: those
        of the plans' round trip (``behavioral_from_plan``) wherever the player's own plan
        reaches the infoset; elsewhere (no payoff depends on them) the sums' ratio, not uniform."""
        t, out = self.tree, []
        for p, (s, T) in enumerate(zip(players, self._problem.treeplexes)):
            average = which == "average" and s.root[0] > 0
            beh = np.ones(T.n_seqs)
            _plan(t.static, self.sbase[p], self.nolast, t.orbit[p], t.rep[p], p, s.R, s.P, s.S, average,
                  self.want[p], beh, t.kmax, max(t.n))
            if p == self.chooser:
                beh[1:1 + 2 * self.G] = self._gadgets(s, average).T.ravel()
            out.append(beh)
        return tuple(out)

    def plans(self, players, which: str, nodes, n_seqs) -> tuple[np.ndarray, np.ndarray]:
        """Both players' realization plans in the problem's layout, from :meth:`behaviorals`
        (``nodes`` is ignored: the plans are this small game's)."""
        return tuple(T.plan_from_behavioral(b) for T, b in zip(self._problem.treeplexes, self.behaviorals(players, which)))
