"""The fused postflop engine: one depth-first walk of the public tree per player per iteration.

The sequence-form path of a postflop spot makes two products (A y, A^T x) and separate regret
and plan passes over full-length vectors. This engine does what postflop-solver's
``solve_recursive`` does instead: it walks the public tree (:mod:`.public_tree`) once per
updating player, carrying per-hand reach vectors down and counterfactual values up.

- Decision node of player a with k actions: a's current strategy is computed on the fly from
  the stored regrets (regret matching, or the stored prediction of predictive variants); a's
  reach goes down times the strategy of each action; the other player's reach goes down
  unchanged. On the way up, an updating player's counterfactual values per action become
  instantaneous regrets and its regrets and strategy sum are updated in place, at each
  infoset, by the CFR family's one regret-matching kernel
  (:func:`treeplex.backends.numba_regret.regret_match_infoset`); the other player's values
  are summed over the actions.
- Chance node: the children's values are summed (the deal's chance weight is in the
  terminals' values; hands that hold a dealt card are zeroed at the terminals, whose board
  includes it).
- Terminal: fold values by inclusion-exclusion over the 52 card masses, showdown values by
  the sorted O(n) sweep, exactly the math of :mod:`.streets_operator` (one vector instead of
  lanes of groups).

Storage per player (the sequence form's ``b``, ``x`` and float64 gradient are not kept):
per (decision node v, action a, orbit o) the cumulative regret R and the strategy sum S (the
running weighted sum of played realization plans, whose normalization is the average plan),
in ``storage`` (float32 by default), action-major within a node (index ``off_v + a m_v + o``,
m_v the node's number of hand orbits) so the per-hand loops read contiguous vectors;
predictive variants (kappa != 1 or lam != 0) keep one more array P, the next strategy the
kernel computes. S's root entry (the sum of the weights omega) is a float64 scalar. With
isomorphism (:mod:`.isomorphism`), an infoset is a hand orbit of the stabilizer of the cards
dealt so far: a table per stabilizer maps hands to orbits, the per-hand values are summed per
orbit before the update (the reduced game's A_red = E0^T M E1).

float64 where it matters: reach and value vectors, the card masses and sweeps at terminals,
the per-infoset regret update (the kernel runs on float64 copies of the k entries) and the
strategy sum's root; only the stored R, S, P are in ``storage``.

Iterates: with the same scalars as the sequence-form backend (``regrets(t)``,
``averaging(t)``), alternating updates walk for player 0, then for player 1 against player
0's updated strategy; simultaneous updates walk once, updating both. The iterates equal the
sequence-form path's to rounding (tests/test_fused.py).

Threads: the public tree above the first chance nodes (the trunk) is walked on one thread;
the subtrees below it, one per (first chance node, dealt card), are split into one balanced
chunk per thread (by subtree size), each with its own stack of per-depth hand vectors and
its own sum per first chance node (no full-length partial outputs). The walk is three steps:
reaches down the trunk, the subtrees in parallel, then the trunk's full walk that reads the
subtrees' values at its chance nodes.

Exploitability: a best-response walk per profile, read-only: the opponent's reach is read
directly from the strategy sums (the average plan S / S_root) and the responder takes the
best action per infoset on the way up (both players in one walk).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from .. import threads  # noqa: F401  (sets the thread pool up before any parallel kernel)
from ..backends.numba_regret import regret_match_infoset
from .cards import HAND_CARDS
from .isomorphism import hand_orbits
from .operator import _normalizer, _same_combo
from .public_tree import CHANCE, DECISION, TERMINAL

UPDATE, BR_AVERAGE, BR_CURRENT = 0, 1, 2  # walk modes


@dataclass
class FusedPlayer:
    """One player's state on the fused path (fused layout, see the module docstring)."""

    R: np.ndarray  # cumulative regrets
    S: np.ndarray  # strategy sum (weighted sum of played plans)
    P: np.ndarray  # next strategy of predictive variants (empty otherwise)
    root: np.ndarray  # float64[1]: the strategy sum's root entry


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
        uid = {DECISION: 0, CHANCE: nD, TERMINAL: nD + nC}
        kids = [[uid[k] + i for k, i in tree.children[v]] for v in range(nD)]
        kids += [[uid[k] + i for k, i in tree.chance_children[c]] for c in range(nC)]
        kids += [[] for _ in range(nT)]
        self.cptr = np.zeros(U + 1, np.int64)
        self.cptr[1:] = np.cumsum([len(k) for k in kids])
        self.child = np.array([c for k in kids for c in k], dtype=np.int64)
        self.kind = kind
        self.n_nodes, self.n_dec, self.n_chance = U, nD, nC
        # hands
        self.n = (len(game.hands[0]), len(game.hands[1]))
        cards = [np.ascontiguousarray(HAND_CARDS[h], dtype=np.int64) for h in game.hands]
        weight = [np.ascontiguousarray(w, dtype=np.float64) for w in game.weight]
        Z = _normalizer(cards, weight)
        same = [np.where(s >= 0, s, len(cards[1 - p])).astype(np.int64) for p, s in enumerate(_same_combo(cards))]
        orders = game._river_orders()
        # decision nodes: actor, storage offset, orbits, orbit table, sequence-form base
        self.actor = np.array(tree.actor, dtype=np.int64)
        self.off = np.zeros(nD, np.int64)
        self.m = np.zeros(nD, np.int64)
        self.tab = np.zeros(nD, np.int64)
        self.sbase = np.zeros(nD, np.int64)
        tables = ([], [])
        tab_of = {}
        size = [0, 0]
        red = game.reduction
        for v in range(nD):
            p = tree.actor[v]
            k = len(tree.actions[v])
            if red is None:
                key = (p, ())
                self.sbase[v] = game.bases[p][v]
            else:
                key = (p, tuple(tree.stabilizer(tree.board[v])))
                self.sbase[v] = red.rbase[p][v]
            if key not in tab_of:
                orb = (np.arange(self.n[p]) if red is None else hand_orbits(game.hands[p], list(key[1])))
                tab_of[key] = len(tables[p])
                tables[p].append(orb)
            self.tab[v] = tab_of[key]
            self.m[v] = int(tables[p][self.tab[v]].max()) + 1 if self.n[p] else 0
            self.off[v] = size[p]
            size[p] += k * self.m[v]
        self.size = tuple(size)
        self.orbit = tuple(np.ascontiguousarray(np.array(t), dtype=np.int64) for t in tables)  # [tab, hand]
        self.rep = []  # [tab, orbit]: the orbit's first hand
        for p in (0, 1):
            r = np.zeros((len(tables[p]), max(self.n[p], 1)), np.int64)
            for i, t in enumerate(tables[p]):
                first = np.unique(t, return_index=True)[1]
                r[i, :len(first)] = first
            self.rep.append(r)
        kmax = max((len(a) for a in tree.actions), default=1)
        # terminals: kind (0 fold, 1 showdown), player 0's chips x chance, board
        self.tkind = np.array([0 if k == "fold" else 1 for k in tree.kind], dtype=np.int8)
        self.tval = np.array([(tree.payoff0[t] if tree.kind[t] == "fold" else tree.stake[t]) * tree.chance[t]
                              for t in range(nT)], dtype=np.float64)
        self.tboard = np.array(tree.term_board, dtype=np.int64)
        self.boards = game._boards()
        self.hands = tuple((cards[p], weight[p], weight[p] / Z, same[p], *orders[p]) for p in (0, 1))
        # depth, first chance nodes and the subtrees below them (parallel items)
        depth = np.zeros(U, np.int64)
        sub = np.ones(U, np.float64)  # work estimate of each subtree: nodes, terminals x hands
        sub[nD + nC:] = 1.0 + (self.n[0] + self.n[1]) / 16.0
        order = _preorder(self.cptr, self.child, U)
        for u in order:
            for c in self.child[self.cptr[u]:self.cptr[u + 1]]:
                depth[c] = depth[u] + 1
        for u in order[::-1]:
            for c in self.child[self.cptr[u]:self.cptr[u + 1]]:
                sub[u] += sub[c]
        self.depth = int(depth.max()) + 2
        self.kmax = kmax
        first = np.full(U, -1, np.int64)
        items, work, nf = [], [], 0
        stack = [0]
        while stack:  # the trunk: nodes above any chance node
            u = stack.pop()
            if kind[u] == CHANCE:
                first[u] = nf
                nf += 1
                for c in self.child[self.cptr[u]:self.cptr[u + 1]]:
                    items.append((first[u], c))
                    work.append(sub[c])
            elif kind[u] == DECISION:
                stack.extend(self.child[self.cptr[u]:self.cptr[u + 1]].tolist())
        self.first = first
        self.n_first = nf
        self.items = np.array(items, dtype=np.int64).reshape(-1, 2)
        self.work = np.array(work, dtype=np.float64)
        self.static = (self.kind, self.cptr, self.child, self.actor, self.off, self.m, self.tab, self.tkind,
                       self.tval, self.tboard, self.boards, self.first, np.array([nD + nC], dtype=np.int64))

    def chunks(self, threads: int) -> np.ndarray:
        """Item boundaries cutting the parallel items into ``threads`` runs of about equal work."""
        n = len(self.items)
        if n == 0:
            return np.zeros(1, np.int64)
        cum = np.cumsum(self.work)
        cuts = np.searchsorted(cum, cum[-1] * np.arange(1, threads) / threads)
        return np.unique(np.concatenate([[0], cuts, [n]])).astype(np.int64)

    def new_player(self, p: int, dtype, predictive: bool) -> FusedPlayer:
        """Zero regrets and sums (uniform first play); P = uniform for predictive variants."""
        n = self.size[p]
        P = np.zeros(n if predictive else 0, dtype=dtype)
        if predictive:
            _uniform(self.static, p, P)
        return FusedPlayer(R=np.zeros(n, dtype=dtype), S=np.zeros(n, dtype=dtype), P=P, root=np.zeros(1))

    @property
    def nbytes(self) -> int:
        arrays = [*self.static, self.sbase, *self.orbit, *self.rep, self.items, self.work]
        return sum(a.nbytes for a in arrays) + sum(a.nbytes for h in self.hands for a in h)


