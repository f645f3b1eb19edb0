"""The bunching effect (poker/bunching.py) against brute force: the folders' hands enumerated
one deal at a time, and the whole game built from its rules with every deal of the folders'
hands, the two players' hands and the board written out, solved by the exact LP."""

import itertools
import json
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest

import treeplex as tp
from treeplex.errors import InputError
from treeplex.model.game import RulesState
from treeplex.poker.bunching import _rank, parse_bunching
from treeplex.poker.cards import HAND_CARDS, card_name
from treeplex.poker.postflop import PostflopGame, PostflopState, parse_deck
from treeplex.poker.public_tree import CHANCE, DECISION, TERMINAL
from test_fused import assert_fused_follows

ALL = "22+,A2+,K2+,Q2+,J2+,T2+,92+,82+,72+,62+,52+,42+,32"  # every hand


def _tuples(folded, cards):
    """{union of the folders' cards: weight}: every deal of pairwise disjoint folder hands
    within ``cards``, one folder at a time (the definition of N, written out)."""
    table = {frozenset(): 1.0}
    for f in folded:
        hands = [(int(a), int(b), f[h]) for h, (a, b) in enumerate(HAND_CARDS) if f[h] > 0 and a in cards and b in cards]
        nxt = defaultdict(float)
        for used, w in table.items():
            for a, b, fh in hands:
                if a not in used and b not in used:
                    nxt[used | {a, b}] += w * fh
        table = nxt
    return table


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_factors_equal_enumeration_of_the_folders_hands(k):
    """N(D) of the tables (inclusion-exclusion over card sets, two folder groups) equals the sum
    over every deal of the folders' hands avoiding D, for sets D of 4, 5 and 6 cards."""
    rng = np.random.default_rng(k)
    deck = parse_deck("TJQKA")
    board = deck[:3]
    rest = [c for c in deck if c not in board]
    folded = []
    for _ in range(k):
        w = np.zeros(1326)
        w[rng.choice(1326, 700, replace=False)] = rng.random(700)
        folded.append(w)
    g = PostflopGame(board="".join(card_name(c) for c in board), pot=10, stack=10, deck="TJQKA",
                     range0="AA", range1="KK", bet="a", bunching=folded, isomorphism=False)
    B = g.bunching
    B.tables()
    truth = _tuples(folded, set(rest))
    for d in (4, 5, 6):
        for D in itertools.islice(itertools.combinations(rest, d), 0, None, 37):
            Ds = frozenset(D)
            want = sum(w for used, w in truth.items() if Ds.isdisjoint(used))
            mask = sum(1 << int(B.local[c]) for c in D)
            assert B.N[d][_rank(np.int64(mask), B.binom)] == pytest.approx(want, rel=1e-12)


class BruteState(RulesState):
    """The bunched game from its rules: chance deals the folders' hands and both players' hands
    at once (every pairwise disjoint deal off the board, weight prod f_i x w0 x w1), then each
    turn or river card uniformly from the cards nobody holds; betting and payoffs are the
    unbunched game's rules view (:class:`PostflopState`, whose tree and showdowns it reuses)."""

    def __init__(self, game, folded, deal=None, dead=(), at=None):
        self.game, self.folded, self.deal, self.dead, self.at = game, folded, deal, dead, at

    def is_chance(self):
        return self.deal is None or self.at[0] == CHANCE

    def is_terminal(self):
        return self.deal is not None and self.at[0] == TERMINAL

    def chance_outcomes(self):
        g = self.game
        if self.deal is None:
            rest = {c for c in g.deck if c not in g.board}
            out = []
            for used, w in _tuples(self.folded, rest).items():
                for i, h0 in enumerate(g.hands[0]):
                    for j, h1 in enumerate(g.hands[1]):
                        cards = {*HAND_CARDS[h0], *HAND_CARDS[h1]}
                        if len(cards) == 4 and not cards & used:
                            out.append((f"{i}|{j}|{','.join(map(str, sorted(used)))}",
                                        w * g.weight[0][i] * g.weight[1][j]))
            z = sum(p for _, p in out)
            return [(a, p / z) for a, p in out]
        held = {*HAND_CARDS[g.hands[0][self.deal[0]]], *HAND_CARDS[g.hands[1][self.deal[1]]], *self.dead}
        cards = [c for c in g.rules_tree.chance_cards[self.at[1]] if c not in held]
        return [(card_name(c), 1.0 / len(cards)) for c in cards]

    def _plain(self):
        return PostflopState(self.game, self.deal, self.at)

    def player(self):
        return self._plain().player()

    def infoset_key(self):
        return self._plain().infoset_key()

    def legal_actions(self):
        return self._plain().legal_actions()

    def payoff(self):
        return self._plain().payoff()

    def apply(self, action):
        if self.deal is None:
            i, j, dead = action.split("|")
            return BruteState(self.game, self.folded, (int(i), int(j)), tuple(int(c) for c in dead.split(",") if c),
                              (DECISION, 0))
        nxt = self._plain().apply(action)
        return BruteState(self.game, self.folded, self.deal, self.dead, nxt.at)


