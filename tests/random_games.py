"""Random small perfect-recall two-player zero-sum games, for property tests.

Perfect recall by construction: a player's infoset key is its own action history plus a
private signal drawn at a chance node, so every node of an infoset shares the player's own
past. Player 1 does not see player 0's actions unless ``observe`` is true for that node.
"""

from __future__ import annotations

import numpy as np

from treeplex.model.game import ExplicitGame, chance, decision, terminal


def random_game(seed, max_depth: int = 4, max_actions: int = 3, n_signals: int = 2) -> ExplicitGame:
    """A random game: chance deals each player a private signal, then alternating moves.

    Payoffs are integers in [-5, 5]; some chance outcomes have probability given as uneven
    fractions. The same seed always gives the same game.
    """
    rng = np.random.default_rng(seed)
    depth = int(rng.integers(2, max_depth + 1))
    # number of actions per (player, own history length) so infosets agree on actions
    n_actions: dict = {}

    def actions_for(player, own_hist):
        key = (player, own_hist)
        if key not in n_actions:
            n_actions[key] = int(rng.integers(2, max_actions + 1))
        return n_actions[key]

    def build(level, signals, hists, seen):
        if level == depth or (level >= 2 and rng.random() < 0.2):
            return terminal(float(rng.integers(-5, 6)))
        p = level % 2
        own = hists[p]
        key = (signals[p], own, seen[p])
        k = actions_for(p, (own, seen[p]))
        children = {}
        for a in range(k):
            label = f"a{a}"
            new_h = list(hists)
            new_h[p] = own + (label,)
            observe = bool(rng.random() < 0.5)
            new_seen = list(seen)
            # the other player observes this action only with some probability (fixed per node)
            new_seen[1 - p] = seen[1 - p] + ((label if observe else "?"),)
            children[label] = build(level + 1, signals, tuple(new_h), tuple(new_seen))
        return decision(p, str(key), children)

    w = rng.random(n_signals) + 0.1
    probs0 = w / w.sum()
    outcomes = []
    for s0 in range(n_signals):
        inner = []
        w1 = rng.random(n_signals) + 0.1
        probs1 = w1 / w1.sum()
        for s1 in range(n_signals):
            inner.append((f"s{s1}", float(probs1[s1]), build(0, (s0, s1), ((), ()), ((), ()))))
        outcomes.append((f"s{s0}", float(probs0[s0]), chance(inner)))
    return ExplicitGame(chance(outcomes), name=f"random({seed})")
