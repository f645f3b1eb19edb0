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

from ..problem import Problem
from ..treeplex import Treeplex
from .tree import CHANCE, TERMINAL, GameTree

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

    >>> ir = InfosetRegret(game, problem)      # problem = compile_game(game)
    >>> ir(x, y).max                            # realization plans of player 0 and 1
    """

    def __init__(self, game, problem: Problem):
        self.problem = problem
        self.tree = GameTree.from_game(game, problem)
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
        best = -np.inf
        cur = 0.0
        for s in range(start[kk], end[kk]):
            best = max(best, gb[s])
            cur += b_own[s] * gc[s]
            gb[s] = 0.0
            gc[s] = 0.0
        gb[tparent[kk]] += best
        gc[tparent[kk]] += cur
    best = -np.inf
    cur = 0.0
    for s in range(start[j], end[j]):
        best = max(best, gb[s])
        cur += b_own[s] * gc[s]
        gb[s] = 0.0
        gc[s] = 0.0
    return (best - cur) / w
