"""The array backend (level-vectorized, NumPy namespace here) against the numba backend: every
solver, N iterations, the same iterates to 1e-9 in float64; the passes one by one; and the
"gpu" selection failing in one line where there is no CuPy or no CUDA device."""

import numpy as np
import pytest
from random_games import random_game

import treeplex as tp
from treeplex import InputError
from treeplex.run.driver import make_solver
from treeplex.refine.efpe import make_efpe_solver, perturbation

SOLVERS = ["cfr", "cfr+", "dcfr", "pcfr+", "pdcfr+", "hedge", "dual-averaging", "egt", "egt-as", "mirror-prox",
           "lcfr", "cfr-rm+", "dcfr+", "sapcfr+"]
ITERS = 40


def _has_gpu() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


@pytest.fixture(scope="module")
def games():
    return {"kuhn": tp.make_game("kuhn"), "leduc": tp.make_game("leduc"), "random": random_game(7, max_depth=5),
            "random2": random_game(11, max_depth=4, max_actions=4)}


def _run(game, backend, make, iters=ITERS):
    p = tp.compile_game(game)
    p.use_backend(backend)
    s = make(p)
    for _ in range(iters):
        s.step()
    return tuple(np.asarray(a) for a in s.average()) + tuple(np.asarray(a) for a in s.current()), s.gradients


# NumPy's exp/log (AVX-512 on CPUs that have it) and numba's differ in the last ulp, and
# EGT's smoothed best responses amplify that by about 10x per 3 iterations on Leduc (1e-16 at
# 5 iterations, 3e-10 at 20, 0.08 at 60, measured): the EGT family is compared at 1e-7.
TRANSCENDENTAL_ATOL = 1e-7


def _agree(game, make, iters=ITERS, atol=1e-9):
    ref, gref = _run(game, "numba", make, iters)
    got, ggot = _run(game, "array", make, iters)
    assert ggot == gref
    for a, b in zip(ref, got):
        np.testing.assert_allclose(b, a, rtol=0, atol=atol)


@pytest.mark.parametrize("game", ["kuhn", "leduc", "random", "random2"])
@pytest.mark.parametrize("algorithm", SOLVERS)
def test_every_solver_agrees_with_numba(games, game, algorithm):
    mu = {} if algorithm not in ("egt", "egt-as", "mirror-prox") else {"mu": 0.5}
    _agree(games[game], lambda p: make_solver(p, algorithm, **mu))


@pytest.mark.parametrize("algorithm", ["egt", "mirror-prox"])
def test_tuned_mu_agrees(games, algorithm):
    _agree(games["kuhn"], lambda p: make_solver(p, algorithm), iters=20)


@pytest.mark.parametrize("game", ["kuhn", "leduc", "random"])
@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr", "pcfr+", "egt", "egt-as"])
def test_efpe_lower_bounds_agree(games, game, algorithm):
    mu = {"mu": 0.5} if algorithm.startswith("egt") else {}
    atol = TRANSCENDENTAL_ATOL if algorithm.startswith("egt") else 1e-9
    _agree(games[game], lambda p: make_efpe_solver(p, algorithm, 0.05, **mu), atol=atol)


@pytest.mark.parametrize("game", ["kuhn", "leduc", "random"])
def test_passes_agree(games, game):
    p = tp.compile_game(games[game])
    p.use_backend("array")
    arr = p.backend
    from treeplex.backends.numba_backend import NumbaBackend

    nbk = NumbaBackend(p)
    rng = np.random.default_rng(0)
    lower = perturbation(p, 0.03)
    for q, T in enumerate(p.treeplexes):
        g = rng.normal(size=T.n_seqs)
        b = T.behavioral_from_plan(T.uniform() * rng.uniform(0.5, 1.5, T.n_seqs))
        np.testing.assert_allclose(arr.counterfactual_values(q, g, b), nbk.counterfactual_values(q, g, b), atol=1e-12)
        for lo_a, lo_n in ((None, None), (arr.bounds(lower)[q], nbk.bounds(lower)[q])):
            va, xa = arr.best_response(q, g, lo_a)
            vn, xn = nbk.best_response(q, g, lo_n)
            assert va == pytest.approx(vn, abs=1e-12)
            np.testing.assert_allclose(xa, xn, atol=1e-12)
            for weights in ("egt", "kroer2017"):
                da, dn = arr.dilated_entropy(q, weights, lo_a), nbk.dilated_entropy(q, weights, lo_n)
                assert da.omega == pytest.approx(dn.omega) and da.modulus == pytest.approx(dn.modulus)
                np.testing.assert_allclose(da.beta, dn.beta)
                np.testing.assert_allclose(da.center, dn.center, atol=1e-12)
                for mu in (1e-3, 0.7, 50.0):
                    xa, va = da.sbr(g, mu)
                    xn, vn = dn.sbr(g, mu)
                    np.testing.assert_allclose(xa, xn, atol=1e-12)
                    assert va == pytest.approx(vn, rel=1e-10, abs=1e-12)  # exp/log ulps (see above)
                    np.testing.assert_allclose(da.prox(xn, g, mu), dn.prox(xn, g, mu), atol=1e-10)
                np.testing.assert_allclose(da.gradient(xn), dn.gradient(xn), rtol=1e-12, atol=1e-12)
                assert da.value(xn) == pytest.approx(dn.value(xn), rel=1e-12, abs=1e-12)


