"""Node locks on the fused postflop engine (treeplex/poker/fused.py, ``FusedTree.set_locks``):
the same iterates as the sequence form's locked path (treeplex/core/locks.py), and locked
solves that reach the values of test_locks.py's references (the forced game's LP, the locked
LP, the unlocked LP for a lock at the equilibrium)."""

import numpy as np
import pytest

import treeplex as tp
from treeplex.model.metrics import evaluate
from treeplex.poker.cards import hand_name
from treeplex.poker.postflop import PostflopGame
from treeplex.run.driver import make_solver

from test_fused import SPOTS
from test_locks import BASE, CHECK_BACK
from test_fused import assert_fused_follows

SHOVE_QQ = {"node": "x", "player": 1, "hands": "QQ", "strategy": {"b20": 1}}
ROOT_MIX = {"node": "", "player": 0, "strategy": {"x": 0.25, "b20": 0.75}}
TURN = dict(pot=20, stack=30, **SPOTS["turn"])  # (on test_locks.py's turn spot, all-in ties part the paths)
TURN_LOCK = {"node": "x-x/x", "player": 1, "hands": "AcAd,9s9h", "strategy": {"x": 0.3, "b10": 0.7}}


def _forced_value():
    """The LP value of BASE where IP has no bet after a check (CHECK_BACK as a game rule)."""
    forced = PostflopGame(**{**BASE, "bet": None, "raise": None, "add_allin_threshold": 0,
                             "sizes": {"river": {"bet": "50%,a", "raise": "2x", "ip": {"bet": ""}}}})
    return tp.solve_lp(forced.problem()).value


@pytest.mark.parametrize("spot, locks", [(BASE, [SHOVE_QQ, ROOT_MIX]), (TURN, [TURN_LOCK])])
@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr", "pdcfr+"])
def test_fused_locked_iterates_equal_sequence_form(spot, locks, algorithm):
    """A lock on some hands of player 1 (and a mixed lock on every hand of player 0's root on
    the river; on every river card of the turn spot): with simultaneous updates the fused
    walk's average and current plans equal the sequence form's (which plays the lock and zeroes
    its regrets between its passes) after each of 6 iterations, to float64 rounding."""
    P = PostflopGame(**spot, locks=locks).problem()
    _, fus = assert_fused_follows(P, algorithm, 1e-11)
    for q, lk in enumerate(P.locks):  # the plans play the lock, and the locked regrets stayed at 0
        if lk is not None:
            plan = fus.average()[q]
            assert np.allclose(plan[lk.seqs], lk.probs * plan[P.treeplexes[q].seq_parent[lk.seqs]], atol=1e-12)
    R = [np.asarray(s.R) for s in fus.players]
    t = fus.engine.tree
    lko, LK = t.static[14], t.static[15]
    for v in np.flatnonzero(lko >= 0):
        k, m = int(t.cptr[v + 1] - t.cptr[v]), int(t.m[v])
        mask = LK[lko[v] + k * m:lko[v] + (k + 1) * m] != 0
        block = R[t.actor[v]][t.off[v]:t.off[v] + k * m].reshape(k, m)
        assert mask.any() and (block[:, mask] == 0).all()
    assert any(np.abs(r).max() > 0 for r in R)  # the free hands' regrets moved


def test_fused_check_back_lock_reaches_the_forced_game():
    """IP locked to check back: fused CFR+ (alternating) reaches the LP value of the game whose
    rules force the check, within its gap; the walk's gap is the locked game's
    (:func:`treeplex.model.metrics.evaluate` on its plans, best responses over Q^lock)."""
    p = PostflopGame(**BASE, locks=CHECK_BACK).problem()
    v_forced = _forced_value()
    res = tp.solve(p, "cfr+", target_gap=1e-3, fused=True)
    assert abs(res.value - v_forced) <= res.gap + 1e-9
    e = evaluate(p, res.x, res.y)
    assert e.gap == pytest.approx(res.gap, abs=1e-9) and e.br0 == pytest.approx(res.evaluation.br0, abs=1e-9)
    assert abs(v_forced - tp.solve_lp(PostflopGame(**BASE).problem()).value) > 0.1  # the lock matters


