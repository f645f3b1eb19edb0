"""The fused postflop engine: one depth-first walk of the public tree per player per iteration.

The sequence-form path of a postflop spot makes two products (A y, A^T x) and separate regret
and plan passes over full-length vectors. This engine does what postflop-solver's
``solve_recursive`` does instead: it walks the public tree (:mod:`.public_tree`) once per
updating player, carrying per-hand reach vectors down and counterfactual values up.

- Decision node of player a with k actions: a's current strategy is computed on the fly from
  the stored regrets (regret matching, or the stored prediction of predictive variants); a's
  reach goes down times the strategy of each action; the other player's reach goes down
  unchanged. On the way up, an updating player's counterfactual values per action become
  instantaneous regrets, and its regrets are updated in place by
  :func:`treeplex.backends.numba_regret.rm_block` (the CFR family's regret matching, per
  node in this layout); its strategy sum was updated on the way down. The other player's
  values are summed over the actions.
- Chance node: the children's values are summed (the deal's chance weight is in the
  terminals' values; hands that hold a dealt card are zeroed at the terminals, whose board
  includes it).
- Terminal: fold values by inclusion-exclusion over the 52 card masses (:func:`fold_values`),
  showdown values by prefix sums over the board's hands sorted by strength and over each
  card's hands, read at positions precomputed per board (:func:`showdown_values`; one
  terminal at a time: a segment has 1-25 terminals, and the products' kernel's 8 terminals
  side by side in SIMD lanes measured slower here).
  The walk goes by *segments*, the parts of the tree between chance nodes (all on one
  board): down a segment (reaches at each of its nodes), through the segments below its
  chance nodes, then its terminals, then up it. The temporaries are a reach and a value vector
  per node of the segments on the current path
  (a stack of at most 3-4 segments), not full-length arrays.

Storage per player (the sequence form's ``b``, ``x`` and float64 gradient are not kept):
per (decision node v, action a, orbit o) the cumulative regret R and the strategy sum S (the
running weighted sum of played realization plans, whose normalization is the average plan),
in ``storage`` (float32 by default), action-major within a node (index ``off_v + a m_v + o``,
m_v the node's number of hand orbits) so the per-hand loops read contiguous vectors;
predictive variants (kappa != 1 or lam != 0) keep one more array P, the next strategy the
kernel computes. S's root entry (the sum of the weights omega) is a float64 scalar. With
``compression=16`` (postflop-solver's scheme) R is int16 and S uint16, each node's block
stored as round(value / scale) with a float64 scale per node (:func:`_encode`): 4 bytes per
(node, orbit, action); regret matching and the average strategy normalize per infoset and
read the integers as they are; the updates decode, add in float64, and encode again. With
isomorphism (:mod:`.isomorphism`), an infoset is a hand orbit of the stabilizer of the cards
dealt so far: a table per stabilizer maps hands to orbits, the per-hand values are summed per
orbit before the update (the reduced game's A_red = E0^T M E1).

float64 where it matters: reach and value vectors, the card masses and sweeps at terminals,
the regret update's arithmetic (stored values are read as float64) and the strategy sum's
root; only the stored R, S, P are in ``storage``.

The per-node and per-terminal kernels are compiled without numba's reference-counting runtime
(``_nrt=False``: they allocate nothing, every array is the caller's). With it, each view they
take (a node's block, a hand row, a board's table) costs an atomic increment and decrement:
15% of the TURN walk's time, measured with perf (bit-identical iterates either way).

Iterates: with the same scalars as the sequence-form backend (``regrets(t)``,
``averaging(t)``), alternating updates walk for player 0, then for player 1 against player
0's updated strategy; simultaneous updates walk once, updating both. The iterates equal the
sequence-form path's to rounding (tests/test_fused.py).

Threads: the root segment (the trunk, above the first chance nodes) is walked on one
thread; the subtrees below it, one per (first chance node, dealt card), are cut into
``RUNS_PER_THREAD`` chunks per thread of about equal estimated work (nodes and terminals x
hands), which the shared pool's Python threads (:func:`treeplex.core.threads.pool`) take as
they become idle (a kernel that releases the GIL: numba's parallel loops do not take the
walk's tuples of arrays), each thread with its
own stack (kept between walks) and each chunk with its own value sum per first chance node
(no full-length partial outputs). The walk is three steps: reaches down the trunk, the
subtrees in parallel, then the trunk's full walk that reads their values at its chance
nodes.

Exploitability: a best-response walk per profile, read-only: the opponent's reach goes down
times its average strategy, the strategy sums S normalized per infoset (so that the plan is
consistent however S rounds), and the responder takes the best action per infoset on the way
up (both players in one walk).

Node locks (``problem.locks``, fully locked infosets, :mod:`treeplex.core.locks`; locks need
isomorphism off, so an infoset is one hand): :meth:`FusedTree.set_locks` puts each locked
node's lock in a block beside the tree (nothing for unlocked nodes, empty arrays without
locks: the same compiled walk). At a locked (node, hand) every walk plays the lock in place
of regret matching or the average (:func:`_lock_strategy`, on the way down): an update adds
the lock times the reach to the strategy sum, so the average plan is the lock, and the
regrets stay at 0 (:func:`_lock_regrets`, after the update); a best response plays the lock
there (the best response in the locked game, Q^lock), so the walk's gap is the locked game's,
as the sequence form's (:func:`treeplex.model.metrics.evaluate`).

Weighted locks (a hand locked with weight w < 1: lower bounds l = w p, L = w; Farina, Kroer &
Sandholm 2017, as the sequence form's :func:`treeplex.backends.numba_regret._rm_run`): the
walks play b = l + (1 - L) sigma with sigma regret matching's strategy (the average's as it
is: a mean of such b); the update takes the regrets of the free part, r = v - <sigma, v>
(:func:`_lock_free` turns b back into sigma before ``rm_block``), and passes up the value
played, <l, v> + (1 - L) <sigma, v> (:func:`_lock_regrets`); a best response plays
l + (1 - L) on the best action (Q^l's).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numba as nb
import numpy as np

from ..core.threads import pool as threads_pool  # (also sets numba's threads up before any parallel kernel)
from ..backends.numba_regret import rm_block
from .cards import HAND_CARDS
from .operator import _normalizer, _same_combo
from .public_tree import CHANCE, DECISION, FOLD, TERMINAL

UPDATE, BR_AVERAGE, BR_CURRENT, VALUE_AVERAGE, VALUE_CURRENT, PRIOR = 0, 1, 2, 3, 4, 5  # walk modes
REACH, SUBTREES, TRUNK = 0, 1, 2  # the steps of a walk (:func:`walk_step`)
RUNS_PER_THREAD = 4  # chunks of the subtrees per worker thread, taken by whichever is idle


@dataclass
class FusedPlayer:
    """One player's state on the fused path (fused layout, see the module docstring)."""

    R: np.ndarray  # cumulative regrets
    S: np.ndarray  # strategy sum (weighted sum of played plans)
    P: np.ndarray  # next strategy of predictive variants (empty otherwise)
    root: np.ndarray  # float64[1]: the strategy sum's root entry
    scale: np.ndarray  # float64[2, decision nodes]: R's and S's scale per node with 16-bit storage ([2, 0] otherwise)


