"""Depth-limited solving on ``nlfh52``'s public tree x hands (Brown, Sandholm & Amos 2018, §4, §6.1).

**The subgame.** Rooted at a preflop public node r, it is the preflop round below r; its
*leaves* are the ends of the round that deal the flop to a flop betting round. At a leaf
the ``chooser`` (the opponent of the ``searcher``) picks, per leaf infoset (leaf, its hand
orbit), one of k continuation strategies sigma^j for the flop round, and the game ends with

    v_j(l, h0, h1) = E[player 0's chips | (h0, h1) at leaf l; searcher: blueprint, chooser: sigma^j]

(§4: the searcher is held to its blueprint sigma* beyond the depth limit, the opponent adapts;
Proposition 1). Preflop folds and called all-ins are terminals with their exact values.

**Leaf values, per flop class, dense.** For each leaf l and flop class c (representative
board F_c, chance weight w_c as the engine deals it) the flop round below is walked once with
both players' own reaches pi_p(z | l, h) of every hand (the H x H products never go through
a whole-game table):

    val_c = Fold_c o (P0_f diag(w_c u_f) P1_f^T) + Sign_c o (P0_s diag(w_c stake_s) P1_s^T)

(P_p: hands x terminals reach matrices; Fold_c: the compatible pairs the flop leaves; Sign_c:
their showdown sign on F_c). Summed over classes and reduced to the preflop hand orbits R
(169 on 52 cards), ``values[j, l] = R^T (sum_c val_c) R / Z`` (Z compatible pairs, each
dealt with probability 1/Z) is the only thing stored: k x leaves x O x O float64.
The orbit sums are exact because the flop set, the pair deal and every strategy used are
invariant under the suit symmetries (a class's members are images of its representative).

**The subgame as a sequence-form game.** Infosets (preflop node, hand orbit) of both players
below r, plus the chooser's leaf infosets (leaf, orbit) with k actions; A holds, per end and
orbit pair, ``rho0 rho1 x`` the block above (rho: the blueprint's reach to r of each orbit).
Any solver (the LP, the CFR family) solves it: :func:`solve_subgame52`.

**Back in the real game** (:func:`compose`): the searcher plays the subgame's preflop strategy
and its blueprint after the flop; the chooser plays the subgame's preflop strategy and, below
each leaf, the mixture of its continuations its leaf choice says (mixed as realization plans).
Everything outside the subtree of r is the blueprint. The exploitability is exact: best
responses in the full nlfh52 game (:func:`treeplex.model.metrics.evaluate`).

**Sets** (§4): *bias* (:data:`.sets.BIAS`, the chooser's flop probabilities multiplied per
action class and renormalized) and *self-generative* (solve the subgame at the game's root
with the current set, add the chooser's best response at every infoset to (subgame preflop,
blueprint flop), computed in the real game; weakened: when the whole new strategy beats the
chooser's blueprint against the searcher's blueprint, its leaf values are lowered by the
difference per pair, in the chooser's terms).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from ..core.memory import limit_bytes, show
from ..core.treeplex import Treeplex
from ..errors import InputError
from ..model.metrics import Evaluation, evaluate
from ..model.problem import Problem, SparsePayoff
from ..poker.cards import HAND_CARDS, hand_name
from ..poker.isomorphism import hand_orbits
from ..poker.public_tree import CHANCE, DECISION, TERMINAL
from .sets import BIAS, action_class, best_response_everywhere, br_values

FOLD, SHOWDOWN = 0, 1  # tree.kinds


# ------------------------------------------------------------------ the game, per hand


class View52:
    """Per-hand arrays of an :class:`~treeplex.poker.nlfh52.NLFH52` game (its full layout:
    sequence ``bases[p][v] + h * k_v + a`` for hand h at p's node v), the preflop round's
    ends and the maps to the solver's (orbit) layout."""

    def __init__(self, game):
        self.game = g = game
        self.tree = t = g.tree
        g.problem().A.keep_scratch(False)  # its products are occasional (best responses, values)
        self.P = len(g.preflop.actor)
        hands = g.hands[0]
        self.H = H = len(hands)
        hc = HAND_CARDS[hands]
        self.compat = np.ones((H, H), dtype=bool)
        for i in (0, 1):
            for j in (0, 1):
                self.compat &= hc[:, None, i] != hc[None, :, j]
        self.Z = int(self.compat.sum())
        self.orbit = hand_orbits(hands, list(g.symmetries))
        self.O = int(self.orbit.max()) + 1
        self.R = np.zeros((H, self.O))
        self.R[np.arange(H), self.orbit] = 1.0
        self.first = np.unique(self.orbit, return_index=True)[1]  # a member hand of each orbit
        ptr, idx, st = g._river_orders()[0]
        self.strength = np.full((len(t.boards), H), -1, np.int64)  # -1: the board blocks the hand
        for b in range(1, len(t.boards)):
            self.strength[b, idx[ptr[b]:ptr[b + 1]]] = st[ptr[b]:ptr[b + 1]]
        self.bases = [np.asarray(g.bases[p], np.int64) for p in (0, 1)]
        self.ends = self._ends()
        self.lines = [e for e in self.ends if e["line"]]

    def _ends(self) -> list[dict]:
        """The preflop round's ends in tree order: (preflop node ``v``, action ``a``), ``kind``
        (the child's: TERMINAL or CHANCE), ``id``, ``line`` (a chance node whose children are
        flop rounds), ``last`` = each player's last (node, action) before it."""
        t, out = self.tree, []
        for v in range(self.P):
            p = int(t.actor[v])
            for a in range(int(t.n_actions[v])):
                s = t.child_ptr[v] + a
                kind, cid = int(t.child_kind[s]), int(t.child_id[s])
                if kind == DECISION:
                    continue
                last = [None, None]
                last[p] = (v, a)
                last[1 - p] = (int(t.last_node[v, 1 - p]), int(t.last_act[v, 1 - p]))
                line = kind == CHANCE and t.chance_children[cid][0][0] == DECISION
                out.append({"v": v, "a": a, "kind": kind, "id": cid, "line": line, "last": tuple(last),
                            "history": _end_history(t, v, a)})
        return out

    # ------------------------------------------------------------- orbit blocks

    @cached_property
    def card_hands(self) -> np.ndarray:
        """int[cards, n - 1]: per card of the deck, the hands that hold it."""
        hc = HAND_CARDS[self.game.hands[0]]
        return np.stack([np.flatnonzero((hc == c).any(axis=1)) for c in np.unique(hc)])

    @cached_property
    def _card_flat(self) -> np.ndarray:
        """int[cards, n - 1, n - 1]: the flat orbit-block index o0 O + o1 of each pair of hands
        sharing a card (rows: player 0's hand)."""
        o = self.orbit[self.card_hands]
        return o[:, :, None] * self.O + o[:, None, :]

    def board_groups(self, b: int) -> dict:
        """Board b's hands, grouped for :meth:`pair_blocks` (kept per board): ``alive`` (bool[H]:
        the board leaves the hand); per kind the live hands ``perm`` sorted by group and their
        groups' ``starts`` (fold: the hand orbits; showdown: (orbit, strength) classes, orbit
        first), the groups' ``ostarts`` per orbit and those orbits ``present``, and at showdown
        the groups' pairwise strength ``sign``; ``off`` the cards off the board and ``sign``
        of the pairs of hands sharing each (int8, for the showdown)."""
        cache = self.__dict__.setdefault("_groups", {})
        if b in cache:
            return cache[b]
        s = self.strength[b]
        alive = s >= 0
        live = np.flatnonzero(alive)
        out = {"alive": alive}
        for kind, key in ((FOLD, self.orbit[live]), (SHOWDOWN, self.orbit[live] * (int(s.max()) + 1) + s[live])):
            order = np.argsort(key, kind="stable")
            perm, key = live[order], key[order]
            starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
            og, sg = self.orbit[perm[starts]], s[perm[starts]]
            ostarts = np.flatnonzero(np.r_[True, og[1:] != og[:-1]])
            out[kind] = {"perm": perm, "starts": starts, "ostarts": ostarts, "present": og[ostarts],
                         "sign": np.sign(sg[:, None] - sg[None, :]).astype(np.int8) if kind == SHOWDOWN else None}
        off = np.flatnonzero(alive[self.card_hands].any(axis=1))
        sc = s[self.card_hands[off]]
        out["off"] = off
        out["sign"] = np.sign(sc[:, :, None] - sc[:, None, :]).astype(np.int8).ravel()
        cache[b] = out
        return out

    def pair_blocks(self, b: int, kind: int, r0: np.ndarray, r1: np.ndarray, w: np.ndarray,
                    out: np.ndarray) -> None:
        """Add sum_z w_z sum over compatible pairs (h0, h1) both alive on board b of
        r0[z, h0] r1[z, h1] f(h0, h1), summed per orbit block (o0, o1), into ``out`` [O, O];
        f = 1 (``kind`` FOLD) or the showdown sign on b (SHOWDOWN). r0, r1: [T, H] reaches.

        Inclusion-exclusion on the shared cards, as the fused engine's terminal sweeps
        (:mod:`treeplex.poker.fused`) block cards, but reduced to orbit blocks first:
        [h0, h1 disjoint] = 1 - sum_c [c in h0][c in h1] + [h0 = h1], so the block sum is
        (over all pairs: one product groups x terminals x groups, f constant on a pair of
        groups) - (per card c, one product of the n - 1 hands holding c) + (the diagonal, fold
        only: f(h, h) = 0 at showdown). O((G^2 + n^3) T) per board instead of O(H^2 T)."""
        g = self.board_groups(b)
        r0 = r0 * g["alive"]
        r1 = r1 * g["alive"]
        r0w = r0 * w[:, None]
        grp = g[kind]
        a0 = np.add.reduceat(r0w[:, grp["perm"]], grp["starts"], axis=1)
        a1 = np.add.reduceat(r1[:, grp["perm"]], grp["starts"], axis=1)
        whole = a0.T @ a1
        if kind == SHOWDOWN:
            whole *= grp["sign"]
            whole = np.add.reduceat(np.add.reduceat(whole, grp["ostarts"], axis=0), grp["ostarts"], axis=1)
        out[np.ix_(grp["present"], grp["present"])] += whole
        n2 = self.O * self.O
        flat = out.reshape(n2)
        ch = self.card_hands[g["off"]]
        shared = np.matmul(r0w.T[ch], r1.T[ch].transpose(0, 2, 1)).ravel()
        if kind == SHOWDOWN:
            shared *= g["sign"]
        flat -= np.bincount(self._card_flat[g["off"]].ravel(), shared, minlength=n2)
        if kind == FOLD:
            flat += np.bincount(self.orbit * (self.O + 1), (r0w * r1).sum(axis=0), minlength=n2)

    @cached_property
    def flop_blocks(self) -> tuple[np.ndarray, np.ndarray]:
        """[O, O] x 2: over the dealt flop classes c with their chance w_c (the same below every
        end of the preflop round), R^T (sum_c w_c Fold_c) R / Z and R^T (sum_c w_c Sign_c) R / Z
        (Fold_c: the compatible pairs flop c leaves, 0/1; Sign_c: their showdown sign for
        player 0): a pair block's chance to see a flop, and its showdown equity per chip at stake."""
        one = np.ones((1, self.H))
        fold, sign = np.zeros((self.O, self.O)), np.zeros((self.O, self.O))
        for b in range(1, len(self.tree.boards)):
            w = self.class_chance[b - 1:b]
            self.pair_blocks(b, FOLD, one, one, w, fold)
            self.pair_blocks(b, SHOWDOWN, one, one, w, sign)
        return fold / self.Z, sign / self.Z

    @cached_property
    def pair_block(self) -> np.ndarray:
        """[O, O] each orbit block's chance to be dealt: R^T compat R / Z."""
        return self.reduce_pairs(self.compat.astype(np.float64))

    @cached_property
    def class_chance(self) -> np.ndarray:
        """The chance weight of each flop class (board 1 + c), as the tree's terminals carry it."""
        return np.asarray(self.game.class_chance, np.float64)

    def end_block(self, end: dict) -> np.ndarray:
        """[O, O] player 0's chips times chance of a preflop fold or a called all-in (a
        strategy-free end), summed over orbit blocks: payoff x (the compatible pairs, or those a
        flop leaves where a fold is dealt over a flop subset), or stake x the showdown equity."""
        t = self.tree
        if end["kind"] == TERMINAL:
            tid = end["id"]
            return float(t.payoff0[tid] * t.chance[tid]) * self.pair_block
        tids = [tid for _, tid in t.chance_children[end["id"]]]
        boards = t.term_board[tids]
        if not (np.allclose(t.chance[tids], self.class_chance[boards - 1], rtol=1e-12, atol=0)
                and len(set(t.kinds[tids].tolist())) == 1 and len(set(t.payoff0[tids].tolist())) == 1
                and len(set(t.stake[tids].tolist())) == 1):
            raise ValueError(f"preflop end {end['history']!r}: its flop terminals are not one payoff dealt over the "
                             "classes")
        fold, sign = self.flop_blocks
        tid = tids[0]
        return float(t.payoff0[tid]) * fold if t.kinds[tid] == FOLD else float(t.stake[tid]) * sign

    def terminal_reaches(self, root: int, b: list[np.ndarray]) -> dict[int, tuple]:
        """The flop round at decision node ``root`` (one class of one line) walked once with both
        players' own reaches per hand under full-layout behaviorals ``b``: per terminal kind,
        (r0 [T, H], r1 [T, H], w [T]) with w = chance x (payoff0 at a fold, stake at a showdown)."""
        t = self.tree
        cols = {FOLD: ([], [], []), SHOWDOWN: ([], [], [])}
        stack = [(root, np.ones(self.H), np.ones(self.H))]
        while stack:
            v, r0, r1 = stack.pop()
            p, k = int(t.actor[v]), int(t.n_actions[v])
            base = self.bases[p][v]
            probs = b[p][base:base + self.H * k].reshape(self.H, k)
            for a in range(k):
                s = t.child_ptr[v] + a
                n0, n1 = (r0 * probs[:, a], r1) if p == 0 else (r0, r1 * probs[:, a])
                cid = int(t.child_id[s])
                if t.child_kind[s] == DECISION:
                    stack.append((cid, n0, n1))
                    continue
                kz = int(t.kinds[cid])
                cols[kz][0].append(n0)
                cols[kz][1].append(n1)
                cols[kz][2].append(t.chance[cid] * (t.payoff0[cid] if kz == FOLD else t.stake[cid]))
        return {kz: (np.array(r0s), np.array(r1s), np.array(ws)) for kz, (r0s, r1s, ws) in cols.items() if ws}

    def line_block(self, end: dict, b: list[np.ndarray]) -> np.ndarray:
        """[O, O] R^T (sum over flop classes c of val_c) R / Z below line ``end`` (module
        docstring), with both players' full-layout behavioral strategies ``b`` in the flop round:
        per class one walk (:meth:`terminal_reaches`) and :meth:`pair_blocks` per terminal kind."""
        t = self.tree
        out = np.zeros((self.O, self.O))
        for _, root in t.chance_children[end["id"]]:
            board = int(t.board[root])
            for kz, (r0, r1, w) in self.terminal_reaches(root, b).items():
                self.pair_blocks(board, kz, r0, r1, w, out)
        return out / self.Z

    def line_blocks(self, b: list[np.ndarray]) -> np.ndarray:
        """[lines, O, O] :meth:`line_block` of every line."""
        return np.stack([self.line_block(e, b) for e in self.lines]) if self.lines else \
            np.zeros((0, self.O, self.O))

    def reduce_pairs(self, m: np.ndarray) -> np.ndarray:
        """[O, O] R^T m R / Z: a pair matrix summed over orbit blocks, times each pair's 1/Z."""
        return (self.R.T @ m @ self.R) / self.Z

    @property
    def leaf_mass(self) -> np.ndarray:
        """[O, O] the chance of each orbit block at a leaf (pairs times the flops they leave)."""
        return self.flop_blocks[0]

    # ------------------------------------------------------------- layouts
    # Plans and behaviorals convert on the solver's (orbit) treeplexes and are expanded to the
    # full layout by the reduction's gather: an orbit-constant behavioral's plan and a plan's
    # behavioral are the same numbers on either layout (each member hand's chain of products
    # and each infoset's mass are its orbit's), and neither the full-layout treeplexes nor an
    # index array per full-layout sequence is ever built (about 30 B per full-layout sequence).

    @property
    def treeplexes(self) -> tuple[Treeplex, Treeplex]:
        """The solver's treeplexes (the orbit layout with a suit reduction)."""
        return self.game.problem().treeplexes

    def full(self, p: int, vec: np.ndarray) -> np.ndarray:
        """A solver-layout vector (plan or behavioral) on every hand: each hand its orbit's entry."""
        r = self.game.reduction
        return vec if r is None else r.expand(p, vec)

    def reduced(self, p: int, vec: np.ndarray) -> np.ndarray:
        """The solver-layout vector of an orbit-constant full-layout one (checked)."""
        r = self.game.reduction
        if r is None:
            return vec
        out = r.pick(p, vec)
        if not np.allclose(r.expand(p, out), vec, atol=1e-12):
            raise ValueError("a strategy that is not constant on the suit-isomorphism orbits")
        return out

    def full_behavioral(self, p: int, plan: np.ndarray) -> np.ndarray:
        """Full-layout behavioral strategy of a solver-layout plan."""
        return self.full(p, self.treeplexes[p].behavioral_from_plan(plan))

    def plan(self, p: int, b: np.ndarray) -> np.ndarray:
        """Solver-layout plan of a full-layout (orbit-constant) behavioral strategy."""
        return self.treeplexes[p].plan_from_behavioral(self.reduced(p, b))

    def solver_seqs(self, p: int, v: int) -> tuple[int, int]:
        """(first sequence, count) of p's node v in the solver layout."""
        r, k = self.game.reduction, int(self.tree.n_actions[v])
        if r is None:
            return int(self.bases[p][v]), self.H * k
        return int(r.rbase[p][v]), r.width(p, v) * k

    @cached_property
    def flop_seq(self) -> tuple[np.ndarray, np.ndarray]:
        """Per player, bool[solver-layout sequences]: the sequence is in the flop round."""
        t, out = self.tree, []
        for p in (0, 1):
            m = np.zeros(self.treeplexes[p].n_seqs, dtype=bool)
            for v in t.nodes_of(p):
                if t.board[v] > 0:
                    first, n = self.solver_seqs(p, v)
                    m[first:first + n] = True
            out.append(m)
        return tuple(out)

    @property
    def line_of_node(self) -> np.ndarray:
        """int[decision nodes]: the chance node (leaf) a flop node is below; -1 preflop."""
        return self.tree.line_of_node

    def pseudo_plan(self, p: int, b: np.ndarray) -> np.ndarray:
        """Full-layout realization weights of full-layout behavioral ``b`` with every preflop
        action counted as 1: the reach of each flop sequence from the leaf above it."""
        pseudo = np.where(self.flop_seq[p], self.reduced(p, b), 1.0)
        return self.full(p, self.treeplexes[p].plan_from_behavioral(pseudo))

    def own_reach(self, p: int, b: np.ndarray, u: int, a: int) -> np.ndarray:
        """[H] each hand's own reach, under p's full-layout behavioral ``b``, to sequence
        (node ``u``, action ``a``) of p and through it (u < 0: the empty sequence, 1): the
        product of p's probabilities on the way."""
        t, out = self.tree, np.ones(self.H)
        while u >= 0:
            k = int(t.n_actions[u])
            out *= b[self.bases[p][u] + np.arange(self.H) * k + a]
            u, a = int(t.last_node[u, p]), int(t.last_act[u, p])
        return out

    def line_reach(self, p: int, b: np.ndarray, lines: list[int]) -> np.ndarray:
        """[lines, H] p's own reach into each of the chance nodes ``lines`` (ids of ``self.lines``)."""
        last = {e["id"]: e["last"][p] for e in self.lines}
        return np.stack([self.own_reach(p, b, *last[l]) for l in lines])

    def reach_to(self, node: int, b: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Per player, [O]: each orbit's own reach to ``node`` under full-layout behaviorals ``b``."""
        t = self.tree
        return tuple(self.own_reach(p, b[p], int(t.last_node[node, p]), int(t.last_act[node, p]))[self.first]
                     for p in (0, 1))


def _end_history(t, v: int, a: int) -> str:
    h = t.history[v]
    label = t.actions[v][a]
    return f"{h},{label}" if h else label


# ------------------------------------------------------------------ leaf tables


PIPELINE_BYTES_PER_SEQ = 75  # measured: 72 B per full-layout sequence at the response's peak (docs/benchmarks.md)
PIPELINE_FIXED_BYTES = 2**30


def check_pipeline_memory(game, max_memory: str | None = None) -> int:
    """Refuse (InputError), before its arrays are made, a game whose depth-limited pipeline
    would not fit: about :data:`PIPELINE_BYTES_PER_SEQ` per full-layout sequence (the game and
    the game with the off-tree bet held at once, the flop re-solve's peak; the slope measured
    between 8 and 16 flop classes at 50 BB) plus 1 GB; the leaf tables are checked apart
    (:func:`check_table_memory`). The game's sequence form, which the pipeline uses for
    products and best responses only, is then not checked as a solve's
    (``NLFH52.products_checked``). Returns the estimate."""
    need = PIPELINE_BYTES_PER_SEQ * sum(game.sizes()["sequences_full_layout"]) + PIPELINE_FIXED_BYTES
    limit, name = limit_bytes(max_memory)
    if limit is not None and need > limit:
        raise InputError(f"{game.name}: depth-limited solving needs about {show(need)} ({PIPELINE_BYTES_PER_SEQ} B "
                         f"per full-layout sequence and 1 GB), above {name} ({show(limit)})")
    game.products_checked = True
    return need


def table_bytes(view: View52, k: int, leaves: int | None = None) -> int:
    """Bytes of a leaf table (k x leaves x O x O float64) and the work arrays of one class's
    walk (:meth:`View52.pair_blocks`: 6 [T, H] reaches and 2 per-card [cards, T, n - 1] gathers
    in float64, T at most twice the flop nodes of a class, plus 1)."""
    leaves = len(view.lines) if leaves is None else leaves
    t = view.tree
    T = 2 * (t.n_nodes - view.P) // max(1, len(t.boards) - 1) + 1  # a bound: all lines' flop nodes of a class
    return 8 * (k * leaves * view.O ** 2 + 6 * T * view.H + 2 * T * view.card_hands.size + 2 * view.O ** 2)

def check_table_memory(view: View52, k: int, max_memory: str | None = None) -> int:
    """Refuse (InputError) a leaf table that would not fit, before anything is allocated."""
    need = table_bytes(view, k)
    limit, name = limit_bytes(max_memory)
    if limit is not None and need > limit:
        raise InputError(f"{view.game.name}: the leaf table of k={k} values x {len(view.lines)} leaves x "
                         f"{view.O} x {view.O} hand orbits needs about {show(need)}, above {name} ({show(limit)})")
    return need


@dataclass
class LeafTable52:
    """``values[j, l]`` [O, O]: the block sums of v_j at leaf ``view.lines[l]`` (module
    docstring), when the ``chooser`` plays ``continuations[j]`` (full-layout behavioral) in
    the flop round and the searcher its blueprint; ``names[j]``; ``terminals[e]`` the blocks of
    the strategy-free ends (by index in ``view.ends``); ``shifts[j]`` what the weakening took
    off continuation j's values (player 0's chips per pair reaching a leaf)."""

    view: View52
    chooser: int
    values: np.ndarray
    names: list[str]
    continuations: list[np.ndarray]
    terminals: dict[int, np.ndarray] = field(default_factory=dict)
    seconds: float = 0.0
    shifts: list[float] = field(default_factory=list)

    def unweakened(self) -> "LeafTable52":
        """The table with the weakening undone: the continuations' true values."""
        add = np.array(self.shifts + [0.0] * (self.k - len(self.shifts)))
        return replace(self, values=self.values + add[:, None, None, None] * self.view.leaf_mass[None, None])

    @property
    def k(self) -> int:
        return len(self.names)

    @property
    def nbytes(self) -> int:
        return self.values.nbytes

    def first(self, k: int) -> "LeafTable52":
        """The table of its first ``k`` continuations (a set built for k_max gives every k <= k_max)."""
        return replace(self, values=self.values[:k], names=self.names[:k], continuations=self.continuations[:k],
                       shifts=self.shifts[:k])


class LeafValues52:
    """Computes leaf tables of one game and blueprint (``blueprint``: both players' full-layout
    behaviorals). ``keep_strategies=False``: the tables keep their values only, not the
    continuations (a full-layout float64 vector of the chooser each: at k = 16 and two sets,
    about 128 B per sequence of the game); :func:`compose` then cannot mix the chooser's play
    below the leaves, which an off-tree response (the responder's alone) never needs."""

    def __init__(self, view: View52, blueprint: list[np.ndarray], keep_strategies: bool = True):
        self.view, self.blueprint, self.keep = view, blueprint, keep_strategies
        self.terminals = {i: view.end_block(e) for i, e in enumerate(view.ends) if not e["line"]}

    def values(self, chooser: int, b_chooser: np.ndarray) -> np.ndarray:
        """[leaves, O, O] with the chooser's flop strategy ``b_chooser`` against the blueprint."""
        b = list(self.blueprint)
        b[chooser] = b_chooser
        v = self.view
        return v.line_blocks(b)

    def table(self, chooser: int, strategies, names: list[str], max_memory: str | None = None) -> LeafTable52:
        """The table of ``strategies`` (an iterable of the chooser's full-layout behaviorals, one
        per name, each dropped after its values unless the strategies are kept)."""
        check_table_memory(self.view, len(names), max_memory)
        t0 = time.perf_counter()
        vals, kept = [], []
        for b in strategies:
            vals.append(self.values(chooser, b))
            if self.keep:
                kept.append(b)
        return LeafTable52(self.view, chooser, np.stack(vals), list(names), kept, dict(self.terminals),
                           time.perf_counter() - t0)

    def best_response(self, chooser: int) -> LeafTable52:
        """The leaf table of the chooser's best response at every infoset to the searcher's
        blueprint (:func:`.sets.best_response_everywhere`, in the real game): a blueprint
        quantity, made once per chooser (every root gadget's alts read it, :func:`root_alt`)."""
        cache = self.__dict__.setdefault("_best_response", {})
        if chooser not in cache:
            view, me = self.view, 1 - chooser
            b_red, _ = best_response_everywhere(view.game.problem(), chooser, view.plan(me, self.blueprint[me]))
            cache[chooser] = self.table(chooser, [view.full(chooser, b_red)], ["best response"])
        return cache[chooser]

    def append(self, table: LeafTable52, strategy: np.ndarray, name: str, shift: float = 0.0) -> LeafTable52:
        """``table`` with one more continuation; its values lowered by ``shift`` (player 0's
        chips) per unit of leaf mass (the weakening)."""
        check_table_memory(self.view, table.k + 1)
        t0 = time.perf_counter()
        vals = self.values(table.chooser, strategy) - shift * self.view.leaf_mass[None]
        shifts = table.shifts + [0.0] * (table.k - len(table.shifts)) + [shift]
        return LeafTable52(self.view, table.chooser, np.concatenate([table.values, vals[None]]),
                           table.names + [name], table.continuations + ([strategy] if self.keep else []), table.terminals,
                           table.seconds + time.perf_counter() - t0, shifts)


# ------------------------------------------------------------------ the subgame


@dataclass
class Subgame52:
    """The depth-limited subgame at preflop node ``root`` as a sequence-form problem (module
    docstring): ``rb[p][v]`` first sequence of p's node v (orbit o owns ``rb + o k_v + a``),
    ``lb[l]`` first sequence of the chooser's leaf infosets at ``view.lines[l]``, ``weight``
    the chance x reach of the root's pairs (values are divided by it)."""

    view: View52
    table: LeafTable52
    root: int
    searcher: int
    problem: Problem
    nodes: list[int]
    rb: list[dict]
    lb: dict[int, int]
    weight: float
    reach: tuple[np.ndarray, np.ndarray]
    alt: np.ndarray | None = None

    @property
    def chooser(self) -> int:
        return 1 - self.searcher


def subtree(view: View52, root: int) -> list[int]:
    """The preflop nodes below ``root`` (itself included), in tree order."""
    t, out, stack = view.tree, [], [root]
    while stack:
        v = stack.pop()
        out.append(v)
        for s in range(t.child_ptr[v], t.child_ptr[v + 1]):
            if t.child_kind[s] == DECISION and t.child_id[s] < view.P:
                stack.append(int(t.child_id[s]))
    return sorted(out)


def build_subgame(view: View52, table: LeafTable52, root: int, reach: tuple[np.ndarray, np.ndarray] | None = None,
                  alt: np.ndarray | None = None) -> Subgame52:
    """The subgame at preflop node ``root`` with ``table``'s leaves (the chooser is the table's)
    and root reaches ``reach`` (per player, [O]; None: 1). ``alt`` ([O], player 0's chips
    times chance and reach, as A's entries): the resolve gadget (Proposition 1's safety; Burch
    et al. 2014): first the chooser picks, per hand orbit, "alt" (payoff ``alt[o]``) or "enter"
    (sequences ``1 + 2 o`` and ``2 + 2 o``), the parent of its infosets in the subgame."""
    t, O, K = view.tree, view.O, table.k
    chooser = table.chooser
    if not 0 <= root < view.P:
        raise InputError(f"depth-limited subgame root {root}: not a preflop decision node (0..{view.P - 1})")
    nodes = subtree(view, root)
    inside = set(nodes)
    reach = reach or (np.ones(O), np.ones(O))
    rb, starts, parents, keys, labels = [{}, {}], [[], []], [[], []], [[], []], [[], []]
    n = [1, 1]
    orbit_names = [hand_name(int(view.game.hands[0][h])) for h in view.first]

    def seq(p, last, o):
        u, a = last
        if u in rb[p]:
            return rb[p][u] + o * int(t.n_actions[u]) + a
        return 2 + 2 * o if alt is not None and p == chooser else 0  # the gadget's "enter"

    if alt is not None:
        for o in range(O):
            starts[chooser].append(1 + 2 * o)
            parents[chooser].append(0)
            keys[chooser].append(f"{orbit_names[o]}:{t.history[root]}#gadget")
            labels[chooser].append(("alt", "enter"))
        n[chooser] += 2 * O

    for v in nodes:
        p, k = int(t.actor[v]), int(t.n_actions[v])
        rb[p][v] = n[p]
        last = (int(t.last_node[v, p]), int(t.last_act[v, p]))
        for o in range(O):
            starts[p].append(n[p] + o * k)
            parents[p].append(seq(p, last, o))
            keys[p].append(f"{orbit_names[o]}:{t.history[v]}")
            labels[p].append(tuple(t.actions[v]))
        n[p] += O * k
    lb = {}
    ends = [(i, e) for i, e in enumerate(view.ends) if e["v"] in inside]
    line_index = {e["id"]: l for l, e in enumerate(view.lines)}
    for i, e in ends:
        if e["line"]:
            lb[line_index[e["id"]]] = n[chooser]
            for o in range(O):
                starts[chooser].append(n[chooser] + o * K)
                parents[chooser].append(seq(chooser, e["last"][chooser], o))
                keys[chooser].append(f"{orbit_names[o]}:{e['history']}#leaf")
                labels[chooser].append(tuple(table.names))
            n[chooser] += O * K
    rows, cols, vals = [], [], []
    o0, o1 = np.meshgrid(np.arange(O), np.arange(O), indexing="ij")
    scale = reach[0][:, None] * reach[1][None, :]
    for i, e in ends:
        s0 = np.array([seq(0, e["last"][0], o) for o in range(O)])
        s1 = np.array([seq(1, e["last"][1], o) for o in range(O)])
        if not e["line"]:
            blocks = [(s0[o0], s1[o1], table.terminals[i])]
        else:
            l = line_index[e["id"]]
            blocks = []
            for j in range(K):
                leaf = lb[l] + np.arange(O) * K + j
                r, c = (s0[o0], leaf[o1]) if chooser == 1 else (leaf[o0], s1[o1])
                blocks.append((r, c, table.values[j, l]))
        for r, c, m in blocks:
            rows.append(r.ravel())
            cols.append(c.ravel())
            vals.append((scale * m).ravel())
    if alt is not None:
        gadget = 1 + 2 * np.arange(O)
        rows.append(gadget if chooser == 0 else np.zeros(O, np.int64))
        cols.append(gadget if chooser == 1 else np.zeros(O, np.int64))
        vals.append(np.asarray(alt, np.float64))
    A = SparsePayoff((np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)), (n[0], n[1]))
    Ts = []
    for p in (0, 1):
        st = np.array(starts[p], np.int64)
        ends_ = np.append(st[1:], n[p]) if len(st) else st
        Ts.append(Treeplex(st, ends_, np.array(parents[p], np.int64), keys[p], labels[p]))
    weight = float(reach[0] @ view.pair_block @ reach[1])
    g = view.game
    name = f"depth-limited {g.name} @ {t.history[root] or 'root'} (k={K}, chooser {chooser})"
    problem = Problem(Ts[0], Ts[1], A, name=name, stats={"sequences": (n[0], n[1]), "nonzeros": A.nnz},
                      payoff_unit="chips", big_blind=g.big_blind)
    return Subgame52(view, table, root, 1 - chooser, problem, nodes, rb, lb, weight, reach, alt)


@dataclass
class Solution52:
    """A solved subgame: its plans, value and gap (chips per unit of root weight) and seconds."""

    subgame: Subgame52
    plans: tuple[np.ndarray, np.ndarray]
    value: float
    gap: float
    seconds: float
    iterations: int


def solve_subgame52(sub: Subgame52, solver: str = "lp", **solve_kw) -> Solution52:
    """Solve the subgame with :func:`treeplex.run.driver.solve` (``solver="lp"``: exact); a
    ``target_gap`` is in chips per unit of the root's weight, as :attr:`Solution52.gap`."""
    from ..run.driver import solve

    if "target_gap" in solve_kw:
        solve_kw = dict(solve_kw, target_gap=solve_kw["target_gap"] * sub.weight)
    t0 = time.perf_counter()
    res = solve(sub.problem, solver, **solve_kw)
    ev = evaluate(sub.problem, res.x, res.y)
    return Solution52(sub, (res.x, res.y), ev.value / sub.weight, ev.gap / sub.weight, time.perf_counter() - t0,
                      int(getattr(res, "iterations", 0) or 0))


def subgame_plans_of(sub: Subgame52, b: list[np.ndarray], choice: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The subgame plans of full-layout behaviorals ``b`` (the first member hand of each orbit)
    with the chooser taking continuation ``choice`` at every leaf infoset."""
    t, O = sub.view.tree, sub.view.O
    out = []
    for p, T in enumerate(sub.problem.treeplexes):
        beh = np.zeros(T.n_seqs)
        beh[0] = 1.0
        for v, base in sub.rb[p].items():
            k = int(t.n_actions[v])
            fb = sub.view.bases[p][v] + sub.view.first[:, None] * k + np.arange(k)[None, :]
            beh[base + np.arange(O)[:, None] * k + np.arange(k)[None, :]] = b[p][fb]
        if p == sub.chooser:
            for base in sub.lb.values():
                beh[base + np.arange(O) * sub.table.k + choice] = 1.0
            if sub.alt is not None:
                beh[2 + 2 * np.arange(O)] = 1.0  # enter
        out.append(T.plan_from_behavioral(beh))
    return tuple(out)


def root_alt(lv: "LeafValues52", chooser: int, root: int, reach: tuple[np.ndarray, np.ndarray] | None = None
             ) -> np.ndarray:
    """[O] the gadget's alt values: per hand orbit, the chooser's best-response value from
    ``root`` on against the searcher's blueprint, in the real game (player 0's chips times
    chance and reach). Its flop play is its best response at every infoset to the blueprint
    (:meth:`LeafValues52.best_response`, made once), which is the best continuation at every leaf; its
    preflop play below ``root`` is the best one given those leaf values (a best-response pass
    of the subgame with that one continuation, read at the gadget's "enter")."""
    view = lv.view
    sub = build_subgame(view, lv.best_response(chooser), root, reach, alt=np.zeros(view.O))
    return enter_values(sub, subgame_plans_of(sub, lv.blueprint))


def enter_values(sub: Subgame52, plans: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """[O] the chooser's best-response value of "enter" at each gadget infoset of ``sub`` (one
    with ``alt``) against the searcher's plan in ``plans``: player 0's chips times chance and
    reach, as ``sub.alt``."""
    A, c = sub.problem.A, sub.chooser
    sign = 1.0 if c == 0 else -1.0
    g = sign * (A.matvec(plans[1], count=False) if c == 0 else A.rmatvec(plans[0], count=False))
    return sign * br_values(sub.problem.treeplexes[c], g)[2 + 2 * np.arange(sub.view.O)]


# ------------------------------------------------------------------ back in the real game


def compose(sol: Solution52, blueprint: list[np.ndarray], players: tuple[int, ...] = (0, 1)) -> list[np.ndarray]:
    """Full-layout behaviorals of both players in the real game: the subgame's preflop play
    below its root, the searcher's blueprint in the flop, the chooser's continuations mixed by
    its leaf choices (as realization plans) below each leaf, the blueprint everywhere else.
    ``players``: whose strategies to compose (the others keep the blueprint)."""
    sub, view = sol.subgame, sol.subgame.view
    t, H = view.tree, view.H
    out = [blueprint[0].copy(), blueprint[1].copy()]
    for p, T in enumerate(sub.problem.treeplexes):
        if p not in players:
            continue
        beh = T.behavioral_from_plan(sol.plans[p])
        for v, base in sub.rb[p].items():
            k = int(t.n_actions[v])
            rows = beh[base + view.orbit[:, None] * k + np.arange(k)[None, :]]
            out[p][view.bases[p][v]:view.bases[p][v] + H * k] = rows.ravel()
    c = sub.chooser
    if c not in players:
        return out
    if len(sub.table.continuations) != sub.table.k:
        raise ValueError("compose: the leaf table keeps no continuation strategies (LeafValues52(..., "
                         "keep_strategies=False)): the chooser's play below the leaves cannot be mixed")
    beh = sub.problem.treeplexes[c].behavioral_from_plan(sol.plans[c])
    blocks = []  # (slice, k, lam [H, 1]): the chooser's flop nodes below each leaf, and its leaf choice there
    for l, base in sub.lb.items():
        lam = beh[base + view.orbit[:, None] * sub.table.k + np.arange(sub.table.k)[None, :]]  # [H, K]
        chance_id = view.lines[l]["id"]
        for v in np.flatnonzero((view.line_of_node == chance_id) & (t.actor == c)):
            k = int(t.n_actions[v])
            blocks.append((slice(view.bases[c][v], view.bases[c][v] + H * k), k, lam))
    mix = np.zeros_like(out[c])
    for j, b in enumerate(sub.table.continuations):  # one pseudo-plan at a time: memory of 2 layouts, not k + 1
        pp = view.pseudo_plan(c, b)
        for sl, k, lam in blocks:
            mix[sl] += (lam[:, j, None] * pp[sl].reshape(H, k)).ravel()
        del pp
    for sl, k, _ in blocks:
        m = mix[sl].reshape(H, k)
        tot = m.sum(axis=1, keepdims=True)
        out[c][sl] = np.where(tot > 0, m / np.where(tot > 0, tot, 1.0), 1.0 / k).ravel()
    return out


def evaluate_full(view: View52, b: list[np.ndarray]) -> Evaluation:
    """Value, best responses and gap of full-layout behaviorals ``b`` in the real game."""
    P = view.game.problem()
    return evaluate(P, view.plan(0, b[0]), view.plan(1, b[1]))


# ------------------------------------------------------------------ blueprint and sets


@dataclass
class Blueprint52:
    """Both players' plans (solver layout), full-layout behaviorals, value, gap and cost."""

    view: View52
    plans: tuple[np.ndarray, np.ndarray]
    b: list[np.ndarray]
    value: float
    gap: float
    iterations: int
    seconds: float


def compute_blueprint52(view: View52, solver: str = "dcfr", **solve_kw) -> Blueprint52:
    """Solve the game's abstraction with ``solver`` (``"lp"``: exact) for the blueprint."""
    from ..run.driver import solve

    t0 = time.perf_counter()
    P = view.game.problem()
    res = solve(P, solver, **solve_kw)
    ev = evaluate(P, res.x, res.y)
    b = [view.full_behavioral(p, x) for p, x in enumerate((res.x, res.y))]
    return Blueprint52(view, (res.x, res.y), b, ev.value, ev.gap, int(getattr(res, "iterations", 0) or 0),
                       time.perf_counter() - t0)


def cached_blueprint52(view: View52, path: str | None, **solve_kw) -> Blueprint52:
    """The DCFR blueprint of ``view``'s game (:func:`compute_blueprint52`), read from ``path``
    if it is there, else computed and saved there (npz: the game's name, both plans, value,
    gap, iterations and seconds), so that runs and sizes share one blueprint. A file read
    back is checked first: the same game, and both plans realization plans of its treeplexes."""
    if path and os.path.exists(path):
        try:
            with np.load(path, allow_pickle=False) as z:
                game, plans = str(z["game"]), (np.asarray(z["x"], np.float64), np.asarray(z["y"], np.float64))
                scalars = [float(z[k]) for k in ("value", "gap", "iterations", "seconds")]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise InputError(f"blueprint cache {path}: not a blueprint file ({e})") from None
        if game != view.game.name:
            raise InputError(f"blueprint cache {path}: the blueprint of {game}, not of {view.game.name}")
        for p, (T, x) in enumerate(zip(view.treeplexes, plans)):
            err = T.check_plan(x, tol=1e-6)
            if err is not None:
                raise InputError(f"blueprint cache {path}: player {p}'s plan: {err}")
        value, gap, iterations, seconds = scalars
        return Blueprint52(view, plans, [view.full_behavioral(p, x) for p, x in enumerate(plans)], value, gap,
                           int(iterations), seconds)
    bp = compute_blueprint52(view, "dcfr", **solve_kw)
    if path:
        np.savez(path, game=view.game.name, x=bp.plans[0], y=bp.plans[1], value=bp.value, gap=bp.gap,
                 iterations=bp.iterations, seconds=bp.seconds)
    return bp


def biased52(view: View52, player: int, b: np.ndarray, factors: dict[str, float]) -> np.ndarray:
    """``b`` with ``player``'s flop probabilities multiplied per action class and label
    (:func:`.sets.biased`'s rule), renormalized per (node, hand)."""
    t, H = view.tree, view.H
    out = b.copy()
    for v in t.nodes_of(player):
        if t.board[v] == 0:
            continue
        labels = t.actions[v]
        mult = np.array([factors.get(action_class(x), 1.0) * factors.get(x, 1.0) for x in labels])
        sl = slice(view.bases[player][v], view.bases[player][v] + H * len(labels))
        rows = b[sl].reshape(H, -1) * mult[None, :]
        tot = rows.sum(axis=1, keepdims=True)
        out[sl] = np.where(tot > 0, rows / np.where(tot > 0, tot, 1.0), 1.0 / len(labels)).ravel()
    return out


def bias_table52(lv: LeafValues52, chooser: int, k: int, max_memory: str | None = None) -> LeafTable52:
    """Leaf table of the first ``k`` strategies of :data:`.sets.BIAS` (the blueprint first)."""
    if not 1 <= k <= len(BIAS):
        raise InputError(f"bias: k must be in 1..{len(BIAS)}, got {k}")
    check_table_memory(lv.view, k, max_memory)
    strategies = (biased52(lv.view, chooser, lv.blueprint[chooser], f) for _, f in BIAS[:k])
    return lv.table(chooser, strategies, [n for n, _ in BIAS[:k]], max_memory)


def self_generative_table52(lv: LeafValues52, chooser: int, k: int, *, weaken: bool = True, solver: str = "lp",
                            max_memory: str | None = None, **solve_kw) -> tuple[LeafTable52, list[dict]]:
    """Leaf table of k self-generated strategies (§4): start from the blueprint; solve the
    subgame at the game's root; add the chooser's best response at every infoset (in the real
    game) to (subgame preflop, blueprint flop), weakened; repeat. Returns the table and a log
    row per added strategy."""
    view = lv.view
    check_table_memory(view, k, max_memory)
    P = view.game.problem()
    me = 1 - chooser
    bp_plans = [view.plan(p, lv.blueprint[p]) for p in (0, 1)]
    v_bp = float(bp_plans[0] @ P.A.matvec(bp_plans[1], count=False))
    table = lv.table(chooser, [lv.blueprint[chooser]], ["blueprint"], max_memory)
    sign = 1.0 if chooser == 0 else -1.0
    log = []
    while table.k < k:
        t0 = time.perf_counter()
        sol = solve_subgame52(build_subgame(view, table, 0), solver, **solve_kw)
        searcher = compose(sol, lv.blueprint, players=(me,))[me]
        b_red, v_br = best_response_everywhere(P, chooser, view.plan(me, searcher))
        b_br = view.full(chooser, b_red)
        own = list(bp_plans)
        own[chooser] = view.plan(chooser, b_br)
        v_new = float(own[0] @ P.A.matvec(own[1], count=False))
        delta = max(0.0, sign * (v_new - v_bp)) if weaken else 0.0
        table = lv.append(table, b_br, f"self-generated {table.k}", shift=sign * delta)
        log.append({"k": table.k, "subgame_value": sol.value, "br_value": v_br, "weakening": delta,
                    "seconds": time.perf_counter() - t0})
    return table, log
