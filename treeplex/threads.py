"""Numba's OpenMP thread pool on a shared machine: spin briefly, then sleep.

With numba's OpenMP threading layer (libgomp), a thread that finishes its share of a parallel
loop spins at the closing barrier (``GOMP_SPINCOUNT``, 300,000 spins by default) before it
sleeps. When another process holds a core, the spinning thread keeps the late one off the CPU
for a scheduler slice. Measured on the 2-core machine, CFR+ on the Endgame-2-sized river
(six parallel loops per iteration): 9.6 ms per iteration by default with one busy process
beside it, 4.8 ms with 3,000 spins; idle, 2.0-2.2 ms either way. Imported by the modules with
parallel kernels, before any of them runs; a value the user set is kept.
"""

import os

os.environ.setdefault("GOMP_SPINCOUNT", "3000")
