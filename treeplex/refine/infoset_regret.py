"""Infoset regret: the refinement measure of Kroer, Farina & Sandholm (2017), section 4.

For an infoset I of player i and a profile of behavioral strategies (b_0, b_1):

1. assume I is reached with probability one;
2. put its nodes h in the Bayes distribution mu(h) proportional to c(h) * pi_{-i}(h), the
   chance and opponent reach of h (player i's own reach is the same at every h, by perfect
   recall);
3. the regret is  max_{b'} E_mu[u_i(h; b', b_{-i})] - E_mu[u_i(h; b_i, b_{-i})],  where b'
   ranges over player i's strategies in the subtrees below I (best-responding throughout
   all of player i's infosets there). It is >= 0, in player i's payoff units (player 1's
   payoff is -u_0).

**Zero opponent reach (fallback).** When the opponent never plays into I, Bayes' rule is
undefined. We use the limit of the Bayes beliefs when the opponent trembles uniformly:
b_{-i}^eps = (1 - eps) b_{-i} + eps * uniform, eps -> 0 (a consistent assessment in the
sense of Kreps & Wilson, matching the trembling-hand idea behind EFPE). In that limit, mu
sits on the nodes of I whose path has the fewest zero-probability opponent actions, each
weighted by chance reach times the opponent's probabilities of its positive actions times
1/n_a for each zero-probability action. Play below I still follows b_{-i} (the trembles
vanish). When the opponent does reach I this is exactly Bayes' rule; an infoset that only
zero-probability chance outcomes lead to gets regret 0.

Strategies are given as realization plans; behavior at an infoset that a player's own plan
never reaches is uniform (:meth:`Treeplex.behavioral_from_plan`).

One evaluation is two O(#histories) numba passes plus, for each infoset on the fallback,
a pass over its subtree (Leduc 5: well under a millisecond when no fallback is needed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from ..errors import InputError
from ..model.problem import Problem
from ..core.tree import CHANCE, TERMINAL
from ..core.treeplex import Treeplex

BAYES, FALLBACK, UNREACHABLE = 0, 1, 2  # how each infoset's beliefs were formed


@dataclass
class InfosetRegrets:
    """Per-infoset regrets of both players (player i's payoff units)."""

    regret: tuple[np.ndarray, np.ndarray]  # float64[n_infosets] per player
    belief: tuple[np.ndarray, np.ndarray]  # int8: BAYES, FALLBACK (tremble limit) or UNREACHABLE
    keys: tuple[list, list]  # infoset keys per player

    @property
    def max(self) -> float:
        """Maximum regret over both players' infosets."""
        return float(max((r.max() for r in self.regret if len(r)), default=0.0))

    @property
    def argmax(self) -> tuple[int, object]:
        """(player, infoset key) of the largest regret."""
        best = max(range(2), key=lambda p: self.regret[p].max() if len(self.regret[p]) else -np.inf)
        return best, self.keys[best][int(np.argmax(self.regret[best]))]

    def as_list(self) -> list[dict]:
        """One dict per infoset: player, infoset key, regret, belief ('bayes'/'fallback'/'unreachable')."""
        names = ("bayes", "fallback", "unreachable")
        return [
            {"player": p, "infoset": str(k), "regret": float(r), "belief": names[int(b)]}
            for p in range(2)
            for k, r, b in zip(self.keys[p], self.regret[p], self.belief[p])
        ]


class InfosetRegret:
    """Evaluator of per-infoset regrets for one game; build once, call many times.

    >>> ir = InfosetRegret(problem)      # problem = compile_game(game): it has the tree
    >>> ir(x, y).max                      # realization plans of player 0 and 1
    """

    def __init__(self, problem: Problem):
        if problem.tree is None:
            raise InputError(f"infoset regrets need the game tree, which {problem.name} (a structured operator) "
                             "does not walk")
        self.problem = problem
        self.tree = problem.tree
        self._bounds: dict = {}  # player -> _compute_bound(player)
        self._per_player = []
        for pl, T in enumerate(problem.treeplexes):
            ptr, nodes = self.tree.infoset_nodes(pl, T.n_infosets)
            dptr, desc = _descendants(T)
            inv_n = np.zeros(T.n_seqs)
            inv_n[1:] = np.repeat(1.0 / (T.end - T.start), T.end - T.start)
            self._per_player.append((ptr, nodes, dptr, desc, inv_n))

    def __call__(self, x: np.ndarray, y: np.ndarray) -> InfosetRegrets:
        X, Y = self.problem.treeplexes
        b = (X.behavioral_from_plan(x), Y.behavioral_from_plan(y))
        regrets, beliefs = [], []
        t = self.tree
        for pl, T in enumerate((X, Y)):
            ptr, nodes, dptr, desc, _ = self._per_player[pl]
            inv_n_opp = self._per_player[1 - pl][4]
            reg = np.empty(T.n_infosets)
            bel = np.empty(T.n_infosets, dtype=np.int8)
            _infoset_regrets(
                t.kind, t.parent, t.size, t.edge_prob, t.edge_seq, t.seq[pl], t.payoff, pl,
                b[pl], b[1 - pl], inv_n_opp, T.start, T.end, T.parent, ptr, nodes, dptr, desc, reg, bel,
            )
            regrets.append(reg)
            beliefs.append(bel)
        return InfosetRegrets(tuple(regrets), tuple(beliefs), (X.infoset_keys, Y.infoset_keys))

    def max(self, x: np.ndarray, y: np.ndarray) -> float:
        """Maximum infoset regret of the profile over both players."""
        return self(x, y).max

    def bound(self) -> tuple[np.ndarray, np.ndarray]:
        """Per player and infoset, an upper bound on the regret any profile can cause there.

        At a node h, D(h) is the most that two plays of player i from h can differ in payoff
        when they share the opponent's and chance's moves until they part and everyone else
        then plays for the best (P) and the worst (M) outcome:
        D = max(max_a D(ha), max_{a' != a} P(ha') - M(ha)) at player i's nodes, max_a D(ha)
        at the opponent's, the chance average at chance nodes. Any infoset regret is an
        average over its nodes of such differences, so it is at most max_{h in I} D(h).
        The bound is exact when some pure profile attains it (see :meth:`worst_case`).
        """
        return tuple(self._bound(pl)[0] for pl in range(2))

    def worst_case(self, player: int, infoset: int) -> tuple[np.ndarray, np.ndarray]:
        """A pure profile (x, y) meant to attain :meth:`bound` at ``infoset`` of ``player``.

        Built from the bound's argmax node h*: both players play the path to h*; player i
        then plays the worst line M and the opponent the line that maximizes the difference
        (the best line P after the plays part). Where lines disagree at one infoset, the
        first one assigned wins; unassigned infosets take their first action. Evaluate it
        with this class to get a regret that is attained, hence a lower bound on the maximum.
        """
        _, arg, choice = self._bound(player)
        t = self.tree
        h = arg[infoset]
        pick: list[dict[int, int]] = [{}, {}]  # per player: infoset -> sequence

        def assign(n, s):
            p = t.kind[t.parent[n]]
            j = t.infoset[t.parent[n]]
            pick[p].setdefault(int(j), int(s))

        path = []
        n = h
        while t.parent[n] >= 0:
            path.append(n)
            n = t.parent[n]
        for n in reversed(path):
            if t.kind[t.parent[n]] in (0, 1):
                assign(n, t.edge_seq[n])
        # follow the lines: mode 0 = together (D), 1 = best (P), 2 = worst (M)
        stack = [(h, 0)]
        while stack:
            n, mode = stack.pop()
            k = t.kind[n]
            if k == TERMINAL:
                continue
            kids = t.children[t.child_ptr[n] : t.child_ptr[n + 1]]
            if k == CHANCE:
                stack.extend((c, mode) for c in kids)
                continue
            if mode == 0 and k == player and choice[0][n][0] != choice[0][n][1]:
                a_best, a_worst = choice[0][n]
                assign(kids[a_worst], t.edge_seq[kids[a_worst]])  # player i plays the worst line
                stack.append((kids[a_best], 1))
                stack.append((kids[a_worst], 2))
                continue
            a = choice[mode][n] if mode else choice[0][n][0]
            if mode == 1 and k == player:
                stack.append((kids[a], 1))  # the best response finds it; no need to assign
                continue
            assign(kids[a], t.edge_seq[kids[a]])
            stack.append((kids[a], mode))
        plans = []
        for pl, T in enumerate(self.problem.treeplexes):
            b = np.zeros(T.n_seqs)
            for j in range(T.n_infosets):
                b[pick[pl].get(j, int(T.start[j]))] = 1.0
            plans.append(T.plan_from_behavioral(b))
        return plans[0], plans[1]

    def _bound(self, player: int):
        """(bound per infoset, argmax node per infoset, choices) for ``player``; choices are
        (D: node -> (best action, worst action) indices, P: node -> index, M: node -> index)."""
        if player not in self._bounds:
            self._bounds[player] = self._compute_bound(player)
        return self._bounds[player]

    def _compute_bound(self, player: int):
        t = self.tree
        sign = 1.0 if player == 0 else -1.0
        P = np.zeros(t.n_nodes)
        M = np.zeros(t.n_nodes)
        D = np.zeros(t.n_nodes)
        cD: dict[int, tuple[int, int]] = {}
        cP: dict[int, int] = {}
        cM: dict[int, int] = {}
        for n in range(t.n_nodes - 1, -1, -1):
            k = t.kind[n]
            if k == TERMINAL:
                P[n] = M[n] = sign * t.payoff[n]
                continue
            c = t.children[t.child_ptr[n] : t.child_ptr[n + 1]]
            if k == CHANCE:
                p = t.edge_prob[c]
                P[n], M[n], D[n] = p @ P[c], p @ M[c], p @ D[c]
                continue
            cP[n], cM[n] = int(np.argmax(P[c])), int(np.argmin(M[c]))
            P[n], M[n] = P[c].max(), M[c].min()
            a = int(np.argmax(D[c]))
            D[n], cD[n] = D[c[a]], (a, a)
            if k == player:
                diff = P[c][:, None] - M[c][None, :]
                np.fill_diagonal(diff, -np.inf)
                ab, aw = np.unravel_index(int(np.argmax(diff)), diff.shape)
                if diff[ab, aw] > D[n]:
                    D[n], cD[n] = diff[ab, aw], (int(ab), int(aw))
        T = self.problem.treeplexes[player]
        ptr, nodes, *_ = self._per_player[player]
        reach = np.ones(t.n_nodes)  # chance reach: nodes chance never reaches do not count
        for n in range(1, t.n_nodes):
            reach[n] = reach[t.parent[n]] * t.edge_prob[n]
        bound = np.zeros(T.n_infosets)
        arg = np.full(T.n_infosets, -1)
        for j in range(T.n_infosets):
            hs = nodes[ptr[j] : ptr[j + 1]]
            hs = hs[reach[hs] > 0]
            if len(hs):
                i = int(np.argmax(D[hs]))
                bound[j], arg[j] = D[hs[i]], hs[i]
        return bound, arg, (cD, cP, cM)


def _descendants(T: Treeplex) -> tuple[np.ndarray, np.ndarray]:
    """CSR (ptr, infosets): the infosets strictly below each infoset, in increasing order."""
    lists: list[list[int]] = [[] for _ in range(T.n_infosets)]
    for k in range(T.n_infosets):
        a = T.seq_infoset[T.parent[k]]
        while a >= 0:
            lists[a].append(k)
            a = T.seq_infoset[T.parent[a]]
    ptr = np.zeros(T.n_infosets + 1, dtype=np.int32)
    ptr[1:] = np.cumsum([len(li) for li in lists])
    flat = np.array([k for li in lists for k in li], dtype=np.int32)
    return ptr, flat


@nb.njit(cache=True)
def _infoset_regrets(kind, parent, size, edge_prob, edge_seq, seq, payoff, player, b_own, b_opp, inv_n_opp,
                     start, end, tparent, ptr, nodes, dptr, desc, out, belief):
    n_nodes = len(kind)
    n_seqs = len(b_own)
    sign = 1.0 if player == 0 else -1.0
    # top-down: o = zero-probability opponent actions on the path, t = tremble-limit weight
    o = np.zeros(n_nodes, dtype=np.int32)
    t = np.ones(n_nodes)
    for n in range(1, n_nodes):
        p = parent[n]
        kp = kind[p]
        o[n] = o[p]
        if kp == CHANCE:
            t[n] = t[p] * edge_prob[n]
        elif kp == player:
            t[n] = t[p]
        else:
            q = b_opp[edge_seq[n]]
            if q > 0.0:
                t[n] = t[p] * q
            else:
                t[n] = t[p] * inv_n_opp[edge_seq[n]]
                o[n] += 1
    # global pass with the actual (Bayes) reach: g[s] = sum_z reach(z) u_i(z) over terminals after s
    vb = np.zeros(n_seqs)
    for n in range(n_nodes):
        if kind[n] == TERMINAL and o[n] == 0:
            vb[seq[n]] += t[n] * sign * payoff[n]
    vc = vb.copy()
    vbr = np.empty(len(start))
    vcur = np.empty(len(start))
    for j in range(len(start) - 1, -1, -1):
        best = -np.inf
        cur = 0.0
        for s in range(start[j], end[j]):
            best = max(best, vb[s])
            cur += b_own[s] * vc[s]
        vbr[j] = best
        vcur[j] = cur
        vb[tparent[j]] += best
        vc[tparent[j]] += cur
    # per infoset: Bayes when reached, else the tremble-limit fallback
    gb = np.zeros(n_seqs)  # scratch for the fallback: best-response values
    gc = np.zeros(n_seqs)  # and values of the current strategy
    rho = np.zeros(n_nodes)
    for j in range(len(start)):
        w = 0.0
        m = 1 << 30
        for k in range(ptr[j], ptr[j + 1]):
            h = nodes[k]
            if o[h] == 0:
                w += t[h]
            if t[h] > 0.0 and o[h] < m:
                m = o[h]
        if w > 0.0:
            out[j] = (vbr[j] - vcur[j]) / w
            belief[j] = 0
        elif m == 1 << 30:
            out[j] = 0.0
            belief[j] = 2
        else:
            belief[j] = 1
            out[j] = _fallback(j, m, kind, parent, size, edge_prob, edge_seq, seq, payoff, player, sign, b_own,
                               b_opp, start, end, tparent, ptr, nodes, dptr, desc, o, t, rho, gb, gc)


@nb.njit(cache=True)
def _fallback(j, m, kind, parent, size, edge_prob, edge_seq, seq, payoff, player, sign, b_own, b_opp,
              start, end, tparent, ptr, nodes, dptr, desc, o, t, rho, gb, gc):
    """Regret at infoset j with beliefs on its nodes of minimal order m, weighted by t."""
    w = 0.0
    for k in range(ptr[j], ptr[j + 1]):
        h = nodes[k]
        if o[h] != m or t[h] == 0.0:
            continue
        w += t[h]
        rho[h] = t[h]
        for c in range(h + 1, h + size[h]):
            p = parent[c]
            kp = kind[p]
            if kp == CHANCE:
                rho[c] = rho[p] * edge_prob[c]
            elif kp == player:
                rho[c] = rho[p]
            else:
                rho[c] = rho[p] * b_opp[edge_seq[c]]
            if kind[c] == TERMINAL:
                gb[seq[c]] += rho[c] * sign * payoff[c]
                gc[seq[c]] += rho[c] * sign * payoff[c]
    # bottom-up over the sub-treeplex below j (descendants are numbered after j, in order)
    for d in range(dptr[j + 1] - 1, dptr[j] - 1, -1):
        kk = desc[d]
        best, cur = _best_and_played(start[kk], end[kk], gb, gc, b_own)
        gb[tparent[kk]] += best
        gc[tparent[kk]] += cur
    best, cur = _best_and_played(start[j], end[j], gb, gc, b_own)
    return (best - cur) / w


@nb.njit(inline="always")
def _best_and_played(a, e, gb, gc, b_own):
    """(max_s gb[s], sum_s b_own[s] gc[s]) over sequences [a, e), which are then cleared."""
    best = -np.inf
    cur = 0.0
    for s in range(a, e):
        best = max(best, gb[s])
        cur += b_own[s] * gc[s]
        gb[s] = 0.0
        gc[s] = 0.0
    return best, cur
