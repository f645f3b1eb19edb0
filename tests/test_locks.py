"""Node locking on postflop spots: the lock spec and its checks, every regret solver and the LP
in the locked game, checked against the unlocked LP, a forced game built from other sizes,
the lower-bounded LP of :mod:`treeplex.refine.lp` and best-response conditions; weighted hand
locks (lower bounds) and range-wide frequency locks (spread from a baseline solve)."""

import json
import subprocess
import sys

import numpy as np
import pytest

import treeplex as tp
from treeplex.errors import InputError
from treeplex.model.metrics import evaluate, lock_gains
from treeplex.poker.cards import hand_name
from treeplex.poker.locks import find_nodes, spread
from treeplex.poker.postflop import PostflopGame
from treeplex.refine.lp import solve_lp_perturbed

# a river on a 28-card deck: the LP solves in well under a second
BASE = dict(board="AhKd7c2s9h", pot=20, stack=20, range0="AA,KK,QQ,AK,KQ,JT", range1="AA,KK,QQ,AQ,JJ,T9",
            bet="50%", deck="9TJQKA27", **{"raise": "2x"})
CHECK_BACK = [{"node": "x", "player": 1, "strategy": {"x": 1}}]


@pytest.fixture(scope="module")
def unlocked():
    g = PostflopGame(**BASE)
    return g, tp.solve_lp(g.problem())


def test_lock_at_the_equilibrium_changes_nothing(unlocked):
    """Player 1's LP strategy at b10, locked hand by hand: the locked game has the unlocked
    value (LP), and a locked DCFR run reaches it within its gap."""
    g, lp = unlocked
    v = [g.tree.history[i] for i in range(g.tree.n_nodes)].index("b10")
    probs, _ = g.behavioral(1, lp.y, v)
    locks = [{"node": "b10", "player": 1, "hands": hand_name(h),
              "strategy": dict(zip(g.tree.actions[v], map(float, probs[i])))} for i, h in enumerate(g.hands[1])]
    gl = PostflopGame(**BASE, locks=locks)
    p = gl.problem()
    assert len(p.locks[1].seqs) == len(g.hands[1]) * 3 and p.locks[0] is None
    assert tp.solve_lp(p).value == pytest.approx(lp.value, abs=1e-9)
    res = tp.solve(p, "dcfr", target_gap=1e-3)
    assert abs(res.value - lp.value) <= res.gap + 1e-9


def test_pure_lock_equals_the_forced_game():
    """IP locked to check back after a check has the value of the game whose sizes give IP no
    bet there (built from other sizes: OOP's all-in kept explicit); the locked LP also equals
    the lower-bounded LP with the lock as bounds, and locked CFR+ reaches it."""
    locked = PostflopGame(**BASE, locks=CHECK_BACK).problem()
    forced = PostflopGame(**{**BASE, "bet": None, "raise": None, "add_allin_threshold": 0,
                             "sizes": {"river": {"bet": "50%,a", "raise": "2x", "ip": {"bet": ""}}}})
    assert [forced.tree.actions[v] for v in range(forced.tree.n_nodes)][1] == ("x",)
    v_forced = tp.solve_lp(forced.problem()).value
    lp = tp.solve_lp(locked)
    assert lp.value == pytest.approx(v_forced, abs=1e-9)
    assert abs(lp.value - tp.solve_lp(PostflopGame(**BASE).problem()).value) > 0.1  # the lock matters
    lower = tuple(np.zeros(T.n_seqs) if lk is None else lk.lower for T, lk in zip(locked.treeplexes, locked.locks))
    assert solve_lp_perturbed(locked, *lower).value == pytest.approx(v_forced, abs=1e-7)
    res = tp.solve(locked, "cfr+", target_gap=1e-3)
    assert abs(res.value - v_forced) <= res.gap + 1e-9


