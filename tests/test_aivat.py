"""AIVAT (issue 28, stage 5; treeplex/play/aivat.py): each chance term sums to 0 over the
dealer's cards with their probabilities and each known-policy term over the actions with the
probabilities sampled from; the value function is the blueprint's expected value computed
directly by the trainer's kernel on each full deal; a called preflop all-in scores its exact
equity (the all-in adjustment, another code path); over a seeded match the AIVAT mean agrees
with the plain one and its interval is narrower."""

import numpy as np
import pytest

from treeplex.blueprint import kernels as K
from treeplex.blueprint.game import MAX_DEPTH
from treeplex.play.agents import Blueprint, BlueprintAgent, CallingStation
from treeplex.play.aivat import Aivat
from treeplex.play.engine import deal, replay
from treeplex.play.match import allin_value, duplicate_match


@pytest.fixture(scope="module")
def bp(tiny_hunl):
    ab, path = tiny_hunl
    return Blueprint(path, ab)


def _direct(bp, u, cards):
    """The blueprint's expected value from node ``u`` on the full deal ``cards``, by the kernel."""
    t, d = bp.tree, bp.deals
    bk = np.zeros((2, 4), dtype=np.int64)
    sd = K.real_buckets(np.array(cards, dtype=np.int64), d.ix_rounds, d.ix_keys, d.ix_offsets, d.ix_shapes,
                        d.ix_lens, d.vals, d.wheres, bk)
    if (bk[:, t.street[u]:] < 0).any():
        return 0.0
    return K.expected_value(bk, sd, t.kind, t.street, t.actor, t.n_act, t.first, t.payoff, t.children, t.offset,
                            bp.P, bp.P, np.zeros((MAX_DEPTH, 2), dtype=np.int64), np.zeros(MAX_DEPTH), u)


def test_chance_and_known_policy_terms_have_mean_zero(bp):
    av = Aivat(bp, bp.flops)
    rng = np.random.default_rng(3)
    cards = deal(rng, bp.flops)
    flop = bp.child(bp.child(0, "c"), "x")
    turn = bp.child(bp.child(flop, "x"), "x")
    river = bp.child(bp.child(turn, "x"), "x")
    n_flops = sum(not set(f) & set(cards[:4]) for f in bp.flops.tolist())
    for u, nb, n in ((flop, 0, n_flops), (turn, 3, 45), (river, 4, 44)):
        out = av.deal_outcomes(cards, nb)
        assert len(out) == n and sum(q for _, q in out) == pytest.approx(1, abs=1e-12)
        assert all(c[:4 + nb] == cards[:4 + nb] and len(set(c)) == len(c) for c, _ in out)
        # the term of each card the dealer could deal, weighted by its probability: 0
        assert abs(sum(q * av.chance_term(u, c, nb) for c, q in out)) < 1e-9
    # v on the river is the kernel's value on that deal, and on the turn the mean over the 44 rivers
    assert av.value(river, cards, 5) == pytest.approx(_direct(bp, river, cards), abs=1e-9)
    rivers = [cards[:8] + [r] for r in range(52) if r not in cards[:8]]
    assert av.value(river, cards, 4) == pytest.approx(np.mean([_direct(bp, river, c) for c in rivers]), abs=1e-9)
    # a known policy on the river: the blueprint's at its bucket; its term's mean over its actions is
    # 0, and v before the action is the pi-weighted v after it (the blueprint's own recursion)
    h = replay(cards, "cc/cc/cc/", bp.table)
    agent = BlueprintAgent(bp, seed=1)
    agent.begin(0, h.view(0))
    p = h.to_act
    agent.act(h.view(p), p)
    tokens, pi = agent.decided[h.betting()]
    vals = [av.action_value(river, h, tok, cards, 5)[0] for tok in tokens]
    terms = [float(np.dot(pi, vals)) - x for x in vals]
    assert abs(float(np.dot(pi, terms))) < 1e-9
    assert float(np.dot(pi, vals)) == pytest.approx(av.value(river, cards, 5), abs=1e-9)


