"""Node locks of a postflop spot: the spec, its checks, and the locked sequences.

A lock is ``{"node": "x-b20", "player": 1, "strategy": {"f": 0.8, "c": 0.2}}``, optionally
with ``"hands": "AA,KK:0.5"`` (range syntax of :mod:`.ranges`: only those hands are locked;
without it every hand of the player's range is). ``node`` is a history as ``treeplex show``
prints it (``""`` or ``"root"``: the root); action labels are those of the node (``f``, ``x``,
``c``, ``bN``), as ``--out`` writes them; actions the strategy leaves out get probability 0.
A name whose dealt cards are written (``x-x/Ah/b20``) locks that node on that board only;
written without them (``x-x/b20``, one ``/`` per street) it locks the node on every board.
The game then solves the rest as an equilibrium of the locked game (:mod:`treeplex.core.locks`).
On the command line: ``--lock NODE:PLAYER:f=0.8,c=0.2[:HANDS]``.

**Weights.** A hand written with weight w < 1 (``KK:0.5``) is locked on a share w of its
probability: it plays w p + (1 - w) sigma, sigma free (the lower bounds l = w p of
:mod:`treeplex.core.locks`); weight 1 locks it outright.

**Range-wide frequencies** (``"frequency"`` in place of ``"strategy"``, ``--lock
NODE:PLAYER:freq:f=0.8,c=0.2``): the range at the node plays the actions with these
frequencies, spread over its hands from a baseline (the unlocked spot's solution, which
``treeplex solve`` computes first; :meth:`~.postflop.PostflopGame.set_baseline`) by
:func:`spread`, then locked hand by hand. postflop-solver has no range-wide lock (its
``lock_current_strategy`` takes one mixture per hand; a hand whose row is all zero stays
free), so this is treeplex's rule, the same for every solver; locking every hand to the
same mixture is the plain ``strategy`` lock.
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

KEYS = {"node", "player", "strategy", "frequency", "hands"}
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
        kinds = [k for k in ("strategy", "frequency") if k in lk]
        if bad or not {"node", "player"} <= set(lk) or len(kinds) != 1:
            raise InputError(f"{where}: keys must be node, player, one of strategy or frequency, and optionally "
                             f"hands; got {sorted(lk)}")
        kind = kinds[0]
        if not isinstance(lk["node"], str):
            raise InputError(f"{where}: node must be a history such as 'x-b20' ('' for the root), got {lk['node']!r}")
        if not isinstance(lk["player"], int) or isinstance(lk["player"], bool) or lk["player"] not in (0, 1):
            raise InputError(f"{where}: player must be 0 (OOP) or 1 (IP), got {lk['player']!r}")
        st = lk[kind]
        if not isinstance(st, dict) or not st:
            raise InputError(f"{where}: {kind} must map action labels to probabilities, e.g. {{\"f\": 0.8, \"c\": 0.2}}")
        probs = {}
        for a, q in st.items():
            try:
                q = math.nan if isinstance(q, bool) else float(q)
            except (TypeError, ValueError):
                q = math.nan
            if not (0.0 <= q <= 1.0):
                raise InputError(f"{where}: {kind}[{a!r}] must be a probability in [0, 1], got {st[a]!r}")
            probs[str(a)] = q
        total = sum(probs.values())
        if abs(total - 1.0) > TOL:
            raise InputError(f"{where}: {kind} probabilities sum to {total:g}, not 1")
        hands = lk.get("hands")
        if hands is not None and (not isinstance(hands, str) or not hands.strip()):
            raise InputError(f"{where}: hands must be range text such as 'AA,KK', got {hands!r}")
        out.append({"node": lk["node"].strip(), "player": lk["player"], "kind": kind,
                    "strategy": {a: q / total for a, q in probs.items()}, "hands": hands})
    return out


def parse_lock_text(text: str) -> dict:
    """``NODE:PLAYER:f=0.8,c=0.2[:HANDS]`` (the ``--lock`` option) as a lock object;
    ``NODE:PLAYER:freq:f=0.8,c=0.2[:HANDS]`` as a range-wide frequency lock."""
    parts = text.split(":", 2)
    if len(parts) < 3:
        raise InputError(f"--lock {text!r}: expected NODE:PLAYER:ACTION=P,ACTION=P[:HANDS], e.g. x-b20:1:f=0.8,c=0.2")
    node, player, rest = parts
    kind = "strategy"
    if rest.startswith("freq:"):
        kind, rest = "frequency", rest[len("freq:"):]
    strat, sep, hands = rest.partition(":")
    try:
        player = int(player)
    except ValueError:
        raise InputError(f"--lock {text!r}: player must be 0 or 1, got {player!r}") from None
    st = {}
    for item in strat.split(","):
        a, eq, q = item.partition("=")
        if not eq:
            raise InputError(f"--lock {text!r}: strategy item {item!r} is not ACTION=PROBABILITY")
        if a.strip() in st:
            raise InputError(f"--lock {text!r}: action {a.strip()!r} is given twice")
        st[a.strip()] = q.strip()
    lk = {"node": node, "player": player, kind: st}
    if sep:
        lk["hands"] = hands
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
    :func:`check_locks`) on ``game``'s sequence form (no isomorphism), or None. Frequency
    locks are spread over hands by :func:`spread` from ``game.baseline``."""
    tree = game.tree
    seqs, probs = ([], []), ([], [])
    partial = [None, None]
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
        hands, weights = _locked_hands(game, p, lk["hands"], where)
        if lk["kind"] == "frequency" and np.any(weights < 1):
            raise InputError(f"{where}.hands: a frequency lock takes hands with weight 1 (the range at the node "
                             "plays the frequencies)")
        k = len(actions)
        for v in nodes:
            first = game.bases[p][v] + hands * k
            for s in first:
                if int(s) in owner[p]:
                    raise InputError(f"{where}: node {tree.history[v] or 'root'!r} hand "
                                     f"{hand_name(game.hands[p][(s - game.bases[p][v]) // k])} is locked "
                                     f"by locks[{owner[p][int(s)]}] already")
                owner[p][int(s)] = i
            if lk["kind"] == "frequency":
                mix = spread(*_baseline(game, p, v, hands, where), dist)
            else:
                mix = np.tile(dist, (len(hands), 1))
            s_all = first[:, None] + np.arange(k)[None, :]
            full = weights == 1
            seqs[p].append(s_all[full].ravel())
            probs[p].append(mix[full].ravel())
            if not full.all():
                if partial[p] is None:
                    partial[p] = np.zeros(game.n_seqs(p))
                partial[p][s_all[~full].ravel()] = (weights[~full, None] * mix[~full]).ravel()
    out = []
    for p in (0, 1):
        if not seqs[p]:
            out.append(None)
            continue
        s, q = np.concatenate(seqs[p]).astype(np.int64), np.concatenate(probs[p])
        order = np.argsort(s, kind="stable")
        out.append(Locks(s[order], q[order], game.n_seqs(p), partial[p]))
    return tuple(out)


