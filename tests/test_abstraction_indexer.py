"""The hand indexer: class counts against Burnside's lemma over the 24 suit permutations,
exhaustive enumeration of preflop and flop, index(unindex(i)) == i, and invariance under
suit permutations."""

from itertools import combinations, permutations

import numpy as np
import pytest

from treeplex.abstraction.indexer import ROUNDS, Indexer
from treeplex.errors import InputError


def _cycles(perm):
    seen, out = set(), []
    for s in range(4):
        if s not in seen:
            n, t = 0, s
            while t not in seen:
                seen.add(t)
                t = perm[t]
                n += 1
            out.append(n)
    return out


def burnside(rounds):
    """Classes of (disjoint card sets of sizes ``rounds``) under suit permutations: the mean over
    the 24 permutations of the fixed hands. A fixed hand is a union of card orbits per round; a
    rank's cards form one orbit per cycle of the permutation, so the fixed hands are the
    coefficient of prod x_r^{n_r} in prod over orbits of (1 + sum_r x_r^len)."""
    total = 0
    for perm in permutations(range(4)):
        poly = {tuple(0 for _ in rounds): 1}
        for L in _cycles(perm) * 13:
            new = dict(poly)
            for key, v in poly.items():
                for r in range(len(rounds)):
                    k = list(key)
                    k[r] += L
                    if k[r] <= rounds[r]:
                        new[tuple(k)] = new.get(tuple(k), 0) + v
            poly = new
        total += poly.get(tuple(rounds), 0)
    assert total % 24 == 0
    return total // 24


@pytest.mark.parametrize("street,count", [("preflop", 169), ("flop", 1_286_792), ("turn", 13_960_050),
                                          ("river", 123_156_254)])
def test_sizes_match_burnside(street, count):
    assert burnside(ROUNDS[street]) == count
    assert Indexer(street).size == count


@pytest.mark.parametrize("street", ["preflop", "flop"])
def test_exhaustive_is_onto_and_a_class_function(street):
    ix = Indexer(street)
    hands = np.array(list(combinations(range(52), 2)), dtype=np.int64)
    hit = np.zeros(ix.size, dtype=bool)
    if street == "preflop":
        hit[ix.index(hands)] = True
    else:
        boards = np.array(list(combinations(range(52), 3)), dtype=np.int64)
        for chunk in np.array_split(hands, 26):  # 29M rows in pieces of ~1.1M
            rows = np.concatenate([np.repeat(chunk, len(boards), 0), np.tile(boards, (len(chunk), 1))], 1)
            rows = rows[(rows[:, :2, None] != rows[:, None, 2:]).all((1, 2))]  # disjoint hole cards and board
            idx = ix.index(rows)
            assert idx.min() >= 0 and idx.max() < ix.size
            hit[idx] = True
    # every index is reached, and (with the invariance test below) the classes are exactly the
    # Burnside count: a class function onto 0..size-1 with size = number of classes is a bijection
    assert hit.all() and ix.size == burnside(ROUNDS[street])


def _random_hands(n_cards, n, rng):
    return np.argsort(rng.random((n, 52)), axis=1)[:, :n_cards].astype(np.int64)


@pytest.mark.parametrize("street", ["preflop", "flop", "turn", "river"])
def test_unindex_then_index_is_identity(street):
    ix = Indexer(street)
    i = np.random.default_rng(1).integers(0, ix.size, 20_000)
    assert (ix.index(ix.unindex(i)) == i).all()


@pytest.mark.parametrize("street", ["preflop", "flop", "turn", "river"])
def test_suit_permutations_and_order_within_rounds_keep_the_index(street):
    ix = Indexer(street)
    rng = np.random.default_rng(2)
    cards = _random_hands(ix.n_cards, 5000, rng)
    base = ix.index(cards)
    perm = np.array([rng.permutation(4) for _ in range(len(cards))])
    permuted = 4 * (cards // 4) + np.take_along_axis(perm, cards % 4, 1)
    # shuffle inside each round too: the rounds are sets
    start = 0
    for n in ROUNDS[street]:
        block = permuted[:, start:start + n]
        permuted[:, start:start + n] = np.take_along_axis(block, np.argsort(rng.random(block.shape), 1), 1)
        start += n
    assert (ix.index(permuted) == base).all()
    # and the canonical representative is in the same class
    assert (ix.index(ix.unindex(base)) == base).all()


def test_distinct_classes_get_distinct_indices():
    """Moving a hole card to the board (same cards) changes the class on the flop."""
    ix = Indexer("flop")
    a = ix.index([[51, 47, 43, 39, 35]])  # As Ks | Qs Js Ts
    b = ix.index([[43, 39, 51, 47, 35]])  # Qs Js | As Ks Ts
    assert a[0] != b[0]


def test_bad_input_is_one_line():
    ix = Indexer("flop")
    with pytest.raises(InputError, match="repeats a card"):
        ix.index([[1, 1, 2, 3, 4]])
    with pytest.raises(InputError, match="5 cards"):
        ix.index([[1, 2, 3]])
    with pytest.raises(InputError, match="out of range"):
        ix.unindex([ix.size])
    with pytest.raises(InputError, match="unknown street"):
        Indexer("showdown")