def test_one_hand_class_locked_others_best_respond():
    """QQ locked to shove after a check: in the locked LP's equilibrium every other IP hand there
    plays only actions of maximal counterfactual value, player 0 best-responds exactly, and
    QQ's lock is not its best action (the lock binds)."""
    gl = PostflopGame(**BASE, locks=[{"node": "x", "player": 1, "hands": "QQ", "strategy": {"b20": 1}}])
    p = gl.problem()
    lp = tp.solve_lp(p)
    assert lock_gains(p, lp.x, lp.y)[0] == pytest.approx(0.0, abs=1e-9)
    v = [gl.tree.history[i] for i in range(gl.tree.n_nodes)].index("x")
    Y = p.Y
    cfv = p.backend.counterfactual_values(1, -p.A.rmatvec(lp.x, count=False), Y.behavioral_from_plan(lp.y))
    block = gl.node_block(1, cfv, v)
    probs, _ = gl.behavioral(1, lp.y, v)
    qq = np.array([hand_name(h)[0] == "Q" == hand_name(h)[2] for h in gl.hands[1]])
    assert np.allclose(probs[qq], [0, 0, 1])
    best = block.max(axis=1, keepdims=True)
    slack = np.where(probs > 1e-7, best - block, 0.0)
    assert slack[~qq].max() <= 1e-9 * max(1.0, np.abs(block).max())
    assert (best[qq, 0] - block[qq, 2]).max() > 1e-3
    # the iterative solve: player 0 (no locks) is an epsilon-best response, within the locked gap
    res = tp.solve(p, "dcfr", target_gap=1e-3)
    assert 0.0 <= lock_gains(p, res.x, res.y)[0] <= res.gap + 1e-12


@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr", "lcfr", "pcfr+", "pdcfr+", "dcfr-ps", "cfr"])
def test_every_regret_solver_plays_the_lock(algorithm):
    """At every locked infoset the average plan is the lock times the parent."""
    p = PostflopGame(**BASE, locks=[{"node": "", "player": 0, "strategy": {"x": 0.25, "b20": 0.75}}]).problem()
    res = tp.solve(p, algorithm, max_iters=30)
    lk = p.locks[0]
    assert np.allclose(res.x[lk.seqs], lk.probs * res.x[p.X.seq_parent[lk.seqs]], atol=1e-12)
    assert np.allclose(res.x[lk.seqs].reshape(-1, 3).sum(axis=0) / res.x[lk.seqs].reshape(-1, 3).sum(),
                       [0.25, 0, 0.75])
    assert evaluate(p, res.x, res.y).gap >= 0


def test_board_free_names_lock_every_board():
    """On a turn spot, ``x-x/b8`` names IP's river node after a check on every river card,
    ``x-x/Qc/`` one board's river root; the locked LP equals the lower-bounded LP."""
    g = PostflopGame(board="KsQh9d8c", pot=16, stack=16, deck="89TJQKA", range0="AsKh,QdJd,TsTc,AhJh",
                     range1="AcAd,9s9h,KdQs,JsTs,Jc9c", bet="50%", **{"raise": "2x"})
    t = g.tree
    cards = len(t.chance_cards[0]) if t.n_chance else 0
    every = find_nodes(t, "x-x/x", "t")
    assert len(every) == cards > 1 and {t.history[v].split("/")[2] for v in every} == {"x"}
    one = find_nodes(t, "x-x/Qc/", "t")
    assert [t.history[v] for v in one] == ["x-x/Qc/"]
    gl = PostflopGame(board="KsQh9d8c", pot=16, stack=16, deck="89TJQKA", range0="AsKh,QdJd,TsTc,AhJh",
                      range1="AcAd,9s9h,KdQs,JsTs,Jc9c", bet="50%", **{"raise": "2x"},
                      locks=[{"node": "x-x/x", "player": 1, "strategy": {"x": 1}}])
    p = gl.problem()
    assert len(np.unique(p.Y.seq_infoset[p.locks[1].seqs])) == cards * len(gl.hands[1])
    lp = tp.solve_lp(p)
    lower = (np.zeros(p.X.n_seqs), p.locks[1].lower)
    assert solve_lp_perturbed(p, *lower).value == pytest.approx(lp.value, abs=1e-7)