def _preorder(cptr, child, U) -> list[int]:
    out, stack = [], [0]
    while stack:
        u = stack.pop()
        out.append(u)
        stack.extend(child[cptr[u]:cptr[u + 1]].tolist())
    return out


@nb.njit(cache=True)
def _uniform(static, p, P):
    kind, cptr, child, actor, off, m, tab = static[:7]
    for v in range(len(actor)):
        if actor[v] == p:
            k = cptr[v + 1] - cptr[v]
            for i in range(k * m[v]):
                P[off[v] + i] = 1.0 / k


# ---------------------------------------------------------------------------- engine entry points


class FusedEngine:
    """A RegretSolver's iterations, plans and best responses on the fused path."""

    def __init__(self, game, dtype, predictive: bool):
        self.tree = game.fused_tree()
        self.game = game
        self.players = tuple(self.tree.new_player(p, np.dtype(dtype), predictive) for p in (0, 1))
        self._workers = None

    def iteration(self, players, coef, avg, plain: bool, alternating: bool) -> None:
        from ..backends.numba_regret import kernel_args

        pos, floor, general, _ = kernel_args(coef, False)  # one compiled walk for every variant
        sc = (float(pos), float(floor), tuple(float(c) for c in general), float(avg[0]), float(avg[1]))
        if alternating:
            self._walk(players, UPDATE, True, False, sc)
            self._walk(players, UPDATE, False, True, sc)
        else:
            self._walk(players, UPDATE, True, True, sc)

    def best_response(self, players, profile: str = "average") -> tuple[float, float]:
        """(BR_0(y), BR_1(x)) in player 0's payoff of the average (or ``"current"``) profile."""
        mode = BR_AVERAGE if profile == "average" and players[0].root[0] > 0 and players[1].root[0] > 0 else BR_CURRENT
        v0, v1 = self._walk(players, mode, True, True, (1.0, 0.0, (1.0, 1.0, 0.0), 1.0, 0.0))
        return v0, -v1

    def _walk(self, players, mode, upd0, upd1, sc):
        t = self.tree
        st = tuple((s.R, s.S, s.P) for s in players)
        roots = tuple(s.root for s in players)
        common = (t.static, t.hands, (t.orbit, tuple(t.rep)), st, roots, sc, mode, upd0, upd1)
        fr0, fr1 = trunk_reach(*common, t.n_first, *t.n, t.depth, t.kmax)
        if t.n_first:
            bounds = t.chunks(self.threads)
            runs = [(bounds[c], bounds[c + 1]) for c in range(len(bounds) - 1)]
            if len(runs) == 1:
                parts = [subtrees(*runs[0], t.items, fr0, fr1, *common, t.depth, t.kmax)]
            else:
                parts = list(self._pool().map(lambda r: subtrees(*r, t.items, fr0, fr1, *common, t.depth, t.kmax),
                                              runs))
            fv0, fv1 = parts[0]
            for a, b in parts[1:]:
                fv0 += a
                fv1 += b
        else:
            fv0, fv1 = fr0, fr1
        return trunk(fv0, fv1, *common, t.depth, t.kmax)

    @property
    def threads(self) -> int:
        return nb.get_num_threads()

    def _pool(self):
        """Worker threads for the subtree chunks (numba's thread count; kernels run without the GIL)."""
        if self._workers is None or self._workers._max_workers != self.threads:
            from concurrent.futures import ThreadPoolExecutor

            self._workers = ThreadPoolExecutor(self.threads)
        return self._workers

    def plans(self, players, which: str) -> tuple[np.ndarray, np.ndarray]:
        """Sequence-form realization plans (the problem's layout): the average or the current."""
        prob = self.game.problem()
        out = []
        for p, (T, s) in enumerate(zip(prob.treeplexes, players)):
            if which == "average" and s.root[0] > 0:
                x = np.zeros(T.n_seqs)
                _seq_average(self.tree.static, self.tree.sbase, p, s.S, x)
                x /= s.root[0]
                x[0] = 1.0
            else:
                b = np.ones(T.n_seqs)
                _seq_current(self.tree.static, self.tree.sbase, p, s.R, s.P, b, self.tree.kmax, max(self.tree.n))
                x = T.plan_from_behavioral(b)
            out.append(x)
        return tuple(out)


