"""No-limit flop hold'em family: rules, hand values, dealing, against numbers from outside the code."""

import itertools
import random

import pytest

import treeplex as tp
from treeplex.errors import GameError, InputError
from treeplex.poker.handeval import hand_value
from treeplex.poker.nlfh import NLFH, nlfh_real, nlfh_small


def test_real_nlfh_bet_sizes_follow_the_rules():
    # Appendix B: blinds 50/100, stacks 20,000. A pot-sized raise is the pot after calling:
    # SB calls 50 -> pot 200, raises 200 -> to 300; half pot -> to 200. BB facing 300 calls
    # 200 -> pot 600, pot raise to 900; SB facing 900 (last raise 600): half pot = 900 -> to
    # 1800, the minimum raise is to 1500.
    g = nlfh_real()
    assert g.root.actions == ["f", "c", "p0.5", "p1", "a"]
    assert g.root.raise_sizes() == {"p0.5": 200, "p1": 300, "a": 20000}
    n = g.node("p1")
    assert n.raise_sizes()["p1"] == 900
    n2 = g.node("p1,p1")
    assert n2.raise_sizes()["p0.5"] == 1800 and n2.min_raise_to() == 1500
    # any legal size may be played (b<n> = chips in this round); below the min raise is illegal
    assert n2.child("b1500").contrib == (1500, 900)
    with pytest.raises(GameError, match="illegal"):
        n2.child("b1400")
    # after a limp the big blind may check; the flop round opens with the big blind
    deal = g.node("c,x")
    assert deal.kind == "deal" and deal.contrib == (100, 100)
    assert deal.after_deal().to_act == 1 and deal.after_deal().actions[0] == "x"


def test_small_member_has_the_advertised_parameters():
    g = nlfh_small()
    assert (g.ranks, g.suits, g.hole, g.flop, g.stack, g.big_blind) == (8, 2, 1, 1, 5000, 100)
    assert g.by_rank  # 1 hole + 1 flop card: no flush, cards dealt by rank


@pytest.mark.parametrize("ranks,suits,hole,flop,stack", [(3, 2, 1, 1, 1000), (4, 2, 1, 2, 300), (4, 2, 2, 3, 200)])
def test_game_value_equals_openspiel_universal_poker(ranks, suits, hole, flop, stack):
    # OpenSpiel's universal_poker (ACPC rules and hand evaluator, physical cards) with the
    # fcpa abstraction (fold, call, pot, all-in) is the same game as our bets "1,allin". The
    # last case deals physical 2-card hands with flushes possible.
    pyspiel = pytest.importorskip("pyspiel")
    from treeplex.io.openspiel import OpenSpielGame

    params = {"betting": "nolimit", "numPlayers": 2, "numRounds": 2, "blind": "50 100", "firstPlayer": "1 2",
              "numSuits": suits, "numRanks": ranks, "numHoleCards": hole, "numBoardCards": f"0 {flop}",
              "stack": f"{stack} {stack}", "bettingAbstraction": "fcpa"}
    theirs = tp.solve_lp(tp.compile_game(OpenSpielGame(pyspiel.load_game("universal_poker", params)))).value
    ours = tp.solve_lp(tp.compile_game(NLFH(ranks=ranks, suits=suits, hole=hole, flop=flop, stack=stack,
                                            bets="1,allin"))).value
    assert ours == pytest.approx(theirs, abs=1e-7)


def test_hand_values_order_like_phevaluator():
    # phevaluator (perfect-hash evaluator) ranks 5-card hands, 1 = best.
    phe = pytest.importorskip("phevaluator")
    rng = random.Random(7)
    for _ in range(3000):
        cards = rng.sample(range(52), 10)
        a, b = cards[:5], cards[5:]
        va = hand_value(tuple(c // 4 for c in a), tuple(c % 4 for c in a))
        vb = hand_value(tuple(c // 4 for c in b), tuple(c % 4 for c in b))
        ra, rb = phe.evaluate_cards(*a), phe.evaluate_cards(*b)
        assert (va > vb) == (ra < rb) and (va == vb) == (ra == rb), (a, b)


def test_short_hands_compare_pairs_then_kickers():
    # Two cards: a pair beats any high card; high cards compare the top card, then the next.
    assert hand_value((0, 0)) > hand_value((12, 11))
    assert hand_value((12, 3)) > hand_value((11, 10))
    assert hand_value((12, 3)) > hand_value((12, 2))
    # the wheel is a straight only in the 13-rank deck
    assert hand_value((12, 0, 1, 2, 3), (0, 1, 0, 1, 0)) == (4, 3)
    assert hand_value((12, 0, 1, 2, 3), (0, 1, 0, 1, 0), n_ranks=12)[0] == 0


def test_deal_probabilities_by_rank_match_physical_cards():
    # Deck of 3 ranks x 2 suits: P(player 0 holds rank r) = 1/3; P(flop = r | holes r, r) = 0.
    g = NLFH(ranks=3, suits=2, hole=1, flop=1, stack=1000)
    probs = {label: p for label, p, _ in g.deal_outcomes((), 1)}
    assert probs == pytest.approx({"Q": 1 / 3, "K": 1 / 3, "A": 1 / 3})
    flop = {cards: p for _, p, cards in g.deal_outcomes((2, 2), 1)}
    assert flop == pytest.approx({(1,): 0.5, (0,): 0.5})
    # and summed over physical 2-card holes, pairs of a 4-suit deck have weight 6/1326
    real = nlfh_real()
    n_pairs = sum(1 for _, _, c in real.deal_outcomes((), 2) if c[0] // 4 == c[1] // 4)
    assert n_pairs == 78 and len(real.deal_outcomes((), 2)) == 1326


def test_bad_parameters_name_the_problem():
    with pytest.raises(InputError, match="ranks"):
        NLFH(ranks=14)
    with pytest.raises(InputError, match="cannot deal"):
        NLFH(ranks=2, suits=1, hole=1, flop=1)
    with pytest.raises(InputError, match="pot fraction"):
        NLFH(bets="0.5,big")
    with pytest.raises(GameError, match="fold is illegal"):
        nlfh_small().node("c,f")
    assert list(itertools.islice(nlfh_small().root.walk(), 1))[0].kind == "decision"


def test_real_nlfh_flop_subgame_with_narrow_ranges():
    # Closed form: after limp/check (100 chips each) on As Kd 7h, player 0 holds AcAd (trips)
    # and player 1 holds 3d2c (nothing): player 1 can only lose, so it checks and folds, and
    # the value is exactly player 1's 100 chips.
    import numpy as np

    from treeplex.depth_limited.nlfh_subgames import nlfh_subgame

    g = nlfh_real()
    holes = [c for _, _, c in g.deal_outcomes((), 2)]
    names = {g.cards_name(c): i for i, c in enumerate(holes)}
    board = tuple(sorted((4 * 12 + 3, 4 * 11 + 1, 4 * 5 + 2), reverse=True))  # As Kd 7h
    w = np.zeros((len(holes), len(holes)))
    w[names["AdAc"], names["3d2c"]] = 1.0
    flop = g.node("c,x").after_deal()
    value = tp.solve_lp(tp.compile_game(nlfh_subgame(g, flop, w, holes, board=board))).value
    assert g.cards_name(board) == "AsKd7h" and value == pytest.approx(100.0, abs=1e-7)