@pytest.mark.parametrize("lock, msg", [
    ({"node": "x-b30", "player": 0, "strategy": {"f": 1}}, "no action 'b30' at x (actions there: x, b10, b20)"),
    ({"node": "x", "player": 0, "strategy": {"x": 1}}, "is player 1's decision (IP), not player 0's"),
    ({"node": "x", "player": 1, "strategy": {"c": 1}}, "has no action 'c' (actions there: x, b10, b20)"),
    ({"node": "x", "player": 1, "strategy": {"x": 0.5, "b10": 0.4}}, "probabilities sum to 0.9, not 1"),
    ({"node": "x", "player": 1, "strategy": {"x": 1.5}}, "must be a probability in [0, 1]"),
    ({"node": "x", "player": 1, "strategy": {"x": 1}, "hands": "KQ"}, "not in player 1's range"),
    ({"node": "x", "player": 2, "strategy": {"x": 1}}, "player must be 0 (OOP) or 1 (IP)"),
    ({"node": "x", "player": 1, "strategy": {"x": 1}, "who": 1}, "keys must be node, player, one of strategy or frequency"),
    ({"node": "x-b10-b20-c", "player": 1, "strategy": {"x": 1}}, "the hand is over after x-b10-b20"),
])
def test_bad_locks_are_refused_in_one_line(lock, msg):
    with pytest.raises(InputError, match=None) as e:
        PostflopGame(**BASE, locks=[lock]).problem()
    assert msg in str(e.value) and "\n" not in str(e.value) and "locks[0]" in str(e.value)


def test_solvers_and_options_that_cannot_lock_are_refused():
    p = PostflopGame(**BASE, locks=CHECK_BACK).problem()
    for algorithm, kw, msg in [("egt", {}, "cannot respect node locks"),
                               ("mccfr-es", {}, "cannot respect node locks")]:
        with pytest.raises(InputError, match=msg):
            tp.solve(p, algorithm, max_iters=2, **kw)
    with pytest.raises(InputError, match="node locks run on the numba backend"):
        p2 = PostflopGame(**BASE, locks=CHECK_BACK).problem()
        p2.use_backend("array")
    with pytest.raises(InputError, match="locks need isomorphism=false"):
        PostflopGame(**{**BASE, "board": "AhKd7c2s"}, isomorphism=True, locks=CHECK_BACK)
    with pytest.raises(InputError, match="locks overlap|locked by locks\\[0\\] already"):
        PostflopGame(**BASE, locks=CHECK_BACK * 2).problem()