# ---------------------------------------------------------------------------- kernels


@nb.njit(cache=True)
def _strategy(R, P, off, m, k, out, tot):
    """out[i, o] (o < m): the current strategy at a node from its regrets (regret matching, the
    arithmetic of :func:`~treeplex.backends.numba_regret._rm_run`), or its stored prediction P."""
    if len(P) > 0:
        for i in range(k):
            for o in range(m):
                out[i, o] = P[off + i * m + o]
        return
    for o in range(m):
        tot[o] = 0.0
    for i in range(k):
        for o in range(m):
            q = max(np.float64(R[off + i * m + o]), 0.0)
            out[i, o] = q
            tot[o] += q
    for o in range(m):
        if tot[o] > 0.0:
            tot[o] = 1.0 / tot[o]
    for i in range(k):
        for o in range(m):
            if tot[o] > 0.0:
                out[i, o] = out[i, o] * tot[o]
            else:
                out[i, o] = 1.0 / k


@nb.njit(cache=True)
def _terminal(t, own, T, Hown, Hin, rin, out, vin, card, dead):
    """out[h] = own player's counterfactual value at terminal t for each own hand h, against
    input reach ``rin`` (the other's reach, its range weight applied here): the fold's
    inclusion-exclusion and the showdown's sorted sweep of :mod:`.streets_operator`."""
    tkind, tval, tboard, boards = T[7], T[8], T[9], T[10]
    cards_in, w_in, _, _, iptr, iidx, istr = Hin
    cards_own, _, coef, same, optr, oidx, ostr = Hown
    n_in, n_own = len(w_in), len(coef)
    bd = tboard[t]
    for k in range(5):
        if boards[bd, k] >= 0:
            dead[boards[bd, k]] = True
    total = 0.0
    for i in range(n_in):
        x = 0.0 if (dead[cards_in[i, 0]] or dead[cards_in[i, 1]]) else w_in[i] * rin[i]
        vin[i] = x
        total += x
    vin[n_in] = 0.0
    if total == 0.0:
        for h in range(n_own):
            out[h] = 0.0
    elif tkind[t] == 0:
        card[:] = 0.0
        for i in range(n_in):
            card[cards_in[i, 0]] += vin[i]
            card[cards_in[i, 1]] += vin[i]
        val = tval[t] if own == 0 else -tval[t]
        for h in range(n_own):
            c1, c2 = cards_own[h, 0], cards_own[h, 1]
            if dead[c1] or dead[c2]:
                out[h] = 0.0
            else:
                out[h] = val * (coef[h] * (total - card[c1] - card[c2] + vin[same[h]]))
    else:
        for h in range(n_own):
            out[h] = 0.0
        i0, i1, o0, o1 = iptr[bd], iptr[bd + 1], optr[bd], optr[bd + 1]
        card[:] = 0.0
        run = 0.0
        j = i0
        for q in range(o0, o1):  # up: compatible input mass strictly weaker
            h = oidx[q]
            while j < i1 and istr[j] < ostr[q]:
                i = iidx[j]
                run += vin[i]
                card[cards_in[i, 0]] += vin[i]
                card[cards_in[i, 1]] += vin[i]
                j += 1
            out[h] = coef[h] * (run - card[cards_own[h, 0]] - card[cards_own[h, 1]])
        card[:] = 0.0
        run = 0.0
        j = i1 - 1
        for q in range(o1 - 1, o0 - 1, -1):  # down: minus the compatible mass strictly stronger
            h = oidx[q]
            while j >= i0 and istr[j] > ostr[q]:
                i = iidx[j]
                run += vin[i]
                card[cards_in[i, 0]] += vin[i]
                card[cards_in[i, 1]] += vin[i]
                j -= 1
            out[h] -= coef[h] * (run - card[cards_own[h, 0]] - card[cards_own[h, 1]])
        val = tval[t]
        for q in range(o0, o1):
            out[oidx[q]] = val * out[oidx[q]]
    for k in range(5):
        if boards[bd, k] >= 0:
            dead[boards[bd, k]] = False


