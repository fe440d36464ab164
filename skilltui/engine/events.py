"""The engine's event stream: typed facts about a run, and the sinks that subscribe to them.

Everything a person or a tool can learn about a run arrives as an event: the run's
`events.jsonl`, the headless console and the terminal app are all subscribers of one
`EventBus`. If a pane needs a fact, that fact is a field here, so no renderer ever
reaches into the engine.

Every event serialises to one JSON object with a `kind` and a UTC `time`. Streamed
agent text (`delta`) is the one kind kept out of `events.jsonl`: it is high volume and
the call's full transcript already holds it.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

Sink = Callable[["Event"], None]


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, kw_only=True)
class Event:
    """Base of every event. `kind` names the shape; `time` is when it happened (UTC)."""

    kind: ClassVar[str] = "event"
    time: str = field(default_factory=utc_now)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **asdict(self)}


@dataclass(frozen=True, kw_only=True)
class RunStarted(Event):
    kind: ClassVar[str] = "run_started"
    run_id: str
    run_dir: str
    works: list[str]
    config: dict[str, Any]
    resumed: bool
    val_works: list[str] = field(default_factory=list)
    # The model each role calls (role -> model id), said at start so nobody pays for a default unawares.
    models: dict[str, str] = field(default_factory=dict)
    backend: str = ""


@dataclass(frozen=True, kw_only=True)
class StepStarted(Event):
    kind: ClassVar[str] = "step_started"
    epoch: int
    step: int
    first: int
    last: int
    works: list[str]
    groups: list[list[str]]


@dataclass(frozen=True, kw_only=True)
class Stage(Event):
    """A stage of one work (forward, loss) or one group (reduce, backward) changed state.

    `status` is one of started, finished, skipped (its artifacts were already there),
    failed (`error` says why).
    """

    kind: ClassVar[str] = "stage"
    stage: str
    status: str
    epoch: int
    step: int
    work: str | None = None
    group: int | None = None
    attempt: int | None = None
    seconds: float | None = None
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class Delta(Event):
    """A piece of an agent's streamed output. Not written to events.jsonl."""

    kind: ClassVar[str] = "delta"
    role: str
    text: str
    work: str | None = None
    group: int | None = None


@dataclass(frozen=True, kw_only=True)
class ToolUsed(Event):
    """An agent used a file tool. `ok` is False when the sandbox or the tool refused."""

    kind: ClassVar[str] = "tool"
    role: str
    tool: str
    path: str
    ok: bool
    work: str | None = None
    group: int | None = None
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class EpisodeWritten(Event):
    kind: ClassVar[str] = "episode_written"
    epoch: int
    step: int
    work: str
    episode: int
    path: str


@dataclass(frozen=True, kw_only=True)
class Call(Event):
    """One backend call finished: its token usage and, where the price is known, its cost."""

    kind: ClassVar[str] = "call"
    role: str
    backend: str
    model: str | None
    epoch: int | None = None
    step: int | None = None
    work: str | None = None
    group: int | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    cost_usd: float | None = None
    seconds: float = 0.0
    transcript: str | None = None
    turns: int = 1  # model requests the call made (every backend counts them the same way)


@dataclass(frozen=True, kw_only=True)
class Loss(Event):
    """A scored work-step. `loss` is in [0, 1], lower is better; `scores` is its breakdown."""

    kind: ClassVar[str] = "loss"
    epoch: int
    step: int
    work: str
    loss: float
    scores: dict[str, float]
    report: str
    # The engine's own number and the judge's rubric; `loss` differs from `engine_loss` only
    # with --judge-weight. `rubric_error` says why no rubric was used (missing, malformed).
    engine_loss: float | None = None
    rubric: dict[str, Any] | None = None
    rubric_error: str | None = None


@dataclass(frozen=True, kw_only=True)
class Summary(Event):
    kind: ClassVar[str] = "summary"
    epoch: int
    step: int
    group: int
    works: list[str]
    path: str


@dataclass(frozen=True, kw_only=True)
class MicroStep(Event):
    """A backward attempt passed its checks (or failed them) and produced a commit."""

    kind: ClassVar[str] = "micro_step"
    epoch: int
    step: int
    group: int
    attempt: int
    label: str
    before: str
    after: str
    subject: str
    added: list[str]
    changed: list[str]
    removed: list[str]
    lint_ok: bool
    patch: str
    message: str = ""


