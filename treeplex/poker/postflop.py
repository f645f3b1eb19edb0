"""Postflop hold'em subgames from the flop, the turn or the river (one public-tree engine).

The game: the board (3, 4 or 5 cards, which sets the starting street) is public, ``pot``
chips are in the middle (half from each player) and each player has ``stack`` chips behind.
Chance deals hole cards (h0, h1) with probability proportional to ``range0[h0] * range1[h1]``
over card-disjoint pairs (each range is the conditional hand distribution, as in PioSOLVER
and postflop-solver), then the streets are played: betting (:mod:`.sizes`,
:mod:`.public_tree`), a turn card, betting, a river card, betting, showdown. Player 0 holds
``range0`` and is out of position (acts first on every street).

Units: payoffs are player 0's chips relative to the start of the hand, so the game is
zero-sum; ``ev`` per hand in the output is the chips a hand ends with out of the pot (pot
share, so both players' EVs add up to the pot), as poker solvers print it. Exploitability is
given in chips, in % of the starting pot (gap / 2 / pot) and in mbb/g (big blind
``big_blind`` chips).

Rake (``rake`` a fraction of the pot, ``rake_cap`` in big blinds, None: no cap), as
postflop-solver applies it (``game/evaluation.rs``): every terminal is raked, folds included,
r = min(rake x pot, cap) with pot = twice the loser's chips in (an uncalled bet is returned
first); the winner nets its gain minus r, the loser loses its chips in, a split pot costs
each player r/2. Postflop pots have seen the flop, so "no flop, no drop" never waives the
rake here (it would only concern pots won preflop). The game is then general-sum (u_0 + u_1
= -r at every terminal): each player's utility is its own (:meth:`PostflopGame.raked_values`
on the sequence form, :func:`.fused.fold_values` and :func:`.fused.showdown_values` on the fused engine); the CFR family runs
it by self-play on those utilities, as postflop-solver does, and the zero-sum solvers refuse
it. ``value`` is player 0's expected payoff, reported with player 1's and the expected rake;
the gap is the Nash gap sum_p [BR_p - u_p] (:mod:`treeplex.model.metrics`), postflop-solver's
raked exploitability times 2. ``ev`` per hand is then the hand's own pot share net of rake
(both players' EVs add up to the pot minus the expected rake).

Sequence form: player p's decision nodes in depth-first order; within node v, hand h (index
into p's hands: the range's hands the starting board leaves, with weight > 0) owns
sequences ``base_v + h * k_v + a``. Below a dealt card, the hands holding it keep their
infosets, which no deal reaches (zero rows of A). A river start uses the river endgame
operator (:class:`.operator.RiverPayoff`, hands sorted by strength); turn and flop starts use
:class:`.streets_operator.StreetsPayoff`.
"""

from __future__ import annotations

import json
import math
import os
import time
from functools import partial

import numpy as np

from ..core.treeplex import DeferredTreeplex
from ..model.problem import DeferredPayoff
from ..errors import InputError
from ..model.game import RulesState
from .cards import HAND_CARDS, RANKS, board_mask, card_name, hand_name, hand_strength, parse_board, parse_cards
from .bunching import Bunching, BunchedPayoff, parse_bunching
from .hands_game import HandsProblem, PublicTreeGame, frequency_table
from .operator import RiverPayoff, _normalizer, compatible
from .isomorphism import Reduction, SymmetricPayoff
from .locks import baseline_from_plans, baseline_from_solution, check_locks, lock_sequences
from .public_tree import CHANCE, DECISION, STREETS, TERMINAL, Budget, TreeConfig, build_public_tree, card_symmetries
from .ranges import make_range
from .sizes import StreetSizes, parse_sizes
from .streets_operator import StreetsPayoff

DEFAULT_SIZES = {"bet": "33%,75%", "raise": "2.5x"}
SPEC_KEYS = {"game", "board", "pot", "stack", "range0", "range1", "sizes", "bet", "raise", "donk",
             "add_allin_threshold", "force_allin_threshold", "merging_threshold", "raise_cap", "big_blind", "deck",
             "isomorphism", "locks", "rake", "rake_cap", "bunching"}
# The memory estimate (one place: bytes_per_seq and these constants; PostflopGame.cost_weights
# applies them), per full sequence (1 + hands x actions per player, isomorphism or not).
# Sequence form: peak RSS minus the interpreter's and numba's (160 MB) of a short DCFR solve (2
# threads, a gap check every 5 iterations), 2026-11-27: TURN (4.0M sequences, no isomorphism)
# 98-103 B per sequence in float64, 83 in float32; FLOP-FAST (116M sequences, isomorphism) 96.3
# and 82.1 (then with an 8 B orbit map per full sequence, since removed: these now overestimate
# isomorphic spots by about 8 B). Per sequence at one thread, by the solver's storage; more
# threads add 8 B each (the operator's partial outputs).
# Fused engine (poker/fused.py, from FUSED_MIN_SEQS sequences by default): R and S, 4 B each per
# sequence of the solver's layout in float32 (the orbit layout under isomorphism, counted here as
# the full one: an upper bound), BYTES_PER_PUBLIC_NODE per node, and per thread a walk stack of
# about WALK_BYTES_PER_HAND per hand of both players (TURN's, measured; a toy spot's are smaller).
# No plans and no payoff operator are made (--out reads the solver's state: fused.FusedProfile). Checked 2026-11-27 (fifth session; peak RSS
# minus the 171 MB no-op, 2 threads, a short dcfr-ps solve with --out) in docs/benchmarks.md.
SOLVER_BYTES_PER_SEQ = {"float64": 82, "float32": 68}
FUSED_BYTES_PER_SEQ = {"float64": 16, "float32": 8}
WALK_BYTES_PER_HAND = 10_000
BYTES_PER_THREAD_SEQ = 8
# fused=None picks the fused engine from here: TURN (4e6) on it since its kernels vectorize (2026-11-27,
# benchmarks/postflop.py, 2 threads: 5.14 s to 0.5% and 86 MB above the interpreter, against the sequence
# form's 5.15 s and 391 MB); the sequence form below (river spots: products of a few ms)
FUSED_MIN_SEQS = 2_000_000
OUT_BYTES_PER_HAND = 600  # --out: peak bytes per (saved node, hand) of strategy_dict (~510 measured, 3 streets, 20-card deck)
OUT_BYTES_PER_PAIR = 128  # --out: per (hand, hand) pair, the equities' showdown counts (TURN: 125 B measured)
BYTES_PER_PUBLIC_NODE = 200  # the public tree's arrays (81 B measured) and the operator's per-terminal arrays


