"""Running a solver: the driver (target, iteration cap, time limit), its schedule of checks,
progress traces, checkpoints, targets, and sampling over a rules game without compiling it."""
