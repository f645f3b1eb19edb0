"""No-limit betting abstractions and the public betting tree of one betting round.

Chips and pots
--------------
Every amount is in chips. ``contrib[p]`` is what player p has put in during the whole hand;
a player's ``stack`` is what they started the hand with, so ``stack - contrib[p]`` is behind.
The pot is ``contrib[0] + contrib[1]``.

Bet sizes
---------
A size is a pot multiplier x, or :data:`ALL_IN`. With ``to_call`` = what the player must add
to match the opponent, "raise by x pot" means

    raise amount  = x * (pot + to_call)          (the pot after calling)
    raise-to      = contrib[opponent] + raise amount,

so an opening bet of x is x * pot. Amounts are rounded to the nearest chip. A minimum raise
applies: the raise amount is at least the previous bet or raise increment of this round and
at least one big blind. Sizes at or above the stack collapse into all-in; equal sizes merge.
(:func:`.sizes.raise_to` is the rule.)

A player's spec (:class:`PlayerBetting`) lists sizes per raise depth:

- ``first_bet``: opening bet when the player acts first (depth 0);
- ``bet_after_check``: bet after the opponent checked (depth 0, second to act);
- ``raises[k]``: raise when facing k + 1 bets/raises this round; the last entry repeats for
  deeper raises, and an empty tuple means the player never raises;
- ``open_fold``: whether fold is offered when not facing a bet (the Libratus abstraction
  offers it; it is never better than checking).

Fold is always offered when facing a bet, check/call always.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from ..errors import InputError, parse_json, read_json
from .sizes import raise_to

ALL_IN = math.inf


@dataclass(frozen=True)
class PlayerBetting:
    """One player's bet and raise sizes (pot multipliers, :data:`ALL_IN`); see the module doc."""

    first_bet: tuple = ()
    bet_after_check: tuple = ()
    raises: tuple = ()  # tuple of tuples, by raise depth; the last repeats
    open_fold: bool = False

    def __post_init__(self):
        object.__setattr__(self, "first_bet", _sizes(self.first_bet, "first_bet"))
        object.__setattr__(self, "bet_after_check", _sizes(self.bet_after_check, "bet_after_check"))
        raises = tuple(_sizes(r, f"raises[{k}]") for k, r in enumerate(self.raises))
        object.__setattr__(self, "raises", raises)

    def sizes(self, depth: int, acts_first: bool) -> tuple:
        """Sizes offered when ``depth`` bets/raises have been made this round."""
        if depth == 0:
            return self.first_bet if acts_first else self.bet_after_check
        if not self.raises:
            return ()
        return self.raises[min(depth - 1, len(self.raises) - 1)]

    def to_dict(self) -> dict:
        def out(t):
            return ["allin" if s == ALL_IN else s for s in t]

        return {
            "first_bet": out(self.first_bet),
            "bet_after_check": out(self.bet_after_check),
            "raises": [out(r) for r in self.raises],
            "open_fold": self.open_fold,
        }

    @classmethod
    def from_dict(cls, d: dict, where: str = "betting") -> "PlayerBetting":
        if not isinstance(d, dict):
            raise InputError(f"{where}: expected an object with first_bet, bet_after_check, raises, open_fold")
        unknown = set(d) - {"first_bet", "bet_after_check", "raises", "open_fold"}
        if unknown:
            raise InputError(f"{where}: unknown keys {sorted(unknown)}")
        raises = d.get("raises", ())
        if not isinstance(raises, (list, tuple)) or any(not isinstance(r, (list, tuple)) for r in raises):
            raise InputError(f"{where}: raises must be a list of lists of sizes, one list per raise depth")
        try:
            return cls(d.get("first_bet", ()), d.get("bet_after_check", ()), tuple(raises), bool(d.get("open_fold", False)))
        except InputError as e:
            raise InputError(f"{where}: {e}") from None


def _sizes(seq, where: str) -> tuple:
    out = []
    if isinstance(seq, (str, int, float)):
        raise InputError(f"{where}: expected a list of sizes, got {seq!r}")
    for s in seq:
        if isinstance(s, str) and s.lower().replace("-", "").replace("_", "") == "allin":
            out.append(ALL_IN)
            continue
        try:
            v = float(s)
        except (TypeError, ValueError):
            raise InputError(f"{where}: size {s!r} is not a pot multiplier or 'allin'") from None
        if not (v > 0):  # inf is ALL_IN
            raise InputError(f"{where}: size {s!r} must be a positive pot multiplier")
        out.append(v)
    return tuple(out)


@dataclass(frozen=True)
class BettingAbstraction:
    """Bet sizes of player 0 and player 1, and a name."""

    players: tuple[PlayerBetting, PlayerBetting]
    name: str = "custom"

    def to_dict(self) -> dict:
        return {"name": self.name, "players": [p.to_dict() for p in self.players]}


