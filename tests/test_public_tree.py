"""The postflop public tree (templates, count, numba walk) against a plain recursive walk of the
betting rules written here, and the memory budget that refuses a tree while counting it."""

import subprocess
import sys

import numpy as np
import pytest

from treeplex.errors import InputError
from treeplex.poker.cards import card_name
from treeplex.poker.postflop import PostflopGame
from treeplex.poker.public_tree import CHANCE, DECISION, TERMINAL
from treeplex.poker.sizes import parse_sizes, street_actions


def reference_walk(g):
    """Every node of g's public tree in depth-first order, children in action order, as
    (kind, history, actor or payoff data, chance weight, board), by the betting rules of the
    module docstrings applied one node at a time (no templates, no counting)."""
    cfg, out = g.config, []
    n_start = len(g.board)
    sym = g.symmetries

    def perm(c, s):
        return 4 * (c // 4) + s[c % 4]

    def deal(board, hist, m, allin, called, w):
        out.append((CHANCE, hist, None, w, board))
        left = [k for k in g.deck if k not in board]
        stab = [s for s in sym if all(perm(c, s) == c for c in board[n_start:])]
        for k in left:
            orbit = {perm(k, s) for s in stab}
            if min(orbit) != k:
                continue
            p = w * len(orbit) / (len(left) - 4)
            h = f"{hist}/{card_name(k)}/"
            if allin:
                end(board + (k,), h, m, True, False, p)
            else:
                node(board + (k,), h, 0, (0, 0), "chance", 0, False, m, called, p)

    def end(board, hist, m, allin, called, w):
        if len(board) == 5:
            out.append((TERMINAL, hist, ("showdown", cfg.pot / 2 + m), w, board))
        else:
            deal(board, hist, m, allin, called, w)

    def node(board, hist, actor, bets, last, raises, allin, m, called, w):
        depth, street = len(board) - n_start, len(board) - 3
        out.append((DECISION, hist, actor, w, board))
        opp, me = bets[1 - actor], bets[actor]
        pot, max_to = cfg.pot + 2 * (m + opp), cfg.stack - m
        sizes = cfg.sizes[depth][actor]
        sep = "-" if hist and not hist.endswith("/") else ""
        if opp > me:
            acts = [("f", None), ("c", None)]
            if not allin and (cfg.raise_cap is None or raises < cfg.raise_cap):
                acts += [(f"b{a}", a) for a in street_actions(
                    sizes.raise_, True, pot, opp - me, opp, max_to, min(max(2 * opp - me, 1), max_to), 3 - street,
                    cfg.add_allin_threshold, cfg.force_allin_threshold, True, cfg.merging_threshold)]
        else:
            use = sizes.donk if (sizes.donk is not None and last == "chance" and called and actor == 0) else sizes.bet
            acts = [("x", None)] + [(f"b{a}", a) for a in street_actions(
                use, False, pot, 0, 0, max_to, min(1, max_to), 3 - street, cfg.add_allin_threshold,
                cfg.force_allin_threshold, True, cfg.merging_threshold)]
        for label, amt in acts:
            h = hist + sep + label
            if label == "f":
                mine = cfg.pot / 2 + m + bets[actor]
                out.append((TERMINAL, h, ("fold", -mine if actor == 0 else mine), w, board))
            elif label == "x" and actor == 0:
                node(board, h, 1, bets, "check", raises, allin, m, called, w)
            elif label in ("x", "c"):
                end(board, h, m + opp, allin or (label == "c" and opp == max_to), label == "c" and actor == 0, w)
            else:
                nb = (amt, bets[1]) if actor == 0 else (bets[0], amt)
                node(board, h, 1 - actor, nb, "bet", raises + (opp > me), allin or amt == max_to, m, called, w)

    node(g.board, "", 0, (0, 0), "none", 0, False, 0, False, 1.0)
    return out


SPOTS = [
    dict(board="KsQh9d8c2s", pot=20, stack=30, range0="AA,KK", range1="QQ", bet="50%,a", **{"raise": "2x"}),
    dict(board="KsQh9d8c", pot=20, stack=30, deck="89TJQKA", range0="AA,KK", range1="QQ", bet="50%,a",
         **{"raise": "2x"}),
    dict(board="Ah8d5c", pot=50, stack=60, deck="58QKA", range0="AA,KK,A5s", range1="QQ,JJ,Q8s", bet="50%",
         **{"raise": "3x"}, donk="33%", raise_cap=1),
    dict(board="KsQhTh", pot=20, stack=30, deck="TJQKA", range0="AKs", range1="AQs,TT", bet="a"),  # isomorphic
    dict(board="KsQh9d8c", pot=100, stack=400, deck="89TJQKA", range0="AA,KK", range1="QQ", bet="33%,50%,75%,a",
         **{"raise": "50%,60%,2x"}, merging_threshold=0.2),
    dict(board="Ah8d5c2s", pot=550, stack=1200, range0="99-22,A5s-A2s", range1="AA-TT,AJs+",
         sizes={"turn": {"bet": "50%,a", "raise": "2.5x"}, "river": {"bet": "50%,125%,a", "raise": "100%,a",
                                                                      "donk": "33%"}}),
]


@pytest.mark.parametrize("spec", SPOTS)
def test_tree_equals_a_recursive_walk_of_the_rules(spec):
    """Node for node, in depth-first order: kinds, histories, actors, payoffs, chance weights
    and boards; every child's edge points back at its parent; node_last is the last own
    action on the path from the root."""
    g = PostflopGame(**spec)
    t = g.tree
    ref = reference_walk(g)
    dec = [r for r in ref if r[0] == DECISION]
    cha = [r for r in ref if r[0] == CHANCE]
    ter = [r for r in ref if r[0] == TERMINAL]
    assert (t.n_nodes, t.n_chance, t.n_terminals) == (len(dec), len(cha), len(ter))
    assert list(t.history) == [r[1] for r in dec]
    assert list(t.chance_history) == [r[1] for r in cha]
    assert list(t.term_history) == [r[1] for r in ter]
    assert t.actor.tolist() == [r[2] for r in dec]
    assert [t.boards[b] for b in t.board] == [r[4] for r in dec]
    assert [t.boards[b] for b in t.term_board] == [r[4] for r in ter]
    assert np.allclose(t.node_chance, [r[3] for r in dec]) and np.allclose(t.chance, [r[3] for r in ter])
    assert list(t.kind) == [r[2][0] for r in ter]
    assert np.allclose(np.where(t.kinds == 0, t.payoff0, t.stake), [r[2][1] for r in ter])
    # children and parents agree, and node_last is the last own (node, action) above
    for v in range(t.n_nodes):
        for a, (kind, i) in enumerate(t.children[v]):
            hist = {DECISION: t.history, CHANCE: t.chance_history, TERMINAL: t.term_history}[kind][i]
            assert hist == t.history[v] + ("-" if t.history[v] and not t.history[v].endswith("/") else "") \
                + t.actions[v][a]
            if kind == DECISION:
                p = t.actor[v]
                assert t.node_last[i][p] == (v, a) and t.node_last[i][1 - p] == t.node_last[v][1 - p]
            if kind == TERMINAL:
                assert t.last[i][t.actor[v]] == (v, a)
    for c in range(t.n_chance):
        assert len(t.chance_children[c]) == len(t.chance_cards[c])


def test_merging_threshold_merges_as_postflop_solver():
    """postflop-solver's merging_threshold t, worked by hand. Not facing a bet, pot 100, stack
    200, bets 33%,50%,75%,a: sizes 0.33, 0.5, 0.75, 2 pots. Keep 2; 0.75 < (2 - t)/(1 + t);
    0.5 against the kept 0.75: with t = 0.1 the bound is 0.65/1.1 = 0.591 (kept), with t = 0.2
    it is 0.55/1.2 = 0.458 (merged into 75); 0.33 against the kept 0.75 (t = 0.2): kept.
    Facing 20 into 100 (140 after calling), raises 50% and 60% are to 90 and 104, sizes 0.5 and
    0.6 of 140 above the 20: (0.6 - 0.1)/1.1 = 0.455 merges 90 at t = 0.1, (0.6 - 0.05)/1.05 =
    0.524 keeps it at t = 0.05."""
    bets = parse_sizes("33%,50%,75%,a", "bet")
    assert street_actions(bets, False, 100, 0, 0, 200, 1, 1, 0.0, 0.0, True) == [33, 50, 75, 200]
    assert street_actions(bets, False, 100, 0, 0, 200, 1, 1, 0.0, 0.0, True, 0.1) == [33, 50, 75, 200]
    assert street_actions(bets, False, 100, 0, 0, 200, 1, 1, 0.0, 0.0, True, 0.2) == [33, 75, 200]
    raises = parse_sizes("50%,60%", "raise", raise_sizes=True)
    assert street_actions(raises, True, 140, 20, 20, 500, 40, 1, 0.0, 0.0, True, 0.05) == [90, 104]
    assert street_actions(raises, True, 140, 20, 20, 500, 40, 1, 0.0, 0.0, True, 0.1) == [104]
    g = PostflopGame(board="KsQh9d8c2s", pot=100, stack=200, range0="AA", range1="KK", bet="33%,50%,75%,a",
                     add_allin_threshold=0, force_allin_threshold=0, merging_threshold=0.2)
    assert g.tree.actions[0] == ("x", "b33", "b75", "b200")
    with pytest.raises(InputError, match="merging_threshold must be a finite number"):
        PostflopGame(board="KsQh9d8c2s", pot=100, stack=200, range0="AA", range1="KK", merging_threshold=-1)


def test_orbits_cover_the_cards_left():
    """With isomorphism, the orbits a chance node deals (one card each, weighted by their size)
    cover every card left in the deck exactly once."""
    g = PostflopGame(**SPOTS[3])
    assert len(g.symmetries) > 1
    t = g.tree
    for c in range(t.n_chance):
        b = t.chance_board[c]
        sizes = t.deal_size[t.deal_ptr[b]:t.deal_ptr[b + 1]]
        assert sizes.sum() == len([k for k in g.deck if k not in t.boards[b]])


def test_budget_refuses_while_counting_at_the_estimate():
    """The count's cost is the memory estimate of the leanest path (the fused engine's): a
    budget of exactly that estimate builds, one byte less is refused while counting (before
    the arrays are allocated)."""
    spec = SPOTS[2]
    need = PostflopGame(**spec).memory_estimate(fused=True)
    g = PostflopGame(**spec)
    g.build_tree(max_memory=need)
    assert g.memory_estimate(fused=True) == need
    with pytest.raises(InputError, match=r"postflop\(board=Ah8d5c.*while being counted.*above --max-memory"):
        PostflopGame(**spec).build_tree(max_memory=need - 1)


def _limited(cmd):
    """Run the CLI with its address space capped at 3 GB: a guard that failed would die there."""
    import resource

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    return subprocess.run([sys.executable, "-m", "treeplex.cli", *cmd], capture_output=True, text=True,
                          preexec_fn=cap)


@pytest.mark.parametrize("spot", [
    # issue 31, High 2: the raise tree of this spot grows without bound (about 60 MB/s before)
    "postflop(board=QsJh2h,pot=10,stack=1000,bet=25%,50%,75%,raise=2x,3x,4x)",
    # ... and with a raise cap of 5 (1.88 GB used before the refusal)
    "postflop(board=QsJh2h,pot=10,stack=1000,bet=25%,50%,75%,raise=2x,3x,4x,raise_cap=5)",
    # issue 31, Low: one-chip raises (a street of about 1,000 raises; the builder has no recursion)
    "postflop(board=QsJh2h,pot=10,stack=1000,bet=1c,raise=1c,range0=AA,range1=KK)",
])
def test_huge_betting_trees_are_refused_while_counting(spot):
    out = _limited(["info", spot, "--max-memory", "1G"])
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "postflop(board=QsJh2h,pot=10,stack=1000)" in lines[0]
    assert "public nodes" in lines[0] and "above --max-memory (1 GB)" in lines[0]
