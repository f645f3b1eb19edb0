"""The depth-limited agent (issue 28, stage 3; treeplex/play/realtime.py): it plays legal actions
(against a blueprint and against random raises, which it adds to its subgames); its preflop
beliefs equal the Bayes posterior computed by hand from the checkpoint's strategy sums; with
k = 1 the flop subgame's value under the blueprint equals the blueprint's own expected values
on the same sampled deals (read by the trainer's kernel from the blueprint node); and the LP
solution of a k = 4 subgame has zero gap by best responses computed independently, by backward
induction over the subgame's betting tree and its leaf table."""

import numpy as np
import pytest

from treeplex.blueprint import kernels as K
from treeplex.blueprint.train import read_checkpoint
from treeplex.play.agents import Blueprint, BlueprintAgent, RandomAgent
from treeplex.play.engine import Hand, deal, replay
from treeplex.play.equity import HOLES
from treeplex.play.match import play_hand
from treeplex.play.realtime import BIAS, DepthLimitedAgent, Solved, StreetSubgame, continuation_strategies


@pytest.fixture(scope="module")
def bp(tiny_hunl):
    ab, path = tiny_hunl
    return Blueprint(path, ab)


def _flop_root(bp):
    """The blueprint node and chips at the flop after the small blind limps and the big blind checks."""
    v = bp.child(bp.child(0, "c"), "x")
    assert bp.tree.street[v] == 1
    return v, (100, 100)


def test_agent_plays_legal_actions_and_re_solves_off_tree_sizes(bp):
    dl = DepthLimitedAgent(bp, k=4, seed=1, budget=(0, 0.1, 0.1, 0.1), rollouts=300, max_hands=12)
    rng = np.random.default_rng(5)
    for i in range(8):
        cards = deal(rng, bp.flops)
        other = RandomAgent(i) if i % 2 else BlueprintAgent(bp, seed=i)
        h = play_hand(cards, (dl, other) if i % 4 < 2 else (other, dl), bp.table)  # Hand.apply refuses illegal tokens
        assert h.done
    assert sum(len(t) for t in dl.times[1:]) > 0  # it solved at least one postflop decision


def test_preflop_beliefs_are_the_bayes_posterior_of_the_blueprint(bp, tiny_hunl):
    from treeplex.abstraction.indexer import Indexer

    meta, arrays = read_checkpoint(tiny_hunl[1])
    S, t = arrays["S"].astype(np.float64), bp.tree
    cls = Indexer("preflop").index(HOLES)  # each hand's class, the preflop bucket

    def prob(v, label):
        k = int(t.n_act[v])
        s = S[t.offset[v]:t.offset[v] + k * 169].reshape(169, k)[cls]
        return s[:, t.labels[v].index(label)] / s.sum(1)

    cards = deal(np.random.default_rng(0), bp.flops)
    raise_to = bp.real_token("p1", Hand(cards, bp.table))
    h = replay(cards, f"{raise_to}c", bp.table)  # the small blind raises a pot, the big blind calls: the flop
    dl = DepthLimitedAgent(bp, k=1, seed=0)
    dl.begin(1, h.view(1))
    dl.observe(h.view(1))
    v1 = bp.child(0, "p1")
    post0 = prob(0, "p1")  # uniform prior times the likelihood of the raise
    post1 = prob(v1, "c")
    for w, want in ((dl.w[0], post0), (dl.w[1], post1)):
        np.testing.assert_allclose(w / w.sum(), want / want.sum(), rtol=1e-12)
    assert dl._flop_node(h.view(1)) == bp.child(v1, "c")


def _deal_like_rollouts(sub, n, seed):
    """The deals :func:`rollouts` samples with ``seed`` (the same generator calls, in Python;
    preflop, no board: the flop a row of the dealer's flops, the deal drawn again where it shares
    a card)."""
    rng = K.seed_state(seed)
    cdf = [np.cumsum(sub.w[0]), np.cumsum(sub.w[1])]
    d, flops = sub.bp.deals, sub.bp.flops
    out = []
    while len(out) < n:
        h = [min(int(np.searchsorted(c, K.uniform(rng) * c[-1], side="right")), len(c) - 1) for c in cdf]
        if set(HOLES[h[0]]) & set(HOLES[h[1]]):
            continue
        cards = list(HOLES[h[0]]) + list(HOLES[h[1]]) + list(sub.board)
        if not sub.board:
            f = [int(c) for c in flops[int(K.below(rng, len(flops)))]]
            if set(f) & set(cards):
                continue
            cards += f
        while len(cards) < 9:
            while True:
                c = int(K.below(rng, 52))
                if c not in cards:
                    break
            cards.append(c)
        cards = np.array(cards, dtype=np.int64)
        bk = np.zeros((2, 4), dtype=np.int64)
        sd = K.real_buckets(cards, d.ix_rounds, d.ix_keys, d.ix_offsets, d.ix_shapes, d.ix_lens, d.vals, d.wheres, bk)
        if (bk[:, 1:] < 0).any():
            continue
        out.append((bk.copy(), sd))
    return out


