"""What the app hands its trainer process: the opened run and the backend, as one pickle.

The trainer is a fresh interpreter, not a fork of the app: what it trains must survive the
trip, and what belongs to the app's process (its git handle, its hold on the run lock)
must not travel with it.
"""

from __future__ import annotations

import threading

from skilltui.agents.offline import OfflineBackend
from skilltui.drivers.job import Job, dump_job, load_job


class SdkBackend(OfflineBackend):
    """A backend that keeps an imported SDK module and a lock, as the real ones do."""

    def __init__(self) -> None:
        super().__init__()
        self.sdk = threading  # a module: imported again by name on the other side


def test_a_job_with_a_used_pool_a_held_lock_and_a_backend_holding_a_module_survives_the_trip(open_training, tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    opened = open_training(prompts=prompts)
    head = opened.run.pool.head()  # the app's git handle, cached on the run
    backend = SdkBackend()
    job = load_job(dump_job(Job(opened, backend, ["sk-secret"], [], paused=True)))
    assert job.opened.run.root == opened.run.root and job.opened.works == opened.works
    assert "pool" not in vars(job.opened.run)  # the child opens its own git handle ...
    assert job.opened.run.pool.head() == head  # ... on the same pool
    assert job.opened.lock.path == opened.lock.path and job.opened.lock.held_fd() is None  # never taken there
    assert opened.lock.held_fd() is not None  # the app still holds it
    searchpath = job.opened.prompts.env.loader.searchpath
    assert searchpath == opened.prompts.env.loader.searchpath and searchpath[0] == str(prompts)
    assert job.backend.sdk is threading and job.secrets == ["sk-secret"] and job.paused
