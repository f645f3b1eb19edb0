"""Agents: one class each, ``act(hand, seat) -> token`` on the hand as the seat sees it.

An agent gets ``begin(seat, hand)`` at the start of a hand, ``act(hand, seat)`` at each of its
decisions (``hand``: :meth:`.engine.Hand.view`, the other's cards hidden) and ``end(hand,
seat)`` when the hand is over. It answers an ACPC token (:mod:`.engine`). The depth-limited
agent (stage 3) is one more class with the same three methods: :mod:`.realtime`.

The blueprint agent plays a checkpoint of :mod:`treeplex.blueprint` over its abstraction. It
follows the hand in the abstract tree: its own actions are the tree's labels played in the
real game (a raise of x pot is x times the real pot after calling); an opponent's raise to T
chips maps to the tree's raise with that total if there is one, else by the **pseudo-harmonic
mapping** (Ganzfried & Sandholm, IJCAI 2013; :func:`treeplex.depth_limited.translation.rpat_probability`)
between the tree's sizes just below and above (pot fractions, the all-in included), once per
action; below the smallest size it is the smallest, above the largest the largest. Where the
tree cannot follow (a raise past the tree's raise cap, a class the abstraction did not reach,
or the real hand going on after the abstract one ended, as after a bet read as all-in and
called) it checks or calls, and counts it in ``stats``.
"""

from __future__ import annotations

import sys

import numpy as np

from ..errors import InputError
from .engine import Hand, Table, cards_text

STREETS = ("preflop", "flop", "turn", "river")


class Agent:
    """The interface (module doc); ``name`` labels it in results and histories."""

    name = "agent"

    def begin(self, seat: int, hand: Hand) -> None:
        pass

    def act(self, hand: Hand, seat: int) -> str:
        raise NotImplementedError

    def end(self, hand: Hand, seat: int) -> None:
        pass


class CallingStation(Agent):
    """Always checks or calls."""

    name = "call"

    def act(self, hand, seat):
        return "c"


class Folder(Agent):
    """Folds to every bet, checks otherwise."""

    name = "fold"

    def act(self, hand, seat):
        return "f" if hand.to_call() > 0 else "c"


class RandomAgent(Agent):
    """Fold (when facing a bet), check/call or raise, each equally likely among the legal
    ones; a raise's total uniform between the minimum and the stack."""

    name = "random"

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)

    def act(self, hand, seat):
        opts = (["f"] if hand.to_call() > 0 else []) + ["c"]
        rr = hand.raise_range()
        if rr:
            opts.append("r")
        a = opts[self.rng.integers(len(opts))]
        return f"r{int(self.rng.integers(rr[0], rr[1] + 1))}" if a == "r" else a


class HumanAgent(Agent):
    """A person at the terminal (drill mode): shows the cards, pot and legal actions and
    reads one action a line: ``f``, ``c`` (check or call), ``r<total>`` or ``a`` (all-in)."""

    name = "human"

    def __init__(self, stdin=None, stdout=None):
        self.inp, self.out = stdin or sys.stdin, stdout or sys.stdout

    def _say(self, text):
        print(text, file=self.out, flush=True)

    def begin(self, seat, hand):
        self._say(f"-- new hand: you are the {'small' if seat == 0 else 'big'} blind, "
                  f"cards {cards_text(hand.hole(seat))}")

    def act(self, hand, seat):
        board = cards_text(hand.board())
        rr = hand.raise_range()
        legal = (["f (fold)"] if hand.to_call() > 0 else []) + [f"c ({'call ' + str(hand.to_call()) if hand.to_call() > 0 else 'check'})"]
        if rr:
            legal.append(f"r{rr[0]}..r{rr[1]} (raise to; a = all-in)")
        self._say(f"{STREETS[hand.street]}: cards {cards_text(hand.hole(seat))}"
                  f"{' board ' + board if board else ''}, pot {hand.pot}, betting '{hand.betting()}'; "
                  f"legal: {', '.join(legal)}")
        while True:
            self.out.write("> ")
            self.out.flush()
            line = self.inp.readline()
            if not line:
                raise InputError("human: input ended before the match did")
            tok = line.strip().lower()
            if tok in ("a", "allin", "all-in") and rr:
                tok = f"r{rr[1]}"
            elif tok in ("k", "check", "call"):
                tok = "c"
            elif tok == "fold":
                tok = "f"
            if hand.legal(tok):
                return tok
            self._say(f"illegal action {line.strip()!r}; legal: {', '.join(legal)}")

    def end(self, hand, seat):
        u = hand.payoff() * (1 if seat == 0 else -1)
        other = cards_text(hand.hole(1 - seat))
        self._say(f"-- hand over ({hand.betting()}): you {'win' if u > 0 else 'lose' if u < 0 else 'tie'} "
                  f"{abs(u)} chips" + (f"; the other had {other}, board {cards_text(hand.board())}"
                                      if hand.showdown() else ""))


