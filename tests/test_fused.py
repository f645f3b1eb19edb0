"""The fused postflop engine (treeplex/poker/fused.py) against the sequence-form path and the LP."""

import numpy as np
import pytest

import treeplex as tp
from treeplex.run.driver import make_solver
from treeplex.errors import InputError
from treeplex.model.metrics import evaluate
from treeplex.poker.postflop import PostflopGame

TURN_RANGES = dict(range0="AsKh,QdJd,TsTc,AhJh", range1="AcAd,9s9h,KdQs,JsTs,Jc9c")
SPOTS = {
    "river": dict(board="KsQh9d8c2s", range0="AsKh,QdJd,TsTc,AhJh,8h8d", range1="AcAd,9s9h,KdQs,JsTs,Qc2c",
                  bet="50%,a", **{"raise": "2x"}),
    "turn": dict(board="KsQh9d8c", deck="89TJQKA", bet="50%,a", **{"raise": "2x"}, **TURN_RANGES),
    "iso": dict(board="KsQhTh9s", deck="89TJQKA", range0="AKs,88", range1="AQs,99", bet="50%,a", **{"raise": "2x"}),
}


def _spot(name, **kw):
    return PostflopGame(pot=20, stack=30, **SPOTS[name], **kw)


def assert_fused_follows(P, algorithm, atol, steps=6):
    """The fused walk's average and current plans equal the sequence form's after each of
    ``steps`` simultaneous-update iterations in float64, to ``atol``; returns both solvers
    (shared by the lock, bunching and nlfh52 tests)."""
    seq = make_solver(P, algorithm, alternating=False, storage="float64", fused=False)
    fus = make_solver(P, algorithm, alternating=False, storage="float64", fused=True)
    assert fus.engine is not None and seq.engine is None
    for _ in range(steps):
        seq.step()
        fus.step()
        for a, b in zip(seq.average() + seq.current(), fus.average() + fus.current()):
            np.testing.assert_allclose(b, a, rtol=0, atol=atol)
    return seq, fus


@pytest.mark.parametrize("spot", ["river", "turn", "iso"])
@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr", "pdcfr+"])
def test_fused_iterates_equal_sequence_form(spot, algorithm):
    """Same scalars, same iterates: with simultaneous updates, the average and current plans of
    the fused walk equal the sequence-form backend's after each of 6 iterations, to float64
    rounding (storage float64); the fused path keeps R, S, and P for the predictive PDCFR+ only."""
    P = _spot(spot).problem()
    seq = make_solver(P, algorithm, alternating=False, storage="float64", fused=False)
    fus = make_solver(P, algorithm, alternating=False, storage="float64", fused=True)
    assert fus.engine is not None and seq.engine is None
    assert (len(fus.players[0].P) > 0) == (algorithm == "pdcfr+")
    for _ in range(6):
        seq.step()
        fus.step()
        for a, b in zip(seq.average() + seq.current(), fus.average() + fus.current()):
            np.testing.assert_allclose(b, a, rtol=0, atol=1e-11)
    assert fus.gradients == seq.gradients


@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr", "pdcfr+"])
def test_fused_alternating_updates_equal_sequence_form(algorithm):
    """Alternating updates (player 1 against player 0's updated strategy): the same plans as
    the sequence-form path on the river spot for 6 iterations. (On the turn spots the runs
    part after 2-4 iterations where an infoset's actions tie: a regret of 1e-18 from
    rounding on one path and 0 on the other turns uniform play into a pure action; the
    alternating runs' convergence is tested against the LP below.)"""
    P = _spot("river").problem()
    seq = make_solver(P, algorithm, storage="float64", fused=False)
    fus = make_solver(P, algorithm, storage="float64", fused=True)
    for _ in range(6):
        seq.step()
        fus.step()
        for a, b in zip(seq.average() + seq.current(), fus.average() + fus.current()):
            np.testing.assert_allclose(b, a, rtol=0, atol=1e-11)


@pytest.mark.parametrize("spot", ["river", "iso"])
def test_float32_storage_follows_float64(spot):
    """float32 regrets and sums (the default on the fused path) give the float64 iterates to
    float32 rounding over 6 DCFR iterations (simultaneous updates: see the tie note above)."""
    P = _spot(spot).problem()
    f64 = make_solver(P, "dcfr", storage="float64", alternating=False, fused=True)
    f32 = make_solver(P, "dcfr", alternating=False, fused=True)
    assert f32.players[0].R.dtype == np.float32
    for _ in range(6):
        f64.step()
        f32.step()
    for a, b in zip(f64.average(), f32.average()):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-5)


