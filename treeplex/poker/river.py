"""No-limit hold'em river endgames (EGT paper, Kroer, Farina & Sandholm 2018, section 7).

The game: the board (5 cards) is public and the pot holds ``pot`` chips, half from each
player; each player started the hand with ``stack`` chips. Chance deals hole cards (h0, h1)
with probability proportional to ``range0[h0] * range1[h1]`` over card-disjoint pairs (the
Libratus subgame construction: each range is the conditional hand distribution). Then one
betting round of the given abstraction (:mod:`.betting`), ``first`` acting first. A fold
loses what the folder has in; a showdown wins what the opponent has in (ties split).

Units: payoffs are player 0's chips relative to the start of the hand (so the game is
zero-sum and a fold at once loses pot/2); also in mbb/g (big blind = ``big_blind`` chips,
1 chip = 10 mbb at the default 100) and in % of the starting pot. Player 0 maximizes.

The sequence form is laid out as public betting node x hand: player p's betting nodes in
depth-first order, and within node v the infoset of hand h (index into p's hands, the
range's hands not blocked by the board and with weight > 0, weakest first) owns sequences
``base_v + h * k_v + a``. :class:`RiverGame` builds that :class:`~treeplex.model.problem.Problem`
with the structured :class:`~.operator.RiverPayoff`; it is also a rules game (a chance node
dealing every pair, then the betting) that :func:`treeplex.compile_game` turns into the same
game with an explicit matrix, for small instances and cross-checks.
"""

from __future__ import annotations

import json
import time

import numpy as np

from ..errors import InputError, read_json
from ..model.game import RulesState
from .betting import build_tree, make_abstraction
from .cards import HAND_CARDS, board_mask, card_name, hand_name, hand_strength, parse_board
from .hands_game import HandsGame, HandsProblem
from .operator import DENSE_PAIRS, RiverPayoff, _normalizer
from .ranges import make_range