def bytes_per_seq(threads: int, storage: str = "float64", fused: bool = False) -> int:
    """Bytes per sequence of a CFR-family solve with ``threads`` threads and state in
    ``storage``, on the sequence form or the fused engine."""
    if fused:
        return FUSED_BYTES_PER_SEQ[storage]
    return SOLVER_BYTES_PER_SEQ[storage] + (BYTES_PER_THREAD_SEQ * threads if threads > 1 else 0)


def read_sizes(spec: dict, streets: list[str]) -> list[tuple[StreetSizes, StreetSizes]]:
    """Per-street (OOP, IP) sizes from ``sizes`` ({street: {bet, raise, donk, oop: {...}, ip:
    {...}}}) or the flat keys ``bet``/``raise``/``donk`` (every street); defaults: 33%,75% / 2.5x."""
    nested = spec.get("sizes")
    flat = {k: spec[k] for k in ("bet", "raise", "donk") if spec.get(k) is not None}
    if nested is not None and flat:
        raise InputError("postflop: give sizes either as 'sizes' per street or as bet/raise/donk, not both")
    if nested is not None and not isinstance(nested, dict):
        raise InputError("postflop: 'sizes' must map streets (flop, turn, river) to {bet, raise, donk}")
    if nested is not None:
        unknown = set(nested) - set(STREETS)
        if unknown:
            raise InputError(f"postflop: sizes has unknown streets {sorted(unknown)}; use flop, turn, river")
    out = []
    for street in streets:
        where = f"sizes.{street}"
        if nested is None:
            d = {**DEFAULT_SIZES, **flat}
            where = "postflop"
        elif street not in nested:
            raise InputError(f"postflop: sizes.{street} is missing (this board plays the {', '.join(streets)})")
        else:
            d = nested[street]
        if not isinstance(d, dict):
            raise InputError(f"{where}: expected an object with bet, raise, donk (and optional oop/ip)")
        bad = set(d) - {"bet", "raise", "donk", "oop", "ip"}
        if bad:
            raise InputError(f"{where}: unknown keys {sorted(bad)}; use bet, raise, donk, oop, ip")
        players = []
        for side in ("oop", "ip"):
            s = d.get(side, {})
            if not isinstance(s, dict) or set(s) - {"bet", "raise", "donk"}:
                raise InputError(f"{where}.{side}: expected an object with bet, raise, donk")
            merged = {**{k: d[k] for k in ("bet", "raise", "donk") if k in d}, **s}
            donk = merged.get("donk")
            players.append(StreetSizes(
                parse_sizes(merged.get("bet", ""), f"{where}.bet"),
                parse_sizes(merged.get("raise", ""), f"{where}.raise", raise_sizes=True),
                None if donk is None else parse_sizes(donk, f"{where}.donk")))
        out.append(tuple(players))
    return out


