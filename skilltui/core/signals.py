"""Stopping on a signal: SIGINT, SIGTERM and SIGHUP all stop a run at a safe point.

A person's Ctrl-C, a service manager's SIGTERM and a closed terminal's SIGHUP mean the
same thing: stop, and let the same command resume. So all three do the same:

- while a run trains, the first signal stops it before its next stage starts (the calls
  already in flight finish and are recorded), a second one stops it at once; either way
  the run says `stopped: stopped by SIGTERM` in `skilltui runs` and resumes;
- anywhere else (opening a run, importing, another command) the signal ends the process
  where it is, as a kill would: every record is written whole or not at all, a run resumes
  from any point (a killed run is tested to), and leftovers (a temporary file, a git lock)
  are cleaned on the next open. Ending at once, rather than raising KeyboardInterrupt,
  is what keeps the promise of one line: an exception raised by a signal can land in a
  cleanup callback deep in an import and be swallowed, or print a traceback there.
- a short stretch that must tidy up after itself (export's staging folder) asks for
  KeyboardInterrupt / `Terminated` instead, with `raising_signals()`.

The process exits 128 + the signal's number (130, 143, 129), with one line on stderr.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived where a signal must raise: end the command like Ctrl-C does.

    A KeyboardInterrupt, because that is the one exception asyncio lets out of a task (any
    other BaseException raised in a task is kept in the task and lost), and so no
    `except Exception` swallows it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def name_of(signum: int) -> str:
    return signal.Signals(signum).name


def exit_code(signum: int) -> int:
    return 128 + int(signum)


# What is left to do after a stop, said in its one line; a command whose stop is no run's (`mailbox
# serve`) says its own through `say_on_stop`, once its arguments are parsed.
RESUMES = "a run resumes with the same command"
_said = [RESUMES]


def say_on_stop(hint: str | None) -> None:
    """What the stop line says is left to do: `hint`, or (None) that a run resumes."""
    _said[0] = hint or RESUMES


def stop_line(signum: int) -> str:
    return f"skilltui: stopped by {name_of(signum)}; {_said[0]}"


def stop_now(signum: int, frame: object) -> None:
    """End the process at once with one line and 128 + the signal's number (see the module docstring)."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    os.write(2, f"\n{stop_line(signum)}\n".encode())
    os._exit(exit_code(signum))


def _raise(signum: int, frame: object) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def _install(handler: Callable[[int, object], None] | int) -> Callable[[], None]:
    """Set `handler` for the stop signals; return what puts the previous ones back.

    Does nothing off the main thread, where Python cannot set handlers (main() called from
    a test's thread).
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore


def install_stop_signals() -> Callable[[], None]:
    """main()'s handlers: every stop signal ends the process at once, with one line."""
    return _install(stop_now)


# Signals that arrived while deferred (see `deferred_signals`), oldest first.
PENDING: list[int] = []


def defer(signum: int, frame: object) -> None:
    """Remember the signal for whoever can act on it safely (the terminal app, once it runs)."""
    PENDING.append(signum)


@contextmanager
def deferred_signals() -> Iterator[list[int]]:
    """Within this block a stop signal is only noted in `PENDING`, for the terminal app.

    The app cannot be interrupted at any point as a headless command can: ending at once
    or raising while Textual starts or stops leaves the terminal in its full-screen mode.
    So the app takes the signals over once it runs (and acts on one noted before), and
    gives them back to `defer` as it closes.
    """
    PENDING.clear()
    restore = _install(defer)
    try:
        yield PENDING
    finally:
        restore()


@contextmanager
def raising_signals() -> Iterator[None]:
    """Within this block a stop signal raises (KeyboardInterrupt, Terminated), so cleanups run."""
    restore = _install(_raise)
    try:
        yield
    finally:
        restore()


def signal_of(exc: BaseException) -> int:
    """The signal an interruption came from."""
    return exc.signum if isinstance(exc, Terminated) else int(signal.SIGINT)


@contextmanager
def loop_stop_signals(loop: asyncio.AbstractEventLoop, handler: Callable[[int], None]) -> Iterator[None]:
    """`handler(signum)` for every stop signal on `loop` while the block runs, then asyncio's own again.

    Off the main thread asyncio refuses a handler: the caller's handlers stay, which is what a
    caller running training in a thread (a test, the app) wants.
    """
    installed = []
    for signum in STOP_SIGNALS:
        try:
            loop.add_signal_handler(signum, handler, signum)
            installed.append(signum)
        except (RuntimeError, ValueError):
            break
    try:
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