class FusedTree:
    """The public tree of a :class:`.postflop.PostflopGame` flattened for the walk, with the
    hand data of both players and each node's place in the sequence-form layout (of the
    problem's treeplexes: the orbit treeplex with isomorphism)."""

    def __init__(self, game):
        tree = game.tree
        nD, nC, nT = tree.n_nodes, tree.n_chance, tree.n_terminals
        U = nD + nC + nT
        kind = np.empty(U, np.int8)
        kind[:nD], kind[nD:nD + nC], kind[nD + nC:] = DECISION, CHANCE, TERMINAL
        first = np.array([0, nD, nD + nC], np.int64)  # the first node id of each kind (DECISION, CHANCE, TERMINAL)
        counts = np.concatenate([np.diff(tree.child_ptr), np.diff(tree.chance_ptr), np.zeros(nT, np.int64)])
        # per-node indices in int32 (4 bytes a node; storage offsets stay int64)
        self.cptr = np.zeros(U + 1, np.int32)
        self.cptr[1:] = np.cumsum(counts)
        self.child = np.concatenate([first[tree.child_kind] + tree.child_id,
                                     first[tree.chance_child_kind] + tree.chance_child_id]).astype(np.int32)
        self.kind = kind
        self.n_nodes, self.n_dec, self.n_chance = U, nD, nC
        # hands
        self.n = (len(game.hands[0]), len(game.hands[1]))
        # the terminal kernels' indices are uint32: numba then knows them non-negative and
        # leaves out its wraparound check (the showdown and fold kernels 1.5-1.7x faster)
        cards = [np.ascontiguousarray(HAND_CARDS[h], dtype=np.uint32) for h in game.hands]
        weight = [np.ascontiguousarray(w, dtype=np.float64) for w in game.weight]
        Z = _normalizer(cards, weight)
        same = [np.where(s >= 0, s, len(cards[1 - p])).astype(np.uint32) for p, s in enumerate(_same_combo(cards))]
        orders = [(ptr, idx.astype(np.uint16), strength) for ptr, idx, strength in game._river_orders()]
        # decision nodes: actor, storage offset, orbits, orbit table, sequence-form base; a table of
        # hand orbits per stabilizer class of the suit reduction (one, the identity, without it)
        self.actor = np.asarray(tree.actor, dtype=np.int32)
        k = np.diff(tree.child_ptr).astype(np.int64)
        self.off, self.sbase = np.zeros(nD, np.int64), np.zeros(nD, np.int64)
        self.m, self.tab = np.zeros(nD, np.int32), np.zeros(nD, np.int32)
        red, tables, size = game.reduction, [], []
        for p in (0, 1):
            mine = self.actor == p
            if red is None:
                orbs, cls, sb = [np.arange(self.n[p])], np.zeros(nD, np.int64), np.asarray(game.bases[p], np.int64)
            else:
                orbs, cls, sb = red.class_orbits[p], red.members[p][0], red.rbase[p]
            width = np.array([int(o.max()) + 1 if self.n[p] else 0 for o in orbs], dtype=np.int64)
            self.tab[mine], self.m[mine], self.sbase[mine] = cls[mine], width[cls[mine]], sb[mine]
            block = np.where(mine, k * self.m, 0)
            self.off[mine] = (np.cumsum(block) - block)[mine]
            size.append(int(block.sum()))
            tables.append(orbs)
        self.size = tuple(size)
        self.orbit = tuple(np.ascontiguousarray(np.array(t), dtype=np.uint32) for t in tables)  # [tab, hand]
        self.rep = []  # [tab, orbit]: the orbit's first hand
        for p in (0, 1):
            r = np.zeros((len(tables[p]), max(self.n[p], 1)), np.uint32)
            for i, t in enumerate(tables[p]):
                first = np.unique(t, return_index=True)[1]
                r[i, :len(first)] = first
            self.rep.append(r)
        kmax = int(k.max()) if nD else 1
        # terminals: kind (0 fold, 1 showdown), player 0's chips x chance, board
        fold = np.asarray(tree.kinds) == FOLD
        self.tkind = (~fold).astype(np.int8)
        self.tval = np.where(fold, tree.payoff0, tree.stake) * tree.chance
        rake = game.terminal_rake()  # chips raked x chance (empty without rake: the kernel reads 0)
        self.trake = rake * tree.chance if rake.any() else np.zeros(0)
        self.tboard = np.array(tree.term_board, dtype=np.int32)
        self.boards = game._boards()
        # per player: cards, weight, weight / Z, same combo, showdown orders (ptr, idx, strength), then
        # the tables of showdown_values: six as the own player, card lists (cpos, cptr, cstart) as the opponent
        tabs = [showdown_tables(cards[p], *orders[p], cards[1 - p], *orders[1 - p]) for p in (0, 1)]
        # (the strengths only make the tables: an empty array in their place)
        self.hands = tuple((cards[p], weight[p], weight[p] / Z, same[p], orders[p][0], orders[p][1], np.zeros(0, np.int32),
                            tabs[p][3], tabs[1 - p][0], tabs[1 - p][2], tabs[1 - p][1])
                           for p in (0, 1))
        self.kmax = kmax
        # each player's last (node, action) before each node; a node's come before it
        self.last = tuple(np.ascontiguousarray(np.stack([tree.last_node[:, p], tree.last_act[:, p]], axis=1),
                                               dtype=np.int32) for p in (0, 1))
        assert all((lst[:, 0] < np.arange(nD)).all() for lst in self.last)
        self._segments(game)
        self._stacks = {}  # thread id -> its walk stack
        self.dtype = np.dtype(np.float32)  # the storage of the last engine on this tree (node_values reads plans in it)

    def _segments(self, game) -> None:
        """Segments: the parts of the tree between chance nodes (each a root, the nodes below it
        down to the next chance nodes, included, in preorder; all on one board). The walk goes
        down a segment, then through the segments below its chance nodes, then up it; the
        segments below the root segment's chance nodes are the parallel items."""
        kind, cptr, child = self.kind, self.cptr, self.child
        tb = self.n_dec + self.n_chance
        loc, cidx, seg_of, nodes, seg_ptr, seg_cptr, chance_loc, level, work = _segment_arrays(
            kind, cptr, child, (self.n[0] + self.n[1]) / 16.0)
        nseg = len(seg_ptr) - 1
        width = np.diff(seg_ptr)
        # terminals in segment order: one group each for the terminal kernel
        is_t = kind[nodes] == TERMINAL
        terms = nodes[is_t] - tb
        seg_tptr = np.zeros(nseg + 1, np.int64)
        seg_tptr[1:] = np.cumsum(np.add.reduceat(is_t.astype(np.int64), seg_ptr[:-1]) if nseg else [])
        loc, cidx, seg_of, nodes, terms = (a.astype(np.int32) for a in (loc, cidx, seg_of, nodes, terms))
        self.G = (seg_ptr, nodes, loc, cidx, seg_tptr, terms, seg_cptr, chance_loc, seg_of)
        self.levels = int(level.max()) + 1 if nseg else 1
        self.width = int(width.max()) if nseg else 1
        items = [(cidx[u], int(c)) for u in nodes[seg_ptr[0]:seg_ptr[1]] if kind[u] == CHANCE
                 for c in child[cptr[u]:cptr[u + 1]]]
        self.n_first = int(seg_cptr[1]) if nseg else 0
        self.items = np.array(items, dtype=np.int64).reshape(-1, 2)
        self.work = np.array([work[seg_of[c]] for _, c in items], dtype=np.float64)
        # the kernels' T: 0 kind, 1-2 children (CSR), 3 actor, 4 storage offset, 5 orbits, 6 orbit table,
        # 7-9 terminal kind, value, board, 10 boards' cards, 11 chance index in its segment, 12 first terminal id,
        # 13 terminal rake, 14-15 node locks (:meth:`set_locks`: none here), 16-18 bunching (:meth:`_bunching`)
        self.static = (self.kind, self.cptr, self.child, self.actor, self.off, self.m, self.tab, self.tkind,
                       self.tval, self.tboard, self.boards, cidx, np.array([tb], dtype=np.int64), self.trake,
                       np.full(self.n_dec, -1, np.int64), np.zeros(0), *self._bunching(game))

    def _bunching(self, game) -> tuple:
        """A bunched spot's deal weights (:mod:`.bunching`), for :func:`bunched_values`: T[16]
        the float64 matrices K_b[h0, h1] (:meth:`.postflop.PostflopGame.board_weights`, relative
        to the tree's chance) of the boards with terminals, row-major one after the other, T[17]
        the int8 signs sign(s0 - s1) of those with showdowns, T[18] per tree board the offsets of
        both (-1: none). Empty without bunching (the same compiled walk)."""
        B = getattr(game, "bunching", None)
        off = np.full((len(game.tree.boards), 2), -1, np.int64)
        if B is None:
            return np.zeros(0), np.zeros(0, np.int8), off
        n0, n1 = self.n
        boards = np.unique(self.tboard)
        show = set(np.unique(self.tboard[self.tkind == 1]).tolist())
        K, S = np.empty(len(boards) * n0 * n1), np.zeros(len(show) * n0 * n1, np.int8)
        ns = 0
        for j, b in enumerate(boards):  # (each board's K made here, not kept in the game's cache)
            K[j * n0 * n1:(j + 1) * n0 * n1] = B.board_weights(game.tree.boards[b][len(game.board):]).ravel()
            off[b, 0] = j * n0 * n1
            if int(b) in show:
                S[ns * n0 * n1:(ns + 1) * n0 * n1] = game.showdown_signs(int(b)).ravel()
                off[b, 1] = ns * n0 * n1
                ns += 1
        return K, S, off

    def set_locks(self, locks) -> None:
        """Node locks (``problem.locks``: per player None or a :class:`~treeplex.core.locks.Locks`,
        in the sequence form's layout, no isomorphism) in this layout: T[14][v] = -1 at a node
        without locks, else the offset in T[15] of its block of (k_v + 1) m_v floats, rows
        0..k-1 the lower bounds l action-major (as R: ``i m_v + o``; the lock's probabilities p
        at a locked hand, w p at a weighted one), row k L: 1.0 at the locked hands, w at the
        weighted ones (the sum of their l), 0.0 at the free ones (:func:`_lock_strategy`).
        Without locks the arrays are empty, of the same types: one compiled walk either way."""
        lko, blocks, size = np.full(self.n_dec, -1, np.int64), [], 0
        for p, lk in enumerate(locks or (None, None)):
            if lk is None:
                continue
            low, full = lk.lower, np.zeros(lk.n_seqs, bool)
            full[lk.seqs] = True
            hit = np.union1d(lk.seqs, np.flatnonzero(low))
            if not len(hit):
                continue
            nodes = np.flatnonzero(self.actor == p)
            order = np.argsort(self.sbase[nodes], kind="stable")
            nodes, bases = nodes[order], self.sbase[nodes[order]]
            where = nodes[np.searchsorted(bases, hit, side="right") - 1]
            for v in np.unique(where):
                k, mv, b = int(self.cptr[v + 1] - self.cptr[v]), int(self.m[v]), int(self.sbase[v])
                seg = low[b:b + mv * k].reshape(mv, k)  # [hand, action]
                L = seg.sum(axis=1)
                L[full[b:b + mv * k].reshape(mv, k).any(axis=1)] = 1.0
                blk = np.concatenate((seg.T.ravel(), L))
                lko[v] = size
                size += len(blk)
                blocks.append(blk)
        self.static = (*self.static[:14], lko, np.concatenate(blocks) if blocks else np.zeros(0), *self.static[16:])

    def walk(self, players, mode, upd0, upd1, sc):
        """One walk (mode UPDATE, BR_*, VALUE_*) of both players' states ``players``; returns
        each player's values per hand at the trunk's nodes (:func:`walk_step`, TRUNK)."""
        st = tuple((s.R, s.S, s.P, s.scale) for s in players)
        if mode == UPDATE:  # the strategy sums' roots
            for p, upd in enumerate((upd0, upd1)):
                if upd:
                    players[p].root[0] = sc[3] * players[p].root[0] + sc[4]
        common = (self.static, self.G, self.hands, (self.orbit, tuple(self.rep)), st, sc, mode, upd0, upd1)
        nf, (n0, n1), ones = self.n_first, self.n, (np.ones(self.n[0]), np.ones(self.n[1]))
        fr = (np.zeros((nf, n0)), np.zeros((nf, n1)))
        fv = fr
        if nf:
            walk_step(REACH, 0, 0, self.items, fr, fr, ones, *common, self._stack())
            fv = self.subtrees(self.items, self.work, fr, common)
        B = self._stack()
        walk_step(TRUNK, 0, 0, self.items, fr, fv, ones, *common, B)
        return B[1][0][0].copy(), B[1][1][0].copy()

    def subtrees(self, items, work, fr, common) -> tuple[np.ndarray, np.ndarray]:
        """The SUBTREES step of a walk over ``items`` (rows (f, segment root) as :attr:`items`,
        f indexing ``fr``; ``work`` their estimates), entered with the reaches ``fr`` [f, hand]
        at their first chance nodes: each player's values there, summed over the items per f.
        The items are cut into ``RUNS_PER_THREAD`` runs per thread of about equal work, which
        the pool's idle worker takes in turn (a balance the work estimate need not get right)."""
        nf, (n0, n1), ones = len(fr[0]), self.n, (np.ones(self.n[0]), np.ones(self.n[1]))
        threads = self.threads
        bounds = _chunks(work, threads * RUNS_PER_THREAD if threads > 1 else 1)
        runs = [(bounds[c], bounds[c + 1]) for c in range(len(bounds) - 1)]

        def part(run):
            out = (np.zeros((nf, n0)), np.zeros((nf, n1)))
            walk_step(SUBTREES, *run, items, fr, out, ones, *common, self._stack())
            return out

        parts = [part(runs[0])] if len(runs) == 1 else list(threads_pool().map(part, runs))
        fv = parts[0] if parts else (np.zeros((nf, n0)), np.zeros((nf, n1)))
        for a, b in parts[1:]:
            fv[0][:] += a
            fv[1][:] += b
        return fv

    @property
    def threads(self) -> int:
        return nb.get_num_threads()

    def _stack(self):
        """This thread's walk stack (:func:`_buffers`), made once per thread and tree."""
        key = threading.get_ident()
        if key not in self._stacks:
            self._stacks[key] = _buffers(*self.n, self.levels, self.width, self.kmax)
        return self._stacks[key]

    def node_values(self, x: np.ndarray, y: np.ndarray, nodes) -> dict[int, np.ndarray]:
        """Per trunk node v of ``nodes``: the acting player's counterfactual value per hand
        (own payoff) under the sequence-form plans (x, y) (the problem's layout), by one
        VALUE walk of the plans put in this layout (no products, no full-hand vectors). The
        walk's strategy at an infoset is the plan's ratios there, read from the plan in
        ``self.dtype`` (the solver's storage: float32 rounds them to about 6e-8 relative);
        the values are summed in float64. With isomorphism a hand's value is the one of its
        representative-tree hand (the caller averages over orbits)."""
        return self.values_at(self._plan_players(x, y), VALUE_AVERAGE, nodes)

    def values_at(self, players, mode, nodes) -> dict[int, np.ndarray]:
        """Per trunk node v of ``nodes``: the acting player's values per hand by one walk
        (``mode`` VALUE_AVERAGE or VALUE_CURRENT) of the states ``players``."""
        rows = self.walk(players, mode, True, True, (1.0, 0.0, (1.0, 1.0, 0.0), 1.0, 0.0))
        loc = self.G[2]
        return {v: rows[self.actor[v]][loc[v]] for v in nodes}

    def _plan_players(self, x, y) -> list:
        """The plans (x, y) (the problem's layout) as strategy sums of this layout: a walk's
        average strategy is then the plans' ratios (in ``self.dtype``)."""
        players = []
        for p, plan in enumerate((x, y)):
            S = np.zeros(self.size[p], dtype=self.dtype)
            _plan_to_fused(self.static, self.sbase, p, np.asarray(plan, np.float64), S, np.zeros(0, np.bool_))
            players.append(FusedPlayer(R=S[:0], S=S, P=S[:0], root=np.ones(1), scale=np.zeros((2, 0))))
        return players

    def lock_gains(self, x, y) -> tuple[float, float]:
        """:func:`treeplex.model.metrics.lock_gains` of the plans (x, y) by two walks, no
        products: each player's best response ignoring the locks (one BR walk with the lock
        blocks taken out) minus its own value (one VALUE walk)."""
        players = self._plan_players(x, y)
        sc = (1.0, 0.0, (1.0, 1.0, 0.0), 1.0, 0.0)
        v0, v1 = (r[0].sum() for r in self.walk(players, VALUE_AVERAGE, True, True, sc))
        locked = self.static
        self.static = (*locked[:14], np.full(self.n_dec, -1, np.int64), np.zeros(0), *locked[16:])
        try:
            b0, b1 = (r[0].sum() for r in self.walk(players, BR_AVERAGE, True, True, sc))
        finally:
            self.static = locked
        return float(b0 - v0), float(b1 - v1)

    def locked_infosets(self) -> list[int]:
        """Per player, the (node, hand) pairs :meth:`set_locks` locked."""
        lko, LK, out = self.static[14], self.static[15], [0, 0]
        for v in np.flatnonzero(lko >= 0):
            k, mv = int(self.cptr[v + 1] - self.cptr[v]), int(self.m[v])
            out[int(self.actor[v])] += int(np.count_nonzero(LK[lko[v] + k * mv:lko[v] + (k + 1) * mv]))
        return out

    def plans(self, players, which: str, nodes, n_seqs) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`FusedEngine.plans` in a layout of ``n_seqs`` sequences per player."""
        want = np.zeros(0, np.bool_)
        if nodes is not None:
            want = np.zeros(self.n_dec, np.bool_)
            want[np.asarray(nodes, dtype=np.int64)] = True
        out = []
        for p, s in enumerate(players):
            x = (np.empty if nodes is None else np.zeros)(n_seqs[p])
            _plan(self.static, self.sbase, self.last[p], self.orbit[p], self.rep[p], p, s.R, s.P, s.S,
                  which == "average" and s.root[0] > 0, want, x, self.kmax, max(self.n))
            out.append(x)
        return tuple(out)

    def new_player(self, p: int, dtype, predictive: bool, compressed: bool = False) -> FusedPlayer:
        """Zero regrets and sums (uniform first play); P = uniform for predictive variants.
        ``compressed``: R in int16 and S in uint16, each with a float64 scale per node
        (16-bit storage, see :func:`_encode`)."""
        n = self.size[p]
        P = np.zeros(n if predictive else 0, dtype=dtype)
        if predictive:
            _uniform(self.static, p, P, np.zeros(0, np.bool_))
        if compressed:
            return FusedPlayer(R=np.zeros(n, np.int16), S=np.zeros(n, np.uint16), P=P, root=np.zeros(1),
                               scale=np.zeros((2, self.n_dec)))
        return FusedPlayer(R=np.zeros(n, dtype=dtype), S=np.zeros(n, dtype=dtype), P=P, root=np.zeros(1),
                           scale=np.zeros((2, 0)))


def _chunks(work: np.ndarray, parts: int) -> np.ndarray:
    """Boundaries cutting items of estimated ``work`` into ``parts`` runs of about equal work."""
    n = len(work)
    if n == 0:
        return np.zeros(1, np.int64)
    cum = np.cumsum(work)
    cuts = np.searchsorted(cum, cum[-1] * np.arange(1, parts) / parts)
    return np.unique(np.concatenate([[0], cuts, [n]])).astype(np.int64)


@nb.njit(cache=True)
def _segment_arrays(kind, cptr, child, term_work):
    """The segments of the tree (:meth:`FusedTree._segments`), in order of discovery (a
    parent segment before its children): each one's nodes in preorder from its root down to
    the next chance nodes (included), and per node its place in its segment (``loc``), per
    chance node its index among its segment's (``cidx``), per segment root its segment
    (``seg_of``); each segment's level and its work estimate (its nodes and terminals x
    ``term_work``, with everything below it)."""
    U = len(kind)
    loc, nodes, stack = np.zeros(U, np.int64), np.empty(U, np.int64), np.empty(U, np.int64)
    cidx, seg_of = np.full(U, -1, np.int64), np.full(U, -1, np.int64)
    roots, level, parent = np.zeros(U + 1, np.int64), np.zeros(U + 1, np.int64), np.full(U + 1, -1, np.int64)
    seg_ptr, seg_cptr = np.zeros(U + 2, np.int64), np.zeros(U + 2, np.int64)
    chance_loc, work = np.empty(U, np.int64), np.zeros(U + 1)
    n_roots, nn, nch, j = 1, 0, 0, 0
    while j < n_roots:
        r, start, terms = roots[j], nn, 0
        seg_of[r] = j
        stack[0], top = r, 1
        while top > 0:
            top -= 1
            u = stack[top]
            loc[u] = nn - start
            nodes[nn] = u
            nn += 1
            if kind[u] == CHANCE:
                cidx[u] = nch - seg_cptr[j]
                chance_loc[nch] = loc[u]
                nch += 1
                for q in range(cptr[u], cptr[u + 1]):
                    roots[n_roots], level[n_roots], parent[n_roots] = child[q], level[j] + 1, j
                    n_roots += 1
            elif kind[u] == DECISION:
                for q in range(cptr[u + 1] - 1, cptr[u] - 1, -1):
                    stack[top] = child[q]
                    top += 1
            else:
                terms += 1
        seg_ptr[j + 1], seg_cptr[j + 1] = nn, nch
        work[j] = (nn - start) + terms * term_work
        j += 1
    for g in range(j - 1, 0, -1):  # children come after their parents: sum backwards
        work[parent[g]] += work[g]
    return (loc, cidx, seg_of, nodes[:nn], seg_ptr[:j + 1].copy(), seg_cptr[:j + 1].copy(), chance_loc[:nch].copy(),
            level[:j].copy(), work[:j].copy())  # (copies: the per-segment arrays are short, their buffers per node)


@nb.njit(cache=True)
def _uniform(static, p, P, want):
    """P = the uniform strategy at player p's nodes; ``want``: empty (every node), or the nodes to write."""
    kind, cptr, child, actor, off, m, tab = static[:7]
    every = len(want) == 0
    for v in range(len(actor)):
        if actor[v] == p and (every or want[v]):
            k = cptr[v + 1] - cptr[v]
            for i in range(k * m[v]):
                P[off[v] + i] = 1.0 / k