def test_more_flops_than_flop_samples_are_sampled_without_bias(bp):
    """With more dealer's flops than ``flop_samples`` (here 2 of the tiny abstraction's), v
    before the flop is the mean over a fixed subset of them (the same at every call: a function
    of h), and the flop's term draws ``flop_samples`` flops of weight 1 / n each, uniform over
    those that miss the hole cards (each flop's frequency over 1,500 draws within 4 binomial
    standard deviations): an unbiased estimate of E_c[v(h c)], so the term keeps mean 0."""
    av = Aivat(bp, bp.flops, flop_samples=2)
    cards = deal(np.random.default_rng(7), bp.flops)
    ok = [tuple(f) for f in bp.flops.tolist() if not set(f) & set(cards[:4])]
    assert len(ok) > 2 and len(av.v_flops) == 2
    want = np.mean([av.value(0, cards[:4] + list(f), 3) for f in av.v_flops.tolist() if not set(f) & set(cards[:4])])
    assert av.value(0, cards, 0) == pytest.approx(want, abs=1e-9) and av.value(0, cards, 0) == av.value(0, cards, 0)
    n, seen = 1500, {f: 0 for f in ok}
    for _ in range(n):
        out = av.deal_outcomes(cards, 0)
        assert len(out) == 2 and all(q == 0.5 and c[:4] == cards[:4] for c, q in out)
        for c, _ in out:
            seen[tuple(c[4:7])] += 1
    p = 1 / len(ok)
    for f, m in seen.items():
        assert abs(m - 2 * n * p) <= 4 * np.sqrt(2 * n * p * (1 - p)), (f, m, 2 * n * p)


def test_a_called_preflop_allin_scores_its_exact_equity(bp):
    """With every (turn, river) pair in v, the flop, turn and river terms telescope to the
    equity over the dealer's flops: what the all-in adjustment computes."""
    av = Aivat(bp, bp.flops, stride=1)
    rng = np.random.default_rng(4)
    for _ in range(3):
        h = replay(deal(rng, bp.flops), "r20000c///", bp.table)
        chips, score = av.score(h, (CallingStation(), CallingStation()))
        assert chips == h.payoff()
        assert score == pytest.approx(allin_value(h, 1000, K.seed_state(0), bp.flops), abs=1e-6)


def test_unbiased_and_the_variance_drops_in_a_match(bp):
    """Blueprint against blueprint (both policies known), seeded: the AIVAT mean lies within the
    two intervals of the plain one, and its interval is narrower."""
    a, b = BlueprintAgent(bp, seed=1, name="A"), BlueprintAgent(bp, seed=2, name="B")
    av = Aivat(bp, bp.flops, stride=200)
    r = duplicate_match(a, b, 60, seed=11, table=bp.table, flops=bp.flops, aivat=av)
    s = r["aivat"]
    assert abs(s["mbb"] - r["mbb"]) < s["ci95"] + r["ci95"], r
    assert s["ci95"] < r["ci95"], r
    print(f"blueprint vs blueprint, 60 pairs: plain {r['mbb']:+.0f} ± {r['ci95']:.0f}, "
          f"AIVAT {s['mbb']:+.0f} ± {s['ci95']:.0f} mbb/g")


def test_the_blueprint_gains_nothing_over_itself(bp):
    """``gains``: at each known decision sum_a pi(a) v(h a) - v(h), the policy's gain over the
    blueprint in v's terms, is 0 (to 1e-9) for the blueprint playing itself on every hand of a
    seeded match (v is the blueprint's expected value: its own recursion, preflop to river),
    while the terms themselves are not; and ``parts`` add up to the score."""
    a, b = BlueprintAgent(bp, seed=1, name="A"), BlueprintAgent(bp, seed=2, name="B")
    av = Aivat(bp, bp.flops, stride=200, gains=True)
    duplicate_match(a, b, 12, seed=3, table=bp.table, flops=bp.flops, aivat=av)
    assert len(av.parts) == 24
    assert max(abs(q["gain0"]) + abs(q["gain1"]) for q in av.parts) < 1e-9
    assert max(abs(q["actions0"]) + abs(q["actions1"]) for q in av.parts) > 1.0
    h = replay(deal(np.random.default_rng(5), bp.flops), "cc/cc/cc/cc", bp.table)
    chips, score = av.score(h, (CallingStation(), CallingStation()))
    q = av.parts[-1]
    assert score == pytest.approx(chips + q["chance"] + q["actions0"] + q["actions1"] + q["translation"], abs=1e-12)


def test_cli_aivat(tiny_hunl, capsys):
    from treeplex.cli import main

    ab, path = tiny_hunl
    assert main(["play", "--agent", path, "--vs", "call", "--abstraction", ab, "--hands", "3", "--aivat"]) == 0
    out = capsys.readouterr().out
    assert f"AIVAT (v: blueprint {path}'s expected values" in out and "s per hand" in out
    for argv, msg in ((["--agent", "call", "--vs", "random"], "needs a blueprint or dl: agent"),
                      (["--agent", path, "--connect", "localhost:48790"], "needs --vs B or --serve PORT")):
        assert main(["play", *argv, "--abstraction", ab, "--hands", "2", "--aivat"]) == 2
        assert msg in capsys.readouterr().err