@dataclass(frozen=True, kw_only=True)
class ReviewRequested(Event):
    kind: ClassVar[str] = "review_requested"
    epoch: int
    step: int
    group: int
    attempt: int
    label: str
    before: str
    after: str


@dataclass(frozen=True, kw_only=True)
class DecisionMade(Event):
    """What a reviewer decided about a micro-step: approve, rerun or rollback, by human or auto."""

    kind: ClassVar[str] = "decision"
    decision: str
    by: str
    epoch: int
    step: int
    group: int
    attempt: int
    before: str
    after: str
    note: str = ""
    ref: str | None = None
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class MicroStepSkipped(Event):
    """A micro-step failed every attempt (`attempts`, the last `reason`): its group's update is skipped.

    The pool stays at `before`; training goes on (unless `--strict`, which stops the run instead).
    """

    kind: ClassVar[str] = "micro_step_skipped"
    epoch: int
    step: int
    group: int
    attempts: int
    before: str
    reason: str
    label: str = ""


@dataclass(frozen=True, kw_only=True)
class Attribution(Event):
    """Per-note attribution from the read traces, up to this step (see `attribution.py`).

    `notes` maps a note's path to passes (forward passes that read it), with / without (mean
    loss of the episodes written with / without it) and with_n / without_n (how many).
    """

    kind: ClassVar[str] = "attribution"
    epoch: int
    step: int
    notes: dict[str, dict[str, Any]]


@dataclass(frozen=True, kw_only=True)
class PoolChanged(Event):
    """The pool's HEAD moved (a commit, a reset, a revert). Panes showing the pool refresh."""

    kind: ClassVar[str] = "pool_changed"
    head: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class StepFinished(Event):
    """A step ended. `mean_loss` is over the `works_in_mean` works scored this step (the ones that
    took part and did not fail); `val_mean_loss` over `val_works_in_mean` validation works."""

    kind: ClassVar[str] = "step_finished"
    epoch: int
    step: int
    mean_loss: float | None
    failed: list[str]
    works_in_mean: int = 0
    val_mean_loss: float | None = None
    val_works_in_mean: int = 0


@dataclass(frozen=True, kw_only=True)
class ValLoss(Event):
    """A validation work scored with the pool as it stood (`commit`). Never read by backward or reduce.

    `point`: "step" (after the step's updates: the validation curve), "micro" (the gate, after
    micro-step `group` attempt `attempt`, before its review) or "before" (the pool a gated
    micro-step started from, when nothing had validated it yet). `reused` is True when the
    same notes were already validated, so no call was made.
    """

    kind: ClassVar[str] = "val_loss"
    epoch: int
    step: int
    work: str
    loss: float
    scores: dict[str, float]
    point: str = "step"
    group: int | None = None
    attempt: int | None = None
    commit: str = ""
    report: str = ""
    reused: bool = False


@dataclass(frozen=True, kw_only=True)
class GateChecked(Event):
    """The gate's verdict on one micro-step: mean validation loss before and after it.

    `advice` is "keep" or "rollback" ("none" when validation could not measure both sides);
    `works` is how many validation works the two means share; `cost_usd` what the extra
    validation calls cost.
    """

    kind: ClassVar[str] = "gate"
    epoch: int
    step: int
    group: int
    attempt: int
    before: float | None
    after: float | None
    works: int
    tolerance: float
    advice: str
    reason: str
    cost_usd: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Paused(Event):
    kind: ClassVar[str] = "paused"
    paused: bool


@dataclass(frozen=True, kw_only=True)
class Warning_(Event):
    kind: ClassVar[str] = "warning"
    message: str
    work: str | None = None


@dataclass(frozen=True, kw_only=True)
class Throttled(Event):
    """The API rate-limited the key (429): fewer calls in flight for a while, or the limit lifted."""

    kind: ClassVar[str] = "throttle"
    throttled: bool
    limit: int | None = None  # calls allowed in flight while throttled
    wait_seconds: float = 0.0  # no new call starts before this wait is over
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class BatchState(Event):
    """A step's loss-judge (or reduce) calls sent as one Message Batch (`--batch`): where it stands."""

    kind: ClassVar[str] = "batch"
    epoch: int
    step: int
    purpose: str  # loss or reduce
    batch_id: str
    state: str  # submitted, in_progress, ended, resumed
    processing: int = 0
    succeeded: int = 0
    errored: int = 0
    expired: int = 0
    canceled: int = 0