# ---------------------------------------------------------------- the blueprint


class Blueprint:
    """A blueprint checkpoint and its abstraction: the tree, the average strategy ``P`` per
    infoset-action, and buckets of real hands."""

    def __init__(self, path: str, abstraction: str):
        from ..abstraction.build import load
        from ..abstraction.indexer import Indexer
        from ..blueprint.game import BettingTree, Config
        from ..blueprint.train import RealDeals, average_strategy, read_checkpoint

        meta, arrays = read_checkpoint(path)
        self.abstraction = load(abstraction)
        deals = RealDeals(self.abstraction, abstraction)
        if meta.get("abstraction") != deals.fingerprint:
            raise InputError(f"{path}: trained on another abstraction than {abstraction}")
        try:
            self.tree = BettingTree(Config(**meta["config"]), deals.buckets[:meta["config"].get("rounds", 4)])
        except (TypeError, KeyError) as e:
            raise InputError(f"{path}: bad betting config ({e})") from None
        if self.tree.digest() != meta.get("tree_sha256") or self.tree.config.rounds != 4:
            raise InputError(f"{path}: not a 4-round blueprint of this abstraction")
        S = arrays.get("S")
        if S is None or S.shape != (self.tree.n_slots,):
            raise InputError(f"{path}: 'S' must have {self.tree.n_slots} entries")
        self.P = average_strategy(self.tree, S)
        self.flops = deals.flops
        self.deals = deals
        self.indexers = [Indexer(s) for s in STREETS]
        c = self.tree.config
        self.table = Table(c.stack, c.small_blind, c.big_blind)
        self.path = path

    def buckets(self, street: int, holes: np.ndarray, board) -> np.ndarray:
        """Bucket of each row of ``holes`` (``[n, 2]`` cards) with ``board`` on ``street`` (-1:
        not reached by the abstraction, or the hand uses a board card)."""
        holes = np.asarray(holes, dtype=np.int64).reshape(-1, 2)
        b = np.asarray(board, dtype=np.int64)
        ok = ~np.isin(holes, b).any(axis=1)
        out = np.full(len(holes), -1, dtype=np.int64)
        if ok.any():
            cards = np.concatenate([holes[ok], np.broadcast_to(b, (int(ok.sum()), len(b)))], axis=1)
            idx = self.indexers[street].index(cards)
            out[ok] = idx if street == 0 else self.abstraction.bucket(STREETS[street], idx)
        return out

    def probs(self, v: int, buckets: np.ndarray) -> np.ndarray:
        """``[n, k]``: the strategy at decision node ``v`` of each bucket (uniform where -1)."""
        t = self.tree
        k = int(t.n_act[v])
        rows = self.P[t.offset[v]:t.offset[v] + k * t.buckets[t.street[v]]].reshape(-1, k)
        return np.where((buckets >= 0)[:, None], rows[np.maximum(buckets, 0)], 1.0 / k)

    def child(self, v: int, label: str) -> int:
        t = self.tree
        return int(t.children[t.first[v] + t.labels[v].index(label)])

    def map_action(self, v: int, hand: Hand, token: str, rng) -> str | None:
        """The label at node ``v`` for real ``token`` at ``hand`` (before it is played), drawn
        from :meth:`map_probs`; None where the tree has no match."""
        m = self.map_probs(v, hand, token)
        if len(m) == 2:
            return m[0][0] if rng.random() < m[0][1] else m[1][0]
        return m[0][0] if m else None

    def map_probs(self, v: int, hand: Hand, token: str) -> list[tuple[str, float]]:
        """The labels at node ``v`` that real ``token`` at ``hand`` maps to, with their
        probabilities (module doc: one label, or the pseudo-harmonic pair); [] where the tree
        has no match."""
        t = self.tree
        labels = t.labels[v]
        if token == "f":
            return [("f", 1.0)] if "f" in labels else []
        if token == "c":
            lab = "c" if hand.to_call() > 0 else "x"
            return [(lab, 1.0)] if lab in labels else []
        to = int(token[1:])
        node = hand.node
        sizes = []
        for lab in labels:
            if lab[0] == "p" or lab == "a":
                tot = self.table.stack if lab == "a" else node.frac_raise_to(float(lab[1:]))
                sizes.append((tot, lab))
        if not sizes:
            return []
        sizes.sort()
        for tot, lab in sizes:
            if tot == to:
                return [(lab, 1.0)]
        if to < sizes[0][0]:
            return [(sizes[0][1], 1.0)]
        if to > sizes[-1][0]:
            return [(sizes[-1][1], 1.0)]
        from ..depth_limited.translation import rpat_probability

        for (ta, la), (tb, lb) in zip(sizes, sizes[1:]):
            if ta < to < tb:
                a, x, b = (node.fraction_of(z) for z in (ta, to, tb))
                q = rpat_probability(x, a, b)
                return [(la, q), (lb, 1.0 - q)]
        return [(sizes[-1][1], 1.0)]  # not reached: the sizes are sorted and ``to`` lies within them

    def real_token(self, label: str, hand: Hand) -> str:
        """The real action for tree label ``label`` at ``hand``."""
        if label == "f":
            return "f" if hand.to_call() > 0 else "c"
        if label in ("x", "c"):
            return "c"
        rr = hand.raise_range()
        if rr is None:
            return "c"
        to = rr[1] if label == "a" else hand.node.frac_raise_to(float(label[1:]))
        return f"r{min(max(to, rr[0]), rr[1])}"


