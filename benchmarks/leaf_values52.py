"""Depth-limited leaf values on nlfh52: one continuation's table, orbit blocks first against
dense hands x hands products.

    PYTHONPATH=. .venv/bin/python benchmarks/leaf_values52.py --game "nlfh52(stack=500, flops=S4)"
    PYTHONPATH=. .venv/bin/python benchmarks/leaf_values52.py --game "nlfh52(stack=5000, flops=S64)" --every 16

Per line (preflop end dealing a flop round): :meth:`View52.line_block` (one walk per flop class,
then :meth:`View52.pair_blocks`: the card-blocking identity summed straight into orbit blocks)
against the dense method it replaced (:func:`dense_line_block`: per class the H x H fold and
showdown pair masks, one product hands x terminals x hands per terminal kind, reduced to orbit
blocks afterwards), on the same random per-hand weights (the values are bilinear, so any
weights time the same work). Both results must agree to 1e-9 of the block's scale. Times are
CPU seconds of this process (all threads), so a shared machine's load changes them less than
wall time; the per-class board groups and masks are built before timing. ``--every N`` times
the dense method on every N-th line only (it takes minutes a line at S64).
"""

import argparse
import statistics
import time

import numpy as np

from treeplex.depth_limited.nlfh52 import FOLD, View52
from treeplex.games import parse_game_name
from treeplex.poker.nlfh52 import NLFH52


def board_masks(view: View52, b: int) -> tuple[np.ndarray, np.ndarray]:
    """(Fold_b, Sign_b) [H, H]: the compatible pairs board b leaves, and their showdown sign."""
    s = view.strength[b]
    alive = s >= 0
    fold = view.compat & alive[:, None] & alive[None, :]
    return fold.astype(np.int8), (np.sign(s[:, None] - s[None, :]) * fold).astype(np.int8)


def dense_line_block(view: View52, end: dict, b: list[np.ndarray], masks: dict) -> np.ndarray:
    """The dense method: sum over classes of (P0 diag(w) P1^T) o mask per terminal kind, then R^T . R / Z."""
    t = view.tree
    out = np.zeros((view.H, view.H))
    for _, root in t.chance_children[end["id"]]:
        fold, sign = masks[int(t.board[root])]
        for kz, (r0, r1, w) in view.terminal_reaches(root, b).items():
            prod = (r0.T * w) @ r1
            np.multiply(prod, fold if kz == FOLD else sign, out=prod)
            out += prod
    return view.R.T @ out @ view.R / view.Z


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--game", default="nlfh52(stack=500, flops=S4)")
    ap.add_argument("--every", type=int, default=1, help="time the dense method on every N-th line")
    args = ap.parse_args(argv)
    _, params = parse_game_name(args.game)
    game = NLFH52(**params)
    view = View52(game)
    rng = np.random.default_rng(0)
    b = [rng.uniform(0.05, 1.0, game.n_seqs(p)) for p in (0, 1)]
    masks = {}
    for board in range(1, len(game.tree.boards)):
        view.board_groups(board)
        masks[board] = board_masks(view, board)
    new, pairs = [], []
    for l, e in enumerate(view.lines):
        t0 = time.process_time()
        ours = view.line_block(e, b)
        new.append(time.process_time() - t0)
        if l % args.every == 0:
            t0 = time.process_time()
            ref = dense_line_block(view, e, b, masks)
            pairs.append((time.process_time() - t0, new[-1]))
            err = np.abs(ours - ref).max()
            assert err <= 1e-9 * np.abs(ref).max(), (e["history"], err)
    ratios = [d / n for d, n in pairs]
    print(f"{game.name}: {len(view.lines)} lines x {len(game.tree.boards) - 1} flop classes, {view.H} hands, "
          f"{view.O} orbits")
    print(f"orbit blocks, every line (one continuation): {sum(new):.2f} s CPU")
    print(f"paired lines ({len(pairs)}): dense {sum(d for d, _ in pairs):.2f} s, orbit blocks "
          f"{sum(n for _, n in pairs):.2f} s CPU; dense / orbit blocks per line: median "
          f"{statistics.median(ratios):.1f} (min {min(ratios):.1f}, max {max(ratios):.1f}); the two agree to 1e-9")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