def test_k1_leaf_values_are_the_blueprints_own_values(bp):
    v, contrib = _flop_root(bp)
    w = [np.ones(1326), np.ones(1326)]
    sub = StreetSubgame(bp, 1, contrib, v, [int(c) for c in bp.flops[0]], [], w, 0, continuation_strategies(bp, 1))
    n = 400
    table = sub.leaf_table(n, K.seed_state(7))
    prob = sub.problem(table)
    # the blueprint in the subgame: each subgame node is the blueprint node of the same labels
    t = bp.tree
    u_of = {}
    stack = [(sub.root, v)]
    while stack:
        node, u = stack.pop()
        if node.kind != "decision":
            continue
        assert tuple(t.labels[u]) == tuple(node.actions)
        u_of[sub.index[id(node)]] = u
        stack.extend((node.child(lab), bp.child(u, lab)) for lab in node.actions)
    _, value, direct = _blueprint_in_subgame(
        sub, prob, lambda i, node: bp.P[t.offset[u_of[i]]:t.offset[u_of[i]] + sub.B * len(node.actions)], v, n, 7)
    assert value == pytest.approx(direct, rel=1e-9, abs=1e-9)


def _blueprint_in_subgame(sub, prob, rows, root, n, seed):
    """The blueprint played in ``sub`` (``rows(i, node)``: decision node i's probabilities,
    bucket-major; the chooser takes continuation 0, the blueprint, at every leaf): (behavioral
    strategies, their value in ``prob``, the mean of the trainer's exact expected values from
    blueprint node ``root`` over the deals the rollouts with ``seed`` sample)."""
    t = sub.bp.tree
    behs = [np.zeros(m) for m in sub.n_seqs]
    for i, (node, _) in enumerate(sub.nodes):
        behs[node.to_act][sub.base[i]:sub.base[i] + sub.B * len(node.actions)] = rows(i, node)
    for base in sub.leaf_base.values():
        behs[sub.chooser][base:base + sub.B * sub.k:sub.k] = 1.0
    behs[0][0] = behs[1][0] = 1.0
    x, y = (T.plan_from_behavioral(b) for T, b in zip(prob.treeplexes, behs))
    value = float(x @ prob.A.matvec(y, count=False))
    frame, acc = np.zeros((128, 2), dtype=np.int64), np.zeros(128)
    direct = np.mean([K.expected_value(bk, sd, t.kind, t.street, t.actor, t.n_act, t.first, t.payoff, t.children,
                                       t.offset, sub.bp.P, sub.bp.P, frame, acc, root)
                      for bk, sd in _deal_like_rollouts(sub, n, seed)])
    return behs, value, direct


def _best_response(sub, beh, table, p):
    """Player p's best-response value (player 0's chips, p = 1 minimizes) against the other's
    behavioral ``beh``, by backward induction over the subgame's PublicNode tree and ``table``."""
    q, B, k = 1 - p, sub.B, sub.k
    sign = 1.0 if p == 0 else -1.0
    ends = {}
    for e, end in enumerate(sub.ends):
        ends.setdefault(end[4], []).append(e)

    def mat(e, j):  # [b_p, b_q] in p's terms
        m = table[e, j] if p == 0 else table[e, j].T
        return sign * m

    def walk(node, last, reach_q):
        if node.kind == "decision":
            i, m = sub.index[id(node)], len(node.actions)
            outs = []
            for a, lab in enumerate(node.actions):
                nl = tuple((i, a) if r == node.to_act else last[r] for r in (0, 1))
                if node.to_act == q:
                    pr = beh[sub.base[i]:sub.base[i] + B * m].reshape(B, m)[:, a]
                    outs.append(walk(node.child(lab), nl, reach_q * pr))
                else:
                    outs.append(walk(node.child(lab), nl, reach_q))
            return np.max(outs, axis=0) if node.to_act == p else np.sum(outs, axis=0)
        (e,) = ends[last]  # one end per (last action of each player)
        if sub.ends[e][0] != 2:
            return mat(e, 0) @ reach_q
        if sub.chooser == p:
            return np.max([mat(e, j) @ reach_q for j in range(k)], axis=0)
        lb = sub.leaf_base[e]
        pj = beh[lb:lb + B * k].reshape(B, k)
        return np.sum([mat(e, j) @ (reach_q * pj[:, j]) for j in range(k)], axis=0)

    return sign * walk(sub.root, (None, None), np.ones(B)).sum()