@nb.njit(cache=True)
def _buffers(n0, n1, D, K):
    """One thread's stack: per depth and player the reach, the values, the per-action values
    and the strategy (orbit level); scratch for terminals and the per-infoset update."""
    nm = max(n0, n1)
    reach = (np.ones((D, n0)), np.ones((D, n1)))
    cfv = (np.zeros((D, n0)), np.zeros((D, n1)))
    act = (np.zeros((D, K, n0)), np.zeros((D, K, n1)))
    strat = (np.zeros((D, K, n0)), np.zeros((D, K, n1)))
    ovals = np.zeros((K, nm))
    tot = np.zeros(nm)
    vin = np.zeros(nm + 1)
    card = np.zeros(52)
    dead = np.zeros(52, dtype=np.bool_)
    small = np.zeros((3, K))
    ends = np.zeros(2, dtype=np.int32)  # start, end of the one infoset handed to the kernel
    return reach, cfv, act, strat, ovals, tot, vin, card, dead, small, ends


@nb.njit(cache=True)
def _enter(u, d, T, H, O, st, roots, sc, mode, upd0, upd1, cut, collect, fr, fv0, fv1, B, node, cur, slot):
    """Visit node u at depth d on the way down; returns True when u is done (a terminal, or
    a chance node whose values are read or recorded), False when the walk goes below it."""
    kind, cptr, actor, off, m, tab = T[0], T[1], T[3], T[4], T[5], T[6]
    first = T[11]
    reach, cfv, act, stratb, ovals, tot, vin, card, dead, small, ends = B
    node[d] = u
    cur[d] = 0
    s0, s1 = slot[d, 0], slot[d, 1]
    if kind[u] == TERMINAL:
        if not collect:
            t = u - T[12][0]
            if upd0:
                _terminal(t, 0, T, H[0], H[1], reach[1][s1], cfv[0][d], vin, card, dead)
            if upd1:
                _terminal(t, 1, T, H[1], H[0], reach[0][s0], cfv[1][d], vin, card, dead)
        return True
    if kind[u] == CHANCE:
        f = first[u]
        if collect:
            fr[0][f, :] = reach[0][s0]
            fr[1][f, :] = reach[1][s1]
            return True
        if cut and f >= 0:
            if upd0:
                cfv[0][d, :] = fv0[f]
            if upd1:
                cfv[1][d, :] = fv1[f]
            return True
        if upd0:
            cfv[0][d, :] = 0.0
        if upd1:
            cfv[1][d, :] = 0.0
        slot[d + 1, 0], slot[d + 1, 1] = s0, s1
        return False
    a = actor[u]
    k = cptr[u + 1] - cptr[u]
    mv, ov = m[u], off[u]
    R, S, P = st[a]
    strat = stratb[a][d]
    if mode != BR_AVERAGE:
        _strategy(R, P, ov, mv, k, strat, tot)
    if mode == UPDATE and not collect and (upd0 if a == 0 else upd1):  # the played plan into the strategy sum
        rep = O[1][a][tab[u]]
        ra = reach[a][slot[d, a]]
        rho, omega = sc[3], sc[4]
        for i in range(k):
            for o in range(mv):
                e = ov + i * mv + o
                S[e] = rho * np.float64(S[e]) + omega * (ra[rep[o]] * strat[i, o])
    _descend(u, 0, d, T, O, st, roots, mode, B, slot)
    return False


