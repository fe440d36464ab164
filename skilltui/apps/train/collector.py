"""Full garbage collections when nobody is typing, instead of in the middle of a key.

With many works streaming Python runs a full collection (generation 2) every second or two,
and a key whose frame has one inside it is among the slowest (the figures: docs/benchmarks.md,
"The app's frames"). The young generations are cheap and stay automatic. While the app
runs, full collections are taken out of Python's hands and run here instead:

- once `PERIOD` seconds passed since the last one and no key or mouse event came for `QUIET`
  seconds;
- after `LIMIT` seconds in any case, so a person who never stops typing still gets their
  memory back.

The app's trainer is a process of its own (`drivers/engine_process.py`), a fresh interpreter
with Python's own thresholds: nothing here reaches it.

`settle_heap` moves what exists at start (the imports, the screens) out of the collector's
sight for good: full collections never need to walk it.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

QUIET = 0.5
PERIOD = 10.0
LIMIT = 60.0
NEVER = 1 << 30  # a generation-2 threshold Python never reaches


def settle_heap() -> None:
    """Freeze the ~400,000 objects imported and built so far: every full collection walked them all."""
    gc.collect()
    gc.freeze()


class QuietCollector:
    """`start()` takes full collections from Python; `touched()` on input; `tick()` often; `stop()` gives them back."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._saved: tuple[int, int, int] | None = None
        self.last_full = clock()
        self.last_input = float("-inf")
        self.collections = 0

    def start(self) -> None:
        if self._saved is None:
            self._saved = gc.get_threshold()
            gc.set_threshold(self._saved[0], self._saved[1], NEVER)
        self.last_full = self._clock()

    def stop(self) -> None:
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def touched(self) -> None:
        self.last_input = self._clock()

    def tick(self) -> bool:
        """Run a full collection if one is due; True when it ran."""
        now = self._clock()
        since = now - self.last_full
        if since < LIMIT and (since < PERIOD or now - self.last_input < QUIET):
            return False
        gc.collect()
        self.last_full = self._clock()
        self.collections += 1
        return True