@pytest.mark.parametrize("spot", ["river", "turn", "iso"])
def test_best_response_walk_equals_sequence_form(spot):
    """One read-only walk gives both best-response values of the average (the strategy sums
    normalized per infoset) and of the current profile, and a second one its value: the
    sequence-form products and best responses' on the plans the engine reports. The driver's
    final evaluation of a fused run (walks, no products) equals evaluate() on its result."""
    P = _spot(spot).problem()
    s = make_solver(P, "dcfr", fused=True)
    for _ in range(7):
        s.step()
    for which, profile in (("average", s.average()), ("current", s.current())):
        ev, fast = evaluate(P, *profile), s.evaluate_profile(which, value=True)
        assert fast.br0 == pytest.approx(ev.br0, abs=1e-9) and fast.br1 == pytest.approx(ev.br1, abs=1e-9)
        assert fast.value == pytest.approx(ev.value, abs=1e-9)
        assert fast.br1 - 1e-12 <= fast.value <= fast.br0 + 1e-12 and fast.gap > 0
    res = tp.solve(_spot(spot).problem(), "dcfr", max_iters=9, fused=True)
    ev = evaluate(P, res.x, res.y)
    assert (res.value, res.gap) == (pytest.approx(ev.value, abs=1e-9), pytest.approx(ev.gap, abs=1e-9))


def test_a_fused_result_makes_its_plans_when_read():
    """The fused engine's reported plans are deferred (the largest arrays of a run): made on
    first read, equal to the solver's average then, kept, and carried by a pickled result."""
    import pickle

    P = _spot("turn").problem()
    res = tp.solve(P, "dcfr", max_iters=7, fused=True)
    assert callable(res.plans)
    x, y = res.x, res.y
    assert not callable(res.plans) and res.x is x
    ev = evaluate(P, x, y)
    assert (res.value, res.gap) == (pytest.approx(ev.value, abs=1e-9), pytest.approx(ev.gap, abs=1e-9))
    ref = tp.solve(P, "dcfr", max_iters=7, fused=True)
    pickled = pickle.loads(pickle.dumps(ref))
    assert not callable(pickled.plans) and np.array_equal(pickled.x, x) and np.array_equal(pickled.y, y)


@pytest.mark.parametrize("spot", ["turn", "iso"])
def test_alternating_fused_run_converges_to_the_lp_value(spot):
    """DCFR with alternating updates on the fused path (the default for postflop spots) reaches
    a 1e-3 gap and the LP's value within it; checks measure only the average (the current
    iterate's gap is not computed: NaN)."""
    P = _spot(spot).problem()
    lp = tp.solve_lp(P)
    res = tp.solve(P, "dcfr", target_gap=1e-3, max_iters=5000, fused=True)
    assert res.gap <= 1e-3 and abs(res.value - lp.value) <= res.gap
    assert all(np.isnan(r["gap_current"]) for r in res.trace)


def test_isomorphism_on_and_off_give_the_same_iterates_values():
    """The reduced (orbit) walk and the full walk: the same best-response values after 8 CFR+
    iterations (symmetric iterates stay symmetric; simultaneous updates: see the tie note above)."""
    on, off = (make_solver(_spot("iso", isomorphism=iso).problem(), "cfr+", storage="float64", alternating=False,
                           fused=True)
               for iso in (True, False))
    assert on.players[0].R.size < off.players[0].R.size
    for _ in range(8):
        on.step()
        off.step()
    a, b = on.evaluate_profile("average"), off.evaluate_profile("average")
    assert a.br0 == pytest.approx(b.br0, abs=1e-9) and a.br1 == pytest.approx(b.br1, abs=1e-9)


def test_checkpoint_state_round_trip():
    """state_dict / load_state_dict continue a fused run bit for bit."""
    P = _spot("turn").problem()
    a = make_solver(P, "pdcfr+", fused=True)
    for _ in range(3):
        a.step()
    b = make_solver(P, "pdcfr+", fused=True)
    b.load_state_dict(a.state_dict())
    a.step()
    b.step()
    for x, y in zip(a.average() + a.current(), b.average() + b.current()):
        np.testing.assert_array_equal(x, y)


