"""The blueprint trainer (issue 28, stage 2) against numbers computed outside it: the 7-card
evaluator against phevaluator, the betting tree against the rules, MCCFR on a small abstract
game against the exact LP (treeplex's sequence form, evaluated by its own best responses), the
sampled regrets' mean against full-width CFR written here, checkpoints, and the CLI."""

import os
import subprocess
import sys
from itertools import permutations

import numpy as np
import pytest

from treeplex.blueprint import kernels as K
from treeplex.blueprint.game import DECISION, FOLD, SHOWDOWN, BettingTree, Config
from treeplex.blueprint.train import Params, TableDeals, Trainer, head_to_head, memory_estimate
from treeplex.errors import InputError
from treeplex.model.game import ExplicitGame, chance, decision, terminal
from treeplex.model.metrics import evaluate
from treeplex.run.driver import solve


def test_hand_rank7_orders_hands_like_phevaluator():
    """Sorted by our strength, phevaluator's ranks (1 = best) never go down, and ties agree:
    random 7-card hands, half of them from two suits (flushes, straight flushes)."""
    from phevaluator import evaluate_cards

    rng = np.random.default_rng(0)
    hands = [rng.permutation(52)[:7] for _ in range(6000)]
    hands += [rng.choice(np.array([c for c in range(52) if c % 4 < 2]), 7, replace=False) for _ in range(6000)]
    hands += [np.array([48, 0, 4, 8, 12, 17, 22]), np.array([48, 44, 40, 36, 32, 1, 2])]  # wheel; royal flush
    ours = np.array([K.hand_rank7(np.asarray(h, dtype=np.int64)) for h in hands])
    ph = np.array([evaluate_cards(*map(int, h)) for h in hands])
    o = np.argsort(ours, kind="stable")
    assert (np.diff(ph[o]) <= 0).all()
    assert ((np.diff(ours[o]) == 0) == (np.diff(ph[o]) == 0)).all()
    assert ph[-1] == 1 and ours[-1] == ours.max()


def test_betting_tree_follows_the_rules():
    t = BettingTree(Config(), [169, 2, 2, 2])
    assert t.labels[0] == ("f", "c", "p0.5", "p1", "a") and t.actor[0] == 0  # the small blind first
    by_hist = dict(zip(t.history, range(t.n_nodes)))
    limp = by_hist["c"]
    assert t.kind[limp] == DECISION and t.actor[limp] == 1 and t.labels[limp][0] == "x"  # the BB's option
    flop = by_hist["c,x/"]
    assert t.street[flop] == 1 and t.actor[flop] == 1  # the big blind first after the flop
    river = [v for v in range(t.n_nodes) if t.kind[v] == DECISION and t.street[v] == 3]
    assert {lab for v in river for lab in t.labels[v]} <= {"f", "c", "x", "p1", "a"}
    assert t.payoff[by_hist["f"]] == -50 and t.kind[by_hist["f"]] == FOLD
    allin = by_hist["a,c/"]  # the deal after a called all-in goes to showdown
    assert t.kind[allin] == SHOWDOWN and t.payoff[allin] == 20000
    # a raise cap of 1: after one raise a round offers fold and call only
    t1 = BettingTree(Config(max_raises=1), [169, 2, 2, 2])
    assert set(t1.labels[dict(zip(t1.history, range(t1.n_nodes)))["p1"]]) == {"f", "c"}
    assert t.n_slots == sum(t.n_act[v] * t.buckets[t.street[v]] for v in range(t.n_nodes) if t.kind[v] == DECISION)
    assert memory_estimate(t) >= 8 * t.n_slots


# ------------------------------------------------------------------ a small abstract game

CARDS = 4  # ranks 0..3, one card each and a public card for the second round