class RiverGame(HandsGame):
    """A river endgame; see the module docstring for the game, its units and its layout: the
    one-street, one-board case of the public tree x hands engine (:mod:`.hands_game`), with a
    betting abstraction (:mod:`.betting`) instead of postflop sizes.

    Parameters: ``pot`` (chips, split evenly), ``board`` (``"AsKd7h2c3s"`` or card ids),
    ``range0``/``range1`` (Pio strings, 1326-arrays, dicts, or None for uniform),
    ``abstraction`` (``"libratus"``, ``"fcpa"``, ``"check_down"``, a JSON file or dict),
    ``stack`` (each player's chips at the start of the hand), ``big_blind``, ``first``
    (the player who acts first), ``showdown`` (``"sweep"`` or ``"dense"`` products; ``"auto"``: dense up to
    ``operator.DENSE_PAIRS`` hand pairs) and
    ``weights``:

    - ``"conditional"`` (default): each range is the conditional hand distribution, and the
      deal (h0, h1) has probability w0 w1 / Z, Z the total weight of card-disjoint pairs;
    - ``"reach"``: the weights are the players' reach probabilities in the full game (chance
      included), and the deal has weight w0 w1 / N, N the number of card-disjoint pairs, not
      divided by the total. Values and gaps are then in full-game units: the conditional
      game's times Z / N (:attr:`reach_scale`). Weights with Z = N give the conditional game;
      scaling either range by c scales values and gaps by c and leaves CFR's iterates as they
      are.
    """

    payoff_unit = "chips"

    def __init__(self, pot=2100, board=None, range0=None, range1=None, abstraction="libratus", stack=20000,
                 big_blind=100, first=0, showdown="auto", weights="conditional"):
        if board is None:
            raise InputError("river: board is required, e.g. board=AsKd7h2c3s")
        if showdown not in ("auto", "sweep", "dense"):
            raise InputError(f"river: showdown must be 'auto', 'sweep' or 'dense', got {showdown!r}")
        if weights not in ("conditional", "reach"):
            raise InputError(f"river: weights must be 'conditional' (ranges are conditional distributions) or "
                             f"'reach' (reach probabilities in the full game), got {weights!r}")
        self.weights = weights
        self.pot, self.stack, self.big_blind = (_chips(v, k) for k, v in (("pot", pot), ("stack", stack),
                                                                         ("big_blind", big_blind)))
        if isinstance(first, bool) or not isinstance(first, int) or first not in (0, 1):
            raise InputError(f"river: first must be 0 or 1 (the player who acts first), got {first!r}")
        self.first = first
        self.board = parse_board(board)
        self.showdown = showdown
        self.abstraction = make_abstraction(abstraction, first_player=first)
        self.tree = build_tree(self.abstraction, self.pot, self.stack, self.big_blind, first)
        alive = board_mask(self.board)
        ranges = [make_range(spec, f"range{p}") for p, spec in enumerate((range0, range1))]
        keeps = [np.flatnonzero((w > 0) & alive) for w in ranges]
        for p, keep in enumerate(keeps):
            if len(keep) == 0:
                raise InputError(f"river: range{p} has no hand left once the board {self.board_text} is removed")
        strength = hand_strength(self.board, np.union1d(*keeps))
        self.hands = [keep[np.argsort(strength[keep], kind="stable")] for keep in keeps]  # weakest first: the
        self.weight = [w[h] for w, h in zip(ranges, self.hands)]                         # operator sweeps in order
        self.strength = [strength[h] for h in self.hands]
        self.name = (f"river(pot={_num(self.pot)},board={self.board_text},abstraction={self.abstraction.name}"
                     + (f",first={first}" if first else "") + (",weights=reach" if weights == "reach" else "") + ")")

    @property
    def reach_scale(self) -> float:
        """Z / N with ``weights="reach"`` (1 otherwise): the game's values and gaps are the
        conditional game's times this, Z the total weight and N the number of card-disjoint
        pairs (h0, h1)."""
        if self.weights != "reach":
            return 1.0
        cards = [HAND_CARDS[h] for h in self.hands]
        return _normalizer(cards, self.weight) / _normalizer(cards, [np.ones(len(w)) for w in self.weight])

    @property
    def board_text(self) -> str:
        return "".join(card_name(c) for c in self.board)

    def operator(self, threads: int | None = None) -> RiverPayoff:
        """The structured payoff operator (``threads``: see :class:`RiverPayoff`)."""
        kind, value, base, stride = self.terminal_arrays()
        cards = [HAND_CARDS[h] for h in self.hands]
        n_seqs = (self.n_seqs(0), self.n_seqs(1))
        z = _normalizer(cards, [np.ones(len(w)) for w in self.weight]) if self.weights == "reach" else None
        method = self.showdown
        if method == "auto":
            method = "dense" if len(self.weight[0]) * len(self.weight[1]) <= DENSE_PAIRS else "sweep"
        return RiverPayoff(n_seqs, cards, self.weight, self.strength, kind, value, base, stride, method,
                           threads, normalizer=z)

    def problem(self, max_memory=None) -> HandsProblem:
        """The sequence-form problem with the structured operator (never writes A down).
        ``max_memory`` is not checked: at most 1,326 hands per player and one betting round."""
        t0 = time.perf_counter()
        A = self.operator()
        X, Y = self.treeplex(0), self.treeplex(1)
        t = self.tree
        deals = A.n_deals
        stats = {
            "pot": self.pot,
            "board": self.board_text,
            "abstraction": self.abstraction.name,
            "hands": list(self.n_hands),
            "betting_nodes": t.n_nodes,
            "terminal_betting_sequences": t.n_terminals,
            "deals": deals,
            "weights": self.weights,
            "leaves": A.leaves,
            "histories": 1 + deals * (t.n_nodes + t.n_terminals),
            "terminals": A.leaves,
            "chance_nodes": 1,
            "decision_nodes": deals * t.n_nodes,
            "explicit_csr_bytes": 24 * A.leaves,  # A and A^T: 8 B value + 4 B index per entry each
        }
        prob = HandsProblem(X, Y, A, name=self.name, stats=stats, payoff_unit="chips", big_blind=self.big_blind,
                            game=self)
        stats["compile_seconds"] = time.perf_counter() - t0
        return prob

    # ----------------------------------------------------------- rules game

    def initial_state(self) -> "RiverState":
        """Rules view for :func:`treeplex.compile_game`: a chance node over all deals, then betting."""
        self._scale = self.reach_scale
        return RiverState(self)

    def strategy_dict(self, x: np.ndarray, y: np.ndarray) -> dict:
        """Per-hand strategy at every betting node, plus each node's range-weighted frequencies.

        ``hands[name]`` lists the hand's action probabilities; ``frequencies`` are the acting
        player's combos x own reach weighted averages (what poker-solver users call the
        node's strategy); ``reach`` is the share of the player's range weight reaching it;
        ``weight[name]`` = range weight x own reach.
        """
        nodes = []
        plans = (x, y)
        for v in range(self.tree.n_nodes):
            p = self.tree.actor[v]
            probs, reach = self.behavioral(p, plans[p], v)
            freq, share = self.frequencies(p, probs, reach)
            nodes.append({
                "node": v,
                "history": self.tree.history[v],
                "player": p,
                "actions": list(self.tree.actions[v]),
                "pot": float(sum(self.tree.contrib[v])),
                "reach": share,
                "frequencies": freq,
                "hands": {hand_name(h): [round(float(q), 6) for q in probs[i]] for i, h in enumerate(self.hands[p])},
                "weight": {hand_name(h): round(float(w), 6) for h, w in zip(self.hands[p], self.weight[p] * reach)},
            })
        return {"game": self.name, "board": self.board_text, "pot": self.pot, "stack": self.stack,
                "big_blind": self.big_blind, "first": self.first, "weights": self.weights,
                "abstraction": self.abstraction.to_dict(),
                "units": "chips; action labels bN = bet/raise to N chips this round", "nodes": nodes}

    def summary(self, x: np.ndarray, y: np.ndarray, max_nodes: int | None = None) -> str:
        """Aggregate action frequencies per betting node, the way solver users read results."""
        lines = [f"{self.name}: pot {_num(self.pot)}, stacks {_num(self.stack)}, hands {self.n_hands[0]} vs "
                 f"{self.n_hands[1]}", "node (history)                          player  reach   frequencies"]
        for v in range(self.tree.n_nodes if max_nodes is None else min(max_nodes, self.tree.n_nodes)):
            p = self.tree.actor[v]
            probs, reach = self.behavioral(p, (x, y)[p], v)
            freq, share = self.frequencies(p, probs, reach)
            acts = ("  ".join(f"{a} {100 * f:5.1f}%" for a, f in zip(self.tree.actions[v], freq))
                    if share > 0 else "(never reached)")
            lines.append(f"{(self.tree.history[v] or '<root>'):40s} {p:>4d}  {100 * share:5.1f}%  {acts}")
        return "\n".join(lines)

    def save_strategy(self, path: str, x, y, **meta) -> None:
        with open(path, "w") as f:
            json.dump({**meta, **self.strategy_dict(x, y)}, f)