class BruteGame:
    """:func:`treeplex.compile_game`'s view of :class:`BruteState` (the unbunched twin's tree)."""

    def __init__(self, plain, folded):
        self.plain, self.folded = plain, folded
        plain.initial_state()  # builds its rules tree

    def initial_state(self):
        return BruteState(self.plain, self.folded)


SPOTS = [
    ("KsQh9d8cJc", "89TJQKA", dict(range0="AsKh,QdJd,TsTc,AhJh,8h8d", range1="AcAd,9s9h,KdQs,JsTs,QcTh",
                                   bet="50%,a"), ["AK", "QQ,T9s", "AJs,99", "JJ,A8s"]),
    ("KsQh9d8c", "89TJQKA", dict(range0="AsKh,QdJd,TsTc,AhJh", range1="AcAd,9s9h,KdQs,JsTs,Jc9c", bet="a"),
     ["AK,TT:0.5", "AJs,T9s"]),
    ("KsQhTd", "TJQKA", dict(range0="AsKh,QdJd,TsTc", range1="AcAd,JsTs,KdQs", bet="a"), ["AJ", "TT"]),
]


@pytest.mark.parametrize("board, deck, kw, fold", SPOTS)
def test_value_equals_the_game_built_from_every_deal(board, deck, kw, fold):
    """River, turn and flop starts on short decks with 4, 2 and 2 folded players: the bunched
    spot's LP value equals the LP of the game compiled from the rules with every deal of the
    folders' hands written out, and differs from the unbunched spot's."""
    folded = parse_bunching(fold)
    g = PostflopGame(board=board, pot=20, stack=30, deck=deck, bunching={"folded": fold}, **kw)
    plain = PostflopGame(board=board, pot=20, stack=30, deck=deck, isomorphism=False, **kw)
    ours = tp.solve_lp(g.problem()).value
    brute = tp.solve_lp(tp.compile_game(BruteGame(plain, folded))).value
    assert ours == pytest.approx(brute, abs=1e-8)
    assert abs(ours - tp.solve_lp(plain.problem()).value) > 1e-3  # the folders' cards matter here


def test_products_equal_the_brute_force_matrix():
    """A @ y and A.T @ x of the bunched operator equal the matrix of the game built from every
    deal (matched through the infoset keys) on random plans."""
    board, deck, kw, fold = SPOTS[1]
    g = PostflopGame(board=board, pot=20, stack=30, deck=deck, isomorphism=False, bunching=fold, **kw)
    plain = PostflopGame(board=board, pot=20, stack=30, deck=deck, isomorphism=False, **kw)
    P, Q = g.problem(), tp.compile_game(BruteGame(plain, parse_bunching(fold)))
    seq_of = []
    for T, U in zip(P.treeplexes, Q.treeplexes):
        pos = {k: j for j, k in enumerate(T.infoset_keys)}
        m = np.zeros(U.n_seqs, dtype=np.int64)
        for j, key in enumerate(U.infoset_keys):
            i = pos[key]
            m[U.start[j]:U.end[j]] = np.arange(T.start[i], T.end[i])
        seq_of.append(m)
    rng = np.random.default_rng(3)
    x = P.X.plan_from_behavioral(rng.uniform(0.1, 1, P.X.n_seqs))
    y = P.Y.plan_from_behavioral(rng.uniform(0.1, 1, P.Y.n_seqs))
    np.testing.assert_allclose(P.A.matvec(y)[seq_of[0]], Q.A.matvec(y[seq_of[1]]), atol=1e-12)
    np.testing.assert_allclose(P.A.rmatvec(x)[seq_of[1]], Q.A.rmatvec(x[seq_of[0]]), atol=1e-12)