# ---------------------------------------------------------------------------- engine entry points


class FusedEngine:
    """A RegretSolver's iterations, plans and best responses on the fused path."""

    def __init__(self, game, dtype, predictive: bool, compressed: bool = False, locks=None):
        self.tree = game.fused_tree()
        self.tree.set_locks(locks)
        self.game = game
        self.players = tuple(self.tree.new_player(p, np.dtype(dtype), predictive, compressed) for p in (0, 1))
        self.tree.dtype = np.dtype(dtype)

    def iteration(self, players, coef, avg, alternating: bool) -> None:
        """One CFR iteration with the scalars ``coef`` = regrets(t), ``avg`` = averaging(t)."""
        from ..backends.numba_regret import kernel_args

        pos, floor, general, _ = kernel_args(coef, False)  # one compiled walk for every variant
        sc = (float(pos), float(floor), tuple(float(c) for c in general), float(avg[0]), float(avg[1]))
        if alternating:
            self.tree.walk(players, UPDATE, True, False, sc)
            self.tree.walk(players, UPDATE, False, True, sc)
        else:
            self.tree.walk(players, UPDATE, True, True, sc)

    def best_response(self, players, profile: str = "average") -> tuple[float, float]:
        """(BR_0(y), BR_1(x)) in player 0's payoff of the average (or ``"current"``) profile."""
        r0, r1 = self.tree.walk(players, BR_AVERAGE if self._average(players, profile) else BR_CURRENT, True, True,
                                (1.0, 0.0, (1.0, 1.0, 0.0), 1.0, 0.0))
        return r0[0].sum(), -r1[0].sum()

    def values(self, players, profile: str = "average") -> tuple[float, float]:
        """(u_0, u_1): each player's own expected payoff of the average (or ``"current"``)
        profile by one VALUE walk (u_1 = -u_0 unless the spot is raked)."""
        r0, r1 = self.tree.walk(players, VALUE_AVERAGE if self._average(players, profile) else VALUE_CURRENT, True,
                                True, (1.0, 0.0, (1.0, 1.0, 0.0), 1.0, 0.0))
        return r0[0].sum(), r1[0].sum()

    def value(self, players, profile: str = "average") -> float:
        """x^T A y of the average (or ``"current"``) profile, by one walk that plays both
        strategies (the plans of :meth:`plans`; no products)."""
        r0, _ = self.tree.walk(players, VALUE_AVERAGE if self._average(players, profile) else VALUE_CURRENT, True,
                               True, (1.0, 0.0, (1.0, 1.0, 0.0), 1.0, 0.0))
        return r0[0].sum()

    @staticmethod
    def _average(players, profile: str) -> bool:
        """The average profile is asked and both strategy sums hold something (else the current)."""
        return profile == "average" and players[0].root[0] > 0 and players[1].root[0] > 0

    def plans(self, players, which: str, nodes=None) -> tuple[np.ndarray, np.ndarray]:
        """Sequence-form realization plans (the problem's layout): the average or the current;
        with ``nodes`` (closed under parents) only their entries, the rest zero and untouched
        (pages never written take no memory)."""
        return self.tree.plans(players, which, nodes, self.game.problem().n_seqs)