class RiverState(RulesState):
    """Rules state: ``deal`` is None at the root chance node, then (i0, i1) hand indices."""

    __slots__ = ("game", "deal", "node", "term")

    def __init__(self, game: RiverGame, deal=None, node=0, term=None):
        self.game, self.deal, self.node, self.term = game, deal, node, term

    def is_chance(self):
        return self.deal is None

    def is_terminal(self):
        return self.term is not None

    def chance_outcomes(self):
        g = self.game
        return [(f"{hand_name(g.hands[0][i])}|{hand_name(g.hands[1][j])}", p) for i, j, p in g.deals()]

    def player(self):
        return self.game.tree.actor[self.node]

    def infoset_key(self):
        p = self.player()
        return f"{hand_name(self.game.hands[p][self.deal[p]])}:{self.game.tree.history[self.node]}"

    def legal_actions(self):
        return self.game.tree.actions[self.node]

    def apply(self, action):
        g = self.game
        if self.deal is None:
            a, b = action.split("|")
            return RiverState(g, (g.hand_position(0, a), g.hand_position(1, b)))
        child = g.tree.children[self.node][g.tree.actions[self.node].index(action)]
        if child >= 0:
            return RiverState(g, self.deal, child)
        return RiverState(g, self.deal, self.node, -1 - child)

    def payoff(self):
        """Player 0's chips; with reach weights times :attr:`RiverGame.reach_scale` (the chance
        node keeps probabilities that sum to 1)."""
        t, g = self.term, self.game
        if g.tree.kind[t] == "fold":
            u = g.tree.payoff0[t]
        else:
            s0, s1 = g.strength[0][self.deal[0]], g.strength[1][self.deal[1]]
            u = g.tree.stake[t] * (1.0 if s0 > s1 else -1.0 if s0 < s1 else 0.0)
        return u * g._scale if g.weights == "reach" else u


