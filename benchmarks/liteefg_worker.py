"""LiteEFG's sampling MCCFR in its own interpreter, driven by ``benchmarks/mccfr.py`` over
stdin/stdout (LiteEFG builds from an sdist with its own OpenSpiel and NumPy, so it lives in a
separate virtual environment: ``python3 -m venv /tmp/liteefg && /tmp/liteefg/bin/pip install
LiteEFG open_spiel``).

    /tmp/liteefg/bin/python benchmarks/liteefg_worker.py GAME ALGORITHM SEED

ALGORITHM: ``es`` (LiteEFG's ``baselines.CFR`` graph with ``traverse_type="External"``, its
external-sampling MCCFR) or ``os`` (``baselines.OS_MCCFR`` with ``traverse_type="Outcome"``,
its defaults: exploration delta 0.1, balanced). An iteration is LiteEFG's own training loop
(``baselines/utils.py:train``): ``graph.update_graph(env)`` then
``env.update_strategy(graph.current_strategy())`` (the average it keeps, "avg-iterate").

Protocol, one JSON line each way: ``{"run": n}`` -> ``{"seconds": s}`` (the solver time of n
iterations, measured here); ``{"policy": true}`` -> ``{"policy": [[player, information state
string, [action ids], [probabilities]], ...]}`` (the average strategy); ``{"quit": true}``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from contextlib import redirect_stdout
from urllib.parse import unquote


def main() -> int:
    game_name, algorithm, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with redirect_stdout(sys.stderr):  # LiteEFG prints banners; stdout is the protocol
        import LiteEFG as leg
        import numpy as np
        import pyspiel
        from LiteEFG.baselines import CFR, OS_MCCFR
        from open_spiel.python.policy import TabularPolicy

        game = pyspiel.load_game(game_name)
        leg.set_seed(seed)
        env = leg.OpenSpielEnv(game, traverse_type="External" if algorithm == "es" else "Outcome")
        graph = CFR.graph() if algorithm == "es" else OS_MCCFR.graph()
        env.set_graph(graph)
        tab = TabularPolicy(game)
        legal = {key: np.flatnonzero(tab.legal_actions_mask[idx] > 0.5).tolist()
                 for key, idx in tab.state_lookup.items()}
    out = sys.stdout
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        msg = json.loads(line)
        if "run" in msg:
            with redirect_stdout(sys.stderr):
                t0 = time.perf_counter()
                for _ in range(int(msg["run"])):
                    graph.update_graph(env)
                    env.update_strategy(graph.current_strategy())
                reply = {"seconds": time.perf_counter() - t0}
        elif "policy" in msg:
            rows = []
            for p in range(game.num_players()):
                for name, probs in leg.FileEnv.get_strategy(env, p + 1, graph.current_strategy(), "avg-iterate"):
                    key = unquote(name[name.find("__") + 2:])
                    rows.append([p, key, legal[key], list(probs)])
            reply = {"policy": rows}
        else:
            break
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sys.exit(main())