class FusedProfile:
    """A fused solve's reported profile (``which``: the average or the current strategies),
    kept as the solver's own state. Called, it gives the realization plans
    (:meth:`FusedEngine.plans`, as a deferred :class:`~treeplex.run.driver.Result` reads
    them); a postflop result reads it at the nodes it saves or prints instead
    (:meth:`plans_at`, :meth:`node_values`), so ``solve --out`` on a flop spot makes no
    plan pair (FLOP-FAST's is 0.8 GB in float64) and no second copy of the strategy sums."""

    def __init__(self, engine: FusedEngine, players, which: str):
        self.engine, self.players, self.which = engine, players, which

    def __call__(self) -> tuple[np.ndarray, np.ndarray]:
        return self.engine.plans(self.players, self.which)

    def plans_at(self, nodes) -> tuple[np.ndarray, np.ndarray]:
        """The plans' entries at ``nodes`` (closed under parents), zero elsewhere."""
        return self.engine.plans(self.players, self.which, nodes)

    def node_values(self, nodes) -> dict[int, np.ndarray]:
        """:meth:`FusedTree.node_values` of this profile, by one VALUE walk of the solver's state."""
        mode = VALUE_AVERAGE if self.engine._average(self.players, self.which) else VALUE_CURRENT
        return self.engine.tree.values_at(self.players, mode, nodes)


# ---------------------------------------------------------------------------- kernels


@nb.njit(cache=True, _nrt=False)
def _strategy(R, P, off, m, k, out, tot):
    """out[i, o] (o < m): the current strategy at a node from its regrets (regret matching, the
    arithmetic of :func:`~treeplex.backends.numba_regret._rm_run`), or its stored prediction P.

    Every loop here and in the walk reads an action's block through a slice view
    (``R[off + i m: off + (i + 1) m]``) indexed by the loop counter: an index computed as
    ``off + i * m + o`` may be negative for numba, whose wraparound check then keeps LLVM
    from vectorizing (measured: 3.8 against 0.5 ns per element)."""
    if len(P) > 0:
        for i in range(k):
            Pi, row = P[off + i * m:off + (i + 1) * m], out[i]
            for o in range(m):
                row[o] = Pi[o]
        return
    if k == 2:  # the common sizes in one pass (4x faster than the general loops below)
        R0, R1, o0, o1 = R[off:off + m], R[off + m:off + 2 * m], out[0], out[1]
        for o in range(m):
            q0, q1 = max(np.float64(R0[o]), 0.0), max(np.float64(R1[o]), 0.0)
            t = q0 + q1
            inv = 1.0 / t if t > 0.0 else 0.0
            o0[o] = q0 * inv if t > 0.0 else 0.5
            o1[o] = q1 * inv if t > 0.0 else 0.5
        return
    if k == 3:
        R0, R1, R2 = R[off:off + m], R[off + m:off + 2 * m], R[off + 2 * m:off + 3 * m]
        o0, o1, o2 = out[0], out[1], out[2]
        third = 1.0 / 3.0
        for o in range(m):
            q0, q1, q2 = max(np.float64(R0[o]), 0.0), max(np.float64(R1[o]), 0.0), max(np.float64(R2[o]), 0.0)
            t = q0 + q1 + q2
            inv = 1.0 / t if t > 0.0 else 0.0
            o0[o] = q0 * inv if t > 0.0 else third
            o1[o] = q1 * inv if t > 0.0 else third
            o2[o] = q2 * inv if t > 0.0 else third
        return
    for o in range(m):
        tot[o] = 0.0
    for i in range(k):  # one store per loop: two (row and tot) keep it from vectorizing
        Ri = R[off + i * m:off + (i + 1) * m]
        for o in range(m):
            q = np.float64(Ri[o])
            tot[o] += q if q > 0.0 else 0.0
    zero = 0
    for o in range(m):
        t = tot[o]
        zero += t <= 0.0
        tot[o] = 1.0 / t if t > 0.0 else 0.0
    for i in range(k):
        Ri, row = R[off + i * m:off + (i + 1) * m], out[i]
        for o in range(m):
            q = np.float64(Ri[o])
            row[o] = (q if q > 0.0 else 0.0) * tot[o]
    if zero:  # all regrets <= 0: uniform
        for o in range(m):
            if tot[o] == 0.0:
                for i in range(k):
                    out[i, o] = 1.0 / k