def parse_deck(deck) -> tuple[int, ...]:
    """None: all 52 cards. A string of ranks (``"9TJQKA"``: every suit of those) or of cards."""
    if deck is None:
        return tuple(range(52))
    s = str(deck).replace(",", "").replace(" ", "")
    if s and all(ch.upper() in RANKS for ch in s):
        ranks = {RANKS.index(ch.upper()) for ch in s}
        return tuple(c for c in range(52) if c // 4 in ranks)
    return tuple(sorted(parse_cards(s, "deck")))


class PostflopGame(PublicTreeGame):
    """A postflop subgame; see the module docstring for the game, its units and its layout.

    ``board`` (``"QsJh2h"``), ``pot``, ``stack`` (effective, behind), ``range0`` (OOP) and
    ``range1`` (IP) as Pio strings, 1326-arrays or dicts; sizes per street (``sizes``) or for
    every street (``bet``, ``raise``, ``donk``), see :func:`read_sizes` and :mod:`.sizes`;
    ``add_allin_threshold``, ``force_allin_threshold``, ``merging_threshold`` (postflop-solver's:
    close sizes merge, :func:`.sizes.merge_close`; default 0, none), ``raise_cap``; ``big_blind`` (chips,
    for mbb/g); ``deck`` (None: 52 cards; ``"9TJQKA"`` for a short deck, small tests);
    ``isomorphism`` (default True: turn and flop starts share the subtrees of suit-isomorphic
    cards, exactly, :mod:`.isomorphism`; off with ``locks``, which may break the suit symmetry);
    ``locks``: node locks, a list of ``{"node", "player", "strategy" or "frequency", "hands"}``
    (:mod:`.locks`; frequency locks need :meth:`set_baseline`); ``rake`` (fraction of the pot,
    default 0) and ``rake_cap`` (big blinds; None: no cap), see the module docstring;
    ``bunching``: the folding ranges of the players who folded before the flop (at most 4),
    ``{"folded": [range, ...]}``, ``{"open": [range, ...]}`` (each folds what it does not open)
    or a list, which weight the deals by the cards they hold (:mod:`.bunching`; the sequence
    form only).
    """

    payoff_unit = "chips"
    strategy_options = ("streets", "profile")

    def __init__(self, board=None, pot=None, stack=None, range0=None, range1=None, sizes=None, bet=None,
                 donk=None, add_allin_threshold=1.5, force_allin_threshold=0.15, merging_threshold=0.0,
                 raise_cap=None, big_blind=10,
                 deck=None, isomorphism=None, locks=None, rake=0.0, rake_cap=None, bunching=None, **kw):
        rs = kw.pop("raise", None)
        self.args = {k: v for k, v in locals().items() if k not in ("self", "kw", "rs", "__class__")}
        if rs is not None:
            self.args["raise"] = rs
        if kw:
            raise InputError(f"postflop: unknown parameters {sorted(kw)}; allowed: {sorted(SPEC_KEYS - {'game'})}")
        if board is None:
            raise InputError("postflop: board is required (3, 4 or 5 cards, e.g. board=QsJh2h)")
        if not isinstance(board, (str, list, tuple)):
            raise InputError(f"board: expected card text such as 'QsJh2h', got {board!r}")
        cards = parse_cards(board, "board") if isinstance(board, str) else parse_board(board, len(board))
        if len(cards) not in (3, 4, 5):
            raise InputError(f"board: {board!r} has {len(cards)} cards; a postflop board has 3, 4 or 5")
        self.deck = parse_deck(deck)
        off = [card_name(c) for c in cards if c not in self.deck]
        if off:
            raise InputError(f"board: card {off[0]} is not in the deck")
        self.board = tuple(cards)
        self.pot, self.stack, self.big_blind = (_chips(v, k) for k, v in
                                                (("pot", pot), ("stack", stack), ("big_blind", big_blind)))
        thr = {}
        for k, v in (("add_allin_threshold", add_allin_threshold), ("force_allin_threshold", force_allin_threshold),
                     ("merging_threshold", merging_threshold)):
            try:
                thr[k] = float(v)
            except (TypeError, ValueError):
                thr[k] = float("nan")
            if not (0 <= thr[k] < math.inf):
                raise InputError(f"postflop: {k} must be a finite number >= 0, got {v!r}")
        if raise_cap is not None and (not isinstance(raise_cap, int) or isinstance(raise_cap, bool) or raise_cap < 0):
            raise InputError(f"postflop: raise_cap must be a whole number >= 0 (raises per street), got {raise_cap!r}")
        self.rake, self.rake_cap = _rake(rake, rake_cap, self.big_blind)
        self.streets = list(STREETS[len(self.board) - 3:])
        self.sizes = read_sizes({"sizes": sizes, "bet": bet, "raise": rs, "donk": donk}, self.streets)
        self.config = TreeConfig(int(self.pot), int(self.stack), self.sizes, thr["add_allin_threshold"],
                                 thr["force_allin_threshold"], raise_cap, thr["merging_threshold"])
        if self.pot != int(self.pot) or self.stack != int(self.stack):
            raise InputError("postflop: pot and stack must be whole chips")
        self.hands, self.weight = [], []
        in_deck = np.zeros(52, dtype=bool)
        in_deck[list(self.deck)] = True
        alive = board_mask(self.board) & in_deck[HAND_CARDS[:, 0]] & in_deck[HAND_CARDS[:, 1]]
        for p, spec in enumerate((range0, range1)):
            w = make_range(spec, f"range{p}")
            keep = np.flatnonzero((w > 0) & alive)
            if len(keep) == 0:
                raise InputError(f"range{p}: no hand left once the board {self.board_text} is removed")
            self.hands.append(keep)
            self.weight.append(w[keep])
        if len(self.board) == 5:  # the river operator sweeps hands weakest first
            strength = hand_strength(list(self.board), np.union1d(*self.hands))
            for p in (0, 1):
                order = np.argsort(strength[self.hands[p]], kind="stable")
                self.hands[p], self.weight[p] = self.hands[p][order], self.weight[p][order]
            self.strength = [strength[h] for h in self.hands]
        self.locks = check_locks(locks)
        if isomorphism is None:
            isomorphism = not self.locks
        if not isinstance(isomorphism, bool):
            raise InputError(f"postflop: isomorphism must be true or false, got {isomorphism!r}")
        if isomorphism and self.locks:
            raise InputError("postflop: locks need isomorphism=false (a lock on some hands or boards breaks the "
                             "suit symmetry); leave isomorphism out")
        full = []
        for h, w in zip(self.hands, self.weight):
            full.append(np.zeros(len(HAND_CARDS)))
            full[-1][h] = w
        self.folded = parse_bunching(bunching)
        self.bunching = (Bunching(self.folded, self.board, self.deck, self.hands, self.weight) if self.folded
                         else None)
        self.symmetries = (card_symmetries(self.board, self.deck, full + self.folded)
                           if isomorphism and len(self.board) < 5 else [tuple(range(4))])
        self._tree = None  # built on first use, within a memory budget (:meth:`build_tree`)
        self.reduction = None  # the orbit layout, built with the problem (after the memory check)
        self._problem = None  # built once, by problem()
        self.baseline = None  # frequency locks' baseline: (player, node, where) -> (mixtures, range weights)
        self._fused = None  # the fused engine's flat tree, built once, by fused_tree()
        self._max_memory = None  # problem()'s limit (check_sequence_form_memory applies it)
        self.rules_tree = None  # the tree of every card (no isomorphism), built by initial_state()
        raked = "" if not self.rake else f",rake={self.rake:g}" + (
            f",rake_cap={_num(self.rake_cap / self.big_blind)}" if self.rake_cap < math.inf else "")
        bunched = f",bunching={len(self.folded)} folded" if self.folded else ""
        self.name = f"postflop(board={self.board_text},pot={_num(self.pot)},stack={_num(self.stack)}{raked}{bunched})"

    # ----------------------------------------------------------- sizes

    @property
    def board_text(self) -> str:
        return "".join(card_name(c) for c in self.board)

    @property
    def tree(self):
        """The public tree, built on first use within the available memory (:meth:`build_tree`)."""
        if self._tree is None:
            self.build_tree()
        return self._tree

    def build_tree(self, max_memory: str | int | None = None) -> None:
        """Build the public tree, counting it first: a spot whose :meth:`memory_estimate` on the
        leanest path (the fused engine's) passes ``max_memory`` (bytes or a size such as
        ``"4G"``; default: the memory available now) is refused while being counted, before
        anything is allocated; :meth:`problem` then checks the path the solver will take."""
        from ..core.memory import limit_bytes

        limit, name = limit_bytes(None if max_memory is None else str(max_memory))
        budget = None if limit is None else Budget(limit, *self.cost_weights("float32", True), self.name, name)
        self._tree = build_public_tree(self.config, self.board, self.deck, self.symmetries, budget)

    def cost_weights(self, storage: str = "float64", fused: bool = False) -> tuple[int, tuple[int, int, int, int, int]]:
        """(fixed bytes, bytes per (decision node, chance node, terminal, action of player 0,
        action of player 1)) of a CFR-family solve with state in ``storage`` on numba's threads,
        on the sequence form or the fused engine: :func:`bytes_per_seq` per sequence (player p
        has 1 + hands_p x its actions) and ``BYTES_PER_PUBLIC_NODE`` per public node. The
        estimate :meth:`memory_estimate` gives and the count while building checks."""
        import numba as nb

        threads = nb.get_num_threads()
        per_seq = bytes_per_seq(threads, storage, fused)
        node = BYTES_PER_PUBLIC_NODE
        stacks = threads * WALK_BYTES_PER_HAND * sum(self.n_hands) if fused else 0
        return 2 * per_seq + stacks, (node, node, node, per_seq * self.n_hands[0], per_seq * self.n_hands[1])

    def memory_estimate(self, storage: str | None = None, fused: bool | None = None) -> int:
        """Bytes of a CFR-family solve (:meth:`cost_weights`), before anything large is
        allocated: on the fused engine (``fused=None``: from ``FUSED_MIN_SEQS`` sequences, as
        the solvers choose) in float32, else on the sequence form in float64 (``storage``
        overrides either)."""
        t = self.tree
        if fused is None:
            fused = self.fused_by_default()
        k = t.n_actions
        fixed, w = self.cost_weights(storage or ("float32" if fused else "float64"), fused)
        counts = (t.n_nodes, t.n_chance, t.n_terminals, *(int(k[t.actor == p].sum()) for p in (0, 1)))
        return fixed + sum(a * b for a, b in zip(w, counts)) + self.bunching_bytes()

    def bunching_bytes(self) -> int:
        """Bytes of :class:`.bunching.BunchedPayoff`'s per-board matrices (9 B per hand pair and
        terminal board: float64 weights, int8 showdown signs; the fused engine's are the same,
        :meth:`.fused.FusedTree._bunching`) and per-terminal indices (8 B per hand), plus the
        tables (8 B per set of 4 to 6 cards); 0 without bunching."""
        if self.bunching is None:
            return 0
        from math import comb

        t, n0, n1 = self.tree, *self.n_hands
        boards = len(np.unique(np.asarray(t.term_board)))
        n = len(self.bunching.cards)
        return (9 * n0 * n1 * boards + 16 * (n0 + n1) * t.n_terminals
                + 16 * sum(comb(n, d) for d in range(self.bunching.size + 1)))

    def fused_by_default(self) -> bool:
        """Whether ``fused=None`` runs this spot on the fused engine: from ``FUSED_MIN_SEQS``
        sequences (where the solver applies; see :class:`~treeplex.solvers.cfr.RegretSolver`),
        without bunching (a bunched spot's fused walk evaluates every hand pair at each terminal:
        ``fused=true`` only)."""
        return self.n_seqs(0) + self.n_seqs(1) >= FUSED_MIN_SEQS and self.bunching is None

    def fused_tree(self):
        """The fused engine's tree (:meth:`.hands_game.PublicTreeGame.fused_tree`); with bunching
        its terminals weigh every hand pair (:func:`.fused.bunched_values`); refused with bunching
        and rake together."""
        if self.bunching is not None and self.rake:
            raise InputError("postflop: a raked spot with bunching runs on the sequence form (fused=false)")
        return super().fused_tree()

    def check_sequence_form_memory(self) -> None:
        """Refuse (InputError), before the treeplexes and a solver's sequence-form state are
        allocated, a spot whose sequence-form estimate passes the limit :meth:`problem` was
        given (the problem itself is checked for the path ``fused=None`` picks)."""
        from ..core.memory import limit_bytes, show

        limit, name = limit_bytes(self._max_memory)
        need = self.memory_estimate(fused=False)
        if limit is not None and need > limit:
            raise InputError(f"postflop: the sequence form of this spot needs about {show(need)} "
                             f"({self.n_seqs(0) + self.n_seqs(1):,} sequences), above {name} ({show(limit)}); "
                             "the fused engine (a CFR-family solver, fused=true) needs about "
                             f"{show(self.memory_estimate(fused=True))}")

    def out_nodes(self, streets: int = 1) -> list[int]:
        """The decision nodes of the first ``streets`` streets (what :meth:`strategy_dict` saves)."""
        t = self.tree
        return [v for v in range(t.n_nodes) if len(t.boards[t.board[v]]) < len(self.board) + streets]

    def out_bytes(self, streets: int = 1) -> tuple[int, int]:
        """(bytes, saved nodes) of :meth:`strategy_dict` for ``--out``: :data:`OUT_BYTES_PER_HAND`
        per saved node and hand of its player, counted before anything is built."""
        nodes = self.out_nodes(streets)
        pairs = OUT_BYTES_PER_PAIR * self.n_hands[0] * self.n_hands[1]
        return OUT_BYTES_PER_HAND * sum(self.n_hands[self.tree.actor[v]] for v in nodes) + pairs, len(nodes)

    def stats(self) -> dict:
        t = self.tree
        deals = int(round(_normalizer([HAND_CARDS[h] for h in self.hands], [np.ones(len(h)) for h in self.hands])))
        return {"histories": 1 + deals * (t.n_nodes + t.n_chance + t.n_terminals), "terminals": deals * t.n_terminals,
                "chance_nodes": 1 + deals * t.n_chance, "decision_nodes": deals * t.n_nodes, "deals": deals,
                "counted": "public nodes x compatible deals (deals blocked by later cards included)","board": self.board_text, "pot": self.pot, "stack": self.stack, "streets": len(self.streets),
                "hands": list(self.n_hands), "public_decision_nodes": t.n_nodes, "public_chance_nodes": t.n_chance,
                "public_terminals": t.n_terminals, "boards": len(t.boards),
                "sequences": [self.n_seqs(0), self.n_seqs(1)], "memory_estimate_bytes": self.memory_estimate()}

    # ----------------------------------------------------------- sequence form

    def terminal_rake(self) -> np.ndarray:
        """Chips raked at each terminal of the public tree: min(rake x pot, cap), the pot being
        twice the loser's (a fold's folder's) chips in, so without an uncalled bet (as
        postflop-solver: ``pot = starting_pot + 2 amount``). Every terminal is raked, folds
        included: a postflop pot has seen the flop ("no flop, no drop" never waives it). Zeros
        without rake."""
        t = self.tree
        pot = 2 * np.where(t.kinds == 0, np.abs(t.payoff0), t.stake)
        return np.minimum(self.rake * pot, self.rake_cap)

    def raked_values(self, player: int, rake: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(fold value, showdown stake) per terminal in chips for ``player``'s utility, in the
        zero-sum operator's convention (player 0's sign: a fold's value is player 0's payoff
        and player 1's utility is minus it; a showdown's stake is won by the better hand),
        and the constant every compatible deal adds at a showdown. With rake r at terminal t
        (:meth:`terminal_rake`), the winner nets its gain minus r, the loser loses its chips in,
        a tie costs each r/2:

            fold:     u_0 = payoff0 - r [payoff0 > 0],  -u_1 = payoff0 + r [payoff0 < 0]
            showdown: u_p = (stake - r/2) (win - lose) - r/2,  win/lose in {0, 1} from p's side

        Returns (fold value in player 0's sign, stake, constant in player 0's sign): for player
        0 the constant is -r/2; for player 1 (its utility negated) +r/2."""
        t = self.tree
        r = self.terminal_rake() if rake is None else rake
        sign = 1.0 if player == 0 else -1.0
        fold = t.payoff0 - r * (sign * t.payoff0 > 0) * sign
        return fold, t.stake - r / 2, -sign * r / 2

    def operator(self):
        """The payoff operator: the zero-sum one (:class:`.operator.RiverPayoff` on a river
        start, else :class:`.streets_operator.StreetsPayoff`), or with rake a
        :class:`~treeplex.model.problem.GeneralSumPayoff` of two such operators, one per
        player's utility (:meth:`raked_values`; a showdown's constant -+r/2 is one more
        fold-kind term on the same sequences, its value paid on every compatible deal)."""
        kind, value, base, stride = self.terminal_arrays()
        if self.rake == 0:
            return self._payoff(kind, value, base, stride, np.array(self.tree.term_board))
        from ..model.problem import GeneralSumPayoff

        r = self.terminal_rake()
        extra = np.flatnonzero((kind == 1) & (r > 0))
        chance, board = self.tree.chance, np.array(self.tree.term_board)
        ops = []
        for p in (0, 1):
            fold, stake, const = self.raked_values(p, r)
            v = np.where(kind == 0, fold, stake) * chance
            ops.append(self._payoff(np.concatenate([kind, np.zeros(len(extra), np.int8)]),
                                    np.concatenate([v, (const * chance)[extra]]),
                                    [np.concatenate([b, b[extra]]) for b in base],
                                    [np.concatenate([s_, s_[extra]]) for s_ in stride],
                                    np.concatenate([board, board[extra]])))
        return GeneralSumPayoff(*ops)

    def _payoff(self, kind, value, base, stride, term_board):
        n_seqs = (self.n_seqs(0), self.n_seqs(1))
        if self.bunching is not None:
            boards = np.unique(term_board)
            K = {int(b): self.board_weights(int(b)) for b in boards}
            sign = {int(b): self.showdown_signs(int(b)) for b in np.unique(term_board[kind == 1])}
            return BunchedPayoff(n_seqs, K, sign, kind, value, term_board, base, stride)
        cards = [HAND_CARDS[h] for h in self.hands]
        if len(self.board) == 5:
            return RiverPayoff(n_seqs, cards, self.weight, self.strength, kind, value, base, stride)
        return StreetsPayoff(n_seqs, cards, self.weight, self._boards(), self._river_orders(), kind, value,
                             term_board, base, stride)

    def range_weight(self, p: int) -> np.ndarray:
        """Range weight per hand (:meth:`.hands_game.HandsGame.range_weight`); with bunching the
        range weight times the folders' effect on the hand: its probability on the starting
        board with the folders' cards out (the bunched deal weights summed over the other's
        hands) over its probability without them (w_p x the other's compatible weight), scaled
        to the range's total weight. Folders holding every hand alike change nothing."""
        if self.bunching is None:
            return self.weight[p]
        cache = self.__dict__.setdefault("_range_weight", {})
        if p not in cache:
            q = 1 - p
            bunched = self.board_weights(int(self.tree.board[0])).sum(axis=q)
            plain = compatible(HAND_CARDS[self.hands[p]], HAND_CARDS[self.hands[q]]) @ self.weight[q]
            with np.errstate(invalid="ignore", divide="ignore"):
                m = np.where(plain > 0, bunched / np.where(plain > 0, plain, 1.0), 0.0) * self.weight[p]
            cache[p] = m * (self.weight[p].sum() / m.sum())
        return cache[p]

    def showdown_signs(self, b: int) -> np.ndarray:
        """int8[n0, n1]: sign(s0 - s1) of the hands' strengths on river board ``b`` of the tree
        (a bunched spot's showdowns: :class:`.bunching.BunchedPayoff`, :func:`.fused.bunched_values`)."""
        union = np.union1d(self.hands[0], self.hands[1])
        st = river_strengths([self.tree.boards[b]], union)[0]
        s0, s1 = (st[np.searchsorted(union, h)] for h in self.hands)
        return np.sign(s0[:, None] - s1[None, :]).astype(np.int8)

    def board_weights(self, b: int) -> np.ndarray:
        """float[n0, n1] (bunching): the deal weights on board ``b`` of the tree relative to its
        chance (:meth:`.bunching.Bunching.board_weights`), kept per board."""
        cache = self.__dict__.setdefault("_board_weights", {})
        if b not in cache:
            cache[b] = self.bunching.board_weights(self.tree.boards[b][len(self.board):])
        return cache[b]

    def _river_orders(self, boards=None):
        """Per river board of ``boards`` (default: every board of the tree) and player: (ptr,
        hand indices weakest first, strengths)."""
        boards = self.tree.boards if boards is None else boards
        union = np.union1d(self.hands[0], self.hands[1])
        river = [b for b, cards in enumerate(boards) if len(cards) == 5]
        strength = river_strengths([boards[b] for b in river], union)
        out = []
        for p in (0, 1):
            s = strength[:, np.searchsorted(union, self.hands[p])]
            order = np.argsort(s, axis=1, kind="stable")  # blocked hands (-1) first
            s_sorted = np.take_along_axis(s, order, axis=1)
            alive = s_sorted >= 0
            counts = np.zeros(len(boards), dtype=np.int64)
            counts[river] = alive.sum(axis=1)
            out.append((np.concatenate(([0], np.cumsum(counts))).astype(np.int64), order[alive].astype(np.int64),
                        s_sorted[alive].astype(np.int32)))
        return out

    def unlocked(self) -> "PostflopGame":
        """The same spot without its locks, in the same layout (isomorphism off): its solution
        is the locked spot's baseline (:meth:`set_baseline`)."""
        return PostflopGame(**{**self.args, "locks": None, "isomorphism": False})

    def unraked(self) -> "PostflopGame":
        """The same spot with rake 0 (zero-sum): a raked solve's baseline (:mod:`treeplex.run.whatif`)."""
        return PostflopGame(**{**self.args, "rake": 0.0, "rake_cap": None})

    def set_baseline(self, x: np.ndarray = None, y: np.ndarray = None, solution: dict = None,
                     path: str = "the baseline") -> None:
        """The baseline that frequency locks are spread from (:func:`.locks.spread`): the
        plans (x, y) of :meth:`unlocked`'s solution, or a ``solve --out`` ``solution`` of it."""
        if solution is not None:
            self.baseline = baseline_from_solution(self, solution, path)
        else:
            self.baseline = baseline_from_plans(self, x, y)
        self._problem = None

    def problem(self, max_memory: str | int | None = None) -> HandsProblem:
        """The sequence-form problem with the structured operator (its treeplexes built on first
        use: the fused engine never needs them); refuses, before allocating,
        a game whose :meth:`memory_estimate` is above ``max_memory`` (bytes, or a size such as
        ``"4G"``; default: the memory available now)."""
        from ..core.memory import limit_bytes, show

        if self._problem is not None:
            return self._problem
        if self._tree is None:
            self.build_tree(max_memory)
        self._max_memory = None if max_memory is None else str(max_memory)
        need = self.memory_estimate(fused=True)  # the leanest path; the sequence form is checked when a solver needs it
        limit, name = limit_bytes(self._max_memory)
        if limit is not None and need > limit:
            raise InputError(f"postflop: this spot needs about {show(need)} "
                             f"({self.n_seqs(0) + self.n_seqs(1):,} sequences), above {name} ({show(limit)})")
        t0 = time.perf_counter()
        locks = lock_sequences(self, self.locks) if self.locks else None
        if len(self.symmetries) == 1:
            X, Y = (DeferredTreeplex(self.n_seqs(p), partial(self.treeplex, p)) for p in (0, 1))
        else:
            self.reduction = Reduction(self)
            X, Y = (DeferredTreeplex(self.reduction.n_red[p], partial(self.reduction.treeplex, p)) for p in (0, 1))
        if len(self.board) == 5 or self.bunching is not None:
            A = self._reduced_operator()
        else:  # the fused engine never forms a product: build the terminal tables on first use
            A = DeferredPayoff((X.n_seqs, Y.n_seqs), self._reduced_operator, general_sum=bool(self.rake))
        stats = self.stats()
        stats["compile_seconds"] = time.perf_counter() - t0
        self._problem = HandsProblem(X, Y, A, name=self.name, stats=stats, payoff_unit="chips", big_blind=self.big_blind,
                               game=self, locks=locks)
        return self._problem

    def _reduced_operator(self):
        """:meth:`operator`, on the suit-reduced sequences where the spot has symmetries."""
        A = self.operator()
        if self.reduction is None:
            return A
        return A.map(lambda op: SymmetricPayoff(op, self.reduction)) if self.rake else SymmetricPayoff(A, self.reduction)

    # ----------------------------------------------------------- rules game

    def initial_state(self) -> "PostflopState":
        """Rules view for :func:`treeplex.compile_game` (small games and cross-checks): the
        whole game, every card dealt (no isomorphism)."""
        if self.bunching is not None:
            raise InputError("postflop: the rules view deals no folded hands; a bunched spot has only its "
                             "sequence form (problem())")
        if self.rules_tree is None:
            self.rules_tree = (self.tree if len(self.symmetries) == 1
                               else build_public_tree(self.config, self.board, self.deck))
        return PostflopState(self, None, (DECISION, 0))

    def node_block(self, p: int, vec: np.ndarray, v: int) -> np.ndarray:
        """float[n_hands, k]: the entries of ``vec`` (one per sequence of the solver's layout:
        the orbit layout under isomorphism) of player p's hands at node v, by hand: an orbit's
        entry on each of its hands."""
        r = self.reduction
        if r is None:
            return super().node_block(p, vec, v)
        k = int(self.tree.n_actions[v])
        return vec[r.rbase[p][v] + r.orbits[p][v][:, None] * k + np.arange(k)[None, :]]

    # ----------------------------------------------------------- results

    def node_alive(self, p: int, v: int) -> np.ndarray:
        """bool[n_hands]: player p's hands the board at node v leaves."""
        return board_mask(self.tree.boards[self.tree.board[v]])[self.hands[p]]

    @property
    def coef(self) -> list[np.ndarray]:
        """Per player, range weight / Z, with Z the weight of every card-disjoint hand pair (a
        pair's deal probability is coef_p w_q; the payoff operators' ``coef``)."""
        if "_coef" not in self.__dict__:
            Z = _normalizer([HAND_CARDS[h] for h in self.hands], self.weight)
            self._coef = [w / Z for w in self.weight]
        return self._coef

    def opponent_reach(self, p: int, plan_opp: np.ndarray, v: int) -> np.ndarray:
        """The other player's range at node v: weight x own reach x not blocked by v's board."""
        q = 1 - p
        last = self.tree.node_last[v][q]
        n = len(self.hands[q])
        reach = np.ones(n) if last is None else self.node_block(q, plan_opp, last[0])[:, last[1]]
        return self.weight[q] * reach * self.node_alive(q, v)

    def node_values(self, x: np.ndarray, y: np.ndarray, nodes, profile=None) -> dict[int, dict]:
        """Per hand at each node v of ``nodes``: ``ev`` and ``equity`` of the acting player.

        ev = counterfactual value / probability of (hand, v's runout, the opponent reaching v),
        in chips of the pot the hand ends with (payoff + pot/2: both players' EVs add up to the
        starting pot at the root). equity = the share of the pot the hand wins if all remaining
        cards are dealt with no more betting, against the opponent's range at v (card removal
        counted, every runout equally likely). NaN where the hand never gets to v.
        Counterfactual values come from one VALUE walk of the fused engine
        (:meth:`.fused.FusedTree.node_values`) when the solve ran on it and every node is on the
        starting board, else from a product per player (:meth:`_counterfactual_values`).
        ``profile`` (a fused solve's :class:`.fused.FusedProfile`; x and y then its plans at
        ``nodes``): the walk reads the solver's state itself.
        """
        plans = (x, y)
        on_board = all(len(self.tree.boards[self.tree.board[v]]) == len(self.board) for v in nodes)
        if profile is not None and on_board:
            walked = profile.node_values(nodes)
        elif profile is not None:  # the products need the whole plans
            x, y = plans = profile()
            walked = None
        else:
            walked = self._fused.node_values(x, y, nodes) if self._fused is not None and on_board else None
        values = None if walked is not None else self._counterfactual_values(x, y)
        out = {}
        cards = [HAND_CARDS[h] for h in self.hands]
        runouts = {}
        for v in nodes:
            p = self.tree.actor[v]
            if walked is not None:  # the fused walk's value per hand (representative tree): an orbit's average
                cfv = walked[v]
                if self.reduction is not None:
                    orb = self.reduction.orbits[p][v]
                    cfv = (np.bincount(orb, cfv) / np.bincount(orb))[orb]
            else:
                probs, _ = self.behavioral(p, plans[p], v)
                block = self.node_block(p, values[p], v)
                if self.reduction is not None:  # an orbit's value is the sum of its hands' equal values
                    orb = self.reduction.orbits[p][v]
                    block = block / np.bincount(orb)[orb][:, None]
                cfv = (probs * block).sum(axis=1)
            opp = self.opponent_reach(p, plans[1 - p], v)
            compat = compatible(cards[p], cards[1 - p])
            if self.bunching is None:
                mass = (compat @ opp) * self.node_alive(p, v)  # opponent weight each hand can meet at v
                norm = self.coef[p] * self.tree.node_chance[v] * mass
            else:  # the bunched deal weights at v's board (w_p, w_q and N inside)
                K = self.board_weights(int(self.tree.board[v]))
                with np.errstate(invalid="ignore", divide="ignore"):
                    reach_q = np.where(self.weight[1 - p] > 0, opp / self.weight[1 - p], 0.0)
                norm = (K @ reach_q if p == 0 else K.T @ reach_q) * self.tree.node_chance[v]
                mass = norm / self.weight[p]  # so that weight x mass is the hand's share of the deals at v
            with np.errstate(invalid="ignore", divide="ignore"):
                ev = np.where(norm > 0, cfv / np.where(norm > 0, norm, 1.0), np.nan) + self.pot / 2
            b = self.tree.boards[self.tree.board[v]]
            if (b, p) not in runouts:
                if b not in runouts:
                    runouts[b] = _runout_strengths(b, self.deck, self.hands)
                runouts[b, p] = _showdown_counts(runouts[b], compat, p)
            out[v] = {"ev": ev, "equity": _equity(runouts[b, p], opp) * np.where(mass > 0, 1.0, np.nan),
                      "mass": mass}
        return out

    def _counterfactual_values(self, x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
        """Both players' counterfactual values per sequence (the solver's layout) by one product
        each and a bottom-up pass (no copy of the tree on every hand)."""
        from ..backends.numba_regret import counterfactual_values

        prob = self.problem()
        values = []
        for p, plan in enumerate((x, y)):
            T = prob.treeplexes[p]
            g = prob.A.matvec(y, count=False) if p == 0 else -prob.A.rmatvec(x, count=False)
            counterfactual_values(T.start, T.end, T.parent, g, T.behavioral_from_plan(plan))
            values.append(g)
        return values

    def strategy_dict(self, x: np.ndarray, y: np.ndarray, streets: int = 1, profile=None) -> dict:
        """Per-hand strategy, EV, equity and weight at every decision node of the first
        ``streets`` streets, plus each node's range-weighted action frequencies
        (``frequencies``), the range's EV and equity, and the share of the acting player's
        range weight that reaches it (``reach``). ``weight`` = range weight x own reach; range
        aggregates weight each hand by its probability at v (weight x compatible opponent mass).
        ``profile`` (a fused solve's, instead of x and y): read at these nodes only."""
        chosen = self.out_nodes(streets)
        if profile is not None:
            x, y = profile.plans_at(chosen)
        vals = self.node_values(x, y, chosen, profile)
        plans = (x, y)
        nodes = []
        for v in chosen:
            p = self.tree.actor[v]
            probs, reach = self.behavioral(p, plans[p], v)
            alive = self.node_alive(p, v)
            freq, share = self.frequencies(p, probs, reach * alive)
            w = self.range_weight(p) * reach * alive
            ev, eq = vals[v]["ev"], vals[v]["equity"]
            ok = (w > 0) & np.isfinite(ev)
            prob_h = self.weight[p] * reach * alive * vals[v]["mass"]  # a hand's share of the deals reaching v
            shown = [i for i in range(len(w)) if w[i] > 0]
            nodes.append({
                "node": int(v), "history": self.tree.history[v], "player": int(p),
                "board": "".join(card_name(c) for c in self.tree.boards[self.tree.board[v]]),
                "actions": list(self.tree.actions[v]), "pot": float(sum(self.tree.contrib[v])),
                "reach": share, "frequencies": freq,
                "range_ev": float(prob_h[ok] @ ev[ok] / prob_h[ok].sum()) if ok.any() else None,
                "range_equity": float(prob_h[ok] @ eq[ok] / prob_h[ok].sum()) if ok.any() else None,
                "hands": {hand_name(self.hands[p][i]): [round(float(q), 6) for q in probs[i]] for i in shown},
                "ev": {hand_name(self.hands[p][i]): _round(ev[i]) for i in shown},
                "equity": {hand_name(self.hands[p][i]): _round(eq[i]) for i in shown},
                "weight": {hand_name(self.hands[p][i]): round(float(w[i]), 6) for i in shown},
            })
        return {"game": self.name, "board": self.board_text, "pot": self.pot, "stack": self.stack,
                "big_blind": self.big_blind, "saved_streets": self.streets[:streets],
                "sizes": {s: [z.to_dict() for z in pair] for s, pair in zip(self.streets, self.sizes)},
                "units": ("chips; action labels bN = bet/raise to N chips this street; player 0 = OOP; "
                          "ev = chips of the pot a hand ends with (payoff + pot/2); equity = share of the "
                          "pot won by checking down"),
                "nodes": nodes}

    def summary(self, x: np.ndarray, y: np.ndarray, profile=None) -> str:
        """Aggregate action frequencies at the starting street's nodes."""
        return frequency_table(f"{self.name}: hands {self.n_hands[0]} (OOP) vs {self.n_hands[1]} (IP), "
                               f"{self.tree.n_nodes:,} public decision nodes",
                               self.strategy_dict(x, y, profile=profile)["nodes"])


class PostflopState(RulesState):
    """Rules state: ``deal`` None at the root chance node, then (i0, i1); ``at`` a tree child code."""

    __slots__ = ("game", "deal", "at")

    def __init__(self, game, deal, at):
        self.game, self.deal, self.at = game, deal, at

    def is_chance(self):
        return self.deal is None or self.at[0] == CHANCE

    def is_terminal(self):
        return self.deal is not None and self.at[0] == TERMINAL

    def chance_outcomes(self):
        g = self.game
        if self.deal is None:
            return [(f"{hand_name(g.hands[0][i])}|{hand_name(g.hands[1][j])}", p) for i, j, p in g.deals()]
        held = {*HAND_CARDS[g.hands[0][self.deal[0]]], *HAND_CARDS[g.hands[1][self.deal[1]]]}
        cards = [c for c in g.rules_tree.chance_cards[self.at[1]] if c not in held]
        return [(card_name(c), 1.0 / len(cards)) for c in cards]

    def player(self):
        return self.game.rules_tree.actor[self.at[1]]

    def infoset_key(self):
        p = self.player()
        return f"{hand_name(self.game.hands[p][self.deal[p]])}:{self.game.rules_tree.history[self.at[1]]}"

    def legal_actions(self):
        return self.game.rules_tree.actions[self.at[1]]

    def apply(self, action):
        g, t = self.game, self.game.rules_tree
        if self.deal is None:
            a, b = action.split("|")
            return PostflopState(g, (g.hand_position(0, a), g.hand_position(1, b)), (DECISION, 0))
        if self.at[0] == CHANCE:
            c = self.at[1]
            return PostflopState(g, self.deal, t.chance_children[c][t.chance_cards[c].index(parse_cards(action)[0])])
        v = self.at[1]
        return PostflopState(g, self.deal, t.children[v][t.actions[v].index(action)])

    def payoff(self):
        from phevaluator import evaluate_cards

        g, t = self.game, self.game.rules_tree
        i = self.at[1]
        if t.kind[i] == "fold":
            return t.payoff0[i]
        board = [int(c) for c in t.boards[t.term_board[i]]]
        s = [evaluate_cards(*(int(c) for c in HAND_CARDS[g.hands[p][self.deal[p]]]), *board) for p in (0, 1)]
        return t.stake[i] * (1.0 if s[0] < s[1] else -1.0 if s[0] > s[1] else 0.0)  # phevaluator: lower is better


def load_postflop_spec(path_or_dict, where: str | None = None) -> PostflopGame:
    """A postflop game from a JSON or TOML spec file (or a dict) with :class:`PostflopGame`'s keys."""
    spec = path_or_dict
    where = where or (path_or_dict if isinstance(path_or_dict, str) else "postflop spec")
    if not isinstance(spec, dict):
        if not os.path.isfile(spec):
            raise InputError(f"no such file: {spec}")
        try:
            if str(spec).endswith(".toml"):
                import tomllib

                with open(spec, "rb") as f:
                    spec = tomllib.load(f)
            else:
                with open(spec) as f:
                    spec = json.load(f)
        except (ValueError, UnicodeDecodeError) as e:
            raise InputError(f"{where}: cannot parse ({e})") from None
    if not isinstance(spec, dict):
        raise InputError(f"{where}: a postflop spec is an object with board, pot, stack, range0, range1, sizes")
    unknown = set(spec) - SPEC_KEYS
    if unknown:
        raise InputError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(SPEC_KEYS)}")
    spec = {k: v for k, v in spec.items() if k != "game"}
    return PostflopGame(**spec)


def _round(v) -> float | None:
    return None if not np.isfinite(v) else round(float(v), 6)


def river_strengths(boards, hands: np.ndarray) -> np.ndarray:
    """int32[len(boards), len(hands)]: each hand's strength on each 5-card board (``7463 -
    phevaluator rank``: larger is better, equal splits), -1 where the board holds a card of it."""
    from phevaluator import _pheval  # phevaluator's native 7-card evaluator, without its argument checks

    ev = _pheval.evaluate_7cards
    hc = HAND_CARDS[hands].tolist()
    out = np.array([[7463 - ev(c1, c2, *bc) for c1, c2 in hc] for bc in boards],
                   dtype=np.int32).reshape(len(boards), len(hands))
    cards = np.array(boards, dtype=np.int64).reshape(len(boards), 5)
    out[(cards[:, :, None, None] == HAND_CARDS[hands][None, None, :, :]).any(axis=(1, 3))] = -1
    return out


def _runout_strengths(board, deck, hands) -> list[np.ndarray]:
    """Per player, int32[runouts, hands]: :func:`river_strengths` on every way to deal the board
    to 5 cards from ``deck``."""
    from itertools import combinations

    rest = [c for c in deck if c not in board]
    runouts = [tuple(int(c) for c in (*board, *extra)) for extra in combinations(rest, 5 - len(board))]
    union = np.union1d(hands[0], hands[1])
    st = river_strengths(runouts, union)
    return [st[:, np.searchsorted(union, h)] for h in hands]


def _showdown_counts(st, compat, p, cells: int = 1 << 22) -> tuple[np.ndarray, np.ndarray]:
    """(won, dealt) float[n_p, n_q]: over the runouts of ``st`` (:func:`_runout_strengths`)
    that avoid both hands of a compatible pair, the pot shares player p's hand wins (ties
    half) and their number; as many runouts at a time as keep each temporary near ``cells``
    (runout, hand, hand) cells (4 MB of booleans: on a flop, 64 runouts at a time were 0.45 GB)."""
    sp_all, sq_all = st[p], st[1 - p]
    won = np.zeros(compat.shape)
    dealt = np.zeros(compat.shape)
    chunk = max(1, cells // max(1, compat.size))
    for r in range(0, len(sp_all), chunk):
        sp, sq = sp_all[r:r + chunk, :, None], sq_all[r:r + chunk, None, :]
        ok = (sp >= 0) & (sq >= 0)
        won += ((sp > sq) & ok).sum(axis=0) + 0.5 * ((sp == sq) & ok).sum(axis=0)
        dealt += ok.sum(axis=0)
    return won * compat, dealt * compat


def _equity(counts, opp_w) -> np.ndarray:
    """A hand's showdown equity against weights ``opp_w`` over the other's hands, every runout
    avoiding both hands equally likely; ``counts``: :func:`_showdown_counts`."""
    won, dealt = counts
    num, den = won @ opp_w, dealt @ opp_w
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _rake(rake, rake_cap, big_blind: float) -> tuple[float, float]:
    """(rake fraction, cap in chips) from ``rake`` (0 <= rake < 1) and ``rake_cap`` (big
    blinds, > 0; None: no cap)."""
    try:
        r = float(rake)
    except (TypeError, ValueError):
        r = math.nan
    if not (0 <= r < 1):
        raise InputError(f"postflop: rake must be a fraction of the pot in [0, 1), e.g. 0.05, got {rake!r}")
    if rake_cap is None:
        return r, math.inf
    try:
        cap = float(rake_cap)
    except (TypeError, ValueError):
        cap = math.nan
    if not (0 < cap < math.inf):
        raise InputError(f"postflop: rake_cap must be a positive number of big blinds, got {rake_cap!r}")
    return r, cap * big_blind


def _chips(v, name: str) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise InputError(f"postflop: {name} must be a number of chips, got {v!r}") from None
    if not (x > 0) or x == math.inf:
        raise InputError(f"postflop: {name} must be a positive number of chips, got {v!r}")
    return x


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"