def test_float32_storage_runs(games):
    ref, _ = _run(games["leduc"], "numba", lambda p: make_solver(p, "cfr+", storage="float32"))
    got, _ = _run(games["leduc"], "array", lambda p: make_solver(p, "cfr+", storage="float32"))
    for a, b in zip(ref, got):
        np.testing.assert_allclose(b, a, atol=1e-6)


def test_solve_and_cli_take_a_backend(games, capsys):
    res = tp.solve(tp.compile_game(games["kuhn"]), "cfr+", max_iters=200, backend="array")
    ref = tp.solve(tp.compile_game(games["kuhn"]), "cfr+", max_iters=200)
    np.testing.assert_allclose(res.x, ref.x, atol=1e-9)
    from treeplex.cli import main

    assert main(["solve", "kuhn", "--algorithm", "cfr+", "--max-iters", "50", "--backend", "array"]) == 0


@pytest.mark.skipif(_has_gpu(), reason="a CUDA device is present")
def test_gpu_fails_in_one_line(games, capsys):
    p = tp.compile_game(games["kuhn"])
    with pytest.raises(InputError) as e:
        p.use_backend("gpu")
    assert "\n" not in str(e.value) and "treeplex[gpu]" in str(e.value)
    with pytest.raises(InputError):
        tp.solve(p, "cfr+", max_iters=10, backend="gpu")
    from treeplex.cli import main

    assert main(["solve", "kuhn", "--algorithm", "cfr+", "--max-iters", "5", "--backend", "gpu"]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "CuPy" in err


def test_unknown_backend():
    p = tp.compile_game(tp.make_game("kuhn"))
    with pytest.raises(InputError, match="choose from: numba, array, gpu"):
        p.use_backend("tpu")


@pytest.mark.parametrize("algorithm", [pytest.param("cfr+", marks=pytest.mark.slow), "egt"])  # cfr+: ~24 s cold
def test_structured_river_operator_agrees(algorithm):
    """A structured (non-CSR) operator: products stay with the operator, passes on arrays."""
    from treeplex.poker.river import generated_endgame

    game = generated_endgame(2100, (40, 45), seed=3)
    params = {"mu": 100.0} if algorithm == "egt" else {}
    runs = []
    for backend in ("numba", "array"):
        p = game.problem()
        p.use_backend(backend)
        s = make_solver(p, algorithm, **params)
        for _ in range(15):
            s.step()
        runs.append(s.average())
    for a, b in zip(*runs):
        np.testing.assert_allclose(b, a, atol=1e-9)


def test_float32_average_is_a_plan(games):
    """Strategy sums stored in float32 drift from their children's sums; the average plan is
    rebuilt from its per-infoset ratios, so it is a realization plan to float64 rounding
    (children sum to their parent) and its value lies between the two best responses."""
    from treeplex.model.metrics import evaluate

    p = tp.compile_game(games["leduc"])
    s = make_solver(p, "dcfr", storage="float32")
    for _ in range(1500):
        s.step()
    assert s.players[0].xsum.dtype == np.float32
    for x, T in zip(s.average(), p.treeplexes):
        kids = np.array([x[a:b].sum() for a, b in zip(T.start, T.end)])
        np.testing.assert_allclose(kids, x[T.parent], rtol=1e-12, atol=1e-15)
    ev = evaluate(p, *s.average())
    assert ev.br1 - 1e-12 <= ev.value <= ev.br0 + 1e-12


@pytest.mark.parametrize("backend", ["numba", "array"])
def test_a_solved_problem_is_freed_without_the_cyclic_collector(games, backend):
    """The problem owns its backend and the backend refers back weakly: when the last reference
    to a solved problem goes, reference counting frees it and its matrices at once (a
    depth-limited run builds hundreds of subgames: with a cycle, 1.5 GB of them waited for the
    collector at 10 BB, S8, k = 16)."""
    import gc
    import weakref

    p = tp.compile_game(games["leduc"])
    p.use_backend(backend)
    tp.solve(p, "dcfr", max_iters=5)
    assert p.backend.problem is p
    ref = weakref.ref(p)
    gc.disable()
    try:
        del p
        assert ref() is None
    finally:
        gc.enable()