@nb.njit(cache=True, error_model="numpy", _nrt=False)
def _average_strategy(S, off, m, k, out, tot):
    """out[i, o] (o < m): the average strategy at a node, S normalized per infoset (uniform
    where the sums are 0: an infoset the average never reaches). Walks and plans take the
    average plan as these ratios times the parent's reach, never as S / S_root directly: S
    in float32 drifts from its children's sums over a run, and a plan whose children do not
    sum to their parent breaks the bracket BR_1(x) <= value <= BR_0(y) (measured: by 7e-5
    chips after 3,000 DCFR iterations on a river spot). numpy's error model: a division by
    a zero sum gives nan, overwritten by the uniform strategy, instead of a check per element
    that keeps the loop from vectorizing."""
    for o in range(m):
        tot[o] = 0.0
    for i in range(k):
        Si = S[off + i * m:off + (i + 1) * m]
        for o in range(m):
            tot[o] += np.float64(Si[o])
    zero = 0
    for o in range(m):
        zero += tot[o] <= 0.0
    for i in range(k):
        Si, row = S[off + i * m:off + (i + 1) * m], out[i]
        for o in range(m):
            row[o] = np.float64(Si[o]) / tot[o]
    if zero:
        for o in range(m):
            if tot[o] <= 0.0:
                for i in range(k):
                    out[i, o] = 1.0 / k


@nb.njit(cache=True, _nrt=False)
def _lock_strategy(LK, lo, m, k, out, average):
    """out[i, o] <- l_i + (1 - L) out[i, o] at the locked hands o of a node whose lock block
    starts at LK[lo] (:meth:`FusedTree.set_locks`): b = p at a locked hand (L = 1), whatever
    the regrets say; at a weighted one (0 < L < 1) the lower bound plus the rest played as
    ``out`` (regret matching's), except for an ``average`` strategy, already such a mixture."""
    mask = LK[lo + k * m:lo + (k + 1) * m]
    for i in range(k):
        Li, row = LK[lo + i * m:lo + (i + 1) * m], out[i]
        for o in range(m):
            if mask[o] == 1.0:
                row[o] = Li[o]
            elif mask[o] != 0.0 and not average:
                row[o] = Li[o] + (1.0 - mask[o]) * row[o]


@nb.njit(cache=True, _nrt=False)
def _lock_free(LK, lo, m, k, b):
    """b[i, o] <- (b[i, o] - l_i) / (1 - L) at the weighted hands o (0 < L < 1): the free part
    sigma of the strategy played, whose regrets the update takes (r = v - <sigma, v>)."""
    mask = LK[lo + k * m:lo + (k + 1) * m]
    for i in range(k):
        Li, row = LK[lo + i * m:lo + (i + 1) * m], b[i]
        for o in range(m):
            if mask[o] != 0.0 and mask[o] != 1.0:
                row[o] = (row[o] - Li[o]) / (1.0 - mask[o])


@nb.njit(cache=True, _nrt=False)
def _lock_regrets(LK, lo, m, k, R, off, v, rows, value):
    """After the update: R[off + i m + o] <- 0 at the locked hands o (frozen: the sequence
    form's :func:`~treeplex.core.locks.apply_locks`); at the weighted ones ``value[o]`` (the
    update's <sigma, v>) <- the value played, <l, v> + (1 - L) <sigma, v>."""
    mask = LK[lo + k * m:lo + (k + 1) * m]
    for i in range(k):
        Ri = R[off + i * m:off + (i + 1) * m]
        for o in range(m):
            if mask[o] == 1.0:
                Ri[o] = 0
    for o in range(m):
        if mask[o] != 0.0 and mask[o] != 1.0:
            acc = 0.0
            for i in range(k):
                acc += LK[lo + i * m + o] * v[rows[i], o]
            value[o] = acc + (1.0 - mask[o]) * value[o]


@nb.njit(cache=True, _nrt=False)
def _copy(dst, src):
    """dst[:] = src element by element (a slice assignment may go through a temporary, which
    needs the runtime that these kernels leave out)."""
    for h in range(len(dst)):
        dst[h] = src[h]


@nb.njit(cache=True, _nrt=False)
def _down(L, s, in0, in1, T, G, O, st, sc, mode, upd0, upd1, cut, collect, fr, fv0, fv1, B):
    """Down segment s at level L of the stack: the players' reach at each of its nodes (the
    root's from in0, in1); the strategy sums of an updating actor (mode UPDATE); the values
    of its chance nodes zeroed (or, ``cut``, read from fv0, fv1; ``collect``: their reach
    recorded in ``fr`` instead)."""
    kind, cptr, child, actor, off, m, tab = T[0], T[1], T[2], T[3], T[4], T[5], T[6]
    seg_ptr, seg_nodes, loc, cidx = G[0], G[1], G[2], G[3]
    RS, VS, strat, tot, row0, row1 = B[0], B[1], B[3], B[4], B[8][0][L], B[8][1][L]
    base = seg_ptr[s]
    _copy(RS[0][L, 0], in0)
    _copy(RS[1][L, 0], in1)
    row0[0] = 0
    row1[0] = 0
    for e in range(seg_ptr[s + 1] - base):
        u = seg_nodes[base + e]
        if kind[u] == CHANCE:
            f = cidx[u]
            if collect:
                _copy(fr[0][f], RS[0][L, row0[e]])
                _copy(fr[1][f], RS[1][L, row1[e]])
            elif cut:
                _copy(VS[0][L, e], fv0[f])
                _copy(VS[1][L, e], fv1[f])
            else:
                VS[0][L, e, :] = 0.0
                VS[1][L, e, :] = 0.0
            continue
        if kind[u] != DECISION:
            continue
        a = actor[u]
        k = cptr[u + 1] - cptr[u]
        mv, ov = m[u], off[u]
        orb, rep = O[0][a][tab[u]], O[1][a][tab[u]]
        R, S, P, scale = st[a]
        sa = strat[a][L, e]  # kept on the stack for the way up
        ra, rows, orows = RS[a][L], (row0, row1)[a], (row0, row1)[1 - a]
        re = ra[rows[e]]  # the actor's reach here
        n = ra.shape[1]
        if mode == BR_AVERAGE or mode == VALUE_AVERAGE:
            _average_strategy(S, ov, mv, k, sa, tot)
        else:
            _strategy(R, P, ov, mv, k, sa, tot)
        if T[14][u] >= 0:  # locked hands play the lock, in every mode (so the strategy sum is the lock's)
            _lock_strategy(T[15], T[14][u], mv, k, sa, mode == BR_AVERAGE or mode == VALUE_AVERAGE)
        if mode == UPDATE and not collect and (upd0 if a == 0 else upd1):  # the played plan into the sum
            rho, omega = sc[3], sc[4]
            if scale.shape[1] > 0:  # 16-bit: decode, add, encode with the node's new scale
                tmp, was = B[7], scale[1, u]
                for i in range(k):
                    Si, ti, row = S[ov + i * mv:ov + (i + 1) * mv], tmp[i * mv:(i + 1) * mv], sa[i]
                    for o in range(mv):
                        ti[o] = rho * (Si[o] * was) + omega * (re[rep[o]] * row[o])
                scale[1, u] = _encode(tmp, k * mv, S, ov, 65535.0)
            else:
                for i in range(k):
                    Si, row = S[ov + i * mv:ov + (i + 1) * mv], sa[i]
                    if mv == n:
                        for o in range(mv):
                            Si[o] = rho * np.float64(Si[o]) + omega * (re[o] * row[o])
                    else:
                        for o in range(mv):
                            Si[o] = rho * np.float64(Si[o]) + omega * (re[rep[o]] * row[o])
        for i in range(k):
            lc = loc[child[cptr[u] + i]]
            orows[lc] = orows[e]  # the other player's reach is unchanged: its row, not a copy
            rows[lc] = lc
            dst, row = ra[lc], sa[i]
            if mv == n:  # one hand per infoset: no orbit lookup, a loop that vectorizes
                for h in range(n):
                    dst[h] = re[h] * row[h]
            else:
                for h in range(n):
                    dst[h] = re[h] * row[orb[h]]