def test_cli_reads_locks_from_the_spec_and_from_lock(tmp_path):
    """The spec's locks and ``--lock`` add up; the JSON names both exploitabilities."""
    spec = tmp_path / "spot.json"
    spec.write_text(json.dumps({"game": "postflop", **BASE, "locks": CHECK_BACK}))
    out = subprocess.run([sys.executable, "-m", "treeplex.cli", "solve", str(spec), "--json", "--no-strategies",
                          "--lock", "b10:1:f=1:QQ"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["locked_infosets"] == [0, 42 + 6] and r["lock_gain_player0"] == pytest.approx(0.0, abs=1e-9)
    assert r["lock_gain_player1"] > 0.1 and r["gap"] < 1e-8
    bad = subprocess.run([sys.executable, "-m", "treeplex.cli", "solve", str(spec), "--lock", "x:1:q=1"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "has no action 'q'" in bad.stderr and bad.stderr.count("\n") == 1


# ------------------------------------------------------------------ weighted hand locks


def _ip_node(g, name):
    return [g.tree.history[i] for i in range(g.tree.n_nodes)].index(name)


def _cfv_block(g, p, lp, v):
    """Player 1's counterfactual values per (hand, action) at node v against lp.x."""
    P = g.problem()
    cfv = P.backend.counterfactual_values(1, -P.A.rmatvec(lp.x, count=False), P.Y.behavioral_from_plan(lp.y))
    return g.node_block(1, cfv, v)


def test_weighted_lock_is_a_lower_bound(unlocked):
    """``QQ:0.5`` locked to shove after a check: in the locked LP every QQ combo shoves with
    probability >= 1/2 and its free half plays only actions of maximal counterfactual value,
    every other hand best-responds, player 0 best-responds exactly; the value lies between the
    unlocked and the fully locked ones; ``QQ:1`` is the plain lock; DCFR (lower-bounded regret
    matching in the kernel, not the LP's inequality rows) reaches the LP value within its gap."""
    g0, lp0 = unlocked
    lock = {"node": "x", "player": 1, "strategy": {"b20": 1}}
    half = PostflopGame(**BASE, locks=[{**lock, "hands": "QQ:0.5"}])
    p = half.problem()
    assert len(p.locks[1].seqs) == 0 and p.locks[1].partial.max() == 0.5
    lp = tp.solve_lp(p)
    v = _ip_node(half, "x")
    probs, _ = half.behavioral(1, lp.y, v)
    qq = np.array([hand_name(h)[0] == "Q" == hand_name(h)[2] for h in half.hands[1]])
    assert qq.sum() == 6 and (probs[qq, 2] >= 0.5 - 1e-9).all()
    block = _cfv_block(half, 1, lp, v)
    best = block.max(axis=1, keepdims=True)
    free = probs.copy()
    free[qq] = (probs[qq] - 0.5 * np.array([0, 0, 1])) / 0.5  # the free half's mixture
    assert np.allclose(free.sum(axis=1), 1) and free.min() >= -1e-9
    slack = np.where(free > 1e-7, best - block, 0.0)
    assert slack.max() <= 1e-9 * max(1.0, np.abs(block).max())
    assert lock_gains(p, lp.x, lp.y)[0] == pytest.approx(0.0, abs=1e-9)
    full = tp.solve_lp(PostflopGame(**BASE, locks=[{**lock, "hands": "QQ"}]).problem()).value
    one = tp.solve_lp(PostflopGame(**BASE, locks=[{**lock, "hands": "QQ:1"}]).problem()).value
    assert one == pytest.approx(full, abs=1e-9)
    assert lp0.value - 1e-9 <= lp.value <= full + 1e-9 and full - lp0.value > 1e-3
    res = tp.solve(PostflopGame(**BASE, locks=[{**lock, "hands": "QQ:0.5"}]).problem(), "dcfr", target_gap=1e-3)
    assert abs(res.value - lp.value) <= res.gap + 1e-9
    y = res.y
    shove = p.Y.seq_parent  # the average plan keeps the bound: y[QQ, b20] >= 0.5 y[parent]
    s = np.flatnonzero(p.locks[1].partial > 0)
    assert (y[s] >= 0.5 * y[shove[s]] - 1e-12).all()


# ------------------------------------------------------------------ range-wide frequency locks

FREQ = {"x": 0.3, "b10": 0.2, "b20": 0.5}


def _freq_game(node, player, freq, **kw):
    g = PostflopGame(**{**BASE, **kw}, locks=[{"node": node, "player": player, "frequency": freq}])
    base = g.unlocked()
    lp = tp.solve_lp(base.problem())
    g.set_baseline(lp.x, lp.y)
    return g, base, lp


def test_frequency_lock_plays_the_frequency_over_the_range():
    """IP's range after a check plays x 30%, b10 20%, b20 50% (IP's first decision: its range
    there is its range weights, in the baseline and the locked game alike): the locked LP's
    range-wide frequencies (``strategy_dict``) are the lock's; each hand keeps f/F of an action
    the range plays less, per the documented spread, from the baseline's own mixtures."""
    g, base, lp0 = _freq_game("x", 1, FREQ)
    lp = tp.solve_lp(g.problem())
    v = _ip_node(g, "x")
    node = next(n for n in g.strategy_dict(lp.x, lp.y)["nodes"] if n["history"] == "x")
    assert node["frequencies"] == pytest.approx([FREQ[a] for a in node["actions"]], abs=1e-9)
    probs0, reach0 = base.behavioral(1, lp0.y, v)
    w = base.weight[1] * reach0
    F = w @ probs0 / w.sum()
    probs, _ = g.behavioral(1, lp.y, v)
    f = np.array([FREQ[a] for a in g.tree.actions[v]])
    shrink = f < F
    assert shrink.any() and (~shrink).any()
    assert np.allclose(probs[:, shrink], probs0[:, shrink] * (f / F)[shrink], atol=1e-9)
    assert np.allclose(probs.sum(axis=1), 1) and lock_gains(g.problem(), lp.x, lp.y)[0] == pytest.approx(0, abs=1e-9)
    assert abs(lp.value - lp0.value) > 0.1


def test_frequency_lock_at_the_baseline_frequency_changes_nothing(unlocked):
    """Locking IP's range at b10 to the baseline's own range-wide frequencies spreads to the
    baseline's mixtures, an equilibrium: the locked LP has the unlocked LP's value."""
    g0, lp0 = unlocked
    v = _ip_node(g0, "b10")
    probs, reach = g0.behavioral(1, lp0.y, v)
    w = g0.weight[1] * reach
    F = dict(zip(g0.tree.actions[v], (w @ probs / w.sum()).tolist()))
    g = PostflopGame(**BASE, locks=[{"node": "b10", "player": 1, "frequency": F}])
    g.set_baseline(lp0.x, lp0.y)
    assert tp.solve_lp(g.problem()).value == pytest.approx(lp0.value, abs=1e-8)


def test_frequency_lock_on_every_board_against_the_baseline_range():
    """On a turn spot, ``x-b8-c/x`` (IP's river node after check, bet, call, check, every
    river card): on each board the baseline range at the node (weight x own reach x not
    blocked) plays the lock's frequencies; DCFR respects the spread lock."""
    turn = dict(board="KsQh9d8c", pot=16, stack=32, deck="89TJQKA", range0="AsKh,QdJd,TsTc,AhJh",
                range1="AcAd,9s9h,KdQs,JsTs,Jc9c", bet="50%", **{"raise": "2x"})
    f = {"x": 0.4, "b24": 0.6}
    g = PostflopGame(**turn, locks=[{"node": "x-b8-c/x", "player": 1, "frequency": f}])
    base = g.unlocked()
    lp0 = tp.solve_lp(base.problem())
    g.set_baseline(lp0.x, lp0.y)
    p = g.problem()
    nodes = find_nodes(g.tree, "x-b8-c/x", "t")
    assert len(nodes) > 1
    lk = p.locks[1]
    for v in nodes:
        k = len(g.tree.actions[v])
        assert list(g.tree.actions[v]) == list(f)
        _, reach0 = base.behavioral(1, lp0.y, v)
        w = base.weight[1] * reach0 * base.node_alive(1, v)
        first = g.bases[1][v] + np.arange(len(g.hands[1])) * k
        mix = lk.lower[first[:, None] + np.arange(k)]
        assert np.allclose(mix.sum(axis=1), 1) and w.sum() > 0
        assert w @ mix / w.sum() == pytest.approx(list(f.values()), abs=1e-12)
    res = tp.solve(p, "dcfr", max_iters=20)
    assert np.allclose(res.y[lk.seqs], lk.probs * res.y[p.Y.seq_parent[lk.seqs]], atol=1e-12)


def test_spread_keeps_rows_and_matches_any_range():
    """:func:`spread` on random mixtures and ranges: rows are distributions, the range-wide
    frequencies are the target; an empty range gives every hand the target."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        n, k = rng.integers(1, 30), rng.integers(2, 5)
        probs = rng.dirichlet(np.ones(k), size=n) * (rng.random((n, k)) < 0.7)
        probs[probs.sum(axis=1) == 0, 0] = 1.0
        probs /= probs.sum(axis=1, keepdims=True)
        reach = rng.random(n) * (rng.random(n) < 0.8)
        reach[0] = 0.5
        f = rng.dirichlet(np.ones(k))
        out = spread(probs, reach, f)
        assert out.min() >= 0 and np.allclose(out.sum(axis=1), 1)
        assert reach @ out / reach.sum() == pytest.approx(f, abs=1e-12)
    assert np.allclose(spread(probs, np.zeros(n), f), f)


def test_frequency_lock_needs_a_baseline_and_full_hands():
    g = PostflopGame(**BASE, locks=[{"node": "x", "player": 1, "frequency": FREQ}])
    with pytest.raises(InputError, match="locks\\[0\\]: a frequency lock is spread over hands from the unlocked"):
        g.problem()
    g = PostflopGame(**BASE, locks=[{"node": "x", "player": 1, "frequency": FREQ, "hands": "QQ:0.5"}])
    g.set_baseline(*(lambda r: (r.x, r.y))(tp.solve_lp(g.unlocked().problem())))
    with pytest.raises(InputError, match="a frequency lock takes hands with weight 1"):
        g.problem()
    with pytest.raises(InputError, match="keys must be node, player, one of strategy or frequency"):
        PostflopGame(**BASE, locks=[{"node": "x", "player": 1, "frequency": FREQ, "strategy": FREQ}])


def test_cli_weighted_and_frequency_lock_text(tmp_path):
    """``--lock NODE:P:A=..:HANDS`` with weights, and ``NODE:P:freq:A=..``, from the command line."""
    spec = tmp_path / "spot.json"
    spec.write_text(json.dumps({"game": "postflop", **BASE}))
    out = subprocess.run([sys.executable, "-m", "treeplex.cli", "solve", str(spec), "--json", "--no-strategies",
                          "--baseline", "none", "--lock", "x:1:b20=1:QQ:0.5,KK"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    want = tp.solve_lp(PostflopGame(**BASE, locks=[{"node": "x", "player": 1, "strategy": {"b20": 1},
                                                     "hands": "QQ:0.5,KK"}]).problem()).value
    assert r["locked_infosets"] == [0, 6 + 3] and r["value"] == pytest.approx(want, abs=1e-9)
    assert "baseline" not in r
    out = subprocess.run([sys.executable, "-m", "treeplex.cli", "solve", str(spec), "--json",
                          "--lock", "x:1:freq:x=0.3,b10=0.2,b20=0.5"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    node = next(n for n in json.loads(out.stdout)["strategies"]["nodes"] if n["history"] == "x")
    assert node["frequencies"] == pytest.approx([0.3, 0.2, 0.5], abs=1e-9)


def test_info_on_a_frequency_locked_spec(tmp_path):
    """``treeplex info`` gives a frequency-locked spot's sizes (those of the spot without its
    locks) without the baseline solve."""
    spec = tmp_path / "spot.json"
    spec.write_text(json.dumps({"game": "postflop", **BASE, "locks": [{"node": "x", "player": 1,
                                                                       "frequency": {"x": 0.5, "b20": 0.5}}]}))
    out = subprocess.run([sys.executable, "-m", "treeplex.cli", "info", str(spec), "--json"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    p = PostflopGame(**BASE, isomorphism=False).problem()
    assert json.loads(out.stdout)["sequences"] == [p.X.n_seqs, p.Y.n_seqs]
