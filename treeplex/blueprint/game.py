"""The abstract HUNL betting tree of the blueprint (issue 28, stage 2), as flat arrays.

Betting is :class:`~treeplex.poker.nlfh.PublicNode`'s (the one place no-limit betting is
written: blinds, the small blind first preflop and the big blind first after it, the big
blind's option after a limp, minimum raises, a called all-in dealt to showdown, ``max_raises``
bets/raises per round), over ``rounds`` rounds. The default is Modicum's setting in the issue:
200 BB stacks (20,000 chips, blinds 50/100), preflop and flop raises of 0.5 and 1 pot and
all-in, turn and river 1 pot and all-in; a raise of x pot puts in x times the pot after calling.

Player 0 is the small blind. Nodes are numbered in depth-first preorder; a round's end that
deals cards is not a node (the sampler deals the whole board at once): the child of the last
action of a round is the next round's first decision (or a showdown after an all-in).

Arrays: ``kind`` (DECISION, FOLD, SHOWDOWN), ``street`` (round of a decision), ``actor``,
``n_act``, ``first`` (index in ``children`` of the node's first child), ``payoff`` (a fold:
player 0's chips; a showdown: the chips each has in, won by the better hand), ``offset`` (a
decision's first regret slot: slot = offset + bucket * n_act + action). The infosets of a
decision node are its actor's buckets on its street (imperfect recall: one bucket per street).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..poker.nlfh import PublicNode, parse_bets

DECISION, FOLD, SHOWDOWN = 0, 1, 2
STREETS = ("preflop", "flop", "turn", "river")
MAX_ACTIONS = 8
MAX_RAISES = 8  # per round: the tree grows about 1.5x per extra raise, and the kernels' path depth is bounded
MAX_DEPTH = 128  # decision nodes on a path the kernels hold frames for (4 rounds x (MAX_RAISES + 2) fits)


@dataclass(frozen=True)
class Config:
    """The abstract game's betting: chips, sizes per round ("0.5,1,allin/0.5,1,allin/1,allin/1,allin")."""

    stack: int = 20000
    small_blind: int = 50
    big_blind: int = 100
    bets: str = "0.5,1,allin/0.5,1,allin/1,allin/1,allin"
    max_raises: int = 3
    rounds: int = 4

    def to_dict(self) -> dict:
        return {"stack": self.stack, "small_blind": self.small_blind, "big_blind": self.big_blind,
                "bets": self.bets, "max_raises": self.max_raises, "rounds": self.rounds}


class _Rules:
    """What :class:`PublicNode` reads of its game."""

    def __init__(self, c: Config):
        if not 1 <= c.rounds <= 4:
            raise InputError(f"blueprint: rounds must be 1..4, got {c.rounds}")
        if not (0 < c.small_blind <= c.big_blind < c.stack):
            raise InputError(f"blueprint: need 0 < small_blind <= big_blind < stack, got {c.small_blind}, "
                             f"{c.big_blind}, {c.stack}")
        if not isinstance(c.max_raises, int) or not 1 <= c.max_raises <= MAX_RAISES:
            raise InputError(f"blueprint: max_raises must be a whole number in 1..{MAX_RAISES}, got {c.max_raises!r}")
        self.nodes = []
        self.stack, self.small_blind, self.big_blind = int(c.stack), int(c.small_blind), int(c.big_blind)
        self.bets = parse_bets(c.bets, rounds=c.rounds)
        self.max_raises = c.max_raises
        self.rounds = c.rounds
        self.off_tree = {}
        self.root = PublicNode(self, "decision", 0, (self.small_blind, self.big_blind), 0, last_inc=self.big_blind)


class BettingTree:
    """The flat betting tree of ``config`` (see the module doc) and the regret layout for
    ``buckets`` (one count per round)."""

    def __init__(self, config: Config, buckets):
        self.config = config
        self.buckets = np.array(buckets, dtype=np.int64)
        if len(self.buckets) != config.rounds or self.buckets.min() < 1:
            raise InputError(f"blueprint: need one positive bucket count per round ({config.rounds}), got "
                             f"{list(self.buckets)}")
        rules = _Rules(config)
        kind, street, actor, n_act, first, payoff, children, labels = [], [], [], [], [], [], [], []
        # preorder walk; a node's children are numbered after it, in action order
        order = []
        stack = [rules.root]
        while stack:
            node = stack.pop()
            if node.kind == "deal":
                node = node.after_deal()
            order.append(node)
            if node.kind == "decision":
                stack.extend(node.child(a) for a in reversed(node.actions))
        index = {id(n): i for i, n in enumerate(order)}
        for node in order:
            if node.kind == "decision":
                acts = node.actions
                kind.append(DECISION)
                street.append(node.rnd)
                actor.append(node.to_act)
                n_act.append(len(acts))
                first.append(len(children))
                payoff.append(0.0)
                for a in acts:
                    c = node.child(a)
                    children.append(index[id(c.after_deal() if c.kind == "deal" else c)])
                labels.append(tuple(acts))
            else:
                kind.append(FOLD if node.kind == "fold" else SHOWDOWN)
                street.append(node.rnd)
                actor.append(-1)
                n_act.append(0)
                first.append(-1)
                if node.kind == "fold":
                    payoff.append(-float(node.contrib[0]) if node.folder == 0 else float(node.contrib[1]))
                else:
                    payoff.append(float(node.contrib[0]))
                labels.append(())
        self.kind = np.array(kind, dtype=np.int8)
        self.street = np.array(street, dtype=np.int8)
        self.actor = np.array(actor, dtype=np.int8)
        self.n_act = np.array(n_act, dtype=np.int32)
        if self.n_act.max() > MAX_ACTIONS:
            raise InputError(f"blueprint: a node has {self.n_act.max()} actions, at most {MAX_ACTIONS}")
        self.first = np.array(first, dtype=np.int64)
        self.payoff = np.array(payoff, dtype=np.float64)
        self.children = np.array(children, dtype=np.int64)
        self.labels = labels
        self.history = [n.hist_str for n in order]
        dec = self.kind == DECISION
        sizes = np.where(dec, self.n_act * self.buckets[np.clip(self.street, 0, config.rounds - 1)], 0)
        self.offset = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
        self.n_slots = int(sizes.sum())  # infoset-actions
        self.n_infosets = int((dec * self.buckets[np.clip(self.street, 0, config.rounds - 1)]).sum())

    @property
    def n_nodes(self) -> int:
        return len(self.kind)

    def digest(self) -> str:
        """sha256 of the tree's arrays and the bucket counts (a checkpoint must match it)."""
        h = hashlib.sha256()
        for a in (self.kind, self.street, self.actor, self.n_act, self.first, self.payoff, self.children,
                  self.buckets):
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()

    def counts(self) -> dict:
        """Decision nodes and infoset-actions per street."""
        out = {}
        for s in range(self.config.rounds):
            m = (self.kind == DECISION) & (self.street == s)
            out[STREETS[s] if self.config.rounds == 4 else f"round{s}"] = {
                "nodes": int(m.sum()), "infoset_actions": int((self.n_act[m] * self.buckets[s]).sum())}
        return out