def test_lp_solution_of_a_k4_subgame_has_zero_gap_by_independent_best_responses(bp):
    v, contrib = _flop_root(bp)
    rng = np.random.default_rng(3)
    w = [rng.random(1326), rng.random(1326)]
    sub = StreetSubgame(bp, 1, contrib, v, [int(c) for c in bp.flops[0]], ["r250"], w, 1, continuation_strategies(bp, 4))
    assert sub.root.raise_sizes()[sub.path[0][1]] == 250 and len(sub.root.actions) == 5  # x, 0.5, 0.75, 1 pot, all-in
    assert sub.k == 4 and BIAS[:sub.k] == ("blueprint", "fold x10", "call x10", "raise x10")
    sol = sub.solve(300, K.seed_state(2), algorithm="lp")
    br0 = _best_response(sub, sol.beh[1], sol.table, 0)
    br1 = _best_response(sub, sol.beh[0], sol.table, 1)
    scale = np.abs(sol.table).max()
    assert br0 == pytest.approx(sol.value, abs=1e-6 * scale)
    assert br1 == pytest.approx(sol.value, abs=1e-6 * scale)
    assert abs(sol.gap) < 1e-6 * scale
    # and the CFR solve the agent uses approaches the same value
    dc = sub.solve(300, K.seed_state(2), max_iters=2000)
    assert abs(dc.value - sol.value) <= dc.gap + 1e-9 * scale


def test_bad_specs_and_budgets_are_one_line_errors(tiny_hunl, capsys):
    from treeplex.cli import main

    ab, path = tiny_hunl
    for args in (["--agent", f"dl:{path},k=2", "--vs", "call"], ["--agent", f"dl:{path},depth=3", "--vs", "call"],
                 ["--agent", f"dl:{path}", "--vs", "call", "--budget", "1,2"],
                 ["--agent", f"dl:{path}", "--vs", "call", "--budget", "0,1,-1,1"],
                 ["--agent", "call", "--vs", "call", "--budget", "1,2"]):  # refused without a dl agent too
        assert main(["play", *args, "--abstraction", ab, "--hands", "1"]) == 2, args
    assert main(["play", "--agent", f"dl:{path}", "--vs", "call", "--hands", "1"]) == 2  # no --abstraction
    for args in (["--agent", "call"], ["--agent", path], ["--agent", f"dl:{path},k=2"],  # lbr --agent: dl: specs only
                 ["--agent", f"dl:{path}", "--budget", "1,2,x,4"], ["--blueprint", path, "--budget", "1"]):
        assert main(["lbr", *args, "--abstraction", ab, "--hands", "2"]) == 2, args
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 11 and all("error" in line for line in err), err
    assert "--agent 'call'" in err[6] and "k must be 1" in err[8] and "--budget '1,2,x,4'" in err[9], err