def test_fused_refusals():
    P = _spot("river").problem()
    with pytest.raises(InputError, match="fused=true does not apply"):
        make_solver(P, "apcfr+", fused=True)
    with pytest.raises(InputError, match="fused=true does not apply"):
        make_solver(P, "cfr+", fused=True, prior=(P.X.uniform(), P.Y.uniform()))
    with pytest.raises(InputError, match="fused must be true or false"):
        make_solver(P, "cfr+", fused="maybe")
    s = make_solver(P, "cfr+", fused=True)
    with pytest.raises(InputError, match="sequence form"):
        s.restart()
    assert s.cheap_checks and not make_solver(P, "cfr+").cheap_checks  # the default path: sequence form


def test_automatic_choice_by_size(monkeypatch):
    """fused=None (the default) runs the fused engine on postflop spots of at least
    FUSED_MIN_SEQS sequences where it applies, the sequence form below that and wherever it
    does not apply (a variant with its own step, a prior, a non-postflop problem); fused=False
    always the sequence form. The choice does not change the solve: both reach the LP value."""
    import treeplex.poker.postflop as postflop

    P = _spot("river").problem()
    assert make_solver(P, "dcfr").engine is None  # a small spot: below the threshold
    monkeypatch.setattr(postflop, "FUSED_MIN_SEQS", 0)
    auto = make_solver(P, "dcfr")
    assert auto.engine is not None and auto.players[0].R.dtype == np.float32  # float32 on the fused path
    assert make_solver(P, "dcfr", fused=False).engine is None
    assert make_solver(P, "apcfr+").engine is None  # its own step: the sequence form, no error
    assert make_solver(P, "cfr+", prior=(P.X.uniform(), P.Y.uniform())).engine is None
    assert make_solver(tp.make_game("leduc").problem() if hasattr(tp.make_game("leduc"), "problem")
                       else tp.compile_game(tp.make_game("leduc")), "dcfr").engine is None
    lp = tp.solve_lp(_spot("river").problem()).value
    target = 1e-4 * P.A.max_abs_entry()
    res = tp.solve(_spot("river").problem(), "dcfr", target_gap=target, max_iters=20000)
    assert res.gap <= target and abs(res.value - lp) <= res.gap


def test_postflop_solver_dcfr_schedule():
    """dcfr-ps restates postflop-solver's DiscountParams (c = t - 1): positive regrets by
    (c-1)^1.5 / ((c-1)^1.5 + 1), negative by 0.5, the average by ((c - p)/(c - p + 1))^3 with p
    the largest power of 4 <= c: a fresh average at c = 1, 4, 16, 64; and it converges to the
    LP value on the fused path."""
    P = _spot("turn").problem()
    s = make_solver(P, "dcfr-ps", fused=True)
    for t in range(1, 80):
        c = t - 1
        p = max((4 ** k for k in range(5) if 4 ** k <= c), default=0)
        assert s.averaging(t) == (pytest.approx(((c - p) / (c - p + 1)) ** 3), 1.0)
        a = max(c - 1, 0) ** 1.5
        assert s.regrets(t)[:2] == (pytest.approx(a / (a + 1)), 0.5)
    assert [t - 1 for t in range(1, 80) if s.averaging(t)[0] == 0.0] == [0, 1, 4, 16, 64]
    lp = tp.solve_lp(P)
    res = tp.solve(P, "dcfr-ps", target_gap=1e-3, max_iters=5000, fused=True)
    assert res.gap <= 1e-3 and abs(res.value - lp.value) <= res.gap


def test_cheap_checks_are_spaced_to_a_tenth_of_the_solver_time():
    """A check that costs as much as an iteration is followed by the next at least 10
    iterations later; a free one leaves the geometric schedule alone."""
    from treeplex.run.schedule import CHECK_SHARE, Schedule

    P = _spot("river").problem()
    s = Schedule(P, 0, None, 1000, None, None)
    s.checked(20, 1.0, seconds=2.0, cost=0.1)  # 0.1 s per iteration, a check of 0.1 s
    assert s.next_check >= 20 + round(1 / CHECK_SHARE)
    s.checked(20, 1.0, seconds=2.0, cost=0.0)
    assert s.next_check == 22  # max(min_step, it // 10)