def test_fused_lock_at_the_equilibrium_changes_nothing():
    """Player 1's unlocked LP strategy at b10 locked hand by hand: fused DCFR on the locked
    spot reaches the unlocked LP value within its gap."""
    g = PostflopGame(**BASE)
    lp = tp.solve_lp(g.problem())
    v = [g.tree.history[i] for i in range(g.tree.n_nodes)].index("b10")
    probs, _ = g.behavioral(1, lp.y, v)
    locks = [{"node": "b10", "player": 1, "hands": hand_name(h),
              "strategy": dict(zip(g.tree.actions[v], map(float, probs[i])))} for i, h in enumerate(g.hands[1])]
    res = tp.solve(PostflopGame(**BASE, locks=locks).problem(), "dcfr", target_gap=1e-3, fused=True)
    assert abs(res.value - lp.value) <= res.gap + 1e-9


@pytest.mark.parametrize("kw, target", [({}, 2e-3), ({"compression": 16}, 1e-2)])  # 16-bit: stalls near 7e-3
def test_fused_locked_turn_reaches_the_locked_lp(kw, target):
    """The turn spot with IP's AcAd, 9s9h locked on every river card after check-check (a mixed
    lock, in the parallel subtrees): fused DCFR (and with 16-bit storage) reaches the locked
    LP's value within its gap, and its plans play the lock."""
    p = PostflopGame(**TURN, locks=[TURN_LOCK]).problem()
    lp = tp.solve_lp(p)
    res = tp.solve(p, "dcfr", target_gap=target, fused=True, **kw)
    assert abs(res.value - lp.value) <= res.gap + 1e-9
    assert evaluate(p, res.x, res.y).gap == pytest.approx(res.gap, abs=1e-6)
    lk = p.locks[1]
    assert np.allclose(res.y[lk.seqs], lk.probs * res.y[p.Y.seq_parent[lk.seqs]], atol=1e-6)


WEIGHTED = {"node": "x", "player": 1, "hands": "QQ:0.5,AA:0.25", "strategy": {"b20": 0.6, "x": 0.4}}
TURN_WEIGHTED = {**TURN_LOCK, "hands": "AcAd:0.4,9s9h"}  # one weighted hand, one locked outright
CHECK_HALF = {"node": "x", "player": 1, "hands": "AcAd:0.5,9s9h:0.5,KdQs:0.5,JsTs:0.5,Jc9c", "strategy": {"x": 1}}


@pytest.mark.parametrize("spot, locks", [(BASE, [WEIGHTED, ROOT_MIX]), (TURN, [TURN_WEIGHTED])])
@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr", "pdcfr+"])
def test_fused_weighted_locks_equal_sequence_form(spot, locks, algorithm):
    """Weighted locks (lower bounds w p: the hand plays w p + (1 - w) sigma) on the fused walk:
    with simultaneous updates its average and current plans equal the sequence form's
    (lower-bounded regret matching, :mod:`treeplex.backends.numba_regret`) after each of 6
    iterations, to rounding; the weighted hands' regrets move, the plans keep the bounds."""
    P = PostflopGame(**spot, locks=locks).problem()
    assert any(lk is not None and lk.partial is not None for lk in P.locks)
    _, fus = assert_fused_follows(P, algorithm, 1e-10)
    lk = P.locks[1]
    plan = fus.average()[1]
    weighted = np.flatnonzero(lk.partial)
    parent = plan[P.Y.seq_parent[weighted]]
    assert (plan[weighted] >= lk.partial[weighted] * parent - 1e-12).all()  # q_s >= w p_s q_parent
    assert (plan[weighted] > lk.partial[weighted] * parent + 1e-6).any()  # and the free part plays
    t = fus.engine.tree
    lko, LK = t.static[14], t.static[15]
    R = np.asarray(fus.players[1].R)
    moved = False
    for v in np.flatnonzero(lko >= 0):
        k, m = int(t.cptr[v + 1] - t.cptr[v]), int(t.m[v])
        L = LK[lko[v] + k * m:lko[v] + (k + 1) * m]
        block = R[t.off[v]:t.off[v] + k * m].reshape(k, m) if t.actor[v] == 1 else None
        if block is not None:
            assert (block[:, L == 1.0] == 0).all()
            moved |= bool(np.abs(block[:, (L > 0) & (L < 1)]).max(initial=0) > 0)
    assert moved