def spread(probs: np.ndarray, reach: np.ndarray, freq: np.ndarray) -> np.ndarray:
    """Per-hand mixtures (float[n, k]) whose range-wide frequencies are ``freq``, from the
    baseline mixtures ``probs`` (float[n, k]) of hands reaching with weights ``reach``.

    With F = reach @ probs / sum(reach) the baseline's range-wide frequencies: every hand
    keeps the share f_a / F_a of its probability of each action the range must play less
    (f_a < F_a), and the probability so freed goes to the actions it must play more
    (f_a > F_a), shared in proportion to f_a - F_a. Each row stays a distribution, hands keep
    their order of preference among the actions that shrink, and reach @ out / sum(reach) = f
    exactly: an action a that shrinks gives (f_a / F_a) F_a = f_a; one that grows gets F_a +
    (f_a - F_a) / D * sum_shrink (F - f) = f_a, D = sum_grow (f - F) = sum_shrink (F - f).
    Where the baseline's range at the node is empty (it never gets there), every hand plays
    ``freq`` itself."""
    total = reach.sum()
    if not total > 0:
        return np.tile(freq, (len(probs), 1))
    F = reach @ probs / total
    keep = np.where(freq < F, freq / np.where(F > 0, F, 1.0), 1.0)
    out = probs * keep
    grow = np.clip(freq - F, 0.0, None)
    D = grow.sum()
    if D > 0:
        out += (probs * (1.0 - keep)).sum(axis=1, keepdims=True) * (grow / D)
    return out


def _baseline(game, p: int, v: int, hands: np.ndarray, where: str) -> tuple[np.ndarray, np.ndarray]:
    """(baseline mixtures, baseline range weights) of ``hands`` of player p at node v."""
    if game.baseline is None:
        raise InputError(f"{where}: a frequency lock is spread over hands from the unlocked spot's solution; "
                         "treeplex solve computes it (or reads --baseline FILE); in Python call "
                         "game.set_baseline(x, y) first")
    probs, reach = game.baseline(p, v, where)
    return probs[hands], reach[hands]