def libratus(first_player: int = 0) -> BettingAbstraction:
    """Libratus's river abstraction, as written in Kroer, Farina & Sandholm 2018, section 7.

    Libratus ("L") acts first, as in the paper's endgames; L is ``first_player``.

    - L first: fold, check, bet 0.25, 0.5, 1, 2, 4, 8 x pot, all-in.
    - L checked and faces a bet: fold, call, raise 0.4, 0.7, 1.1, 2, all-in.
    - L bet and faces a raise: fold, call, raise 0.4, 0.7, 2, all-in.
    - L faces any later raise: fold, call, raise 0.7, all-in.
    - Opponent after L's check: fold, check, bet 0.5, 0.75, 1, all-in.
    - Opponent facing L's first bet: fold, call, raise 0.7, 1.1, all-in.
    - Opponent facing later raises: fold, call, raise 0.7, all-in.
    """
    lib = PlayerBetting(
        first_bet=(0.25, 0.5, 1, 2, 4, 8, ALL_IN),
        raises=((0.4, 0.7, 1.1, 2, ALL_IN), (0.4, 0.7, 2, ALL_IN), (0.7, ALL_IN)),
        open_fold=True,
    )
    opp = PlayerBetting(
        bet_after_check=(0.5, 0.75, 1, ALL_IN),
        raises=((0.7, 1.1, ALL_IN), (0.7, ALL_IN)),
        open_fold=True,
    )
    players = (lib, opp) if first_player == 0 else (opp, lib)
    return BettingAbstraction(players, "libratus")


def fcpa() -> BettingAbstraction:
    """OpenSpiel's ``fcpa``: fold (facing a bet), check/call, pot-size bet/raise, all-in."""
    p = PlayerBetting(first_bet=(1, ALL_IN), bet_after_check=(1, ALL_IN), raises=((1, ALL_IN),))
    return BettingAbstraction((p, p), "fcpa")


def check_down() -> BettingAbstraction:
    """No bets at all: check, check, showdown."""
    return BettingAbstraction((PlayerBetting(), PlayerBetting()), "check_down")


BUILTIN = {"libratus": libratus, "fcpa": lambda first_player=0: fcpa(), "check_down": lambda first_player=0: check_down()}


def make_abstraction(spec, first_player: int = 0) -> BettingAbstraction:
    """A built-in name (libratus, fcpa, check_down), a JSON file/string, a dict or an instance.

    A dict is ``{"players": [spec0, spec1]}`` with each spec as in :meth:`PlayerBetting.from_dict`,
    or a single ``{"first_bet": ...}`` spec used for both players.
    """
    if isinstance(spec, BettingAbstraction):
        return spec
    if isinstance(spec, str):
        s = spec.strip()
        if s in BUILTIN:
            return BUILTIN[s](first_player=first_player)
        if s.startswith("{"):
            spec = parse_json(s, "abstraction")
        elif os.path.isfile(s):
            spec = read_json(s, "abstraction file")
        else:
            raise InputError(f"unknown abstraction {s!r}; built-in: {', '.join(BUILTIN)}, or a JSON file")
    if not isinstance(spec, dict):
        raise InputError(f"abstraction: expected a name, a JSON object or file, got {spec!r}")
    if "players" in spec:
        players = spec["players"]
        if not isinstance(players, list) or len(players) != 2:
            raise InputError("abstraction: 'players' must list two player specs")
        pb = tuple(PlayerBetting.from_dict(p, f"abstraction player {i}") for i, p in enumerate(players))
    else:
        p = PlayerBetting.from_dict({k: v for k, v in spec.items() if k != "name"}, "abstraction")
        pb = (p, p)
    return BettingAbstraction(pb, str(spec.get("name", "custom")))


# ------------------------------------------------------------------ the tree