class Follower:
    """The abstract node of a real hand, advanced token by token (module doc); ``v`` is -1
    once the tree cannot follow."""

    def __init__(self, bp: Blueprint, rng):
        self.bp, self.rng = bp, rng
        self.v, self.n = 0, 0
        self.mine: dict[int, str] = {}  # token position -> the label this agent chose there

    def sync(self, hand: Hand) -> int:
        """Follow ``hand``'s tokens not seen yet; returns the node (-1: out of the tree)."""
        from ..blueprint.game import DECISION

        toks = [t for r in hand.rounds for t in r]
        if self.n < len(toks):
            h = Hand([-1] * 9, hand.table)
            for i, tok in enumerate(toks):
                if i >= self.n and self.v >= 0:
                    t = self.bp.tree
                    if t.kind[self.v] != DECISION or t.street[self.v] != h.street or t.actor[self.v] != h.to_act:
                        self.v = -1
                    else:
                        lab = self.mine.get(i) or self.bp.map_action(self.v, h, tok, self.rng)
                        self.v = -1 if lab is None else self.bp.child(self.v, lab)
                h.apply(tok)
            self.n = len(toks)
        t = self.bp.tree
        if self.v >= 0 and not hand.done and (t.kind[self.v] != DECISION or t.street[self.v] != hand.street
                                              or t.actor[self.v] != hand.to_act):
            self.v = -1
        return self.v


class BlueprintAgent(Agent):
    """Plays a :class:`Blueprint` (module doc); ``stats``: decisions, and those it could not
    take from the tree (played as check/call); ``decided``: per betting string of the hand, the
    (tokens, probabilities) the decision there sampled its action from (for :mod:`.aivat`)."""

    def __init__(self, bp: Blueprint, seed: int = 0, name: str | None = None):
        self.bp = bp
        self.rng = np.random.default_rng(seed)
        self.name = name or f"blueprint:{bp.path}"
        self.stats = {"decisions": 0, "off_tree": 0, "unreached": 0}

    def begin(self, seat, hand):
        self.follow = Follower(self.bp, self.rng)
        self.decided: dict[str, tuple] = {}

    def act(self, hand, seat):
        self.stats["decisions"] += 1
        v = self.follow.sync(hand)
        if v < 0:
            self.stats["off_tree"] += 1
            return "c"
        b = self.bp.buckets(hand.street, [hand.hole(seat)], hand.board())
        if b[0] < 0:
            self.stats["unreached"] += 1
            return "c"
        p = self.bp.probs(v, b)[0]
        a = sample_action(p, self.rng)
        labels = self.bp.tree.labels[v]
        self.follow.mine[sum(len(r) for r in hand.rounds)] = labels[a]
        self.decided[hand.betting()] = ([self.bp.real_token(lab, hand) for lab in labels], p)
        return self.bp.real_token(labels[a], hand)


def sample_action(p: np.ndarray, rng) -> int:
    """An action index drawn from the probabilities ``p`` (the last one if rounding leaves the
    cumulative sum below the draw)."""
    return int(min(np.searchsorted(np.cumsum(p), rng.random(), side="right"), len(p) - 1))


def make_agent(spec: str, abstraction: str | None, seed: int, stdin=None, stdout=None) -> Agent:
    """``call``, ``fold``, ``random``, ``human`` or a blueprint checkpoint path (``.npz``); the
    depth-limited agent's ``dl:`` specs are :func:`.realtime.make_agent`'s."""
    if spec == "call":
        return CallingStation()
    if spec == "fold":
        return Folder()
    if spec == "random":
        return RandomAgent(seed)
    if spec == "human":
        return HumanAgent(stdin, stdout)
    if spec.endswith(".npz"):
        if not abstraction:
            raise InputError(f"{spec}: a blueprint agent needs --abstraction ABS.npz")
        return BlueprintAgent(Blueprint(spec, abstraction), seed)
    raise InputError(f"agent {spec!r}: expected call, fold, random, human, a blueprint checkpoint .npz or dl:BP.npz")