@nb.njit(cache=True)
def _descend(u, i, d, T, O, st, roots, mode, B, slot):
    """The slots below action i of decision node u at depth d: the actor's reach times its
    strategy (or, for the average's best response, read from the strategy sum) into slot
    d + 1; the other player's slot unchanged."""
    actor, off, m, tab = T[3], T[4], T[5], T[6]
    a = actor[u]
    mv, ov = m[u], off[u]
    orb = O[0][a][tab[u]]
    ra = B[0][a]
    dst, src = ra[d + 1], ra[slot[d, a]]
    n = ra.shape[1]
    if mode == BR_AVERAGE:
        S = st[a][1]
        inv = 1.0 / roots[a][0]
        for h in range(n):
            dst[h] = np.float64(S[ov + i * mv + orb[h]]) * inv
    else:
        strat = B[3][a][d]
        for h in range(n):
            dst[h] = src[h] * strat[i, orb[h]]
    slot[d + 1, a] = d + 1
    slot[d + 1, 1 - a] = slot[d, 1 - a]


@nb.njit(cache=True)
def _finish(u, d, T, O, st, sc, mode, upd0, upd1, B):
    """Decision node u at depth d after all its children: the actor's regret update and
    values (or best response); the other player's values are already summed."""
    cptr, actor, off, m, tab = T[1], T[3], T[4], T[5], T[6]
    reach, cfv, act, stratb, ovals, tot, vin, card, dead, small, ends = B
    a = actor[u]
    if not (upd0 if a == 0 else upd1):
        return
    k = cptr[u + 1] - cptr[u]
    mv, ov = m[u], off[u]
    orb = O[0][a][tab[u]]
    R, S, P = st[a]
    strat = stratb[a][d]
    acts = act[a][d]
    out = cfv[a][d]
    na = out.shape[0]
    ident = mv == na
    if not ident:  # per-hand values summed per orbit: the reduced game's infoset values
        ovals[:k, :mv] = 0.0
        for i in range(k):
            for h in range(na):
                ovals[i, orb[h]] += acts[i, h]
    vals = acts if ident else ovals
    if mode == UPDATE:
        pos, floor, general = sc[0], sc[1], sc[2]
        ends[1] = k
        tv, tb, tr = small[0], small[1], small[2]
        for o in range(mv):
            for i in range(k):
                e = ov + i * mv + o
                tv[i] = vals[i, o]
                tb[i] = strat[i, o]
                tr[i] = R[e]
            regret_match_infoset(0, ends[:1], ends[1:], ends[:1], tv, tb, tr, pos, floor, general)
            for i in range(k):
                e = ov + i * mv + o
                R[e] = tr[i]
                if len(P) > 0:
                    P[e] = tb[i]
        for h in range(na):
            out[h] = strat[0, orb[h]] * acts[0, h]
        for i in range(1, k):
            for h in range(na):
                out[h] += strat[i, orb[h]] * acts[i, h]
    else:  # best response: the first best action of each infoset
        for o in range(mv):
            best, bv = 0, vals[0, o]
            for i in range(1, k):
                if vals[i, o] > bv:
                    best, bv = i, vals[i, o]
            tot[o] = best
        for h in range(na):
            out[h] = acts[np.int64(tot[orb[h]]), h]