@dataclass
class BettingTree:
    """The public tree of one betting round, in depth-first preorder (parents first).

    Decision node ``v``: ``actor[v]``, ``contrib[v]`` (chips in before acting), ``actions[v]``
    (labels: ``f`` fold, ``x`` check, ``c`` call, ``bN`` bet/raise to N chips put in this
    round), ``node_last[v][p]`` (player p's last (node, action) before v, or ``None``),
    ``children[v][a]`` (``>= 0`` a decision node, ``< 0`` terminal ``-1 - t``) and
    ``history[v]`` (labels joined by ``-``, empty at the root). Terminal ``t``: ``kind[t]``
    ``"fold"`` or ``"showdown"``, ``payoff0[t]`` player 0's chips for a fold (relative to the
    start of the hand), ``stake[t]`` what each player has in at a showdown, and the last
    (node, action) of each player before it, ``last[t][p]`` (``None`` if p never acted).
    """

    stack: float
    big_blind: float
    start_contrib: tuple[float, float]
    first_player: int
    actor: list[int] = field(default_factory=list)
    contrib: list[tuple[float, float]] = field(default_factory=list)
    actions: list[tuple[str, ...]] = field(default_factory=list)
    children: list[list[int]] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    parent: list[tuple[int, int] | None] = field(default_factory=list)
    node_last: list[tuple] = field(default_factory=list)
    kind: list[str] = field(default_factory=list)
    payoff0: list[float] = field(default_factory=list)
    stake: list[float] = field(default_factory=list)
    last: list[tuple] = field(default_factory=list)
    term_history: list[str] = field(default_factory=list)

    @property
    def n_nodes(self) -> int:
        return len(self.actor)

    @property
    def n_terminals(self) -> int:
        return len(self.kind)

    def nodes_of(self, player: int) -> list[int]:
        return [v for v in range(self.n_nodes) if self.actor[v] == player]

    @property
    def chance(self) -> list[float]:
        """Chance weight of each terminal's runout: 1 (one street, no cards dealt)."""
        return [1.0] * self.n_terminals


def build_tree(
    abstraction: BettingAbstraction,
    pot: float,
    stack: float = 20000,
    big_blind: float = 100,
    first_player: int = 0,
) -> BettingTree:
    """Public betting tree of a round that starts with ``pot`` chips, half from each player."""
    if not (pot > 0) or not math.isfinite(pot):
        raise InputError(f"pot must be a positive number of chips, got {pot!r}")
    if not (stack > pot / 2):
        raise InputError(f"stack {stack!r} must exceed each player's share of the pot ({pot / 2!r})")
    if first_player not in (0, 1):
        raise InputError(f"first player must be 0 or 1, got {first_player!r}")
    start = (pot / 2, pot / 2)
    tree = BettingTree(float(stack), float(big_blind), start, first_player)
    _expand(tree, abstraction, start, first_player, depth=0, last_raise=0.0, checked=False,
            history=(), last=(None, None), parent=None)
    return tree


def _expand(tree, abstraction, contrib, p, depth, last_raise, checked, history, last, parent) -> int:
    o = 1 - p
    v = tree.n_nodes
    tree.actor.append(p)
    tree.contrib.append(contrib)
    tree.history.append("-".join(history))
    tree.parent.append(parent)
    tree.node_last.append(last)
    tree.actions.append(())
    tree.children.append([])
    street0 = tree.start_contrib[p]
    to_call = contrib[o] - contrib[p]
    acts: list[tuple[str, tuple]] = []  # (label, (kind, data))
    if to_call > 0 or abstraction.players[p].open_fold:
        acts.append(("f", ("fold",)))
    acts.append(("c" if to_call > 0 else "x", ("call",)))
    if contrib[o] < tree.stack:  # the opponent is not all-in: we may raise
        spec = abstraction.players[p]
        acts_first = depth == 0 and not checked
        targets = []
        min_to = contrib[o] + max(last_raise, tree.big_blind)
        for x in spec.sizes(depth, acts_first):
            if x == ALL_IN:
                to = tree.stack
            else:
                to = raise_to(x, contrib[0] + contrib[1] + to_call, contrib[o], min_to, tree.stack)
            if to not in targets:
                targets.append(to)
        for to in sorted(targets):
            acts.append((f"b{_chips(to - street0)}", ("raise", to)))
    labels = tuple(a for a, _ in acts)
    tree.actions[v] = labels
    children = []
    for a, (label, what) in enumerate(acts):
        h = history + (label,)
        new_last = tuple((v, a) if q == p else last[q] for q in (0, 1))
        if what[0] == "fold":
            children.append(_terminal(tree, "fold", -contrib[0] if p == 0 else contrib[1], 0.0, new_last, h))
        elif what[0] == "call":
            if to_call > 0 or checked:
                children.append(_terminal(tree, "showdown", 0.0, contrib[o], new_last, h))
            else:  # first check of the round: the opponent acts
                children.append(_expand(tree, abstraction, contrib, o, depth, last_raise, True, h, new_last, (v, a)))
        else:
            to = what[1]
            c = list(contrib)
            c[p] = to
            children.append(_expand(tree, abstraction, tuple(c), o, depth + 1, to - contrib[o], checked, h,
                                    new_last, (v, a)))
    tree.children[v] = children
    return v


def _terminal(tree, kind, payoff0, stake, last, history) -> int:
    t = tree.n_terminals
    tree.kind.append(kind)
    tree.payoff0.append(float(payoff0))
    tree.stake.append(float(stake))
    tree.last.append(last)
    tree.term_history.append("-".join(history))
    return -1 - t


def _chips(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"