@nb.njit(cache=True, _nrt=False)
def _up(L, s, T, G, H, O, st, sc, mode, upd0, upd1, B):
    """Up segment s at level L: its terminals' values for each updating player
    (:func:`fold_values`, :func:`showdown_values`), then
    its decision nodes in reverse order: the actor's regret update (or best action) and both
    players' values. Its chance nodes' values are already in place."""
    kind, cptr, child, actor, off, m, tab, tkind, tval = T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8]
    boards = T[10]
    seg_ptr, seg_nodes, loc = G[0], G[1], G[2]
    RS, VS, strat, tot, ovals = B[0], B[1], B[3], B[4], B[5]
    lcs, seq = B[2][0], B[2][1]  # the children's rows; 0, 1, ..., K - 1
    base = seg_ptr[s]
    ne = seg_ptr[s + 1] - base
    t0, t1 = G[4][s], G[4][s + 1]
    if t1 > t0:
        terms, tboard = G[5], T[9]
        cm, dead = B[6][0], B[6][1]
        for p in range(2):
            if not (upd0 if p == 0 else upd1):
                continue
            hp, hq = H[p], H[1 - p]
            sign = 1.0 if p == 0 else -1.0  # a fold's value is player 0's payoff; a showdown's, the stake
            if T[18][tboard[terms[t0]], 0] >= 0:  # bunching: every hand pair, the segment's terminals at once
                bunched_values(p, terms[t0:t1], loc, T[12][0], tkind, tval, T[16], T[17], T[18][tboard[terms[t0]]],
                               RS[1 - p][L], B[8][1 - p][L], VS[p][L])
                continue
            for g in range(t0, t1):
                t = terms[g]
                e = loc[t + T[12][0]]
                rk = T[13][t] if len(T[13]) else 0.0  # p's own utility (PostflopGame.raked_values): the winner pays the rake, a tie half each
                val = tval[t] - 0.5 * rk if tkind[t] else sign * tval[t]
                if tkind[t] == 0 and rk != 0.0 and val > 0.0:
                    val -= rk
                bd = tboard[t]
                if tkind[t]:
                    showdown_values(val, -0.5 * rk, RS[1 - p][L, B[8][1 - p][L, e]], VS[p][L, e], hq[1], hp[3], hp[2], hp[0],
                                    hp[5][hp[4][bd]:hp[4][bd + 1]], hp[7][hp[4][bd]:hp[4][bd + 1]],
                                    hq[5][hq[4][bd]:hq[4][bd + 1]], hq[8][hq[9][bd]:hq[9][bd + 1]], hq[10][bd],
                                    cm, B[6][2])
                else:
                    fold_values(val, boards[bd], RS[1 - p][L, B[8][1 - p][L, e]], VS[p][L, e], hq[1], hq[0], hp[3], hp[2], hp[0],
                                cm, dead)
    for e in range(ne - 1, -1, -1):
        u = seg_nodes[base + e]
        if kind[u] != DECISION:
            continue
        a = actor[u]
        k = cptr[u + 1] - cptr[u]
        for i in range(k):
            lcs[i] = loc[child[cptr[u] + i]]
        for p in range(2):  # the other player's values: summed over the actor's actions
            if p != a and (upd0 if p == 0 else upd1):
                V = VS[p][L]
                dst, src = V[e], V[lcs[0]]
                for h in range(len(dst)):
                    dst[h] = src[h]
                for i in range(1, k):
                    src = V[lcs[i]]
                    for h in range(len(dst)):
                        dst[h] += src[h]
        if not (upd0 if a == 0 else upd1):
            continue
        mv, ov = m[u], off[u]
        orb = O[0][a][tab[u]]
        R, S, P, scale = st[a]
        sa = strat[a][L, e]  # the strategy the way down computed
        V = VS[a][L]
        out = V[e]
        na = V.shape[1]
        br = mode == BR_AVERAGE or mode == BR_CURRENT
        ident = mv == na
        if ident:  # the children's value rows are the infosets' values: read in place
            vals, vrows = V, lcs
        else:  # per-hand values summed per orbit: the reduced game's infoset values
            ovals[:k, :mv] = 0.0
            for i in range(k):
                src, dst = V[lcs[i]], ovals[i]
                for h in range(na):
                    dst[orb[h]] += src[h]
            vals, vrows = ovals, seq
        if not br:
            if mode == UPDATE and ident and scale.shape[1] == 0:  # rm_block's values played are out's
                if T[14][u] >= 0:
                    _lock_free(T[15], T[14][u], mv, k, sa)
                rm_block(R, P, ov, mv, k, vals, vrows, sa, sc[0], sc[1], sc[2], tot)
                if T[14][u] >= 0:
                    _lock_regrets(T[15], T[14][u], mv, k, R, ov, vals, vrows, tot)
                _copy(out, tot[:na])
                continue
            out[:] = 0.0  # the values played, per hand, before the update overwrites the strategy
            for i in range(k):
                row, ai = sa[i], V[lcs[i]]
                if ident:
                    for h in range(na):
                        out[h] += row[h] * ai[h]
                else:
                    for h in range(na):
                        out[h] += row[orb[h]] * ai[h]
            if mode == UPDATE and scale.shape[1] > 0:  # 16-bit: the update on the decoded block
                tmp, was, Rv = B[7], scale[0, u], R[ov:ov + k * mv]
                for x in range(k * mv):
                    tmp[x] = Rv[x] * was
                if T[14][u] >= 0:
                    _lock_free(T[15], T[14][u], mv, k, sa)
                rm_block(tmp, P, 0, mv, k, vals, vrows, sa, sc[0], sc[1], sc[2], tot)
                if T[14][u] >= 0:
                    _lock_regrets(T[15], T[14][u], mv, k, tmp, 0, vals, vrows, tot)
                scale[0, u] = _encode(tmp, k * mv, R, ov, 32767.0)
            elif mode == UPDATE:
                if T[14][u] >= 0:
                    _lock_free(T[15], T[14][u], mv, k, sa)
                rm_block(R, P, ov, mv, k, vals, vrows, sa, sc[0], sc[1], sc[2], tot)
                if T[14][u] >= 0:
                    _lock_regrets(T[15], T[14][u], mv, k, R, ov, vals, vrows, tot)
            elif mode == PRIOR:
                prior_regrets(R, ov, mv, k, vals, vrows, sa, sc[0], sc[1], sc[3])
        else:  # best response: the first best action of each infoset
            for o in range(mv):
                best, bv = 0, vals[vrows[0], o]
                for i in range(1, k):
                    if vals[vrows[i], o] > bv:
                        best, bv = i, vals[vrows[i], o]
                tot[o] = best
            for h in range(na):
                out[h] = V[lcs[np.int64(tot[orb[h]])], h]
            lo = T[14][u]
            if lo >= 0:  # a locked hand's best response is the lock: l + (1 - L) on the best action (Q^l's)
                LK = T[15]
                mask = LK[lo + k * mv:lo + (k + 1) * mv]
                for h in range(na):
                    o = orb[h]
                    if mask[o] != 0.0:
                        acc = 0.0
                        for i in range(k):
                            acc += LK[lo + i * mv + o] * V[lcs[i], h]
                        out[h] = acc + (1.0 - mask[o]) * out[h]


@nb.njit(cache=True, _nrt=False)
def prior_regrets(R, off, m, k, v, rows, b, w, x, clamp):
    """A warm start's regrets at the m infosets of a node (walk mode PRIOR, the strategies
    played the prior b; :meth:`.fused_lines.FusedLines.warm_start`): R_i += w (x (v_i - <b, v>)
    + max_j |v_j| b_i) with v[rows[i], o] the counterfactual values, so that two walks, x = 1
    against the prior opponent then x = 0 against the uniform one, leave
    :meth:`treeplex.solvers.cfr.RegretSolver.warm_start`'s R = w (r + c b); ``clamp`` > 0:
    then R = max(R, 0) (a variant whose regrets have the floor 0)."""
    for o in range(m):
        played, big = 0.0, 0.0
        for i in range(k):
            vi = v[rows[i], o]
            played += b[i, o] * vi
            big = max(big, abs(vi))
        for i in range(k):
            r = np.float64(R[off + i * m + o]) + w * (x * (v[rows[i], o] - played) + big * b[i, o])
            R[off + i * m + o] = max(r, 0.0) if clamp > 0.0 else r