def test_no_folders_is_the_unbunched_game():
    """An empty folded list builds exactly the unbunched spot: same name, operator and products."""
    board, deck, kw, _ = SPOTS[1]
    a = PostflopGame(board=board, pot=20, stack=30, deck=deck, bunching={"folded": []}, **kw)
    b = PostflopGame(board=board, pot=20, stack=30, deck=deck, **kw)
    assert a.bunching is None and a.name == b.name and a.digest() == b.digest()
    pa, pb = a.problem(), b.problem()
    assert type(pa.A) is type(pb.A)
    y = np.random.default_rng(0).random(pb.Y.n_seqs)
    np.testing.assert_array_equal(pa.A.matvec(y), pb.A.matvec(y))


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("spot", [0, 1, 2])
def test_folders_of_every_hand_change_nothing(spot, k):
    """Folding ranges of every hand at one weight remove 2k unseen cards uniformly: N(D) then
    depends only on |D|, N(D + r) / N(D) = (L - j - 2k) / (L - j), which cancels the chance
    ratio of each dealt card, so the bunched matrix is the unbunched one, and so are the value,
    every node's per-hand EVs of both players and the range frequencies."""
    board, deck, kw, _ = SPOTS[spot]
    g = PostflopGame(board=board, pot=20, stack=30, deck=deck, isomorphism=False, bunching=[ALL] * k, **kw)
    plain = PostflopGame(board=board, pot=20, stack=30, deck=deck, isomorphism=False, **kw)
    A, B = g.problem().A.to_sparse(), plain.problem().A.to_sparse()
    assert abs(A - B).max() <= 1e-12 * abs(B).max()
    lp = tp.solve_lp(plain.problem())
    assert tp.solve_lp(g.problem()).value == pytest.approx(lp.value, abs=1e-10)
    ours, theirs = g.strategy_dict(lp.x, lp.y)["nodes"], plain.strategy_dict(lp.x, lp.y)["nodes"]
    for a, b in zip(ours, theirs):  # per-hand EVs of both players (the bunched normalizer) and range weights
        assert a["history"] == b["history"] and a["ev"].keys() == b["ev"].keys()
        for h in a["ev"]:
            assert (a["ev"][h] is None and b["ev"][h] is None) or a["ev"][h] == pytest.approx(b["ev"][h], abs=1e-6)
        assert a["frequencies"] == pytest.approx(b["frequencies"], abs=1e-9, nan_ok=True)


def test_suit_isomorphism_with_bunching_is_exact():
    """Suit-symmetric folding ranges keep the suit symmetries; the reduced bunched game has the
    full one's value."""
    kw = dict(board="KsQhTh9s", pot=20, stack=30, deck="89TJQKA", range0="AKs,88,JTs", range1="AQs,99,J9s",
              bet="50%,a", bunching=["AK,QQ+", "A9+,T9"])
    on, off = PostflopGame(**kw), PostflopGame(**kw, isomorphism=False)
    assert len(on.symmetries) == 2
    assert tp.solve_lp(on.problem()).value == pytest.approx(tp.solve_lp(off.problem()).value, abs=1e-9)
    lopsided = PostflopGame(**{**kw, "bunching": ["AcKc"]})  # a folder's range that breaks the symmetry
    assert len(lopsided.symmetries) == 1