@pytest.mark.parametrize("spot", ["river", "turn", "iso"])
@pytest.mark.parametrize("storage", ["float64", "float32"])
def test_node_values_by_the_walk_equal_the_products(spot, storage):
    """After a fused solve, ``--out``'s EVs at the starting street's nodes come from one VALUE
    walk of the plans (no products): per hand they equal the EVs computed from the
    sequence-form products and counterfactual values (the path of a sequence-form solve), to
    float64 rounding with float64 storage and to the plans' float32 rounding otherwise; a
    node off the starting board falls back to the products."""
    g = _spot(spot)
    s = make_solver(g.problem(), "dcfr", fused=True, storage=storage)
    for _ in range(9):
        s.step()
    x, y = s.average()
    nodes = g.out_nodes(1)
    walked = g.node_values(x, y, nodes)
    fused, g._fused = g._fused, None  # the products' path, as after a sequence-form solve
    try:
        ref = g.node_values(x, y, nodes)
    finally:
        g._fused = fused
    tol = 1e-9 if storage == "float64" else 1e-5
    compared = 0
    for v in nodes:
        a, b = walked[v]["ev"], ref[v]["ev"]
        assert np.array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=0, atol=tol * max(1.0, g.pot))
        compared += int((~np.isnan(a)).sum())
    assert compared > 0
    if len(g.board) < 5:  # a turn node: the products (the walk records the starting street only)
        deep = [v for v in range(g.tree.n_nodes) if len(g.tree.boards[g.tree.board[v]]) > len(g.board)][:3]
        assert set(g.node_values(x, y, deep)) == set(deep)


