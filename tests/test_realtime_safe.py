"""Safe turn and river re-solving of the depth-limited agent (issue 28, stage 3; Brown, Sandholm
& Amos 2018, Appendix A: the first turn subgame unsafe, later ones by Reach-style safe solving
with alternative payoffs from the previously solved subgame; treeplex/play/realtime.py EndSpot).

Checked independently of the solver and of the engine's products, on the tiny abstraction:
the alts are the previous solution's expected values at the new root, computed here by
enumerating hand pairs down the river tree with both players' strategies and the river spot's
own terminal payoffs (which also checks the chips conversion between the two spots' starts);
and the safety property itself, by exact best responses per opponent hand on the river tree:
the safe solution's total excess of the opponent over its alts (sum over its hands of chance
mass x max(0, best response - alt)) is at most the previous strategy's excess plus the safe
solve's gap (the gadget's minimization bound), while the unsafe solution of the same spot
exceeds that bound (so the test can fail); Reach's gifts are >= 0, and at a re-solve of a safe
spot each hand's gift is its margin there, alt - best response, by the same best responses."""

import numpy as np
import pytest

from treeplex.play.agents import Blueprint
from treeplex.play.realtime import DepthLimitedAgent, EndSpot, make_agent
from treeplex.poker import public_tree as PT
from treeplex.poker.cards import HAND_CARDS
from treeplex.poker.operator import compatible


@pytest.fixture(scope="module")
def bp(tiny_hunl):
    ab, path = tiny_hunl
    return Blueprint(path, ab)


def _turn_chain(bp, seed, seat, hands=6, iters=300, line=("c", "c")):
    """A turn spot from random beliefs solved by DCFR, its ``line`` to the river, the beliefs
    after it (Bayes by the turn solution, as the agent updates them) and a river card."""
    rng = np.random.default_rng(seed)
    flop = [int(c) for c in bp.flops[0]]
    turn_card, river_card = [int(c) for c in rng.permutation(52) if c not in flop][:2]
    w = [rng.random(1326) ** 3, rng.random(1326) ** 3]
    board = flop + [turn_card]
    hole = int(rng.choice(np.flatnonzero(~np.isin(HAND_CARDS, board + [river_card]).any(axis=1))))
    turn = EndSpot(bp, 2, (400, 400), board, [], w, seat, hole, hands)
    turn.solve(None, iters)
    after = [x.copy() for x in w]
    turn.update(after, list(line))
    return turn, (bp, 3, (400, 400), board + [river_card], [], after, seat, hole, hands)


def _policy(spot, p, hands, node_of=lambda v: v):
    """pi(v) -> [len(hands), k]: game player p's action probabilities in ``spot``'s solution at
    node ``node_of(v)``, for the 1326-indices ``hands``."""
    where = {int(h): i for i, h in enumerate(spot.game.hands[p])}
    rows = [where[int(h)] for h in hands]
    return lambda v: spot.game.behavioral(p, spot.plans[p], node_of(v))[0][rows]


def _walk(spot, opp, pis, reach_me):
    """[n_opp] the opponent's counterfactual payoff (its own chips from ``spot``'s start) at the
    root of ``spot``'s (river) tree against our reach ``reach_me`` ([n_me]): with ``pis`` =
    (pi_opp or None, pi_me), the opponent follows pi_opp, or best-responds per hand where None."""
    g, t = spot.game, spot.game.tree
    me = 1 - opp
    comp = compatible(HAND_CARDS[g.hands[opp]], HAND_CARDS[g.hands[me]]).astype(float)
    sign = 1.0 if opp == 0 else -1.0
    sd = np.sign(g.strength[opp][:, None] - g.strength[me][None, :])

    def walk(kind, v, r_opp, r_me):
        if kind == PT.TERMINAL:
            m = sign * t.payoff0[v] if t.kinds[v] == 0 else sd * t.stake[v]
            return r_opp * ((comp * m) @ r_me)
        kids = t.children[v]
        if t.actor[v] == me:
            P = pis[1](v)
            return sum(walk(k, i, r_opp, r_me * P[:, a]) for a, (k, i) in enumerate(kids))
        if pis[0] is None:
            return np.max([walk(k, i, r_opp, r_me) for k, i in kids], axis=0)
        P = pis[0](v)
        return sum(walk(k, i, r_opp * P[:, a], r_me) for a, (k, i) in enumerate(kids))

    n = len(g.hands[opp])
    return walk(PT.DECISION, 0, np.ones(n), reach_me), comp


def test_alts_are_the_previous_solutions_values_by_enumeration(bp):
    for seed, seat in ((0, 0), (1, 1)):
        turn, args = _turn_chain(bp, seed, seat)
        line = ["c", "c"]
        river = EndSpot(*args, prev=(turn, line))
        opp, me = river.chooser, 1 - river.chooser
        assert river.alt is not None and len(river.alt) == len(river.game.hands[opp])
        # the turn tree's river subtree, by history: the river root's history plus the river spot's
        root = turn.next_root(line, args[3][-1])
        hist = {turn.game.tree.history[v]: v for v in range(turn.game.tree.n_nodes)}
        node_of = lambda v: hist[turn.game.tree.history[root] + river.game.tree.history[v]]  # noqa: E731
        # our reach at the river root in the turn solution, by its behavioral probabilities on the line
        mine = river.game.hands[me]
        reach = turn.game.weight[me][[list(turn.game.hands[me]).index(h) for h in mine]]
        for v, a in turn.path(line)[0]:
            if turn.game.tree.actor[v] == me:
                reach = reach * _policy(turn, me, mine)(v)[:, a]
        pis = (_policy(turn, opp, river.game.hands[opp], node_of), _policy(turn, me, mine, node_of))
        value, comp = _walk(river, opp, pis, reach)
        ev = value / (comp @ reach)
        want = ev if opp == 0 else -ev  # player 0's chips from the river's start
        plain = turn.alts(river, line, gifts=False)
        np.testing.assert_allclose(plain, want, rtol=1e-9, atol=1e-9 * river.game.pot)
        gift = (river.alt - plain) * (1 if opp == 0 else -1)  # Reach's gifts: the opponent's turn losses
        assert np.all(gift >= 0) and gift.max() > 0


