"""NLFH on the public-tree engine (``nlfh52``) against the generic compiler's rules games and
the exact LP, its counts against the built tree, and its input checks."""

import math

import numpy as np
import pytest

import treeplex as tp
from treeplex.errors import InputError
from treeplex.games import make_game
from treeplex.model.game import Game, RulesState
from treeplex.poker.cards import RANKS, card_name, flop_texture, parse_cards
from treeplex.poker.nlfh import NLFH
from treeplex.poker.nlfh52 import NLFH52
from test_fused import assert_fused_follows

DECK4 = "JcJdQcQdKcKdAcAd"  # the rules game NLFH(ranks=4, suits=2): cards J..A of clubs and diamonds
DECK5 = "TcTdJcJdQcQdKcKdAcAd"  # ranks=5, suits=2: flushes and straights can be made


def rules_card(c: int, ranks: int, suits: int) -> int:
    """The card id (4 * rank + suit) of the rules game's card c (rank 13 - ranks + c // suits)."""
    return 4 * (13 - ranks + c // suits) + c % suits


def test_value_equals_compiled_rules_game_lp(stack=300, bets="0.5,1,a"):
    """The public tree x hands game (blinds, preflop round, flop by suit classes with orbit
    weights, 5-card showdown by phevaluator) has the exact LP value of the rules game
    (:class:`~treeplex.poker.nlfh.NLFH`: 2 hole cards each and a 3-card flop dealt card by
    card, its own hand evaluator) compiled as a history tree; with isomorphism on and off."""
    rules = NLFH(ranks=4, suits=2, hole=2, flop=3, stack=stack, bets=bets.replace(",a", ",allin"))
    compiled = tp.solve_lp(tp.compile_game(rules)).value
    on = NLFH52(stack=stack, flops="all", bets=bets, deck=DECK4)
    off = NLFH52(stack=stack, flops="all", bets=bets, deck=DECK4, isomorphism=False)
    assert len(on.classes) < len(off.classes) == math.comb(8, 3)
    p_on, p_off = on.problem(), off.problem()
    assert p_on.X.n_seqs < p_off.X.n_seqs
    assert tp.solve_lp(p_on).value == pytest.approx(compiled, abs=1e-7)
    assert tp.solve_lp(p_off).value == pytest.approx(compiled, abs=1e-7)
    assert 0 < abs(compiled) < stack  # a real game: neither side wins everything


class FlopFirst(Game):
    """The subset model written as rules, independently of the engine's chance weights: the
    flop is drawn uniformly from ``flops`` (rules card numbers) first and kept hidden, then the
    hole cards uniformly from the cards left, then :class:`NLFH`'s betting; the flop is shown
    when the preflop round ends."""

    payoff_unit = "chips"

    def __init__(self, rules: NLFH, flops):
        self.rules, self.flops = rules, [tuple(sorted(f, reverse=True)) for f in flops]

    def initial_state(self):
        return FlopFirstState(self, None, (), self.rules.root)


class FlopFirstState(RulesState):
    def __init__(self, game, flop, holes, node):
        self.game, self.flop, self.holes, self.node = game, flop, holes, node

    def is_chance(self):
        return self.flop is None or len(self.holes) < 2 or self.node.kind == "deal"

    def is_terminal(self):
        return self.node.kind in ("fold", "showdown")

    def chance_outcomes(self):
        g = self.game
        if self.flop is None:
            return [(g.rules.cards_name(f), 1.0 / len(g.flops)) for f in g.flops]
        if len(self.holes) < 2:
            return [(lab, p) for lab, p, _ in g.rules.deal_outcomes(self.flop + sum(self.holes, ()), 2)]
        return [("flop", 1.0)]

    def player(self):
        return self.node.to_act

    def infoset_key(self):
        p, r = self.node.to_act, self.game.rules
        shown = r.cards_name(self.flop) if self.node.rnd == 1 else ""
        return f"{r.cards_name(self.holes[p])}|{shown}|{self.node.hist_str}"

    def legal_actions(self):
        return self.node.actions

    def apply(self, action):
        g = self.game
        if self.flop is None:
            return FlopFirstState(g, next(f for f in g.flops if g.rules.cards_name(f) == action), (), self.node)
        if len(self.holes) < 2:
            used = self.flop + sum(self.holes, ())
            cards = next(c for lab, _, c in g.rules.deal_outcomes(used, 2) if lab == action)
            return FlopFirstState(g, self.flop, self.holes + (cards,), self.node)
        if self.node.kind == "deal":
            return FlopFirstState(g, self.flop, self.holes, self.node.after_deal())
        return FlopFirstState(g, self.flop, self.holes, self.node.child(action))

    def payoff(self):
        node, r = self.node, self.game.rules
        if node.kind == "fold":
            return -float(node.contrib[0]) if node.folder == 0 else float(node.contrib[1])
        v0, v1 = r.value(self.holes[0], self.flop), r.value(self.holes[1], self.flop)
        c = float(node.contrib[0])
        return c if v0 > v1 else (-c if v0 < v1 else 0.0)


@pytest.mark.parametrize("flops", ["S3", "AdKcQc,KdKcJc"])
def test_flop_subset_equals_rules_game_dealing_the_flop_first(flops):
    """A flop subset (S<n> or a list of flops: their suit classes) is the game where the flop
    is drawn from the subset before the hole cards: the engine's weights (a class's size over
    the compatible triples, the preflop folds dealt over the subset) give the LP value of that
    rules game, compiled; and differ from dealing every flop."""
    g = NLFH52(stack=300, flops=flops, bets="1,a", deck=DECK4)
    assert g.subset
    members = [f for _, m in g.classes for f in m]
    from_ids = {rules_card(c, 4, 2): c for c in range(8)}
    rules = NLFH(ranks=4, suits=2, hole=2, flop=3, stack=300, bets="1,allin")
    game = FlopFirst(rules, [tuple(from_ids[c] for c in f) for f in members])
    compiled = tp.solve_lp(tp.compile_game(game)).value
    ours = tp.solve_lp(g.problem()).value
    assert ours == pytest.approx(compiled, abs=1e-7)
    off = NLFH52(stack=300, flops=flops, bets="1,a", deck=DECK4, isomorphism=False)
    assert tp.solve_lp(off.problem()).value == pytest.approx(compiled, abs=1e-7)
    every = tp.solve_lp(NLFH52(stack=300, flops="all", bets="1,a", deck=DECK4).problem()).value
    assert abs(every - ours) > 1e-3


def _key_map(rules_keys, ours_keys):
    """Our infoset index of each compiled infoset: ``hole|flop|pre/post`` <-> ``hole:pre/flop/post``."""
    pos = {k: i for i, k in enumerate(ours_keys)}
    out = []
    for key in rules_keys:
        hole, flop, hist = key.split("|")
        rounds = hist.split("/")
        out.append(pos[f"{hole}:{rounds[0]}/{flop}/{rounds[1]}" if flop else f"{hole}:{rounds[0]}"])
    return out


def test_products_equal_compiled_matrix_with_flushes_and_straights():
    """On a 5-rank deck (flushes, straights and full houses made with the flop), A y and
    A^T x of the engine (isomorphism off: every flop its own node) equal the compiled rules
    game's matrix products on random plans, sequence by sequence, matched through the
    infoset keys; the rules game's deal is translated to card ids."""
    g = NLFH52(stack=200, flops="all", bets="1,a", deck=DECK5, isomorphism=False)
    P = g.problem()
    Q = tp.compile_game(NLFH(ranks=5, suits=2, hole=2, flop=3, stack=200, bets="1,allin"))
    rename = {}
    for c in range(10):
        rank, suit = 13 - 5 + c // 2, c % 2
        rename[RANKS[rank] + "cdhs"[suit]] = card_name(rules_card(c, 5, 2))
    assert all(a == b for a, b in rename.items())  # 2 suits of the top ranks: the same names
    seq_of = []
    for T, U in zip(P.treeplexes, Q.treeplexes):
        m = np.zeros(U.n_seqs, dtype=np.int64)
        for j, i in enumerate(_key_map(U.infoset_keys, list(T.infoset_keys))):
            m[U.start[j]:U.end[j]] = np.arange(T.start[i], T.end[i])
        seq_of.append(m)
    rng = np.random.default_rng(3)
    x = P.X.plan_from_behavioral(rng.uniform(0.1, 1, P.X.n_seqs))
    y = P.Y.plan_from_behavioral(rng.uniform(0.1, 1, P.Y.n_seqs))
    A = Q.A.to_sparse() if hasattr(Q.A, "to_sparse") else Q.A.A
    assert np.allclose(P.A.matvec(y)[seq_of[0]], A @ y[seq_of[1]], atol=1e-12)
    assert np.allclose(P.A.rmatvec(x)[seq_of[1]], A.T @ x[seq_of[0]], atol=1e-12)
    flushes = [f for f in g.tree.boards[1:] if len({c % 4 for c in f}) == 1]
    assert flushes  # suited flops: a suited hand makes a flush (a straight flush on TJQKA)


def test_an_operator_of_occasional_products_frees_its_scratch():
    """``A.keep_scratch(False)`` (the depth-limited pipeline's :class:`View52` sets it): a
    product frees the per-thread partial products it summed (8 B per sequence and run, kept
    for a solver's next product by default) and gives the same numbers as one that keeps them."""
    from treeplex.depth_limited.nlfh52 import View52

    g = NLFH52(stack=500, flops="S2", bets="1,a")
    P = g.problem()
    op = P.A.built.inner  # deferred, then the suit reduction, then the streets operator
    if max(op._partials.rows) == 0:
        pytest.skip("one numba thread: a product has no partial products")
    rng = np.random.default_rng(5)
    x = P.X.plan_from_behavioral(rng.uniform(0.1, 1, P.X.n_seqs))
    y = P.Y.plan_from_behavioral(rng.uniform(0.1, 1, P.Y.n_seqs))
    kept = P.A.matvec(y), P.A.rmatvec(x)
    assert all(a is not None for a in op._partials._arrays)
    View52(g)
    freed = P.A.matvec(y), P.A.rmatvec(x)
    assert all(a is None for a in op._partials._arrays)
    assert all(np.array_equal(a, b) for a, b in zip(kept, freed))


def test_cfr_converges_to_the_lp_value():
    g = NLFH52(stack=300, flops="all", bets="0.5,1,a", deck=DECK4)
    P = g.problem()
    lp = tp.solve_lp(P)
    res = tp.solve(P, "dcfr", target_gap=1e-2, max_iters=20000)
    assert res.gap <= 1e-2
    assert abs(res.value - lp.value) <= res.gap


def test_blinds_and_turn_order():
    """Small blind (player 0) first preflop with blinds posted, the big blind's option after a
    limp, the big blind first on the flop, and the minimum bet of a big blind."""
    g = NLFH52(stack=5000, flops=["AsKd7h"], bets="0.5,1,a", deck=None)
    t = g.tree
    assert t.actor[0] == 0 and tuple(t.contrib[0]) == (50, 100) and t.actions[0] == ["f", "c", "p0.5", "p1", "a"]
    limp = next(v for v in range(t.n_nodes) if t.history[v] == "c")
    assert t.actor[limp] == 1 and t.actions[limp][0] == "x"  # the option: check or raise
    flop = next(v for v in range(t.n_nodes) if t.history[v] == "c,x/AsKd7h/")
    assert t.actor[flop] == 1 and tuple(t.contrib[flop]) == (100, 100)
    # a half-pot bet into 200 is 100 chips, the minimum bet: a raise of one big blind
    bet = t.labels[t.label_id[flop]].index("p0.5")
    after = next(v for v in range(t.n_nodes) if t.history[v] == "c,x/AsKd7h/p0.5")
    assert bet == 1 and tuple(t.contrib[after]) == (100, 200)


def test_counts_equal_the_built_tree():
    """:meth:`sizes` counts without building; the built tree and problem have those sizes."""
    g = NLFH52(stack=1000, flops="S5", bets="0.5,1,a", deck="TJQKA")
    s = g.sizes()
    P = g.problem()
    t = g.tree
    assert s["public_decision_nodes"] == t.n_nodes and s["public_terminals"] == t.n_terminals
    assert s["public_chance_nodes"] == t.n_chance
    assert s["sequences"] == [P.X.n_seqs, P.Y.n_seqs]
    assert s["sequences_full_layout"] == [g.n_seqs(0), g.n_seqs(1)]
    assert s["preflop_public_nodes"] == int((t.board == 0).sum())
    assert s["flop_classes"] == 5 and s["flops"] == sum(len(m) for _, m in g.classes)
    # the chance weights: each compatible (hand, hand, flop) is equally likely
    n = 20
    per_triple = 1 / (s["flops"] * math.comb(n - 3, 2) * math.comb(n - 5, 2))
    Z = math.comb(n, 2) * math.comb(n - 2, 2)
    assert np.allclose(g.class_chance, [len(m) * Z * per_triple for _, m in g.classes])


def test_52_card_orbits_and_the_s64_set():
    """169 preflop hand classes and 1,755 flop classes on 52 cards (Burnside counts, known);
    S64 is 64 classes, the same every time, every texture present in proportion."""
    g = NLFH52(stack=300, flops="all", bets="a", max_raises=1)
    assert len(g.classes) == 1755 and g.n_flops == 22100
    assert g.orbit_counts()[0] == 169
    s64 = NLFH52(stack=300, flops="S64", bets="a", max_raises=1)
    assert len(s64.classes) == 64
    assert s64.classes == NLFH52(stack=300, flops="S64", bets="a", max_raises=1).classes
    tex = [flop_texture(rep) for rep, _ in s64.classes]
    # flops by texture on 52 cards: paired 3,796, monotone 1,144, two-tone 10,296, rainbow 6,864
    assert [tex.count(t) for t in ("paired", "monotone", "two-tone", "rainbow")] == [11, 3, 30, 20]
    assert len({rep[0] // 4 for rep, _ in s64.classes}) >= 10  # high cards across the ranks


def test_game_name_and_bad_input():
    g = make_game("nlfh52(stack=400, flops=S4, bets=0.5,1,a, deck=JQKA)")
    assert (g.stack, len(g.classes), g.bets[0][-1]) == (400, 4, math.inf)
    assert g.name.startswith("nlfh52(stack=400, flops=S4, bets=0.5,1,a")
    assert make_game("nlfh52(stack=400, flops=AsKd7h, deck=7KA)").classes[0][0] == tuple(parse_cards("AsKd7h"))
    for spec, msg in [("nlfh52(flops=S9999)", "S1 to S1755"), ("nlfh52(flops=AsKd)", "not a 3-card flop"),
                      ("nlfh52(flops=AsKd7h, deck=JQKA)", "not in the deck"),
                      ("nlfh52(flops=AsKd7h,AhKs7d)", "same suit-isomorphism class"),
                      ("nlfh52(stack=50)", "small_blind <= big_blind < stack"),
                      ("nlfh52(bets=0.5,x)", "not a pot fraction")]:
        with pytest.raises(InputError, match=msg):
            make_game(spec)


def test_too_big_is_refused_before_building():
    g = NLFH52(stack=5000, flops="S64")
    with pytest.raises(InputError, match="above --max-memory"):
        g.problem(max_memory="1G")
    assert g._tree is None


# the fused engine: games with no exact ties between two actions' values in the first
# iterations (a regret of 1e-16 from rounding on one path and 0 on the other turns uniform play
# into a pure action: stack=300, bets=0.5,1,a on DECK4 has such ties), with flushes and
# straights (DECK5), a flop subset (fold terminals on each flop) and every flop
FUSED_GAMES = {"deck4-all": dict(stack=290, flops="all", bets="0.7,a", deck=DECK4),
               "deck5-S4": dict(stack=290, flops="S4", bets="0.7,a", deck=DECK5),
               "deck4-S3": dict(stack=370, flops="S3", bets="0.6,1.3,a", deck=DECK4)}


@pytest.mark.parametrize("isomorphism", [True, False])
@pytest.mark.parametrize("game", list(FUSED_GAMES))
@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr", "pdcfr+"])
def test_fused_iterates_equal_sequence_form(game, isomorphism, algorithm):
    """The fused walk (one pass of the public tree: preflop with every hand alive, the flop
    dealt by classes with orbit weights, 5-card showdowns on the flop's sorted hands) gives the
    sequence-form path's iterates: with simultaneous updates and float64 storage, the average
    and current plans after each of 6 iterations agree to float64 rounding, with isomorphism
    on (orbit infosets) and off."""
    assert_fused_follows(NLFH52(**FUSED_GAMES[game], isomorphism=isomorphism).problem(), algorithm, 1e-10)


def test_fused_on_52_cards_with_and_without_isomorphism():
    """On 52 cards (four suits: 24 symmetries and 169 hand classes preflop; S4's flops have
    stabilizers of 2, 2, 1 and 2 suit permutations) the fused walk's DCFR iterates equal the
    sequence form's with isomorphism on and off, and the two layouts give the same value and
    gap (the reduction is exact)."""
    from treeplex.model.metrics import evaluate

    out = []
    for iso in (True, False):
        g = NLFH52(stack=290, flops="S4", bets="0.7,a", max_raises=1, isomorphism=iso)
        P = g.problem()
        if iso:
            assert [len(g.tree.stabilizer(b)) for b in range(5)] == [24, 2, 2, 1, 2] and g.orbit_counts()[0] == 169
        _, fus = assert_fused_follows(P, "dcfr", 1e-10, steps=4)
        ev, walk = evaluate(P, *fus.average()), fus.evaluate_profile("average", value=True)
        assert walk.value == pytest.approx(ev.value, abs=1e-9) and walk.gap == pytest.approx(ev.gap, abs=1e-9)
        out.append((P.n_seqs, walk.value, walk.gap))
    (n_on, v_on, g_on), (n_off, v_off, g_off) = out
    assert sum(n_on) * 10 < sum(n_off)
    assert v_on == pytest.approx(v_off, abs=1e-9) and g_on == pytest.approx(g_off, abs=1e-9) and g_on > 0


@pytest.mark.parametrize("isomorphism", [True, False])
def test_fused_alternating_dcfr_converges_to_the_lp_value(isomorphism):
    """DCFR with alternating updates on the fused path (float32 state, the default there)
    reaches a gap of 1e-2 chips and the exact LP value within it."""
    P = NLFH52(**FUSED_GAMES["deck4-S3"], isomorphism=isomorphism).problem()
    lp = tp.solve_lp(P)
    res = tp.solve(P, "dcfr", target_gap=1e-2, max_iters=20000, fused=True)
    assert res.gap <= 1e-2 and abs(res.value - lp.value) <= res.gap
    assert 0 < abs(lp.value) < 370


@pytest.mark.parametrize("isomorphism", [True, False])
def test_fused_best_response_walk_equals_evaluate(isomorphism):
    """The fused engine's best-response and value walks equal the sequence-form products'
    evaluation (:func:`treeplex.model.metrics.evaluate`) of the plans it reports, average and
    current; a fused solve's reported value and gap equal evaluate() on its result."""
    from treeplex.model.metrics import evaluate
    from treeplex.run.driver import make_solver

    P = NLFH52(**FUSED_GAMES["deck5-S4"], isomorphism=isomorphism).problem()
    s = make_solver(P, "dcfr", fused=True)
    for _ in range(7):
        s.step()
    for which, profile in (("average", s.average()), ("current", s.current())):
        ev, fast = evaluate(P, *profile), s.evaluate_profile(which, value=True)
        assert fast.br0 == pytest.approx(ev.br0, abs=1e-9) and fast.br1 == pytest.approx(ev.br1, abs=1e-9)
        assert fast.value == pytest.approx(ev.value, abs=1e-9) and fast.gap > 0
    res = tp.solve(NLFH52(**FUSED_GAMES["deck5-S4"], isomorphism=isomorphism).problem(), "dcfr", max_iters=9,
                   fused=True)
    ev = evaluate(P, res.x, res.y)
    assert (res.value, res.gap) == (pytest.approx(ev.value, abs=1e-9), pytest.approx(ev.gap, abs=1e-9))


def test_a_fused_result_is_printed_from_the_solver_state():
    """The summary and ``--out`` of a fused nlfh52 solve read the reported profile at the
    preflop nodes from the solver's state: no payoff operator and no plan pair are made, and
    the strategies equal those of the full plans."""
    P = NLFH52(**FUSED_GAMES["deck5-S4"]).problem()
    res = tp.solve(P, "dcfr", max_iters=9, fused=True)
    x, y, kw = res.profile_args(P)
    saved, text = P.solution(x, y, **kw), P.summary(x, y, **kw)
    assert P.A._op is None and callable(res.plans)
    assert saved == P.solution(res.x, res.y) and text == P.summary(res.x, res.y)
    assert P.A._op is None


def test_fused_by_default_and_memory_by_path(monkeypatch):
    """fused=None takes the fused engine from FUSED_MIN_SEQS (2e6) full-layout sequences
    (NLFH-50/S64 has 2.3e8, 10 BB with S8 3.8e6), the sequence form below (5 BB with S4: 6.7e5); the memory estimate is the path's: with a limit
    between the two estimates the game builds and solves on the fused engine, its treeplexes
    never built, and a solver that needs the sequence form is refused in one line; below even
    the fused engine's estimate the game is refused while counted, before the tree is built."""
    import treeplex.poker.postflop as postflop
    from treeplex.core.treeplex import DeferredTreeplex
    from treeplex.run.driver import make_solver

    assert NLFH52(stack=5000, flops="S64").fused_by_default()
    assert NLFH52(stack=1000, flops="S8").fused_by_default()
    assert not NLFH52(stack=500, flops="S4").fused_by_default()
    spec = FUSED_GAMES["deck4-S3"]
    assert make_solver(NLFH52(**spec).problem(), "dcfr").engine is None  # small: the sequence form
    monkeypatch.setattr(postflop, "FUSED_MIN_SEQS", 0)
    g = NLFH52(**spec)
    lean, full = g.memory_estimate(fused=True), g.memory_estimate(fused=False)
    assert lean < full and g.memory_estimate() == lean
    P = g.problem(max_memory=(lean + full) // 2)
    assert make_solver(P, "dcfr").engine is not None
    res = tp.solve(P, "dcfr", max_iters=5)
    assert np.isfinite(res.gap) and isinstance(P.__dict__["_X"], DeferredTreeplex)
    for algorithm, params in (("dcfr", {"fused": False}), ("egt", {})):
        with pytest.raises(InputError, match="the sequence form needs about"):
            make_solver(P, algorithm, **params).step()
    assert isinstance(P.__dict__["_X"], DeferredTreeplex)
    g = NLFH52(**spec)
    with pytest.raises(InputError, match="on the fused engine .* above --max-memory"):
        g.problem(max_memory=lean // 2)
    assert g._tree is None


def test_fused_solve_from_the_cli(capsys):
    """The docs' ``treeplex solve "nlfh52(...)" --algorithm dcfr --param fused=true`` on a short
    deck runs the fused engine: its value and gap are those of the API's fused run (float32
    state). (Not the sequence form's to rounding: with alternating updates, after the first
    one both paths' regrets agree to 1e-14 (of 10) but some of player 1's infosets have all their
    regrets at that level, and regret matching turns the noise into different plays.)"""
    import json

    from treeplex.cli import main

    spec = "nlfh52(stack=370, flops=S3, bets=0.6,1.3,a, deck=JcJdQcQdKcKdAcAd)"
    assert main(["solve", spec, "--algorithm", "dcfr", "--param", "fused=true", "--max-iters", "20", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    ref = tp.solve(make_game(spec).problem(), "dcfr", max_iters=20, fused=True)
    assert got["iterations"] == 20 and got["gap"] > 0
    assert got["value"] == pytest.approx(ref.value, abs=1e-12) and got["gap"] == pytest.approx(ref.gap, abs=1e-12)


def test_info_count_reports_the_sizes_without_building(capsys):
    import json

    from treeplex.cli import main

    spec = "nlfh52(stack=1000, flops=S5, bets=0.5,1,a, deck=TJQKA)"
    assert main(["info", spec, "--count", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    g = make_game(spec)
    assert got["sequences"] == [g.problem().X.n_seqs, g.problem().Y.n_seqs]
    assert got["public_decision_nodes"] == g.tree.n_nodes and got["game"] == g.name
    assert main(["info", "kuhn", "--count"]) == 2
    assert "does not count its sizes" in capsys.readouterr().err