def test_iterative_solver_and_range_ev_on_a_bunched_spot():
    """DCFR on the bunched sequence form reaches the LP value within its gap; ``--out``'s root
    range EV (hands weighted by their bunched probability) is the value + pot/2; the range
    weights summaries use are the range weights times each hand's probability over every deal
    written out with the folders over the same without them, and the root frequencies are
    weighted by them."""
    board, deck, kw, fold = SPOTS[1]
    g = PostflopGame(board=board, pot=20, stack=30, deck=deck, bunching=fold, **kw)
    lp = tp.solve_lp(g.problem())
    res = tp.solve(g.problem(), "dcfr", target_gap=1e-4, max_iters=20000)
    assert abs(res.value - lp.value) <= res.gap
    root = g.strategy_dict(lp.x, lp.y)["nodes"][0]
    assert root["range_ev"] == pytest.approx(lp.value + 10, abs=1e-8)
    plain = PostflopGame(board=board, pot=20, stack=30, deck=deck, isomorphism=False, **kw)
    marginal = np.zeros((2, 2, 5))  # each hand's probability over every deal written out, bunched and not
    for action, prob in BruteGame(plain, parse_bunching(fold)).initial_state().chance_outcomes():
        i, j, _ = action.split("|")
        marginal[0, 0, int(i)] += prob
        marginal[0, 1, int(j)] += prob
    for i, j, prob in plain.deals():
        marginal[1, 0, i] += prob
        marginal[1, 1, j] += prob
    for p in (0, 1):
        w, n = g.range_weight(p), len(g.hands[p])
        effect = marginal[0, p, :n] / marginal[1, p, :n]  # the folders' effect on each hand
        np.testing.assert_allclose(w / g.weight[p] / (w / g.weight[p]).sum(), effect / effect.sum(), atol=1e-12)
    w0 = g.range_weight(0) / g.range_weight(0).sum()
    assert root["frequencies"] == pytest.approx(list(w0 @ g.behavioral(0, lp.x, 0)[0]), abs=1e-12)


def test_sampling_and_split_are_refused():
    """The paths whose sweeps take products of two ranges refuse a bunched spot in one line;
    the fused engine runs it only when asked (``fused=true``)."""
    from treeplex.poker.split import check_splittable

    board, deck, kw, fold = SPOTS[1]
    g = PostflopGame(board=board, pot=20, stack=30, deck=deck, bunching=fold, isomorphism=False, **kw)
    assert not g.fused_by_default()
    with pytest.raises(InputError, match="mccfr-pcs: a bunched spot"):
        tp.solve(g.problem(), "mccfr-pcs", max_iters=2)
    with pytest.raises(InputError, match="split: a bunched spot"):
        check_splittable(g)


@pytest.mark.parametrize("bunching, msg", [
    (["AK,QQ+", "ZZ"], r"bunching\[1\]: range 'ZZ': bad token"),
    ({"folded": ["AA"] * 5}, "5 folded players; at most 4"),
    ({"folded": ["AA"], "open": ["KK"]}, "expected"),
    ("AK,QQ+", "expected a list of ranges"),
    ({"open": [ALL]}, r"bunching.open\[0\]: the folding range is empty"),
    (["AsKs"], "no hand of the folding range is left once the board is removed"),
    (["AsAh", "AsAd"], "no deal is possible"),  # both would hold the ace of spades
])
def test_bad_bunching_is_refused(bunching, msg):
    """Bad ranges, too many folders, empty folding ranges and folders who cannot all hold cards:
    one-line InputErrors naming the problem."""
    with pytest.raises(InputError, match=msg):
        g = PostflopGame(board="KsQh9d8c", pot=20, stack=30, deck="89TJQKA", range0="QdJd,TsTc",
                         range1="9s9h,JsTs", bet="a", bunching=bunching)
        g.problem()


def test_deck_too_short_for_the_folders():
    with pytest.raises(InputError, match="too few for two hands"):
        PostflopGame(board="KsQhAd", pot=20, stack=30, deck="QKA", range0="AA", range1="KK", bet="a",
                     bunching=["AK,QQ"] * 4)