def test_memory_refusal_follows_the_path(monkeypatch):
    """The memory estimate is the path's: with a limit between the fused engine's estimate and
    the sequence form's, a spot the solvers put on the fused engine builds and solves, and a
    solver that needs the sequence form (fused=false, EGT) is refused in one line before its
    treeplexes or state are allocated (the problem's treeplexes stay deferred)."""
    import treeplex.poker.postflop as postflop
    from treeplex.core.treeplex import DeferredTreeplex

    monkeypatch.setattr(postflop, "FUSED_MIN_SEQS", 0)  # the toy turn spot on the fused path by default
    g = _spot("turn")
    lean, full = g.memory_estimate(fused=True), g.memory_estimate(fused=False)
    assert lean < full and g.memory_estimate() == lean
    P = g.problem(max_memory=(lean + full) // 2)
    res = tp.solve(P, "dcfr", max_iters=5)  # (a small spot: the driver's own check builds nothing either)
    assert np.isfinite(res.gap) and isinstance(P.__dict__["_X"], DeferredTreeplex)
    assert make_solver(P, "dcfr").engine is not None
    for algorithm, params in (("dcfr", {"fused": False}), ("egt", {})):
        with pytest.raises(InputError, match="sequence form of this spot needs about"):
            make_solver(P, algorithm, **params).step()
    assert isinstance(P.__dict__["_X"], DeferredTreeplex)
    with pytest.raises(InputError, match="above --max-memory"):  # below even the fused path: refused while counted
        _spot("turn").problem(max_memory=lean // 2)


@pytest.mark.parametrize("spot", ["river", "iso"])
def test_16_bit_storage_rounds_to_the_node_scale(spot):
    """compression=16: regrets in int16 and strategy sums in uint16 with a scale per node. After
    the first (simultaneous) update, both played uniformly, so the decoded regrets and sums are
    the float64 run's rounded to each node's scale: within half a step, the largest entry of a
    node on the top code (32767, 65535)."""
    P = _spot(spot).problem()
    ref = make_solver(P, "dcfr", alternating=False, storage="float64", fused=True)
    c16 = make_solver(P, "dcfr", alternating=False, compression=16)  # implies the fused engine
    assert c16.players[0].R.dtype == np.int16 and c16.players[0].S.dtype == np.uint16
    ref.step()
    c16.step()
    t = c16.engine.tree
    for p in (0, 1):
        a, b = ref.players[p], c16.players[p]
        nodes = np.flatnonzero(t.actor == p)
        for which, top, row in (("R", 32767, 0), ("S", 65535, 1)):
            exact, code, scale = getattr(a, which), getattr(b, which).astype(np.float64), b.scale[row]
            for v in nodes:
                lo, hi = t.off[v], t.off[v] + (t.cptr[v + 1] - t.cptr[v]) * t.m[v]
                assert np.abs(code[lo:hi] * scale[v] - exact[lo:hi]).max() <= scale[v] / 2 * (1 + 1e-9)
                big = np.abs(exact[lo:hi]).max()
                assert scale[v] == pytest.approx(big / top, rel=1e-12) and (big == 0 or np.abs(code[lo:hi]).max() == top)


@pytest.mark.parametrize("spot", ["turn", "iso"])
def test_16_bit_storage_converges_with_the_float32_run(spot):
    """DCFR with 16-bit storage reaches 0.1% of the pot (exploitability = gap / 2) and the LP
    value within its gap, in at most 1.5x the float32 run's iterations (measured: the same
    within a few iterations; it stalls between 0.01% and 0.05% of the pot on these spots)."""
    P = _spot(spot).problem()
    lp = tp.solve_lp(P).value
    target = 2 * 0.001 * 20  # gap at an exploitability of 0.1% of the 20-chip pot
    every = {"max_iters": 3000, "check_every": 10}  # checks by iteration, not spaced by solver time: no timing in it
    f32 = tp.solve(P, "dcfr", target_gap=target, fused=True, **every)
    c16 = tp.solve(P, "dcfr", target_gap=target, compression=16, **every)
    assert c16.gap <= target and abs(c16.value - lp) <= c16.gap
    assert c16.iterations <= 1.5 * f32.iterations


def test_16_bit_storage_refusals():
    P = _spot("river").problem()
    for params, why in (({"compression": 8}, "compression must be 16"),
                        ({"compression": 16, "fused": False}, "needs the fused engine"),
                        ({"compression": 16, "algorithm": "pdcfr+"}, "without predictions")):
        with pytest.raises(InputError, match=why):
            make_solver(P, params.pop("algorithm", "dcfr"), **params)


def test_fused_true_fits_where_the_sequence_form_does_not():
    """A small spot (below FUSED_MIN_SEQS: the sequence form by default) under a limit only the
    fused engine fits: the problem builds, fused=true solves it, and the default path, the LP
    and EGT are refused in one line, before the treeplexes are built, naming the fused estimate."""
    from treeplex.core.treeplex import DeferredTreeplex

    g = _spot("turn")
    lean, full = g.memory_estimate(fused=True), g.memory_estimate(fused=False)
    P = g.problem(max_memory=(lean + full) // 2)
    assert np.isfinite(tp.solve(P, "dcfr", max_iters=3, fused=True).gap)
    for run in (lambda: make_solver(P, "dcfr").step(), lambda: tp.solve_lp(P), lambda: make_solver(P, "egt")):
        with pytest.raises(InputError, match="sequence form of this spot needs about .* fused engine"):
            run()
    assert isinstance(P.__dict__["_X"], DeferredTreeplex)


@pytest.mark.parametrize("spot", ["turn", "iso"])
@pytest.mark.parametrize("storage", ["float64", "float32"])
def test_a_fused_result_is_saved_from_the_solver_state(spot, storage):
    """``solve --out`` of a fused run reads the reported profile from the solver's state at
    the saved nodes (:class:`FusedProfile`): no plan pair and no payoff operator are made,
    the plans there equal the full plans', and the saved strategies, EVs and equities equal
    those computed from the full plans by the sequence-form products (the independent path)."""
    g = _spot(spot)
    P = g.problem()
    res = tp.solve(P, "dcfr", max_iters=9, fused=True, storage=storage)
    x, y, kw = res.profile_args(P)
    assert x is None and callable(kw["profile"])
    saved = P.solution(None, None, **kw)
    assert P.A._op is None and callable(res.plans)  # neither the operator nor the plans were made
    nodes = g.out_nodes(1)
    part, full = kw["profile"].plans_at(nodes), (res.x, res.y)
    for p in (0, 1):
        for v in nodes:
            if g.tree.actor[v] == p:
                assert np.array_equal(g.node_block(p, part[p], v), g.node_block(p, full[p], v))
    g._fused = None  # the products' path, from the full plans
    ref = P.solution(*full)
    tol = 1e-9 if storage == "float64" else 2e-5
    assert len(saved["nodes"]) == len(ref["nodes"]) > 0
    for a, b in zip(saved["nodes"], ref["nodes"]):
        assert a["hands"] == b["hands"] and a["frequencies"] == pytest.approx(b["frequencies"], abs=1e-9)
        for key in ("ev", "equity"):
            assert a[key].keys() == b[key].keys()
            for h in a[key]:
                assert a[key][h] == pytest.approx(b[key][h], abs=tol * g.pot)


def test_the_payoff_operator_is_built_on_first_use():
    """A multi-street spot's payoff operator is deferred (the fused engine never forms a
    product); built, its products equal a directly built operator's, and the gradients
    counted before and after the build are one count."""
    g = _spot("turn")
    P = g.problem()
    assert P.A._op is None and P.A.shape == P.n_seqs and not P.general_sum
    P.A.charge(2)
    direct = g._reduced_operator()
    rng = np.random.default_rng(0)
    y = rng.random(P.n_seqs[1])
    np.testing.assert_allclose(P.A.matvec(y), direct.matvec(y), rtol=0, atol=1e-12)
    assert P.A._op is not None and P.A.gradients == 3 and P.A.nnz == direct.nnz
