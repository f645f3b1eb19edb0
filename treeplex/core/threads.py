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

# Below this many sequences per player, kernels run on one thread: thread hand-offs cost more
# than they save. Measured on a small river spot (fcpa, about 500 sequences, 326 CFR+
# iterations) on the loaded 2-core machine: 0.57 s with the products on 2 threads, 0.017 s on 1.
PARALLEL_SEQS = 20000


_POOL = None


def pool():
    """Python threads, as many as numba's, for kernels compiled ``nogil=True`` that split their
    work into runs (a product's runs: :mod:`treeplex.poker.streets_operator`). Cheaper to
    compile than numba's ``parallel=True`` loop over the same runs (no parfor lowering); a
    hand-off costs about 0.1 ms, so only for calls of milliseconds."""
    global _POOL
    import numba
    from concurrent.futures import ThreadPoolExecutor

    if _POOL is None or _POOL._max_workers != numba.get_num_threads():
        _POOL = ThreadPoolExecutor(numba.get_num_threads())
    return _POOL