def test_lbr_model_of_the_agent_is_the_strategy_it_plays(bp, monkeypatch):
    """LBR's model of the depth-limited agent (play/lbr.py:DepthLimitedModel) at a decision the
    agent has not reached (after LBR's pot raise on the flop, LBR first to act there): its
    probabilities sum to 1 per hand; with the solve made deterministic (the same rollout seed, a
    budget that never binds, so 500 rollouts and 2,000 DCFR iterations) they equal, for all
    1,326 hands, the ones the agent's own re-solve gives when it gets there (its tree rebuilt
    with LBR's raise in it); and the agent's act() there draws its actions with those
    probabilities (2,000 draws, within 4 binomial standard deviations). The model's solve is
    made aside: the agent's state (its latest solve, the rollouts' random state, its counts) is
    as before the questions, so it plays as if never asked."""
    from treeplex.play.lbr import DepthLimitedModel
    from treeplex.poker.cards import HAND_INDEX

    dl = DepthLimitedAgent(bp, k=4, seed=1, budget=(0, 1000, 1000, 1000), rollouts=500, max_hands=12)
    model = DepthLimitedModel(dl)
    cards = deal(np.random.default_rng(2), bp.flops)
    h = replay(cards, "cc", bp.table)  # the small blind (the agent, seat 0) limps, LBR checks: LBR opens the flop
    dl.begin(0, h.view(0))
    dl.krng = K.seed_state(9)
    (pot, allin) = model.raises(h.view(1))
    assert int(allin[1:]) == bp.table.stack and int(pot[1:]) == h.node.frac_raise_to(1.0)
    after = replay(cards, f"cc/{pot}", bp.table)
    probs = model.probs(after.view(1), HOLES)
    assert {"f", "c"} <= set(probs)
    total = sum(probs.values())
    np.testing.assert_allclose(total, 1.0, atol=1e-12)

    assert dl.last is None and dl.spot is None and dl.stats["decisions"] == 0  # the model solved aside
    np.testing.assert_array_equal(dl.krng, K.seed_state(9))
    dl.act(after.view(0), 0)  # the agent as if never asked: the same rollouts, the same solve
    tokens, P = dl.decided[after.betting()]
    assert tokens[:2] == ["f", "c"]
    for a, tok in enumerate(tokens):
        np.testing.assert_allclose(P[:, a], probs[tok], atol=1e-12)

    sol = dl.last
    monkeypatch.setattr(dl, "solve_street", lambda hand: sol)  # the same solution at every draw
    n = 2000
    drawn = [dl.act(after.view(0), 0) for _ in range(n)]
    p = P[HAND_INDEX[cards[0], cards[1]]]
    for a, tok in enumerate(tokens):
        sd = np.sqrt(n * p[a] * (1 - p[a]))
        assert abs(drawn.count(tok) - n * p[a]) <= 4 * sd + 1e-9, (tok, drawn.count(tok), n * p[a])


# ------------------------------------------------------------------ the preflop cache


def test_preflop_subgame_with_no_added_size_reproduces_the_blueprint(bp):
    """The whole preflop as a depth-limited subgame (street 0), no size added, k = 1: its tree is
    the blueprint's preflop (every decision node has the blueprint node of the same labels), the
    blueprint's strategy in it (BlueprintPlan, the cache's empty key) is worth the mean of the
    blueprint's own expected values from the root (the trainer's kernel) on the same sampled
    deals, to 1e-9; and the DCFR solution's value interval and the blueprint's, each bounded by
    best responses computed independently by backward induction, overlap (both hold the
    subgame's value)."""
    from treeplex.play.realtime import BlueprintPlan

    sub = StreetSubgame(bp, 0, (50, 100), 0, [], [], [np.ones(1326), np.ones(1326)], 0, continuation_strategies(bp, 1))
    t = bp.tree
    assert sub.B == 169 and sub.key == () and min(sub.vnode) >= 0
    assert len(sub.nodes) == int(((t.kind == 0) & (t.street == 0)).sum())
    leaves = {e[2] for e in sub.ends if e[0] == 2}
    assert leaves and all(t.street[v] == 1 and t.kind[v] == 0 for v in leaves)
    n = 300
    table = sub.leaf_table(n, K.seed_state(4))
    prob = sub.problem(table)
    plan = BlueprintPlan(sub)
    behs, value, direct = _blueprint_in_subgame(sub, prob, lambda i, node: plan.probs(node, np.arange(169)).ravel(),
                                                0, n, 4)
    assert value == pytest.approx(direct, rel=1e-9, abs=1e-9)
    sol = sub.solve(n, K.seed_state(4), max_iters=60)
    np.testing.assert_array_equal(sol.table, table)
    lo_bp, hi_bp = _best_response(sub, behs[0], table, 1), _best_response(sub, behs[1], table, 0)
    lo, hi = _best_response(sub, sol.beh[0], table, 1), _best_response(sub, sol.beh[1], table, 0)
    assert lo_bp <= value + 1e-9 <= hi_bp + 2e-9 and lo <= sol.value + 1e-9 <= hi + 2e-9
    assert max(lo, lo_bp) <= min(hi, hi_bp) + 1e-9
    assert hi - lo == pytest.approx(sol.gap, rel=1e-6, abs=1e-6)  # the solver's own gap, by the independent walk


def _off_tree_hand(bp, seed):
    """Cards and the small blind's opening raise to 275 chips (the blueprint opens to 200 = 0.5 pot,
    300 = 1 pot or all-in: 275 is off its tree)."""
    cards = deal(np.random.default_rng(seed), bp.flops)
    h = replay(cards, "r275", bp.table)
    assert "r275" not in [bp.real_token(lab, Hand(cards, bp.table)) for lab in bp.tree.labels[0]]
    return h