def _locked_hands(game, p: int, text, where: str) -> tuple[np.ndarray, np.ndarray]:
    """(indices into player p's hands, lock weights in (0, 1]) of the lock's ``hands``
    (every hand, weight 1, when None)."""
    n = len(game.hands[p])
    if text is None:
        return np.arange(n), np.ones(n)
    w = make_range(text, f"{where}.hands")
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
    live = np.array(live)
    order = np.argsort(pos[live])
    return pos[live][order], w[live][order]


def baseline_from_plans(game, x: np.ndarray, y: np.ndarray):
    """``game.baseline`` from the unlocked spot's plans (x, y) (same layout: no isomorphism):
    per (player, node) the hands' mixtures and range weights (weight x own reach x alive)."""
    plans = (x, y)

    def at(p, v, where):
        probs, reach = game.behavioral(p, plans[p], v)
        return probs, game.weight[p] * reach * game.node_alive(p, v)

    return at


def baseline_from_solution(game, data: dict, path: str):
    """``game.baseline`` from a ``solve --out`` file of the unlocked spot: each node by its
    history, each hand's mixture (``hands``) and range weight (``weight``) by its name; a
    hand the file leaves out has weight 0 there. The file is checked against ``game`` first,
    every node of it (one-line :class:`InputError`s): the same bet sizes, each node a decision
    of the same player with the same actions, hands of that player's range only, weights
    finite and >= 0, each mixture summing to 1, and each player's weights where it has not
    acted yet (the root and the nodes just below it) equal to its range weights: a solve of
    another spot with the same name (other ranges) is refused, not spread from."""
    import json

    for key, want in (("board", game.board_text), ("pot", game.pot), ("stack", game.stack)):
        if data.get(key) != want:
            raise InputError(f"--baseline {path}: {key} {data.get(key)!r}, this spot {want!r}: not the same spot")
    sizes = {s: [z.to_dict() for z in pair] for s, pair in zip(game.streets, game.sizes)}
    if data.get("sizes") != json.loads(json.dumps(sizes)):
        raise InputError(f"--baseline {path}: bet sizes {data.get('sizes')!r}, this spot {sizes!r}: not the same spot")
    tree = game.tree
    index = [{hand_name(h): i for i, h in enumerate(game.hands[p])} for p in (0, 1)]
    first = {0} | {c for k, c in tree.children[0] if k == DECISION}  # no earlier own action
    nodes = {}
    for j, nd in enumerate(data.get("nodes", [])):
        hist, p = nd["history"], nd["player"]
        where = f"--baseline {path}: node {j} ({hist or 'root'!r})"
        found = find_nodes(tree, hist, where)
        if len(found) != 1 or (hist, p) in nodes:
            raise InputError(f"{where}: " + ("written twice" if (hist, p) in nodes else "not one node of this spot"))
        v = found[0]
        if int(tree.actor[v]) != p or list(nd["actions"]) != list(tree.actions[v]):
            raise InputError(f"{where}: player {p} with actions {nd['actions']}, this spot player "
                             f"{int(tree.actor[v])} with {list(tree.actions[v])}: not the same spot")
        weight = nd.get("weight")
        if not isinstance(weight, dict):
            raise InputError(f"{where}: 'weight' must map hands to range weights")
        other = next((h for h in (*nd["hands"], *weight) if h not in index[p]), None)
        if other is not None:
            raise InputError(f"{where}: hand {other} is not in player {p}'s range here: not the same spot")
        k = len(nd["actions"])
        probs = np.full((len(index[p]), k), 1.0 / k)
        reach = np.zeros(len(index[p]))
        for h, w in weight.items():
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not (0.0 <= w < math.inf):
                raise InputError(f"{where}: hand {h}: weight {w!r} is not a finite number >= 0")
            reach[index[p][h]] = w
        for h, q in nd["hands"].items():
            if abs(sum(q) - 1.0) > 1e-4:
                raise InputError(f"{where}: hand {h}: probabilities sum to {sum(q):g}, not 1")
            probs[index[p][h]] = q
        if v in first:
            want = game.weight[p] * game.node_alive(p, v)
            if not np.allclose(reach, want, rtol=1e-6, atol=1e-6):
                raise InputError(f"{where}: player {p}'s range weights differ from this spot's: a solution of "
                                 "another spot")
        nodes[(hist, p)] = (probs / probs.sum(axis=1, keepdims=True), reach)

    def at(p, v, where):
        hist = game.tree.history[v]
        if (hist, p) not in nodes:
            raise InputError(f"{where}: the baseline {path} has no node {hist or 'root'!r} (save more streets with "
                             "--out-streets, or let solve compute the baseline)")
        return nodes[(hist, p)]

    return at
