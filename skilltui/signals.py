"""Stopping on a signal: SIGINT, SIGTERM and SIGHUP all stop a run at a safe point.

A person's Ctrl-C, a service manager's SIGTERM and a closed terminal's SIGHUP mean the
same thing: stop, and let the same command resume. So all three do the same:

- while a run trains, the first signal stops it before its next stage starts (the calls
  already in flight finish and are recorded), a second one stops it at once; either way
  the run says `stopped: stopped by SIGTERM` in `skilltui runs` and resumes;
- anywhere else (opening a run, importing, another command) the signal ends the command
  where it is. Every record is written whole or not at all, so that is safe too.

The process exits 128 + the signal's number (130, 143, 129), with one line on stderr.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived outside a training loop: end the command like Ctrl-C does.

    A BaseException, like KeyboardInterrupt, so no `except Exception` swallows it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def name_of(signum: int) -> str:
    return signal.Signals(signum).name


def exit_code(signum: int) -> int:
    return 128 + int(signum)


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


def install_stop_signals() -> Callable[[], None]:
    """SIGTERM and SIGHUP raise Terminated (SIGINT already raises KeyboardInterrupt).

    Returns a function that puts the previous handlers back. Does nothing off the main
    thread, where Python cannot set handlers (main() called from a test's thread).
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {sig: signal.signal(sig, _raise_terminated) for sig in (signal.SIGTERM, signal.SIGHUP)}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore


def signal_of(exc: BaseException) -> int:
    """The signal an interruption came from."""
    return exc.signum if isinstance(exc, Terminated) else int(signal.SIGINT)