@nb.njit(cache=True, fastmath={"reassoc", "contract", "nsz"}, _nrt=False)  # reassociated sums: vectorized (rounding only)
def bunched_values(p, terms, loc, tb, tkind, tval, K, S, koff, R, rrow, V):
    """Player p's values per own hand at the terminals ``terms`` of one segment (one board) of a
    bunched spot: V[e_t, h] = val_t x the sum over the opponent's hands h' of K_b[h0, h1]
    R[rrow[e_t], h'] (times sign(s_p - s_q) at a showdown), val_t the fold payoff (p's sign)
    or the showdown stake times the tree's chance; K_b at K[koff[0]:] and the signs
    sign(s0 - s1) at S[koff[1]:] (row-major, n0 x n1). The sequence form's
    :class:`~.bunching.BunchedPayoff`, O(n0 n1) per terminal; one pass over K_b for all the
    segment's terminals (a row of K_b is read once, not once per terminal)."""
    ko, so = koff[0], koff[1]
    n0, n1 = (V.shape[1], R.shape[1]) if p == 0 else (R.shape[1], V.shape[1])
    nt = len(terms)
    if p == 0:
        for h in range(n0):
            Kh = K[ko + h * n1:ko + (h + 1) * n1]
            for g in range(nt):
                t = terms[g]
                e = loc[t + tb]
                r = R[rrow[e]]
                acc = 0.0
                if tkind[t]:
                    Sh = S[so + h * n1:so + (h + 1) * n1]
                    for x in range(n1):
                        acc += Kh[x] * Sh[x] * r[x]
                else:
                    for x in range(n1):
                        acc += Kh[x] * r[x]
                V[e, h] = tval[t] * acc
    else:
        for g in range(nt):
            V[loc[terms[g] + tb], :] = 0.0
        for x in range(n0):
            Kx = K[ko + x * n1:ko + (x + 1) * n1]
            for g in range(nt):
                t = terms[g]
                e = loc[t + tb]
                c = R[rrow[e], x] * (tval[t] if tkind[t] else -tval[t])
                if c == 0.0:
                    continue
                out = V[e]
                if tkind[t]:  # p's sign is sign(s1 - s0)
                    Sx = S[so + x * n1:so + (x + 1) * n1]
                    for h in range(n1):
                        out[h] -= c * Kx[h] * Sx[h]
                else:
                    for h in range(n1):
                        out[h] += c * Kx[h]


@nb.njit(cache=True, _nrt=False)
def fold_values(val, board, r, out, w_in, cards_in, same, coef, cards_own, cm, dead):
    """out[h] = the value of own hand h at a fold terminal (``val``: the payoff times chance, in
    the own player's sign), the opponent's reach r per hand. With x_i = w_i r_i the opponent's
    weighted reach on hands compatible with the board, X its sum and cm[c] the mass x on
    hands holding card c, own hand h = (c1, c2) (coef_h: its weight over the normalizer) gets
    val coef_h (X - cm[c1] - cm[c2] + x_same(h)) (inclusion-exclusion). Hands whose reach is 0
    are skipped (after CFR settles most hands reach few terminals)."""
    for k in range(5):
        if board[k] >= 0:
            dead[board[k]] = True
    cm[:] = 0.0
    n_in, n_own = len(w_in), len(coef)
    tot = 0.0
    for i in range(n_in):
        x = r[i]
        if x != 0.0:
            c1, c2 = cards_in[i, 0], cards_in[i, 1]
            if not (dead[c1] or dead[c2]):
                x *= w_in[i]
                tot += x
                cm[c1] += x
                cm[c2] += x
    for h in range(n_own):
        c1, c2 = cards_own[h, 0], cards_own[h, 1]
        if dead[c1] or dead[c2] or tot == 0.0:  # (tot = 0: the opponent never gets here)
            out[h] = 0.0
        else:
            sm = same[h]
            xs = w_in[sm] * r[sm] if sm < n_in else 0.0
            out[h] = val * coef[h] * (tot - cm[c1] - cm[c2] + xs)
    for k in range(5):
        if board[k] >= 0:
            dead[board[k]] = False


@nb.njit(cache=True, _nrt=False)
def showdown_values(val, const, r, out, w_in, same, coef, cards_own, oidx, six, iidx, cpos, cstart, cT, buf):
    """out[h] = the value of own hand h at a showdown on one board: val coef_h (W_h - L_h) +
    const coef_h Tot_h, with W_h, L_h and Tot_h the opponent's weighted reach x_i = w_i r_i on
    hands compatible with h that h beats, loses to, and in all (``const`` = -rake/2 x chance
    on a raked spot, so that with val = (stake - rake/2) x chance a win nets stake - rake, a
    loss -stake and a tie -rake/2; 0 otherwise).

    The opponent's hands on the board sorted weakest first (``iidx``) give the prefix sums
    pre[j] of x over the first j and the suffix sums suf[j] over the rest, and for each card c
    the same sums over the hands holding c (card lists ``cpos``, each a head slot at
    ``cstart[c]`` then its positions; C[k], S[k]: over its first k entries, over the rest).
    With lt_h, le_h the number of opponent hands weaker than h (at most as strong) and the
    same counts within the lists of h's cards c1, c2 (``six``: :func:`showdown_tables`), by
    inclusion-exclusion (the same combo is as strong as h, in neither sum)

        W_h = pre[lt] - C1[lt] - C2[lt],   L_h = suf[le] - S1[le] - S2[le],
        Tot_h = pre[n] - C1[n] - C2[n] + x_same.

    The sums are accumulated in postflop-solver's order (up from the weakest for W, down
    from the strongest for L), so a hand nothing beats gets exactly 0, not a cancellation's
    residue (which flips regret matching where regrets are 0), and the values equal the
    sweeps' to the last bit. Branch-free reads at precomputed positions instead of two
    merges of the sorted lists: the TURN walk 12% faster (CPU time, one thread)."""
    n, n_in = len(iidx), len(w_in)
    xs, pre, suf, cpre, csuf = buf
    live = False
    for j in range(n):
        i = iidx[j]
        xs[j] = r[i] * w_in[i]
        live |= xs[j] != 0.0
    out[:] = 0.0  # hands blocked by the board are not in the sorted lists
    if not live:  # the opponent never gets here: every value is 0 (the common case late in a solve)
        return
    up, down = 0.0, 0.0  # each sum is a chain of dependent adds: two chains per loop run side by side
    pre[0], suf[n] = 0.0, 0.0
    for j in range(n):
        up += xs[j]
        pre[j + 1] = up
        down += xs[n - 1 - j]
        suf[n - 1 - j] = down
    for c in range(52):
        a, b = cstart[c], cstart[c + 1]
        up, down = 0.0, 0.0
        cpre[a], csuf[b - 1] = 0.0, 0.0
        for t in range(b - a - 1):
            up += xs[cpos[a + 1 + t]]
            cpre[a + 1 + t] = up
            down += xs[cpos[b - 1 - t]]
            csuf[b - 2 - t] = down
        cT[c] = up
    tot = pre[n]
    for q in range(len(oidx)):
        h = oidx[q]
        win = pre[six[q, 0]] - cpre[six[q, 2]] - cpre[six[q, 4]]  # (six[q] as a row view: an NRT incref per hand)
        lose = suf[six[q, 1]] - csuf[six[q, 3]] - csuf[six[q, 5]]
        if const == 0.0:
            out[h] = val * coef[h] * (win - lose)
        else:
            c1, c2, sm = cards_own[h, 0], cards_own[h, 1], same[h]
            both = tot - cT[c1] - cT[c2] + (w_in[sm] * r[sm] if sm < n_in else 0.0)
            out[h] = coef[h] * (val * (win - lose) + const * both)


@nb.njit(cache=True)
def showdown_tables(cards_own, optr, oidx, ostr, cards_in, iptr, iidx, istr):
    """The tables of :func:`showdown_values` for own player p against the opponent q, per
    board with a showdown order (``*ptr``: the boards' ranges in the sorted lists): q's card
    lists (``cpos``: per board a region of 2 n_b + 52 uint16, card c's list from
    ``cstart[b, c]``, a head slot then the positions of q's hands holding c, ascending; region
    b starts at ``cptr[b]``), and per entry of p's sorted list, ``six`` = (lt, le, c1's list
    index of lt, of le, c2's of lt, of le), uint16: every count and position within a board's
    region is below 2 x 1,326 + 52 (2 bytes, not 4, per entry: FLOP-FAST's tables 20 -> 10 MB)."""
    nb_ = len(iptr) - 1
    cptr = np.zeros(nb_ + 1, np.int64)
    for b in range(nb_):
        cptr[b + 1] = cptr[b] + 2 * (iptr[b + 1] - iptr[b]) + 52
    cpos = np.zeros(cptr[nb_], np.uint16)
    cstart = np.zeros((nb_, 53), np.uint16)
    six = np.zeros((optr[len(optr) - 1], 6), np.uint16)
    count = np.zeros(53, np.int64)
    for b in range(nb_):
        i0, i1 = iptr[b], iptr[b + 1]
        reg = cpos[cptr[b]:cptr[b + 1]]
        count[:] = 0
        for j in range(i1 - i0):
            count[cards_in[iidx[i0 + j], 0]] += 1
            count[cards_in[iidx[i0 + j], 1]] += 1
        for c in range(52):
            cstart[b, c + 1] = cstart[b, c] + count[c] + 1
            count[c] = cstart[b, c] + 1  # next free slot of c's list (after its head slot, never read)
        for j in range(i1 - i0):
            for k in range(2):
                c = cards_in[iidx[i0 + j], k]
                reg[count[c]] = j
                count[c] += 1
        s_in = istr[i0:i1]
        for q in range(optr[b], optr[b + 1]):
            st = ostr[q]
            lt = np.searchsorted(s_in, st, side="left")
            le = np.searchsorted(s_in, st, side="right")
            six[q, 0], six[q, 1] = lt, le
            for k in range(2):
                c = cards_own[oidx[q], k]
                lst = reg[cstart[b, c] + 1:cstart[b, c + 1]]
                six[q, 2 + 2 * k] = cstart[b, c] + np.searchsorted(lst, lt, side="left")
                six[q, 3 + 2 * k] = cstart[b, c] + np.searchsorted(lst, le, side="left")
    return cpos, cstart, cptr, six


