"""``treeplex batch --engine ray``: spots as Ray tasks (``pip install 'treeplex[distributed]'``).

With no ``--address`` a local Ray cluster of ``--workers`` CPUs is started for the batch and
stopped after it; with one (``auto``, ``ray://host:10001``, ``host:6379``) the running
cluster is used and ``--workers`` defaults to its CPUs. Each spot is one task of one CPU;
the workers need treeplex installed, and game files at the same paths.

The watchdog: a thread per spot in flight waits on its task with ``ray.wait`` up to the
spot's wall-clock limit (``deadline(spec)``, :func:`treeplex.scale.batch.spot_deadline`;
counted from submission, so a new Ray worker's start is in it) and past it cancels the task
with ``ray.cancel(force=True)``, which kills its worker process: the spot is failed with one
line and the batch goes on.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import socket
import threading

from ..errors import InputError


PROBE_SECONDS = 5.0  # how long the reachability probe of --address waits for a TCP connection


def check_address(address: str | None) -> None:
    """Refuse a Ray ``--address`` in one line before Ray is imported or started (``ray.init``
    retries an unreachable address for minutes): it must be ``auto``, ``local``, ``HOST:PORT``
    or ``ray://HOST:PORT`` with a port in 1..65535, and for the last two something must accept
    a TCP connection there within :data:`PROBE_SECONDS`."""
    if address is None or address in ("auto", "local"):
        return
    rest = address[len("ray://"):] if address.startswith("ray://") else address
    host, sep, port = rest.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise InputError(f"--address {address!r}: expected auto, HOST:PORT or ray://HOST:PORT (port 1..65535)")
    try:
        socket.create_connection((host, int(port)), timeout=PROBE_SECONDS).close()
    except OSError as e:
        raise InputError(f"--address {address}: no Ray cluster answers there ({e.strerror or e})") from None


class RayEngine:
    """The engine interface of :class:`treeplex.scale.batch.LocalEngine` (``workers``, ``submit``, ``close``) on Ray."""

    def __init__(self, task, workers: int | None, address: str | None = None, threads: int = 1,
                 deadline=lambda spec: None):
        """``task(spec, base, threads)`` solves one spot (:func:`treeplex.scale.batch.solve_spot`) on a
        worker; ``deadline(spec)`` is its wall-clock limit in seconds, or None for none."""
        self.deadline = deadline
        check_address(address)
        try:
            import ray
        except ImportError:
            raise InputError("--engine ray needs Ray: pip install 'treeplex[distributed]'") from None
        self.ray, self.threads = ray, threads
        self.started = not ray.is_initialized()
        if self.started:
            local_cpus = None if address else (workers or os.cpu_count() or 1) * threads
            try:
                ray.init(address=address, num_cpus=local_cpus, include_dashboard=False, log_to_driver=False,
                         logging_level="ERROR")
            except ConnectionError as e:
                raise InputError(f"--address {address}: cannot connect to a Ray cluster ({e})") from None
        self.workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)) // threads)
        self.task = ray.remote(num_cpus=threads, max_retries=0)(task)

    def submit(self, spec: dict, base: str) -> cf.Future:
        fut: cf.Future = cf.Future()
        ref = self.task.remote(spec, base, self.threads)
        threading.Thread(target=self._watch, args=(fut, ref, self.deadline(spec)), daemon=True).start()
        return fut

    def _watch(self, fut: cf.Future, ref, limit: float | None) -> None:
        """The spot's row into ``fut``: its task's, or failed past ``limit`` (the task cancelled,
        its worker killed); a task that died sets the exception (the driver's "worker died")."""
        ray = self.ray
        try:
            ready, _ = ray.wait([ref], timeout=limit)
            if ready:
                fut.set_result(ray.get(ref))
                return
            ray.cancel(ref, force=True)
            fut.set_result({"status": "failed",
                            "error": f"ran past its wall-clock limit of {limit:g} s (its Ray task was cancelled)"})
        except BaseException as e:  # noqa: BLE001 - the future must always be answered
            fut.set_exception(e)

    def close(self, cancel: bool = False) -> None:
        if self.started:
            self.ray.shutdown()