def _excess(spot, pi_me, reach_me):
    """sum_h mass_h max(0, BR_h - alt_h): the opponent's best responses beyond its alts against
    our ``pi_me`` (player 0's chips times chance, the gadget problem's units)."""
    opp = spot.chooser
    br, comp = _walk(spot, opp, (None, pi_me), reach_me)
    mass = spot.game.coef[opp] * (comp @ spot.game.weight[1 - opp])
    alt = spot.alt if opp == 0 else -spot.alt
    per_unit = br / (comp @ reach_me)
    return float(mass @ np.maximum(0.0, per_unit - alt)), per_unit - alt


def _river(bp, seed, seat, tokens, prev=None, hands=10):
    """A river spot from random street-start beliefs (the same for a seed), with ``tokens``."""
    rng = np.random.default_rng(seed)
    flop = [int(c) for c in bp.flops[0]]
    board = flop + [int(c) for c in rng.permutation(52) if c not in flop][:2]
    w = [rng.random(1326) ** 3, rng.random(1326) ** 3]
    hole = int(rng.choice(np.flatnonzero(~np.isin(HAND_CARDS, board).any(axis=1))))
    return EndSpot(bp, 3, (400, 400), board, tokens, w, seat, hole, hands, prev=prev)


def test_safe_river_re_solve_holds_the_alts_and_unsafe_does_not(bp):
    """The agent's river, solved (DCFR) at its first decision, then re-solved after the
    opponent's pot-size bet (a size of the tree: the same tree), safely and unsafely (both by
    the LP). The gadget's bound: the safe solution's excess is at most the first solution's
    (a strategy the gadget could have kept) plus the safe solve's gap."""
    first = _river(bp, 2, 1, [])
    first.solve(None, 1000)
    opp, me = first.chooser, 1 - first.chooser
    bet = ["c", "r1200"] if opp == 1 else ["r1200"]  # to 1,200 chips: the pot (800) on top of 400 each
    safe, unsafe = _river(bp, 2, 1, bet, prev=(first, [])), _river(bp, 2, 1, bet)
    assert safe.game.tree.n_nodes == first.game.tree.n_nodes and safe.alt is not None
    mine, w = safe.game.hands[me], safe.game.weight[me]
    bound, _ = _excess(safe, _policy(first, me, mine), w)
    safe.solve(None, None, "lp")
    ex_safe, over = _excess(safe, _policy(safe, me, mine), w)
    assert ex_safe <= bound + max(safe.gap, 0.0) + 1e-9 * safe.game.pot
    unsafe.solve(None, None, "lp")
    unsafe.alt = safe.alt  # measured against the same alts (its solve did not use them)
    ex_unsafe, over_u = _excess(unsafe, _policy(unsafe, me, mine), w)
    assert ex_unsafe > 10 * (bound + max(unsafe.gap, 0.0)) and over_u.max() > 10 * over.max(), (ex_unsafe, bound)
    # a further re-solve: each hand's gift is its margin at the safe solve's gadget (alt - best response)
    third = _river(bp, 2, 1, bet, prev=(safe, []))
    gift = (third.alt - safe.alts(third, [], gifts=False)) * (1 if opp == 0 else -1)
    np.testing.assert_allclose(gift, np.maximum(0.0, -over), atol=1e-7 * safe.game.pot)
    assert gift.max() > 0


def test_agent_solves_later_turn_and_river_spots_safely_unless_told_not_to(tiny_hunl, bp):
    """Against a calling station every hand that sees the flop reaches the river: with the
    default ``safe`` the river spot (after a turn spot) gets a gadget, with ``safe=0`` none;
    ``safe=2`` is a one-line error."""
    from treeplex.errors import InputError
    from treeplex.play.engine import deal
    from treeplex.play.match import play_hand

    ab, path = tiny_hunl
    for safe in (True, False):
        dl = DepthLimitedAgent(bp, seed=1, budget=(0, 0.1, 0.1, 0.1), rollouts=300, max_hands=8, safe=safe)
        other = make_agent("call", None, 0)
        rng = np.random.default_rng(4)
        rivers = 0
        for i in range(4):
            h = play_hand(deal(rng, bp.flops), (dl, other) if i % 2 else (other, dl), bp.table)
            if len(h.rounds) == 4 and dl.spot is not None and dl.spot.street == 3:
                rivers += 1
                assert (dl.spot.alt is not None) == safe
        assert rivers > 0 and (dl.stats["safe_solves"] > 0) == safe
    assert not make_agent(f"dl:{path},safe=0", ab, 0).safe and make_agent(f"dl:{path}", ab, 0).safe
    with pytest.raises(InputError, match=r"safe=0\|1"):
        make_agent(f"dl:{path},safe=2", ab, 0)
