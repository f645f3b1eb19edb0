"""What each sequence of a compiled NLFH game is: its player's hole cards, public node, round.

Infoset keys of :class:`~treeplex.poker.nlfh.NLFH` are ``"<hole>|<board>|<history>"``; this
parses them once into flat arrays so that leaf values, biased strategies and reaches are
vectorized numpy over sequences. Also: the deal probabilities P(h0, h1), and
:func:`renormalize` for behavioral arrays (local probability per sequence).
"""

from __future__ import annotations

import numpy as np

from ..model.game import GameError
from ..poker.nlfh import NLFH, PublicNode
from ..model.problem import Problem
from ..core.treeplex import Treeplex


class NLFHIndex:
    """Per-sequence hole index, public child node and round, for both players of ``problem``.

    ``holes[h]`` are the cards of hole index h (the same list for both players) and
    ``deal[h0, h1]`` = P(player 0 gets holes[h0] and player 1 gets holes[h1]).
    For player p and sequence s >= 1: ``hole[p][s]``, ``child[p][s]`` (id of the public node
    after the action), ``node[p][s]`` (id of the node where it is taken), ``round[p][s]`` and
    ``label[p][s]``. Sequence 0 (empty) has hole -1, node and child = the root's id.
    """

    def __init__(self, game: NLFH, problem: Problem):
        self.game, self.problem = game, problem
        outcomes = game.deal_outcomes((), game.hole)
        self.holes = [cards for _, _, cards in outcomes]
        self.hole_of = {game.cards_name(c): h for h, c in enumerate(self.holes)}
        H = len(self.holes)
        self.deal = np.zeros((H, H))
        for h0, (_, p0, c0) in enumerate(outcomes):
            for _, p1, c1 in game.deal_outcomes(c0, game.hole):
                self.deal[h0, self.hole_of[game.cards_name(c1)]] += p0 * p1
        self._nodes: dict[str, PublicNode] = {}
        self.hole, self.node, self.child, self.round, self.label = [], [], [], [], []
        for T in problem.treeplexes:
            n = T.n_seqs
            hole = np.full(n, -1, np.int32)
            node = np.full(n, game.root.id, np.int64)
            child = np.full(n, game.root.id, np.int64)
            rnd = np.full(n, -1, np.int8)
            label = np.empty(n, dtype=object)
            for j, key in enumerate(T.infoset_keys):
                h, _, pub = self.parse(key)
                sl = slice(T.start[j], T.end[j])
                hole[sl] = h
                node[sl] = pub.id
                rnd[sl] = pub.rnd
                label[sl] = T.action_labels[j]
                child[sl] = [pub.child(a).id for a in T.action_labels[j]]
            self.hole.append(hole)
            self.node.append(node)
            self.child.append(child)
            self.round.append(rnd)
            self.label.append(label)

    @property
    def n_holes(self) -> int:
        return len(self.holes)

    def public(self, hist: str) -> PublicNode:
        node = self._nodes.get(hist)
        if node is None:
            node = self._nodes[hist] = self.game.node(hist)
        return node

    def parse(self, key: str) -> tuple[int, str, PublicNode]:
        """``"K|Q|p0.5,c/x"`` -> (hole index, board name, public node)."""
        try:
            hole, board, hist = str(key).split("|")
            return self.hole_of[hole], board, self.public(hist)
        except (ValueError, KeyError):
            raise GameError(f"{key!r} is not an infoset key of {self.game.name}") from None

    def chance_of_hole(self, player: int) -> np.ndarray:
        """P(player's hole = h), the marginal of :attr:`deal`."""
        return self.deal.sum(axis=1 - player)


def renormalize(T: Treeplex, b: np.ndarray) -> np.ndarray:
    """Scale each infoset's local probabilities to sum to 1 (uniform where they sum to 0)."""
    sums = np.add.reduceat(b[1:], T.start - 1)
    sizes = T.end - T.start
    per_seq = np.repeat(sums, sizes)
    out = b.copy()
    zero = per_seq <= 0
    out[1:] = np.where(zero, 1.0 / np.repeat(sizes, sizes), b[1:] / np.where(zero, 1.0, per_seq))
    return out
