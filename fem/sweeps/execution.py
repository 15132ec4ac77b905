"""Where the variants of a sweep run: one after the other in the calling process, or as
tasks of a Dask cluster (``dask.distributed``), one task per variant.

The tasks are submitted at once (``pure=False``: a variant is run even if an identical one
was) and their rows taken as they end (``as_completed``). A worker that dies has its tasks
rescheduled by the scheduler on the other workers; a task that has been on
``distributed.scheduler.allowed-failures`` + 1 dying workers (3 + 1 by default) gives up
with ``KilledWorker``, which becomes the variant's row with status "error".
"""

from __future__ import annotations

import contextlib
import numbers
import re
from pathlib import Path

from fem.errors import StudyError
from fem.sweeps.worker import ERROR, run_variant

#: how long connecting to a scheduler may take
CONNECT_TIMEOUT = "20s"


@contextlib.contextmanager
def cluster(client=None, workers=None):
    """The Dask client to run on, or None to run in the calling process.

    ``client``: a ``distributed.Client`` (used as it is, left open), or a scheduler address
    (``tcp://host:port``, ``host:port``) or scheduler file, connected to and closed after.
    ``workers``: start a ``LocalCluster`` of that many single-threaded worker processes,
    closed after.
    """
    if client is not None and workers is not None:
        raise StudyError("give either a client (or scheduler) or a number of workers, not both")
    if client is None and workers is None:
        yield None
        return
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) \
                or workers < 1:
            raise StudyError(f"workers: expected a positive number of worker processes, got "
                             f"{workers!r}")
        from distributed import Client

        with local_cluster(int(workers)) as local, Client(local) as made:
            yield made
        return
    if not isinstance(client, (str, Path)):
        yield client
        return
    with _connect(str(client)) as made:
        yield made


#: Dask settings of the local cluster's processes: no statistical profiler, and the
#: system and memory monitors, the event loop's tick and work stealing run seldom
QUIET = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "10s",
    "distributed.worker.memory.monitor-interval": "10s",
    "distributed.admin.tick.interval": "1s",
    "distributed.scheduler.work-stealing": False,
}


@contextlib.contextmanager
def local_cluster(workers: int):
    """A ``LocalCluster`` of ``workers`` single-threaded worker processes, with the
    :data:`QUIET` settings.

    A variant is a short task that holds the GIL most of the time. The workers' profiler
    samples the running task's stack every 10 ms from the worker's event loop, and the
    monitors wake every 100 to 500 ms in each process: with them, variants of V2 (exact
    scheme) ran 1.3 to 1.5 times slower on 2 workers of a 2-core machine than alone.
    """
    import dask
    from distributed import LocalCluster

    # held while the cluster lives: the nannies pass it to their worker processes, and the
    # scheduler and the client in this process read it as they run
    with dask.config.set(QUIET), LocalCluster(n_workers=workers, threads_per_worker=1,
                                              processes=True, dashboard_address=None) as made:
        yield made


def _connect(where: str):
    from distributed import Client

    if "://" in where or re.fullmatch(r"[\w.\-]+:\d+", where):
        address = where if "://" in where else f"tcp://{where}"
        how = {"address": address}
    elif Path(where).is_file():
        how = {"scheduler_file": where}
    else:
        raise StudyError(f"scheduler: '{where}' is neither a scheduler address "
                         f"(tcp://host:port) nor a scheduler file")
    try:
        return Client(**how, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise StudyError(f"scheduler: cannot connect to '{where}': {exc}") from None


def run_tasks(tasks: list[dict], client, on_row):
    """Run every task (see :func:`fem.sweeps.worker.run_variant`) and hand each row to
    ``on_row`` as the variant ends: in order in this process when ``client`` is None, else
    on the cluster, in the order they end."""
    if client is None:
        for task in tasks:
            on_row(run_variant(task))
        return
    from distributed import as_completed

    futures = {}
    for task in tasks:
        future = client.submit(run_variant, task, pure=False)
        futures[future.key] = (future, task)
    try:
        for future in as_completed([f for f, _ in futures.values()]):
            _, task = futures.pop(future.key)
            try:
                row = future.result()
            except Exception as exc:    # the task itself failed: a killed worker, ...
                row = {"variant": task["number"], "status": ERROR,
                       "message": f"{type(exc).__name__}: {exc}", "wall_time": None}
            future.release()
            on_row(row)
    finally:
        if futures:
            client.cancel([f for f, _ in futures.values()])