@nb.njit(cache=True)
def _walk(u0, T, H, O, st, roots, sc, mode, upd0, upd1, cut, collect, fr, fv0, fv1, B):
    """The walk below node u0 (depth 0, the players' reach in slot 0 of the stack), without
    recursion: ``node``, ``cur`` and ``slot`` hold each depth's node, next child and reach
    slots. Writes the updating players' values at u0 into the stack's depth-0 values; with
    ``collect``, only records the reach at the first chance nodes (into ``fr``)."""
    kind, cptr, child = T[0], T[1], T[2]
    cfv, act = B[1], B[2]
    D = B[0][0].shape[0]
    node = np.zeros(D, np.int64)
    cur = np.zeros(D, np.int64)
    slot = np.zeros((D, 2), np.int64)
    d = 0
    done = _enter(u0, 0, T, H, O, st, roots, sc, mode, upd0, upd1, cut, collect, fr, fv0, fv1, B, node, cur, slot)
    while True:
        if not done:  # go down to the next child of node[d]
            u = node[d]
            c = child[cptr[u] + cur[d]]
            done = _enter(c, d + 1, T, H, O, st, roots, sc, mode, upd0, upd1, cut, collect, fr, fv0, fv1, B,
                          node, cur, slot)
            d += 1
            continue
        if d == 0:
            return
        # node[d] is done: fold its values into its parent and move to the parent's next child
        d -= 1
        u = node[d]
        i = cur[d]
        if not collect:
            if kind[u] == CHANCE:
                if upd0:
                    cfv[0][d, :] += cfv[0][d + 1]
                if upd1:
                    cfv[1][d, :] += cfv[1][d + 1]
            else:
                a = T[3][u]
                for p in range(2):
                    if (upd0 if p == 0 else upd1):
                        if p == a:
                            act[p][d, i, :] = cfv[p][d + 1]
                        elif i == 0:
                            cfv[p][d, :] = cfv[p][d + 1]
                        else:
                            cfv[p][d, :] += cfv[p][d + 1]
        cur[d] = i + 1
        if cur[d] < cptr[u + 1] - cptr[u]:
            if kind[u] == DECISION:
                _descend(u, cur[d], d, T, O, st, roots, mode, B, slot)
            done = False
        else:
            if kind[u] == DECISION and not collect:
                _finish(u, d, T, O, st, sc, mode, upd0, upd1, B)
            done = True