def test_cli_spec_and_name(tmp_path):
    """The spec key and the ``postflop(...)`` name form give the same bunched value; exit 2 and
    one line on a bad range."""
    board, deck, kw, fold = SPOTS[1]
    spec = {"game": "postflop", "board": board, "pot": 20, "stack": 30, "deck": deck, **kw,
            "bunching": {"folded": fold}}
    path = tmp_path / "b.json"
    path.write_text(json.dumps(spec))
    run = [sys.executable, "-m", "treeplex.cli", "solve"]
    a = subprocess.run([*run, str(path), "--json"], capture_output=True, text=True)
    assert a.returncode == 0, a.stderr
    name = (f"postflop(board={board},pot=20,stack=30,deck={deck},bet=a,bunching={fold!r})")
    b = subprocess.run([*run, name, "--range0", kw["range0"], "--range1", kw["range1"], "--json"],
                       capture_output=True, text=True)
    assert b.returncode == 0, b.stderr
    va, vb = json.loads(a.stdout)["value"], json.loads(b.stdout)["value"]
    g = PostflopGame(board=board, pot=20, stack=30, deck=deck, bunching=fold, **kw)
    assert va == pytest.approx(tp.solve_lp(g.problem()).value, abs=1e-8) and vb == pytest.approx(va, abs=1e-8)
    path.write_text(json.dumps({**spec, "bunching": {"folded": ["AK", "QX"]}}))
    bad = subprocess.run([*run, str(path)], capture_output=True, text=True)
    assert bad.returncode == 2 and "bunching.folded[1]" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_memory_estimate_counts_the_bunched_operator():
    """The estimate adds :meth:`bunching_bytes`, which covers the operator's arrays and the tables."""
    board, deck, kw, fold = SPOTS[1]
    g = PostflopGame(board=board, pot=20, stack=30, deck=deck, bunching=fold, isomorphism=False, **kw)
    plain = PostflopGame(board=board, pot=20, stack=30, deck=deck, isomorphism=False, **kw)
    assert g.memory_estimate() - plain.memory_estimate(fused=False) == g.bunching_bytes() > 0
    used = g.problem().A.nbytes + sum(t.nbytes for t in g.bunching.N.values())
    assert g.bunching_bytes() >= used
    assert g.memory_estimate(fused=True) - plain.memory_estimate(fused=True) == g.bunching_bytes()
    T = g.fused_tree().static  # the fused walk's weight matrices and signs (T[16], T[17])
    assert 0 < T[16].nbytes + T[17].nbytes <= g.bunching_bytes()


def test_memory_limit_refuses_a_bunched_spot_before_allocating():
    """``problem(max_memory)`` checks the fused estimate with the weight matrices in it before
    anything large is made: a limit just under it is refused in one line, one at it passes."""
    board, deck, kw, fold = SPOTS[1]
    make = lambda: PostflopGame(board=board, pot=20, stack=30, deck=deck, bunching=fold, isomorphism=False, **kw)  # noqa: E731
    need = make().memory_estimate(fused=True)
    with pytest.raises(InputError, match="postflop: this spot needs about"):
        make().problem(max_memory=need - 1)
    assert make().problem(max_memory=need) is not None


@pytest.mark.parametrize("spot", [0, 1, 2])
@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr"])
def test_fused_bunching_equals_the_sequence_form(spot, algorithm):
    """The fused walk's terminals weigh every hand pair by the bunched deal weights
    (:func:`treeplex.poker.fused.bunched_values`): with simultaneous updates its average and
    current plans equal the sequence form's (:class:`BunchedPayoff`) after each of 6
    iterations, to rounding, on the river, turn and flop starts."""
    board, deck, kw, fold = SPOTS[spot]
    assert_fused_follows(PostflopGame(board=board, pot=20, stack=30, deck=deck, bunching=fold, **kw).problem(),
                         algorithm, 1e-10)


def test_fused_bunching_reaches_the_bunched_lp():
    """Fused DCFR (alternating, float32) on the bunched turn start reaches the bunched LP's value
    (which the brute-force game checks above) within its gap, and the walk's gap is the
    sequence form's best responses' (:func:`treeplex.model.metrics.evaluate`) on its plans."""
    from treeplex.model.metrics import evaluate

    board, deck, kw, fold = SPOTS[1]
    p = PostflopGame(board=board, pot=20, stack=30, deck=deck, bunching=fold, **kw).problem()
    lp = tp.solve_lp(p).value
    res = tp.solve(p, "dcfr", target_gap=1e-3, fused=True)
    assert abs(res.value - lp) <= res.gap + 1e-9
    assert evaluate(p, res.x, res.y).gap == pytest.approx(res.gap, abs=1e-6)
    plain = tp.solve_lp(PostflopGame(board=board, pot=20, stack=30, deck=deck, isomorphism=False, **kw).problem())
    assert abs(lp - plain.value) > 10 * res.gap  # the folders' cards matter here


def test_fused_bunching_with_rake_is_refused():
    board, deck, kw, fold = SPOTS[1]
    p = PostflopGame(board=board, pot=20, stack=30, deck=deck, bunching=fold, rake=0.05, **kw).problem()
    with pytest.raises(InputError, match="a raked spot with bunching runs on the sequence form"):
        tp.solve(p, "dcfr", max_iters=2, fused=True)
