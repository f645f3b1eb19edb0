"""Node locks of a postflop spot: the spec, its checks, and the locked sequences.

A lock is ``{"node": "x-b20", "player": 1, "strategy": {"f": 0.8, "c": 0.2}}``, optionally
with ``"hands": "AA,KK"`` (range syntax of :mod:`.ranges`, weights 1: only those hands are
locked; without it every hand of the player's range is). ``node`` is a history as
``treeplex show`` prints it (``""`` or ``"root"``: the root); action labels are those of the
node (``f``, ``x``, ``c``, ``bN``), as ``--out`` writes them; actions the strategy leaves out
get probability 0. A name whose dealt cards are written (``x-x/Ah/b20``) locks that node on
that board only; written without them (``x-x/b20``, one ``/`` per street) it locks the node on
every board. The game then solves the rest as an equilibrium of the locked game
(:mod:`treeplex.core.locks`). On the command line: ``--lock NODE:PLAYER:f=0.8,c=0.2[:HANDS]``.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..core.locks import Locks
from ..errors import InputError
from .cards import HAND_CARDS, N_HANDS, card_name, hand_name
from .public_tree import CHANCE, DECISION
from .ranges import make_range

KEYS = {"node", "player", "strategy", "hands"}
TOL = 1e-6  # a strategy's probabilities must sum to 1 within this


def check_locks(locks) -> list[dict]:
    """The spec's ``locks`` with their shape checked (the nodes are found later, on the tree):
    each strategy as {label: probability} normalized to sum exactly 1."""
    if locks is None:
        return []
    if not isinstance(locks, (list, tuple)):
        raise InputError(f"locks: expected a list of {{node, player, strategy}} objects, got {type(locks).__name__}")
    out = []
    for i, lk in enumerate(locks):
        where = f"locks[{i}]"
        if not isinstance(lk, dict):
            raise InputError(f"{where}: expected an object with node, player, strategy (and hands), got {lk!r}")
        bad = set(lk) - KEYS
        if bad or not {"node", "player", "strategy"} <= set(lk):
            raise InputError(f"{where}: keys must be node, player, strategy and optionally hands; got {sorted(lk)}")
        if not isinstance(lk["node"], str):
            raise InputError(f"{where}: node must be a history such as 'x-b20' ('' for the root), got {lk['node']!r}")
        if lk["player"] not in (0, 1) or isinstance(lk["player"], bool):
            raise InputError(f"{where}: player must be 0 (OOP) or 1 (IP), got {lk['player']!r}")
        st = lk["strategy"]
        if not isinstance(st, dict) or not st:
            raise InputError(f"{where}: strategy must map action labels to probabilities, e.g. {{\"f\": 0.8, \"c\": 0.2}}")
        probs = {}
        for a, q in st.items():
            try:
                q = float(q)
            except (TypeError, ValueError):
                q = math.nan
            if not (0.0 <= q <= 1.0):
                raise InputError(f"{where}: strategy[{a!r}] must be a probability in [0, 1], got {st[a]!r}")
            probs[str(a)] = q
        total = sum(probs.values())
        if abs(total - 1.0) > TOL:
            raise InputError(f"{where}: strategy probabilities sum to {total:g}, not 1")
        hands = lk.get("hands")
        if hands is not None and not isinstance(hands, str):
            raise InputError(f"{where}: hands must be range text such as 'AA,KK', got {hands!r}")
        out.append({"node": lk["node"].strip(), "player": lk["player"],
                    "strategy": {a: q / total for a, q in probs.items()}, "hands": hands})
    return out


def parse_lock_text(text: str) -> dict:
    """``NODE:PLAYER:f=0.8,c=0.2[:HANDS]`` (the ``--lock`` option) as a lock object."""
    parts = text.split(":", 3)
    if len(parts) < 3:
        raise InputError(f"--lock {text!r}: expected NODE:PLAYER:ACTION=P,ACTION=P[:HANDS], e.g. x-b20:1:f=0.8,c=0.2")
    node, player, strat = parts[:3]
    try:
        player = int(player)
    except ValueError:
        raise InputError(f"--lock {text!r}: player must be 0 or 1, got {player!r}") from None
    st = {}
    for item in strat.split(","):
        a, sep, q = item.partition("=")
        if not sep:
            raise InputError(f"--lock {text!r}: strategy item {item!r} is not ACTION=PROBABILITY")
        st[a.strip()] = q.strip()
    lk = {"node": node, "player": player, "strategy": st}
    if len(parts) == 4:
        lk["hands"] = parts[3]
    return lk


def find_nodes(tree, name: str, where: str) -> list[int]:
    """The decision nodes of ``tree`` that ``name`` names (see the module docstring): one,
    or one per board where the name leaves the dealt cards out."""
    if name in ("", "root", "<root>"):
        return [0]
    found = []
    stack = [(DECISION, 0, name, "")]
    while stack:
        kind, i, rest, path = stack.pop()
        at = path or "the root"
        if kind == DECISION:
            if not rest:
                found.append(i)
                continue
            label = re.match(r"[^-/]*", rest).group(0)
            actions = list(tree.actions[i])
            if label not in actions:
                raise InputError(f"{where}: node {name!r}: no action {label!r} at {at} (actions there: "
                                 f"{', '.join(actions)})")
            rest = rest[len(label):]
            rest = rest[1:] if rest.startswith("-") else rest
            sep = "-" if path and not path.endswith("/") else ""
            k, c = tree.children[i][actions.index(label)]
            stack.append((k, c, rest, path + sep + label))
        elif kind == CHANCE:
            if not rest.startswith("/"):
                raise InputError(f"{where}: node {name!r} ends where a card is dealt (after {at}); "
                                 f"a lock names a decision node")
            rest = rest[1:]
            cards = [card_name(c) for c in tree.chance_cards[i]]
            m = re.match(r"([2-9TJQKA][cdhs])/", rest)
            kids = tree.chance_children[i]
            if m:
                if m.group(1) not in cards:
                    raise InputError(f"{where}: node {name!r}: card {m.group(1)} cannot be dealt after {at}")
                j = cards.index(m.group(1))
                stack.append((*kids[j], rest[3:], f"{path}/{cards[j]}/"))
            else:
                stack.extend((*kid, rest, f"{path}/{c}/") for kid, c in zip(kids, cards))
        else:
            raise InputError(f"{where}: node {name!r}: the hand is over after {at}")
    return sorted(found)


def lock_sequences(game, locks: list[dict]) -> tuple:
    """Per player, the :class:`~treeplex.core.locks.Locks` of ``locks`` (checked by
    :func:`check_locks`) on ``game``'s sequence form (no isomorphism), or None."""
    tree = game.tree
    seqs, probs = ([], []), ([], [])
    owner = ({}, {})  # sequence start of each locked infoset -> lock index (refuses overlaps)
    for i, lk in enumerate(locks):
        where, p = f"locks[{i}]", lk["player"]
        nodes = find_nodes(tree, lk["node"], where)
        actors = {int(tree.actor[v]) for v in nodes}
        if actors != {p}:
            a = (actors - {p}).pop()
            raise InputError(f"{where}: node {lk['node'] or 'root'!r} is player {a}'s decision "
                             f"({'OOP' if a == 0 else 'IP'}), not player {p}'s")
        actions = list(tree.actions[nodes[0]])
        unknown = [a for a in lk["strategy"] if a not in actions]
        if unknown:
            raise InputError(f"{where}: node {lk['node'] or 'root'!r} has no action {unknown[0]!r} "
                             f"(actions there: {', '.join(actions)})")
        dist = np.array([lk["strategy"].get(a, 0.0) for a in actions])
        hands = _locked_hands(game, p, lk["hands"], where)
        k = len(actions)
        for v in nodes:
            first = game.bases[p][v] + hands * k
            for s in first:
                if int(s) in owner[p]:
                    raise InputError(f"{where}: node {tree.history[v] or 'root'!r} hand "
                                     f"{hand_name(game.hands[p][(s - game.bases[p][v]) // k])} is locked "
                                     f"by locks[{owner[p][int(s)]}] already")
                owner[p][int(s)] = i
            seqs[p].append((first[:, None] + np.arange(k)[None, :]).ravel())
            probs[p].append(np.tile(dist, len(hands)))
    out = []
    for p in (0, 1):
        if not seqs[p]:
            out.append(None)
            continue
        s, q = np.concatenate(seqs[p]).astype(np.int64), np.concatenate(probs[p])
        order = np.argsort(s, kind="stable")
        out.append(Locks(s[order], q[order], game.n_seqs(p)))
    return tuple(out)


def _locked_hands(game, p: int, text, where: str) -> np.ndarray:
    """Indices into player p's hands of the lock's ``hands`` (all of them when None)."""
    n = len(game.hands[p])
    if text is None:
        return np.arange(n)
    w = make_range(text, f"{where}.hands")
    if np.any((w > 0) & (w != 1)):
        raise InputError(f"{where}.hands: weights other than 1 are not supported (a hand is locked or not)")
    pos = np.full(N_HANDS, -1)
    pos[game.hands[p]] = np.arange(n)
    dead = set(game.board) | (set(range(52)) - set(game.deck))
    live = [h for h in np.flatnonzero(w > 0) if not dead & set(HAND_CARDS[h].tolist())]
    missing = [hand_name(h) for h in live if pos[h] < 0]
    if missing:
        raise InputError(f"{where}.hands: {', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''} "
                         f"not in player {p}'s range")
    if not live:
        raise InputError(f"{where}.hands: {text!r} leaves no hand once the board {game.board_text} is removed")
    return np.sort(pos[live])