def small_game(big_blind=100):
    """Two rounds, one private card each from 4, a public card before round 2; the round-2
    bucket is (own card, public card): perfect recall, so the sequence-form LP applies. A pair
    with the public card wins, else the higher card."""
    cfg = Config(stack=10 * big_blind, small_blind=big_blind // 2, big_blind=big_blind, bets="0.5,1,allin/1,allin",
                 max_raises=2, rounds=2)
    deals = list(permutations(range(CARDS), 3))
    prob = np.full(len(deals), 1.0 / len(deals))
    bk = np.array([[[a, a * CARDS + c], [b, b * CARDS + c]] for a, b, c in deals])

    def strength(x, c):
        return 10 + x if x == c else x

    sd = np.array([np.sign(strength(a, c) - strength(b, c)) for a, b, c in deals])
    table = TableDeals(prob, bk, sd)
    tree = BettingTree(cfg, table.buckets)
    return tree, table


def explicit(tree, table):
    """The same abstract game as a treeplex game: infosets (node, bucket)."""
    def walk(v, d):
        k = tree.kind[v]
        if k == FOLD:
            return terminal(tree.payoff[v])
        if k == SHOWDOWN:
            return terminal(table.sd[d] * tree.payoff[v])
        p, s = int(tree.actor[v]), int(tree.street[v])
        kids = tree.children[tree.first[v]:tree.first[v] + tree.n_act[v]]
        return decision(p, (v, int(table.bk[d, p, s])), {lab: walk(c, d) for lab, c in zip(tree.labels[v], kids)})

    root = chance([(str(d), float(table.prob[d]), walk(0, d)) for d in range(len(table.prob))])
    return ExplicitGame(root, "small-abstract").problem()


def plans(problem, tree, avg):
    """The trainer's average strategy as realization plans of ``problem``."""
    out = []
    for T in problem.treeplexes:
        b = np.zeros(T.n_seqs)
        b[0] = 1
        for j, (v, g) in enumerate(T.infoset_keys):
            k = tree.n_act[v]
            probs = avg[tree.offset[v] + g * k:tree.offset[v] + (g + 1) * k]
            for i, lab in enumerate(T.action_labels[j]):
                b[T.start[j] + i] = probs[tree.labels[v].index(lab)]
        out.append(T.plan_from_behavioral(b))
    return out


def test_mccfr_converges_to_the_lp_value_of_the_abstract_game():
    tree, table = small_game()
    problem = explicit(tree, table)
    lp = solve(problem, "lp")
    exact = lp.evaluation.value
    tr = Trainer(tree, table, Params(seed=3, discount_every=2000, discount_until=40000, prune_after=10**9))
    gaps = []
    for _ in range(3):
        tr.step(40000)
        x, y = plans(problem, tree, tr.average())
        gaps.append(evaluate(problem, x, y))
    ev = gaps[-1]
    scale = tree.config.big_blind  # exploitability in big blinds
    assert ev.exploitability / scale < 0.02, [g.exploitability for g in gaps]
    assert gaps[-1].exploitability < gaps[0].exploitability
    assert abs(ev.value - exact) / scale < 0.02
    # the uniform strategy is far worse: the bound above is not loose
    u = evaluate(problem, problem.X.uniform(), problem.Y.uniform())
    assert u.exploitability / scale > 0.3


def full_width_regrets(tree, table, R):
    """Counterfactual regrets of one full-width CFR pass for traverser t = 0 and 1 with the
    regret-matching strategy of R (written independently of the kernels: recursion over deals)."""
    def strat(v, g):
        k = tree.n_act[v]
        r = np.maximum(R[tree.offset[v] + g * k:tree.offset[v] + (g + 1) * k].astype(float), 0)
        return r / r.sum() if r.sum() > 0 else np.full(k, 1.0 / k)

    out = np.zeros((2, tree.n_slots))

    def value(v, d, t, reach_other):
        k = tree.kind[v]
        if k != DECISION:
            u = tree.payoff[v] * (1 if k == FOLD else table.sd[d])
            return u if t == 0 else -u
        p, s = tree.actor[v], tree.street[v]
        g = table.bk[d, p, s]
        sig = strat(v, g)
        kids = tree.children[tree.first[v]:tree.first[v] + tree.n_act[v]]
        if p != t:
            return sum(sig[a] * value(c, d, t, reach_other * sig[a]) for a, c in enumerate(kids))
        vals = np.array([value(c, d, t, reach_other) for c in kids])
        v_node = sig @ vals
        base = tree.offset[v] + g * tree.n_act[v]
        out[t, base:base + tree.n_act[v]] += reach_other * (vals - v_node)
        return v_node

    for t in (0, 1):
        for d in range(len(table.prob)):
            value(0, d, t, table.prob[d])
    return out


