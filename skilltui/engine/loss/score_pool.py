"""The loss stage's scoring runs in worker processes, off the trainer's event loop.

Scoring is pure Python and CPU-bound: in a thread it holds the GIL, so the trainer's event
loop (its events, the other works' calls, the live app's wire) stalls for as long as a long
script takes, and several works cannot score at once. So `score_step` runs in a
`ProcessPoolExecutor` with one worker per core the process may use, shared by every work
of the run; many works score in parallel.

Started by fork when they can be, by spawn otherwise. A process that has one thread (the
trainer, before its event loop starts: `start`) forks every worker at once: they begin with
the loss's modules and the English word list already read, where a spawned worker starts a
fresh interpreter and reads them itself (the cost of each: docs/benchmarks.md, "Start-up").
Once a process has other threads (its event loop's helpers, git readers), a fork could copy a
lock one of them held and hang forever, so a pool made then (the first in a process that runs
many things, or one replacing a stopped pool) spawns its workers, one per scoring at a time.
A forked worker closes every descriptor it inherited: the trainer's pipes to the app and the
run lock must close when the trainer ends, not when its scorers notice.

Quiet: the workers and multiprocessing's resource tracker start with their stderr on
/dev/null. A stop is one line (signals.py), and the trainer's log stays empty; but a
worker still starting when its trainer ends at once prints a traceback of its own start-up,
and the tracker, left with the pool's semaphores by a trainer that ended with `os._exit`,
warns about them. Neither is the user's to act on: a scoring's own error comes back to the
trainer with its result.

Stopping: a worker ignores SIGINT and SIGHUP (a Ctrl-C reaches the whole process group, and
the trainer decides what a stop means), dies on SIGTERM (a forked one drops the handler its
parent had), and ends itself as soon as the process that started it is gone, so a trainer
stopped at once (`os._exit` on a second signal, or a kill) leaves no scorer running. A scoring
whose awaiting task is cancelled takes its workers down with it; the next call starts fresh ones.

The pool belongs to the process that made it: a forked child (a test's, or any fork of a
process that scored) makes its own rather than use a parent's pool it cannot reach, and starts
its own resource tracker (multiprocessing's keeper of the pool's semaphores) too: the parent's
is reached through a file descriptor that a child may close, and whose number a later file may
take, so writing to it would write into that file.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing import resource_tracker

from .scene_text import read_word_frequencies
from .scores import StepScores, score_step

_POOL: tuple[int, ProcessPoolExecutor] | None = None
_LOCK = threading.Lock()
ORPHAN_CHECK_S = 0.5
MODE_VARIABLE = "SKILLTUI_SCORING"


def inline() -> bool:
    """True when `SKILLTUI_SCORING=inline`: score in the calling thread, with no worker process.

    The product scores in the pool; the test suite sets this (tests/conftest.py), because a
    short test's few scorings cost less than starting the workers that would run them. Read
    at each call, so a process started with the variable set (a trainer child) scores inline too.
    """
    return os.environ.get(MODE_VARIABLE) == "inline"


def cores() -> int:
    """Cores this process may run on (an affinity mask or a container's limit can be fewer than the machine's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _worker_start(parent: int, inherited: tuple[int, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for fd in inherited:
        with contextlib.suppress(OSError):
            os.close(fd)

    def watch() -> None:  # the parent gone means nobody waits for this score
        while os.getppid() == parent:
            threading.Event().wait(ORPHAN_CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="orphan-watch", daemon=True).start()


def _forget_the_parents_pool() -> None:
    global _POOL, _LOCK
    _POOL, _LOCK = None, threading.Lock()
    # multiprocessing has no public way to start a fresh tracker in a forked child; these two
    # fields are what `ensure_running` checks before it starts one.
    tracker = resource_tracker._resource_tracker
    tracker._fd = tracker._pid = None  # type: ignore[attr-defined]


os.register_at_fork(after_in_child=_forget_the_parents_pool)


@contextmanager
def _quiet_children() -> Iterator[None]:
    """Processes started within inherit a stderr on /dev/null (this process's is put back after).

    Only as long as a pool or a worker takes to start (a few milliseconds): what another
    thread writes to stderr meanwhile is lost, which is why it is no longer.
    """
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _open_descriptors() -> tuple[int, ...] | None:
    """This process's open descriptors above stderr; None where they cannot be listed (then no fork)."""
    try:
        listed = [int(name) for name in os.listdir("/dev/fd")]
    except (OSError, ValueError):
        return None
    opened = []
    for fd in listed:
        # The listing's own descriptor is closed by now, and its number free for the pool's pipes.
        with contextlib.suppress(OSError):
            os.fstat(fd)
            if fd > 2:
                opened.append(fd)
    return tuple(opened)


def _ready() -> None:
    """What the pool is given to do when it forks its workers (a task starts them)."""


def pool() -> ProcessPoolExecutor:
    """This process's scoring pool, made on first use (its workers forked at once when that is safe)."""
    global _POOL
    with _LOCK, _quiet_children():
        if _POOL is None or _POOL[0] != os.getpid():
            forking = threading.active_count() == 1
            if forking:
                read_word_frequencies()  # before the fork below, so every worker has the list read
            # Counted inside the lock and the quiet: the descriptors a forked worker is to close
            # include the ones the quiet holds, and no thread can start before the fork below.
            inherited = _open_descriptors() if forking else None
            executor = ProcessPoolExecutor(
                max_workers=cores(),
                mp_context=multiprocessing.get_context("spawn" if inherited is None else "fork"),
                initializer=_worker_start,
                initargs=(os.getpid(), inherited or ()),
            )
            if inherited is not None:
                # A fork pool forks all its workers at its first task, before its own thread starts.
                executor.submit(_ready)
            _POOL = (os.getpid(), executor)
        return _POOL[1]


def start() -> None:
    """Start this process's workers now if it has one thread, so they are forked, not spawned.

    The trainer calls it before its event loop starts: afterwards its threads would make the
    pool spawn them at the first scoring (a slower start, paid by the scoring that waits).
    """
    if threading.active_count() == 1 and not inline():
        pool()


def stop() -> None:
    """End this process's workers now, scoring or not (the next call starts new ones)."""
    global _POOL
    with _LOCK:
        if _POOL is None or _POOL[0] != os.getpid():
            _POOL = None
            return
        executor = _POOL[1]
        _POOL = None
    # ProcessPoolExecutor has no public way to end a busy worker before Python 3.14's
    # terminate_workers(); its process table is the one place the workers are known.
    for process in list(getattr(executor, "_processes", {}).values()):
        process.terminate()
    executor.shutdown(wait=False, cancel_futures=True)


def _submit(written: Mapping[int, str | None], human: Mapping[int, str]) -> asyncio.Future:
    executor = pool()
    with _quiet_children():  # a submit may start a worker
        return asyncio.wrap_future(executor.submit(score_step, written, human))


async def score_in_worker(written: Mapping[int, str | None], human: Mapping[int, str]) -> StepScores:
    """`scores.score_step` in a worker process; a pool broken by a dead worker is replaced once.

    Inline (`inline()`), the same function runs here, so both modes give the same scores.
    """
    if inline():
        return score_step(written, human)
    try:
        try:
            return await _submit(written, human)
        except BrokenProcessPool:  # a worker died (killed, out of memory): once more, on fresh workers
            stop()
            return await _submit(written, human)
    except asyncio.CancelledError:
        stop()
        raise
