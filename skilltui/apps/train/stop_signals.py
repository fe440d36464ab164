"""The app's answer to SIGTERM, SIGHUP (and a SIGINT from `kill`): stop the run and close, as q then y does.

Installed on the app's event loop once it runs (a signal that came while it started waits
in `signals.PENDING`), and the command's own handlers put back when it unmounts. An object
the app holds, not a part of it: it knows the loop and the handlers it replaced, and calls
back the one function it was given, so it can be read (and tested) without the app.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Any

from ...core.signals import PENDING, STOP_SIGNALS


class StopSignals:
    def __init__(self) -> None:
        self._previous: dict[int, Any] = {}  # signal -> the handler it had before the app ran

    def watch(self, on_signal: Callable[[int], None]) -> None:
        loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            previous = signal.getsignal(signum)
            try:
                loop.add_signal_handler(signum, on_signal, signum)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread (tests)
                return
            self._previous[signum] = previous
        if PENDING:  # one came while the app was starting
            on_signal(PENDING[0])

    def unwatch(self) -> None:
        loop = asyncio.get_running_loop()
        for signum, previous in self._previous.items():
            loop.remove_signal_handler(signum)
            signal.signal(signum, previous)  # the command's `defer`, until the terminal is given back
        self._previous = {}