@pytest.mark.parametrize("big_blind", [100, 2])
def test_sampled_regrets_are_unbiased(big_blind):
    """The mean regret change of one external-sampling traversal, over many independent draws
    from the same state, equals the full-width counterfactual regret (within 5 standard errors);
    with blinds of 1/2 chips the integer rounding would show if it were biased."""
    tree, table = small_game(big_blind)
    tr = Trainer(tree, table, Params(seed=5, discount_every=0, prune_after=10**9))
    tr.step(300)  # a non-uniform state
    R0 = tr.R.copy()
    exact = full_width_regrets(tree, table, R0)
    n = 20000
    s1, s2, hits = np.zeros((2, tree.n_slots)), np.zeros((2, tree.n_slots)), np.zeros((2, tree.n_slots))
    scratch = (np.zeros((128, 8)), np.zeros((128, 8)), np.zeros((128, 3), dtype=np.int64), np.zeros(3, dtype=np.int64))
    for i in range(n):
        R = R0.copy()
        S = np.zeros(tree.n_slots, dtype=np.float32)
        rng = K.seed_state(1000 + i)
        t = i % 2
        bk = np.zeros((2, 4), dtype=np.int64)
        sd = K.table_deal(table.cdf, table.bk, table.sd, rng, bk)
        K.traverse(t, bk, sd, tree.kind, tree.street, tree.actor, tree.n_act, tree.first, tree.payoff, tree.children,
                   tree.offset, 1, R, S, rng, False, -1, -2**31 + 1, *scratch)
        x = R.astype(float) - R0
        s1[t] += x
        s2[t] += x * x
        hits[t] += x != 0
    for t in (0, 1):
        m = n // 2
        mean = s1[t] / m
        se = np.sqrt(np.maximum(s2[t] / m - mean ** 2, 0) / m)
        touched = hits[t] >= 100  # slots the samples reach often enough for the normal bound
        assert touched.sum() > 100
        z = np.abs(mean - exact[t])[touched] / se[touched]
        assert np.all(z < 5), z.max()
        assert np.corrcoef(mean[touched], exact[t][touched])[0, 1] > 0.95


def _traverse(tree, table, t, R, prune, threshold, floor, seed=1):
    S = np.zeros(tree.n_slots, dtype=np.float32)
    stats = np.zeros(3, dtype=np.int64)
    bk = np.zeros((2, 4), dtype=np.int64)
    rng = K.seed_state(seed)
    sd = K.table_deal(table.cdf, table.bk, table.sd, rng, bk)
    K.traverse(t, bk, sd, tree.kind, tree.street, tree.actor, tree.n_act, tree.first, tree.payoff, tree.children,
               tree.offset, tree.config.rounds - 1, R, S, rng, prune, threshold, floor, np.zeros((128, 8)),
               np.zeros((128, 8)), np.zeros((128, 3), dtype=np.int64), stats)
    return bk, stats


def test_pruning_skips_only_what_pluribus_skips():
    """A pruned traversal skips actions with regret below the threshold, except actions that
    end the hand and actions on the last round; skipped actions keep their regret."""
    tree, table = small_game()
    R = np.full(tree.n_slots, -1000, dtype=np.int32)
    before = R.copy()
    bk, stats = _traverse(tree, table, 0, R, True, -500, -2000)
    k = tree.n_act[0]
    root = slice(tree.offset[0] + bk[0, 0] * k, tree.offset[0] + (bk[0, 0] + 1) * k)
    ends = tree.kind[tree.children[tree.first[0]:tree.first[0] + k]] != DECISION
    assert stats[1] == (~ends).sum() and ends.any()  # only the root's fold was explored
    assert (R[root][~ends] == before[root][~ends]).all() and (R != before).sum() == ends.sum()
    # regrets at 0 before the last round, below the threshold on it: nothing is pruned
    last = np.zeros(tree.n_slots, dtype=bool)
    for v in np.flatnonzero((tree.kind == DECISION) & (tree.street == tree.config.rounds - 1)):
        last[tree.offset[v]:tree.offset[v] + tree.n_act[v] * tree.buckets[-1]] = True
    pruned = changed = 0
    for seed in range(40):
        R = np.where(last, -1000, 0).astype(np.int32)
        _, stats = _traverse(tree, table, seed % 2, R, True, -500, -2000, seed)
        pruned += stats[1]
        changed += (R[last] != -1000).sum()
        assert (R >= -2000).all()
    assert pruned == 0 and changed > 0