@nb.njit(cache=True, nogil=True)
def trunk_reach(T, H, O, st, roots, sc, mode, upd0, upd1, nf, n0, n1, D, K):
    """Step 1 of a walk: the strategy sums' roots (mode UPDATE) and the reach vectors at the
    first chance nodes, (fr0, fr1)."""
    if mode == UPDATE:
        if upd0:
            roots[0][0] = sc[3] * roots[0][0] + sc[4]
        if upd1:
            roots[1][0] = sc[3] * roots[1][0] + sc[4]
    fr = (np.zeros((nf, n0)), np.zeros((nf, n1)))
    if nf > 0:
        _walk(0, T, H, O, st, roots, sc, mode, upd0, upd1, False, True, fr, fr[0], fr[1], _buffers(n0, n1, D, K))
    return fr


@nb.njit(cache=True, nogil=True)
def subtrees(lo, hi, items, fr0, fr1, T, H, O, st, roots, sc, mode, upd0, upd1, D, K):
    """Step 2 (one chunk per thread, without the GIL): the subtrees items[lo:hi] below the
    first chance nodes; returns this chunk's values summed per first chance node."""
    nf, n0, n1 = fr0.shape[0], fr0.shape[1], fr1.shape[1]
    fv0, fv1 = np.zeros((nf, n0)), np.zeros((nf, n1))
    B = _buffers(n0, n1, D, K)
    for it in range(lo, hi):
        f, u = items[it, 0], items[it, 1]
        B[0][0][0, :] = fr0[f]
        B[0][1][0, :] = fr1[f]
        _walk(u, T, H, O, st, roots, sc, mode, upd0, upd1, False, False, (fr0, fr1), fv0, fv1, B)
        if upd0:
            fv0[f] += B[1][0][0]
        if upd1:
            fv1[f] += B[1][1][0]
    return fv0, fv1