@pytest.mark.parametrize("kw, target", [({}, 2e-3), ({"compression": 16}, 1e-2)])
def test_fused_weighted_locks_reach_the_locked_lp(kw, target):
    """The turn spot with IP checking back half of four hands and all of Jc9c after OOP's
    check (and the river lock above): fused DCFR (and with 16-bit storage) reaches the LP value
    of the lower-bounded game (its inequality rows, :mod:`treeplex.model.lp`) within its gap,
    the walk's gap is the sequence form's (best responses over Q^l,
    :func:`treeplex.model.metrics.evaluate`), and the value lies strictly between the
    unlocked game's and the game with those hands locked outright."""
    locks = [CHECK_HALF, TURN_WEIGHTED]
    p = PostflopGame(**TURN, locks=locks).problem()
    lp = tp.solve_lp(p)
    res = tp.solve(p, "dcfr", target_gap=target, fused=True, **kw)
    assert abs(res.value - lp.value) <= res.gap + 1e-9
    assert evaluate(p, res.x, res.y).gap == pytest.approx(res.gap, abs=1e-6)
    free = tp.solve_lp(PostflopGame(**TURN).problem()).value
    full = tp.solve_lp(PostflopGame(**TURN, locks=[{**CHECK_HALF, "hands": "AcAd,9s9h,KdQs,JsTs,Jc9c"}]).problem()).value
    assert free + 10 * target < lp.value < full - 10 * target


@pytest.mark.parametrize("lock1", [[TURN_LOCK], [TURN_WEIGHTED, CHECK_HALF]])
def test_lock_gains_by_walks_equal_the_products(lock1):
    """Each player's gain by a best response ignoring the locks (two walks of the fused tree)
    equals :func:`lock_gains` by the sequence form's products, on a DCFR profile of the
    locked turn spot (plain locks, and weighted ones); the locked infosets counted from the
    lock blocks equal the treeplex's (those with a lower bound)."""
    from treeplex.model.metrics import lock_gains

    p = PostflopGame(**TURN, locks=[*lock1, {**ROOT_MIX, "strategy": {"x": 0.25, "b10": 0.75}}]).problem()
    res = tp.solve(p, "dcfr", max_iters=40, fused=False)
    tree = p.game.fused_tree()
    tree.set_locks(p.locks)
    tree.dtype = np.dtype(np.float64)  # the plans in float64 (float32 rounds weighted hands' average to 4e-9 here)
    want = lock_gains(p, res.x, res.y)
    assert tree.lock_gains(res.x, res.y) == pytest.approx(want, abs=1e-9) and want[1] > 1e-3 and want[0] > 1e-3
    assert tree.locked_infosets() == [len(np.unique(T.seq_infoset[np.flatnonzero(lk.lower)]))
                                      for T, lk in zip(p.treeplexes, p.locks)]


def test_cli_on_the_fused_engine_reports_the_lock_gains_by_walks(tmp_path, monkeypatch):
    """With the fused engine's size threshold at 0 (TURN-sized spots take that path), a locked
    ``treeplex solve`` runs fused and reports the lock gains and locked infosets by walks: the
    numbers of the sequence form's products on the same plans (its ``--out`` file)."""
    import contextlib
    import io
    import json

    from treeplex.cli import main
    from treeplex.model.metrics import lock_gains
    from treeplex.poker import postflop

    monkeypatch.setattr(postflop, "FUSED_MIN_SEQS", 0)
    spec = tmp_path / "turn.json"
    spec.write_text(json.dumps({"game": "postflop", **TURN, "locks": [TURN_LOCK]}))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["solve", str(spec), "--algorithm", "dcfr", "--max-iters", "30", "--baseline", "none", "--json",
                     "--no-strategies"]) == 0
    r = json.loads(out.getvalue())
    g = PostflopGame(**TURN, locks=[TURN_LOCK])
    assert g.fused_by_default()
    p = g.problem()
    s = make_solver(p, "dcfr")
    assert s.engine is not None
    for _ in range(30):
        s.step()
    x, y = s.average()
    assert r["value"] == pytest.approx(evaluate(p, x, y).value, abs=1e-6)
    gains = lock_gains(p, x, y)
    assert [r["lock_gain_player0"], r["lock_gain_player1"]] == pytest.approx(gains, abs=1e-6)
    assert r["locked_infosets"] == [0, len(np.unique(p.Y.seq_infoset[p.locks[1].seqs]))]


def test_locked_fused_state_round_trip():
    """A checkpointed locked fused run (state_dict, set_state into a fresh solver of the same
    locked spot) continues with the same plans as the run that went on."""
    p = PostflopGame(**TURN, locks=[TURN_LOCK]).problem()
    a = make_solver(p, "dcfr", fused=True)
    for _ in range(5):
        a.step()
    b = make_solver(p, "dcfr", fused=True)
    b.set_state(a.state_dict())
    for _ in range(5):
        a.step()
        b.step()
    for u, w in zip(a.average() + a.current(), b.average() + b.current()):
        np.testing.assert_allclose(u, w, rtol=0, atol=1e-12)
