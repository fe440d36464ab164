"""What the app hands its trainer process at the start: the opened run, the backend, and what was read.

The trainer is a fresh Python process (`engine_process`), so what it trains arrives as one
pickle on its stdin. Most of it pickles as it is; a few things hold what belongs to one
process and are made again on the other side from what they were made of:

- the run's cached `Pool` (a git handle talking to processes of the app's): the child opens
  its own on first use, as a fresh `Run` does;
- the run lock: the app holds it for the session and releases it; the child gets an
  unheld lock on the same file, which it never takes;
- the prompt templates (a Jinja environment): loaded again from the same folders;
- a module a backend keeps as an attribute (an SDK it imported): imported again by name.

A backend (or a test double) must otherwise pickle: one defined in a test module is
imported by the child from the same `sys.path` (`child_env`).
"""

from __future__ import annotations

import importlib
import io
import os
import pickle
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.prompts import Prompts
from ..model import events as ev
from ..store.run_folder import Run, RunLock
from .driver import Backend, OpenedRun


@dataclass(frozen=True)
class Job:
    """What the child trains, as the app had it when it started the child."""

    opened: OpenedRun
    backend: Backend
    secrets: list[str]
    history: list[ev.Event]  # what earlier sessions recorded, already read by the app
    paused: bool  # the person paused before training started


def _prompts(override: str | None) -> Prompts:
    return Prompts(None if override is None else Path(override))


class _JobPickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, types.ModuleType):
            return importlib.import_module, (obj.__name__,)
        if type(obj) is Run:
            return Run, (obj.root,)  # without the cached `pool`
        if type(obj) is RunLock:
            return RunLock, (obj.path.parent,)
        if type(obj) is Prompts:
            folders = obj.env.loader.searchpath  # type: ignore[union-attr]
            return _prompts, (folders[0] if len(folders) > 1 else None,)
        return NotImplemented


def dump_job(job: Job) -> bytes:
    out = io.BytesIO()
    _JobPickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(job)
    return out.getvalue()


def load_job(data: bytes) -> Job:
    job = pickle.loads(data)  # noqa: S301 - written by the app that started this process, over its own pipe
    if not isinstance(job, Job):
        raise TypeError(f"the trainer was handed a {type(job).__name__}, not a Job")
    return job


def child_env() -> dict[str, str]:
    """The app's environment, with its `sys.path` as the child's PYTHONPATH: the child imports
    skilltui, and whatever a pickled backend is defined in, from where the app did."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env