@dataclass(frozen=True, kw_only=True)
class HistoryAction(Event):
    """A person changed the pool's history after the fact (revert, reset) from `skilltui review`."""

    kind: ClassVar[str] = "history"
    action: str
    target: str
    before: str
    after: str
    ref: str | None = None
    by: str = "human"


@dataclass(frozen=True, kw_only=True)
class RunFinished(Event):
    """The run ended. `status`: finished, stopped (a limit or a person stopped it), failed."""

    kind: ClassVar[str] = "run_finished"
    status: str
    reason: str = ""
    epochs_done: int = 0
    cost_usd: float | None = None


class EventBus:
    """Fan one event out to every subscribed sink, in subscription order.

    A sink that raises is dropped from nothing and stops nothing: a broken renderer must
    never stop training, so the error is reported once on stderr and emission goes on.
    """

    def __init__(self) -> None:
        self._sinks: list[Sink] = []
        self._broken: set[int] = set()

    def subscribe(self, sink: Sink) -> Callable[[], None]:
        self._sinks.append(sink)
        return lambda: self._sinks.remove(sink) if sink in self._sinks else None

    def emit(self, event: Event) -> None:
        for sink in list(self._sinks):
            try:
                sink(event)
            except Exception as exc:  # noqa: BLE001 - a renderer bug must not stop training
                if id(sink) not in self._broken:
                    self._broken.add(id(sink))
                    print(f"[skilltui] an event sink failed ({exc!r}); training continues", file=sys.stderr)


class JsonlSink:
    """Append each event to `events.jsonl` as one line, written through at once, fsynced in batches.

    Every line reaches the operating system before `emit` returns, so a killed process
    loses at most the event it was writing. Reaching the disk (fsync) is batched: a
    background thread syncs at most every `sync_interval` seconds while lines arrive, so the
    streaming hot path never waits on the disk; `close()` syncs what is left. A power cut
    can cost the events of the last interval, never a line already synced, and never a
    stage's artifacts, which are written with `write_atomic`.

    On open, a last line cut short (a full disk, a crash mid-write, an edit by hand) is
    cut off, so the next event starts on a line of its own; `repaired` says how many bytes
    were dropped.
    """

    def __init__(self, path: Path, *, sync_interval: float = 0.2) -> None:
        self.path = path
        self.repaired = repair_tail(path)
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the run
        self._interval = sync_interval
        self._dirty = threading.Event()
        self._stop = threading.Event()
        self._closed = False
        self.error: OSError | None = None
        self._syncer = threading.Thread(target=self._sync_loop, name="events-fsync", daemon=True)
        self._syncer.start()

    def __call__(self, event: Event) -> None:
        if event.kind == "delta" or self.error is not None:
            return
        try:
            self._file.write(json.dumps(event.to_dict(), default=str, ensure_ascii=False) + "\n")
            self._file.flush()
        except OSError as exc:
            # A full disk: the run stops at its next write of a record, and says why; a line cut
            # short here is cut off on the next open. Writing on would only tear more lines.
            self.error = exc
            return
        if not self._dirty.is_set():  # a plain read; set() takes a lock every time
            self._dirty.set()

    def _sync_loop(self) -> None:
        while True:
            self._dirty.wait()
            if self._closed:
                return
            self._dirty.clear()
            try:
                os.fsync(self._file.fileno())
            except (OSError, ValueError):  # closed under us, or a disk that cannot sync
                return
            if self._stop.wait(self._interval):  # close() ends the pause at once
                return

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._dirty.set()
        self._syncer.join()
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError:
            pass
        finally:
            try:
                self._file.close()
            except OSError:  # the buffered rest of a line on a full disk; repaired on next open
                pass


def repair_tail(path: Path) -> int:
    """Cut a last line that has no newline (a torn write); return how many bytes were cut."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with open(path, "rb+") as f:
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return 0
        keep = 0
        position = size
        while position > 0:  # scan back in blocks for the last newline
            step = min(65536, position)
            position -= step
            f.seek(position)
            block = f.read(step)
            found = block.rfind(b"\n")
            if found >= 0:
                keep = position + found + 1
                break
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
    return size - keep


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every event of a run, skipping a last line cut short by a crash."""
    events: list[dict[str, Any]] = []
    if not path.exists():
        return events
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events