# The paper's endgames (section 7) in sizes: Libratus's ranges are not public, so
# :func:`generated_endgame` draws stand-ins with as many hands as the paper's sequence counts
# imply under our Libratus tree (152 actions per hand per player at pot 2100, 92 at 3750):
# Endgame 2: 1 + 921 * 152 = 139,993 and 1 + 947 * 152 = 143,945 (paper: 140k, 144k);
# Endgame 7: 1 + 467 * 92 = 42,965 and 1 + 935 * 92 = 86,021 (paper: 43k, 86k).
PAPER_ENDGAMES = {2: {"pot": 2100, "hands": (921, 947)}, 7: {"pot": 3750, "hands": (467, 935)}}


def generated_endgame(pot: float = 2100, hands: tuple[int, int] = (921, 947), seed: int = 0,
                      abstraction="libratus", **kwargs) -> RiverGame:
    """A reproducible river endgame: a random board and, for each player, ``hands[p]`` hands
    drawn uniformly among those the board leaves, with weights uniform in [0.05, 1].

    Stacks 20,000 and big blind 100 (both papers); ``seed`` fixes everything.
    """
    rng = np.random.default_rng(seed)
    board = [int(c) for c in rng.choice(52, 5, replace=False)]
    alive = np.flatnonzero(board_mask(board))
    ranges = []
    for n in hands:
        if not 0 < n <= len(alive):
            raise InputError(f"generated endgame: {n} hands requested, the board leaves {len(alive)}")
        w = np.zeros(len(HAND_CARDS))
        w[rng.choice(alive, n, replace=False)] = rng.uniform(0.05, 1.0, n)
        ranges.append(w)
    return RiverGame(pot=pot, board=board, range0=ranges[0], range1=ranges[1], abstraction=abstraction, **kwargs)


def load_spec(path_or_dict, where: str | None = None) -> RiverGame:
    """A river game from a JSON spec file (or dict) with the keys of :class:`RiverGame`.

    ``where`` names the spec in error messages (default: the path, or "river spec").
    """
    spec = path_or_dict
    where = where or (path_or_dict if isinstance(path_or_dict, str) else "river spec")
    if not isinstance(spec, dict):
        spec = read_json(spec, "river spec")
    if not isinstance(spec, dict):
        raise InputError(f"{where}: a river spec is a JSON object")
    spec = dict(spec)
    spec.pop("game", None)
    allowed = {"pot", "board", "range0", "range1", "abstraction", "stack", "big_blind", "first", "showdown", "weights"}
    unknown = set(spec) - allowed
    if unknown:
        raise InputError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(allowed)}")
    return RiverGame(**spec)


MAX_CHIPS = 1e12  # chip counts stay exact integers in floats, and bet sizes finite


def _chips(v, name: str) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise InputError(f"river: {name} must be a number of chips, got {v!r}") from None
    if not (0 < x <= MAX_CHIPS):
        raise InputError(f"river: {name} must be a positive number of chips up to {MAX_CHIPS:.0e}, got {v!r}")
    return x


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"