def test_an_off_tree_preflop_raise_is_solved_once_then_loaded_from_the_cache(bp, tmp_path):
    """The agent (big blind) facing an off-tree open: one solve of the whole preflop with the size
    added; its strategy there is a distribution over the node's actions (fold, call, its raises
    and all-in) for every hand, and its beliefs of the raiser are the uniform prior times the
    solution's probability of the raise; a second hand with the same raise loads the cached
    solution (no solve), in the same agent and, through --preflop-cache's file, in a new one;
    and the cached strategy equals a fresh solve of the same subgame with the same seed."""
    kw = dict(k=4, seed=3, budget=(1000, 0.1, 0.1, 0.1), rollouts=200, max_iters=20)
    path = str(tmp_path / "pre.npz")
    dl = DepthLimitedAgent(bp, preflop_cache=path, **kw)
    for i, seed in enumerate((0, 1)):
        h = _off_tree_hand(bp, seed)
        dl.begin(1, h.view(1))
        tok = dl.act(h.view(1), 1)
        assert h.legal(tok)
        assert dl.stats["preflop_solves"] == 1 and dl.stats["preflop_loads"] == i
        tokens, P = dl.decided[h.betting()]
        assert tokens[:2] == ["f", "c"] and all(h.legal(t) for t in tokens) and len(set(tokens)) == len(tokens)
        assert P.shape == (1326, len(tokens)) and (P >= 0).all()
        np.testing.assert_allclose(P.sum(1), 1.0, atol=1e-12)
        dl.end(h, 1)
    plan = dl.plan
    assert plan.sub.key == (("", 275),)
    root = plan.sub.root
    a = root.actions.index(plan.sub.path[0][1])
    raise_p = plan.probs(root, plan.sub.bucket)[:, a]
    np.testing.assert_allclose(dl.w[0] / dl.w[0].sum(), raise_p / raise_p.sum(), rtol=1e-12)
    np.testing.assert_array_equal(dl.w[1], 1.0)

    again = DepthLimitedAgent(bp, preflop_cache=path, **kw)  # loads the file
    h = _off_tree_hand(bp, 2)
    again.begin(1, h.view(1))
    again.act(h.view(1), 1)
    assert again.stats["preflop_solves"] == 0 and again.stats["preflop_loads"] == 1
    for b0, b1 in zip(again.plan.beh, plan.beh):
        np.testing.assert_array_equal(b0, b1)

    fresh = StreetSubgame(bp, 0, (50, 100), 0, [], ["r275"], [np.ones(1326), np.ones(1326)], 1, dl.Pc)
    sol = fresh.solve(200, K.seed_state(3), time_limit=800, max_iters=20)
    for b0, b1 in zip(sol.beh, plan.beh):
        np.testing.assert_array_equal(b0, b1)


def test_bad_preflop_cache_files_are_one_line_errors(bp, tiny_hunl, tmp_path, capsys):
    from treeplex.cli import main
    from treeplex.play.realtime import PreflopCache

    ab, path = tiny_hunl
    text = tmp_path / "text.npz"
    text.write_text("not a cache")
    other = tmp_path / "other.npz"  # a cache made for k = 1: another fingerprint
    c = PreflopCache(bp, continuation_strategies(bp, 1), str(other))
    c.save()
    short = tmp_path / "short.npz"  # player 0's strategy one entry short of the subgame's sequences
    cache = PreflopCache(bp, continuation_strategies(bp, 4), str(short))
    sub = cache.subgame(1, ("r275",))
    beh = [np.ones(sub.n_seqs[0] - 1), np.ones(sub.n_seqs[1])]
    cache.plans[(1, ("r275",))] = Solved(sub, None, None, beh, 0.0, 0.0, 0.0, 0.0)
    cache.save()
    for f in (text, other, short, tmp_path):
        assert main(["play", "--agent", f"dl:{path}", "--vs", "call", "--abstraction", ab, "--hands", "1",
                     "--preflop-cache", str(f)]) == 2, f
    assert main(["play", "--agent", "call", "--vs", "call", "--hands", "1", "--preflop-cache", str(text)]) == 2
    assert main(["lbr", "--blueprint", path, "--abstraction", ab, "--hands", "2", "--preflop-cache", str(text)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 6 and all("error" in line and "--preflop-cache" in line for line in err), err
    assert "npz" in err[0] and "another blueprint" in err[1] and "entry 0 (r275)" in err[2] and "directory" in err[3]