@nb.njit(cache=True, _nrt=False)
def _encode(vals, n, out, off, top):
    """16-bit storage of one node's block (postflop-solver's compression): scale = max |v| /
    top (32767 for the signed regrets, 65535 for the nonnegative strategy sums), out[off + x] =
    round(v[x] / scale); returns the scale (0 for an all-zero block). Regret matching and the
    average strategy normalize within an infoset, so they read the stored integers unscaled;
    the updates decode (times the scale) and encode again, in float64."""
    big = 0.0
    for x in range(n):
        big = max(big, abs(vals[x]))
    if big == 0.0:
        for x in range(n):
            out[off + x] = 0
        return 0.0
    inv = top / big
    dst = out[off:off + n]
    for x in range(n):
        dst[x] = np.int64(np.floor(vals[x] * inv + 0.5))
    return big / top


def _buffers(n0, n1, levels, width, K):
    """One thread's stack: per segment level, node of the segment and player, the reach, the
    values and the actor's strategy (computed once on the way down, read again on the way up),
    and the row of the reach each node reads (a node's own row where the player acted last,
    else its parent's: the other player's reach goes down without a copy); a node's children's
    rows (its actions' values are read in place there) and scratch for its regret update."""
    nm = max(n0, n1)
    RS = (np.ones((levels, width, n0)), np.ones((levels, width, n1)))
    VS = (np.zeros((levels, width, n0)), np.zeros((levels, width, n1)))
    kids = (np.zeros(K, np.int64), np.arange(K))
    strat = (np.zeros((levels, width, K, n0)), np.zeros((levels, width, K, n1)))
    sums = (np.zeros(nm), np.zeros(nm + 1), np.zeros(nm + 1), np.zeros(2 * nm + 52), np.zeros(2 * nm + 52))
    terminals = (np.zeros(52), np.zeros(52, dtype=np.bool_), sums)
    rows = (np.zeros((levels, width), np.int64), np.zeros((levels, width), np.int64))
    return (RS, VS, kids, strat, np.zeros(nm), np.zeros((K, nm)), terminals, np.zeros(K * nm), rows)


@nb.njit(cache=True)
def _walk(s0, in0, in1, T, G, H, O, st, sc, mode, upd0, upd1, cut, collect, fr, fv0, fv1, B):
    """The walk of segment s0 and everything below it, its root's players' reach in0, in1;
    the updating players' values at its root end in row 0 of level 0's values. The segments
    below chance nodes are entered through a stack of levels (no recursion: numba's cache of
    recursive kernels is unreliable). ``cut``: level 0's chance nodes take fv0, fv1 and are
    not walked; ``collect``: only level 0's reach, recorded at its chance nodes."""
    cptr, child = T[1], T[2]
    seg_ptr, seg_nodes, seg_cptr, seg_chance, seg_of = G[0], G[1], G[6], G[7], G[8]
    VS = B[1]
    levels = VS[0].shape[0]
    seg = np.zeros(levels, np.int64)
    ce = np.zeros(levels, np.int64)
    cc = np.zeros(levels, np.int64)
    L = np.int64(0)
    no = L < 0  # False as a bool variable: numba compiles a kernel again for each literal argument
    seg[0] = s0
    _down(L, s0, in0, in1, T, G, O, st, sc, mode, upd0, upd1, cut, collect, fr, fv0, fv1, B)
    if collect:
        return
    while True:
        s = seg[L]
        if ce[L] < seg_cptr[s + 1] - seg_cptr[s] and not (cut and L == 0):
            e = seg_chance[seg_cptr[s] + ce[L]]
            u = seg_nodes[seg_ptr[s] + e]
            if cc[L] < cptr[u + 1] - cptr[u]:
                s2 = np.int64(seg_of[child[cptr[u] + cc[L]]])
                seg[L + 1], ce[L + 1], cc[L + 1] = s2, 0, 0
                _down(L + 1, s2, B[0][0][L, B[8][0][L, e]], B[0][1][L, B[8][1][L, e]], T, G, O, st, sc, mode, upd0, upd1, no,
                      no, fr, fv0, fv1, B)
                L += 1
            else:
                ce[L] += 1
                cc[L] = 0
            continue
        _up(L, s, T, G, H, O, st, sc, mode, upd0, upd1, B)
        if L == 0:
            return
        e = seg_chance[seg_cptr[seg[L - 1]] + ce[L - 1]]
        if upd0:
            VS[0][L - 1, e, :] += VS[0][L, 0]
        if upd1:
            VS[1][L - 1, e, :] += VS[1][L, 0]
        L -= 1
        cc[L] += 1


@nb.njit(cache=True, nogil=True)
def walk_step(step, lo, hi, items, fr, fv, ones, T, G, H, O, st, sc, mode, upd0, upd1, B):
    """One step of a walk, with the stack B (:func:`_buffers`):

    - REACH: the reach vectors at the first chance nodes, into fr = (fr0, fr1);
    - SUBTREES (chunks on the worker threads, without the GIL): the subtrees items[lo:hi]
      below the first chance nodes, their values summed per first chance node into fv;
    - TRUNK: the trunk's walk, reading fv at the first chance nodes; each player's values
      (own payoff) per hand at the trunk's nodes end in B[1][p][0], by place in the root
      segment (row 0: the root).

    One compiled entry for the three steps, every ``_walk`` call with the same types: numba
    compiles the walk once, where an entry per step made three compiles and three machine
    codes of it (the walk's JIT in a first fused run, cold cache: 104 s, now 39 s)."""
    no = step < 0  # False as a bool variable (see _walk)
    if step == SUBTREES:
        fv0, fv1 = fv
        for it in range(lo, hi):
            f, u = items[it, 0], items[it, 1]
            _walk(np.int64(G[8][u]), fr[0][f], fr[1][f], T, G, H, O, st, sc, mode, upd0, upd1, no, no, fr,
                  fv0, fv1, B)
            if upd0:
                fv0[f] += B[1][0][0, 0]
            if upd1:
                fv1[f] += B[1][1][0, 0]
    else:
        _walk(np.int64(0), ones[0], ones[1], T, G, H, O, st, sc, mode, upd0, upd1, step == TRUNK,
              step == REACH, fr, fv[0], fv[1], B)


@nb.njit(cache=True)
def _plan_to_fused(T, sbase, p, plan, S, want):
    """S[off_v + i m_v + o] = plan[sbase_v + o k_v + i] at player p's nodes (the sequence
    form's layout to this one's); ``want``: empty (every node), or the nodes to write."""
    cptr, actor, off, m = T[1], T[3], T[4], T[5]
    every = len(want) == 0
    for v in range(len(actor)):
        if actor[v] == p and (every or want[v]):
            k = cptr[v + 1] - cptr[v]
            for i in range(k):
                for o in range(m[v]):
                    S[off[v] + i * m[v] + o] = plan[sbase[v] + o * k + i]


@nb.njit(cache=True)
def _plan(T, sbase, last, orbit, rep, p, R, P, S, average, want, x, K, n):
    """x = player p's realization plan in the sequence form's layout: x[0] = 1 and, node by
    node (a node's parents come first), x[sbase_v + o k_v + i] = x[parent] b_v(i | o), with b
    the average strategy (S normalized per infoset, :func:`_average_strategy`) or the current
    one, and the parent the sequence of the orbit's first hand at p's last (node, action).
    ``want``: empty (every node), or the nodes to write (closed under parents)."""
    cptr, actor, off, m, tab = T[1], T[3], T[4], T[5], T[6]
    out = np.zeros((K, n))
    tot = np.zeros(n)
    x[0] = 1.0
    every = len(want) == 0
    for v in range(len(actor)):
        if actor[v] == p and (every or want[v]):
            k = cptr[v + 1] - cptr[v]
            if average:
                _average_strategy(S, off[v], m[v], k, out, tot)
            else:
                _strategy(R, P, off[v], m[v], k, out, tot)
            if T[14][v] >= 0:
                _lock_strategy(T[15], T[14][v], m[v], k, out, average)
            u, a = last[v, 0], last[v, 1]
            for o in range(m[v]):
                par = 1.0 if u < 0 else x[sbase[u] + orbit[tab[u], rep[tab[v], o]] * (cptr[u + 1] - cptr[u]) + a]
                for i in range(k):
                    x[sbase[v] + o * k + i] = par * out[i, o]