@nb.njit(cache=True, nogil=True)
def trunk(fv0, fv1, T, H, O, st, roots, sc, mode, upd0, upd1, D, K):
    """Step 3: the trunk's walk, reading the subtrees' values at the first chance nodes.
    Returns the root values (sum over hands) of player 0 and player 1, each in its own payoff."""
    B = _buffers(fv0.shape[1], fv1.shape[1], D, K)
    _walk(0, T, H, O, st, roots, sc, mode, upd0, upd1, True, False, (fv0, fv1), fv0, fv1, B)
    return B[1][0][0].sum(), B[1][1][0].sum()


@nb.njit(cache=True)
def _seq_average(T, sbase, p, S, x):
    """x[sequence of (v, orbit o, action i)] = S[off_v + i m_v + o] at player p's nodes."""
    cptr, actor, off, m = T[1], T[3], T[4], T[5]
    for v in range(len(actor)):
        if actor[v] == p:
            k = cptr[v + 1] - cptr[v]
            for i in range(k):
                for o in range(m[v]):
                    x[sbase[v] + o * k + i] = S[off[v] + i * m[v] + o]


@nb.njit(cache=True)
def _seq_current(T, sbase, p, R, P, b, K, n):
    """b[sequence] = the current local strategy at player p's nodes."""
    cptr, actor, off, m = T[1], T[3], T[4], T[5]
    out = np.zeros((K, n))
    tot = np.zeros(n)
    for v in range(len(actor)):
        if actor[v] == p:
            k = cptr[v + 1] - cptr[v]
            _strategy(R, P, off[v], m[v], k, out, tot)
            for i in range(k):
                for o in range(m[v]):
                    b[sbase[v] + o * k + i] = out[i, o]
