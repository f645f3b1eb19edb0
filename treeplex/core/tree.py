"""The history tree of a compiled game as flat arrays (``Problem.tree``).

:meth:`GameTree.from_game` walks a game once through the state interface
(:mod:`treeplex.model.game`) and numbers its histories in depth-first preorder: every parent
precedes its children and the subtree of node ``n`` is the contiguous range
``[n, n + size[n])``. The children of ``n`` are ``children[child_ptr[n]:child_ptr[n + 1]]``
in action (or chance outcome) order, so a walk, or picking the k-th child, is O(1) per child.
Infosets and sequences are numbered as in the compiled :class:`~treeplex.model.problem.Problem`
(matched by infoset key and action label), so its realization plans apply directly.

Memory: 49 bytes per history (kind 1, parent 4, size 4, infoset 4, edge_prob 8, edge_seq 4,
seq 8, payoff 8, child_ptr 4, children 4); Leduc 5 (9,381 histories) about 0.46 MB.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import GameError

CHANCE, TERMINAL = 2, 3  # node kinds; 0 and 1 are the deciding player


@dataclass
class GameTree:
    kind: np.ndarray  # int8[n]: 0 / 1 decision of that player, 2 chance, 3 terminal
    parent: np.ndarray  # int32[n]: parent node, -1 at the root
    size: np.ndarray  # int32[n]: nodes in the subtree rooted here (itself included)
    infoset: np.ndarray  # int32[n]: infoset of the deciding player (problem numbering), else -1
    edge_prob: np.ndarray  # float64[n]: chance probability of the edge into n (1 after a decision)
    edge_seq: np.ndarray  # int32[n]: sequence of the parent's decider for the edge into n, else -1
    seq: np.ndarray  # int32[2, n]: each player's last sequence on the path to n
    payoff: np.ndarray  # float64[n]: player 0's payoff at terminals, 0 elsewhere
    child_ptr: np.ndarray  # int32[n + 1]: children of n are children[child_ptr[n]:child_ptr[n + 1]]
    children: np.ndarray  # int32[n - 1]: every non-root node, grouped by parent, in action order

    @property
    def n_nodes(self) -> int:
        return len(self.kind)

    @classmethod
    def from_game(cls, game, problem) -> "GameTree":
        """Walk ``game`` once; ``problem`` must be ``compile_game(game)`` (same keys and actions)."""
        index = [{k: j for j, k in enumerate(T.infoset_keys)} for T in problem.treeplexes]
        kind, parent, infoset, edge_prob, edge_seq, seq0, seq1, payoff = ([] for _ in range(8))
        # stack items: (state, parent node, edge probability, edge sequence, seq0, seq1)
        stack = [(game.initial_state(), -1, 1.0, -1, 0, 0)]
        while stack:
            state, par, p, es, s0, s1 = stack.pop()
            n = len(kind)
            parent.append(par)
            edge_prob.append(p)
            edge_seq.append(es)
            seq0.append(s0)
            seq1.append(s1)
            if state.is_terminal():
                u = state.payoff()
                kind.append(TERMINAL)
                infoset.append(-1)
                payoff.append(float(u[0]) if isinstance(u, tuple) else float(u))
            elif state.is_chance():
                kind.append(CHANCE)
                infoset.append(-1)
                payoff.append(0.0)
                for label, q in reversed(list(state.chance_outcomes())):
                    stack.append((state.apply(label), n, max(float(q), 0.0), -1, s0, s1))
            else:
                pl = state.player()
                key = state.infoset_key()
                j = index[pl].get(key)
                if j is None:
                    raise GameError(f"infoset {key!r} of player {pl} is not in the compiled problem")
                T = problem.treeplexes[pl]
                actions = tuple(state.legal_actions())
                if actions != T.action_labels[j]:
                    raise GameError(f"infoset {key!r}: actions {list(actions)} differ from the compiled problem")
                kind.append(pl)
                infoset.append(j)
                payoff.append(0.0)
                for a in range(len(actions) - 1, -1, -1):
                    s = int(T.start[j]) + a
                    child = state.apply(actions[a])
                    stack.append((child, n, 1.0, s, s if pl == 0 else s0, s if pl == 1 else s1))
        parent_a = np.array(parent, dtype=np.int32)
        size = np.ones(len(kind), dtype=np.int32)
        for n in range(len(kind) - 1, 0, -1):  # preorder: children after parents
            size[parent_a[n]] += size[n]
        child_ptr = np.zeros(len(kind) + 1, dtype=np.int32)
        np.cumsum(np.bincount(parent_a[1:], minlength=len(kind)), out=child_ptr[1:])
        children = (np.argsort(parent_a[1:], kind="stable") + 1).astype(np.int32)  # siblings in preorder
        return cls(
            kind=np.array(kind, dtype=np.int8), parent=parent_a, size=size, infoset=np.array(infoset, dtype=np.int32),
            edge_prob=np.array(edge_prob), edge_seq=np.array(edge_seq, dtype=np.int32),
            seq=np.array([seq0, seq1], dtype=np.int32), payoff=np.array(payoff), child_ptr=child_ptr,
            children=children,
        )

    def infoset_nodes(self, player: int, n_infosets: int) -> tuple[np.ndarray, np.ndarray]:
        """CSR (ptr, nodes): the nodes of each of ``player``'s infosets, in preorder."""
        nodes = np.flatnonzero(self.kind == player).astype(np.int32)
        order = np.argsort(self.infoset[nodes], kind="stable")
        nodes = nodes[order]
        counts = np.bincount(self.infoset[nodes], minlength=n_infosets)
        ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int32)
        return ptr, nodes
