"""``treeplex plot TRACE.csv ...``: gap against iterations, gradients or seconds, from solve's traces."""

from __future__ import annotations

import argparse

from ..io.files import check_output


def options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("traces", nargs="+", help="trace CSV files written by solve --trace")
    sp.add_argument("-o", "--output", default="convergence.png", help="image file (default convergence.png)")
    sp.add_argument("--label", action="append", default=None, help="legend label per trace, in order")
    sp.add_argument("--current", action="store_true", help="also draw the gap of the current iterate")
    sp.add_argument("--title", default=None)
    sp.add_argument("--x", default="iteration,gradients",
                    help="trace columns on the horizontal axes, comma-separated, one panel each: iteration, "
                         "gradients, seconds, nodes_touched, samples (default iteration,gradients)")


def run(args) -> int:
    from ..io.plot import check_image_name, plot_traces

    check_output(args.output, "-o", inputs={t: "a trace to draw" for t in args.traces})
    check_image_name(args.output)

    print(plot_traces(args.traces, args.output, labels=args.label, current=args.current, title=args.title,
                      x=tuple(k.strip() for k in args.x.split(",") if k.strip())))
    return 0
