"""`train --mlflow`: a thread follows the run's `events.jsonl` and logs it to MLflow as it trains.

It follows the record, not the event bus, so it is the same whoever trains (`--auto`, the
app, the app's forked trainer) and the same code as `skilltui mlflow RUN`: every session
reads the record from its first line, and what MLflow already holds is never logged again.

Tracking never stops training. The thread is the only place MLflow is called, so a tracker
that is unreachable, refuses a write or is slow costs the training nothing: the first failure
ends tracking for this session with one warning saying how to log the run afterwards, and the
end of training waits for the last upload a bounded time only.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..model import events as ev
from ..model.parse import RunRecord, parse_lines
from ..store.run_folder import Run
from . import TrackingSpec
from .layout import RunLayout

if TYPE_CHECKING:
    from .mlflow_log import MlflowLog

POLL_SECONDS = 2.0
CLOSE_SECONDS = 60.0


def to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class RecordFollower:
    """The events `events.jsonl` gained since the last read; a line still being written waits for its newline."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0

    def read(self) -> list[ev.Event]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        record = RunRecord([])
        parse_lines(complete.decode("utf-8", errors="replace").splitlines(), record)
        return record.events


class LiveTracker:
    """Log `run` to MLflow while it trains: `start()` before training, `close()` after it.

    `say` gets the one warning line, at once; with `say=None` it is kept in `warning` for
    the caller to print when the screen is its own again (the app's full-screen mode).
    """

    def __init__(
        self,
        run: Run,
        spec: TrackingSpec,
        *,
        say: Callable[[str], None] | None = to_stderr,
        poll: float = POLL_SECONDS,
    ) -> None:
        self.run = run
        self.spec = spec
        self.say = say
        self.poll = poll
        self.warning: str | None = None
        self._follower = RecordFollower(run.events_path)
        self._layout: RunLayout | None = None
        self._log: MlflowLog | None = None  # opened by the first sync, in the follower's thread
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, name="skilltui-mlflow", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self, wait: float = CLOSE_SECONDS) -> None:
        """Log what the record gained last (its end, the report, the final pool), then stop."""
        self._stop.set()
        self._thread.join(wait)
        if self._thread.is_alive():
            self._warn(f"MLflow did not take the run's last records within {wait:.0f} s")

    def _follow(self) -> None:
        while self.warning is None:
            stopping = self._stop.wait(self.poll)
            try:
                self._sync()
            except Exception as exc:  # noqa: BLE001 - whatever the tracker raised, training goes on
                self._warn(_first_line(exc))
            if stopping:
                return

    def _sync(self) -> None:
        from .mlflow_log import MlflowLog

        events = self._follower.read()
        if self._layout is None:
            self._layout = RunLayout(self.run)
        for event in events:
            self._layout.apply(event)
        if self._log is None:
            self._log = MlflowLog(self.run, self.spec)
            self._log.open(self._layout)
        elif not events:
            return
        self._log.sync(self._layout)

    def _warn(self, why: str) -> None:
        if self.warning is not None:
            return
        again = f"skilltui mlflow {self.run.root}" + (f" --uri {self.spec.uri}" if self.spec.uri else "")
        if self.spec.experiment:
            again += f" --mlflow-experiment {self.spec.experiment!r}"
        self.warning = f"skilltui: warning: MLflow tracking stopped ({why}); training goes on; log it later: {again}"
        if self.say is not None:
            self.say(self.warning)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__
