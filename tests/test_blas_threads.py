"""BLAS runs on one thread while a transient run is inside ``fem.transient.integrate``, and
gets its threads back when the last concurrent run leaves."""

from __future__ import annotations

import threading
import tomllib

import fem
import fem.transient as transient
from threadpoolctl import threadpool_info

from conftest import CHAIN3_INLINE


def blas_threads():
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_a_run_limits_blas_to_one_thread_and_restores_it(monkeypatch, tmp_path):
    before = blas_threads()
    assert before, "no BLAS library loaded"
    inside = []
    integrate = transient._integrate

    def watched(*args, **kwargs):
        inside.append(blas_threads())
        return integrate(*args, **kwargs)

    monkeypatch.setattr(transient, "_integrate", watched)
    with fem.run(fem.Study.from_dict(tomllib.loads(CHAIN3_INLINE), root=tmp_path)) as results:
        assert results.status == "complete"
    assert inside and all(threads == [1] * len(before) for threads in inside)
    assert blas_threads() == before


def test_concurrent_runs_restore_the_threads_when_the_last_one_leaves():
    before = blas_threads()
    entered, release = threading.Barrier(3), threading.Event()
    seen = []

    def run():
        with transient.one_blas_thread():
            entered.wait()
            release.wait()
            seen.append(blas_threads())

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    entered.wait()
    assert blas_threads() == [1] * len(before)
    release.set()
    for t in threads:
        t.join()
    assert seen == [[1] * len(before)] * 2
    assert blas_threads() == before