def test_checkpoint_continues_identically_and_bad_files_are_refused(tmp_path):
    tree, table = small_game()
    p = Params(seed=9, discount_every=500, discount_until=3000, prune_after=1000, threshold=-50, floor=-60)
    a = Trainer(tree, table, p)
    a.step(2000)
    ck = str(tmp_path / "ck.npz")
    a.save(ck)
    a.step(2000)
    b = Trainer(tree, table, p)
    b.load(ck)
    b.step(2000)
    assert np.array_equal(a.R, b.R) and np.array_equal(a.S, b.S) and a.iterations == b.iterations == 4000
    assert a.stats[1] > 0  # pruning was on in the continued part
    other = Trainer(tree, TableDeals(table.prob[::-1], table.bk[::-1, :, :2], table.sd[::-1]), p)
    with pytest.raises(InputError, match="another abstraction"):
        other.load(ck)
    with pytest.raises(InputError, match="another set of parameters"):
        Trainer(tree, table, Params(seed=10)).load(ck)
    bad = str(tmp_path / "bad.npz")
    with np.load(ck) as z:
        arrays = {k: z[k] for k in z.files}
    np.savez(bad, **{**arrays, "S": -arrays["S"] - 1})
    with pytest.raises(InputError, match="'S' must be"):
        Trainer(tree, table, p).load(bad)
    np.savez(bad, **{**arrays, "R": arrays["R"][:-1]})
    with pytest.raises(InputError, match="'R' must be"):
        Trainer(tree, table, p).load(bad)
    raw = bytearray(open(ck, "rb").read())
    raw[len(raw) // 2:len(raw) // 2 + 64] = b"\0" * 64
    open(bad, "wb").write(bytes(raw))
    with pytest.raises(InputError, match="bad.npz"):
        Trainer(tree, table, p).load(bad)
    open(bad, "w").write("not a zip")
    with pytest.raises(InputError, match="not a readable"):
        Trainer(tree, table, p).load(bad)
    with pytest.raises(InputError, match="needs about"):
        Trainer(tree, table, p, max_memory="1K")


def test_head_to_head_is_antisymmetric_and_ranks_training():
    tree, table = small_game()
    early = Trainer(tree, table, Params(seed=2, discount_every=0))
    early.step(50)
    late = Trainer(tree, table, Params(seed=2, discount_every=0))
    late.step(50000)
    same = head_to_head(tree, table, late.S, late.S, 200)
    assert same["mbb"] == 0
    ab = head_to_head(tree, table, late.S, early.S, 20000, seed=4)
    ba = head_to_head(tree, table, early.S, late.S, 20000, seed=4)
    assert ab["mbb"] == pytest.approx(-ba["mbb"])
    assert ab["mbb"] - ab["ci95"] > 0  # the trained blueprint wins
    # the exact duplicate value from treeplex's payoff matrix lies in the interval
    problem = explicit(tree, table)
    (xa, ya), (xb, yb) = plans(problem, tree, late.average()), plans(problem, tree, early.average())
    exact = 0.5 * (evaluate(problem, xa, yb).value - evaluate(problem, xb, ya).value) * 1000 / tree.config.big_blind
    assert abs(ab["mbb"] - exact) < ab["ci95"] * 1.3, (ab, exact)


@pytest.fixture(scope="module")
def tiny_abs(tmp_path_factory):
    from treeplex.abstraction.build import build

    out = str(tmp_path_factory.mktemp("bp") / "abs.npz")
    build(out, (4, 4, 4), flops=1, seed=0, progress=False)
    return out


def test_real_deals_match_the_abstraction_and_phevaluator(tiny_abs):
    """The kernels' 52-card deals: distinct cards, a flop the abstraction reached, buckets as
    the abstraction's own lookup gives them, showdowns as phevaluator decides them."""
    from phevaluator import evaluate_cards

    from treeplex.abstraction.build import load
    from treeplex.abstraction.indexer import Indexer
    from treeplex.blueprint.train import RealDeals

    ab = load(tiny_abs)
    deals = RealDeals(ab)
    args = deals.args()
    ix = {s: Indexer(s) for s in ("preflop", "flop", "turn", "river")}
    flops = {tuple(sorted(f)) for f in deals.flops.tolist()}
    rng = K.seed_state(11)
    cards = np.zeros(9, dtype=np.int64)
    bk = np.zeros((2, 4), dtype=np.int64)
    for _ in range(300):
        K.deal_cards(deals.flops, rng, cards)
        sd = K.real_buckets(cards, *args[2:9], bk)
        assert len(set(cards.tolist())) == 9 and tuple(sorted(cards[4:7].tolist())) in flops
        for p in range(2):
            hole = cards[2 * p:2 * p + 2].tolist()
            assert bk[p, 0] == ix["preflop"].index(hole)
            for s, n in ((1, 3), (2, 4), (3, 5)):
                street = ("flop", "turn", "river")[s - 1]
                assert bk[p, s] == ab.bucket(street, [ix[street].index(hole + cards[4:4 + n].tolist())])[0] >= 0
        r0, r1 = (evaluate_cards(*map(int, cards[2 * p:2 * p + 2].tolist() + cards[4:].tolist())) for p in (0, 1))
        assert sd == np.sign(r1 - r0)  # phevaluator: lower is better


def _cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    return subprocess.run([sys.executable, "-m", "treeplex.cli", "blueprint", *args], capture_output=True, text=True,
                          env=env, cwd=cwd)


def test_cli_train_resume_match_and_bad_inputs(tiny_abs, tmp_path, capsys):
    """52-card deals through the abstraction: train, resume from the checkpoint, match."""
    from treeplex.cli import main

    d = str(tmp_path)
    common = ["--abstraction", tiny_abs, "--quiet", "--discount-every", "500", "--discount-until", "5000"]
    r = _cli("train", *common, "-o", f"{d}/a.npz", "--iterations", "3000", "--checkpoint", f"{d}/ck.npz")
    assert r.returncode == 0, r.stderr
    assert "3,000 iterations" in r.stdout and "8 B per infoset-action" in r.stdout
    r = _cli("train", *common, "-o", f"{d}/b.npz", "--iterations", "6000", "--resume", f"{d}/ck.npz")
    assert r.returncode == 0 and "resumed at iteration 3,000" in r.stdout, r.stderr
    r = _cli("train", *common, "-o", f"{d}/c.npz", "--time-limit", "1")
    assert r.returncode == 0, r.stderr
    r = _cli("match", f"{d}/b.npz", f"{d}/a.npz", "--abstraction", tiny_abs, "--deals", "500")
    assert r.returncode == 0 and "mbb/g (95% CI" in r.stdout, r.stderr
    capsys.readouterr()
    for args, msg in ((["train", *common, "-o", f"{d}/x.npz"], "--iterations"),
                      (["train", *common, "-o", f"{d}/x.npz", "--time-limit", "-1"], "--time-limit"),
                      (["train", *common, "-o", f"{d}/x.npz", "--iterations", "10", "--resume", tiny_abs],
                       "not a blueprint checkpoint"),
                      (["train", *common, "-o", f"{d}/x.npz", "--iterations", "10", "--max-memory", "1K"],
                       "needs about"),
                      (["train", *common, "-o", f"{d}/x.npz", "--iterations", "10", "--max-raises", "2",
                        "--resume", f"{d}/ck.npz"], "another betting"),
                      (["train", "--abstraction", f"{d}/a.npz", "-o", f"{d}/x.npz", "--iterations", "1"],
                       "abstraction version")):
        assert main(["blueprint", *args]) == 2, args
        err = capsys.readouterr().err
        assert msg in err and len(err.strip().splitlines()) == 1, (args, err)
