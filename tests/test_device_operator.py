"""The poker operators' array products (:mod:`treeplex.poker.device_operator`, NumPy here;
CuPy on a device) against the operators' own products (numba sweeps, dense BLAS products,
suit-isomorphism gather/scatter): A y and A^T x to 1e-12 of the largest entry, on random
plans, for a river endgame (sweep and dense), river/turn/flop postflop starts with and
without suit isomorphism."""

import numpy as np
import pytest

from treeplex.poker.device_operator import PokerArrayOperator, supports
from treeplex.poker.isomorphism import SymmetricPayoff
from treeplex.poker.postflop import PostflopGame
from treeplex.poker.river import generated_endgame

RANGES = dict(range0="AsKh,QdJd,TsTc,AhJh", range1="AcAd,9s9h,KdQs,JsTs,Jc9c")
SPOTS = {
    "river": dict(board="KsQh9d8c2s", range0="AsKh,QdJd,TsTc,AhJh,8h8d", range1="AcAd,9s9h,KdQs,JsTs,Qc2c",
                  bet="50%,a"),
    "turn": dict(board="KsQh9d8c", deck="89TJQKA", bet="50%,a", **RANGES),
    "turn-iso": dict(board="KsQhTh9s", deck="89TJQKA", range0="AKs,88", range1="AQs,99", bet="50%,a"),
    "flop-iso": dict(board="KsQhTh", deck="TJQKA", range0="AKs,JJ", range1="AQs,TT", bet="a"),
}


def _operators():
    yield "endgame-sweep", generated_endgame(2100, (40, 45), seed=3).problem().A
    yield "endgame-dense", generated_endgame(2100, (12, 15), seed=4).problem().A
    for name, spec in SPOTS.items():
        A = PostflopGame(pot=20, stack=30, **{"raise": "2x"}, **spec).problem().A
        yield name, getattr(A, "built", A)  # a multi-street operator is built on first use


@pytest.mark.parametrize("name, A", list(_operators()), ids=lambda v: v if isinstance(v, str) else "")
def test_products_equal_the_operators(name, A):
    if name.endswith("iso"):
        assert isinstance(A, SymmetricPayoff)
    if name == "endgame-dense":
        assert A.method == "dense"
    assert supports(A)
    D = PokerArrayOperator(A, np)
    rng = np.random.default_rng(len(name))
    for _ in range(3):
        y = rng.uniform(0, 1, A.shape[1]) * (rng.uniform(size=A.shape[1]) < 0.8)  # some lines never taken
        x = rng.uniform(0, 1, A.shape[0])
        ref_y, ref_x = A.matvec(y, count=False), A.rmatvec(x, count=False)
        assert np.abs(ref_y).max() > 0 and np.abs(ref_x).max() > 0  # not products of zeros
        np.testing.assert_allclose(D.matvec(y), ref_y, rtol=0, atol=1e-12 * np.abs(ref_y).max())
        np.testing.assert_allclose(D.rmatvec(x), ref_x, rtol=0, atol=1e-12 * np.abs(ref_x).max())


def test_other_operators_are_refused():
    from treeplex.model.compile import compile_game
    from treeplex.games import load_game

    A = compile_game(load_game("kuhn")).A
    assert not supports(A)
    with pytest.raises(TypeError, match="no array products"):
        PokerArrayOperator(A, np)
