"""The one fold of a run: `RunView.apply(event)` for every event, in order, gives what every interface shows.

The console of `--auto`, the live app, `skilltui runs` and `skilltui review` all read a
`RunView`; none keeps a fold of its own, so they cannot disagree about what a run is doing.
A view is built the same way live (each event as the bus emits it) and afterwards (each
line of `events.jsonl`, or the file tailed while another process trains): a run that was
resumed is the events of all its sessions in order, and a session's `run_started` puts the
per-step picture back to "waiting" while the numbers and decisions of earlier sessions stay.

Every step keeps its works' names: a view read from `events.jsonl` would keep a new copy of
each name per step, so the fold keeps one (`sys.intern`).

`apply` returns the view it was given, folded (it updates in place: copying every step's
losses for each of thousands of events would cost more than it buys). It never reads a
clock or a file, so the same events always give the same view; figures that need "now"
(elapsed, the ETA) take it as an argument (see `figures.py`).

Streamed agent text (`delta`) and tool lines are not run facts: the app renders them into
its output pane and the fold ignores them.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field, replace
from pathlib import Path
from sys import intern
from typing import Any

from . import events as ev
from .at import At, MicroKey, StepKey
from .commits import Mark

TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")
LIVE = ("starting", "running", "review")


def when(event: ev.Event) -> _dt.datetime | None:
    """The event's UTC time, or None when its record has none that parses."""
    try:
        return _dt.datetime.fromisoformat(event.time)
    except (TypeError, ValueError):
        return None


@dataclass
class WorkView:
    """One training work in the current step: its stage, what it wrote and spent, and since when."""

    name: str
    stage: str = "waiting"  # waiting, forward, loss, done, failed, sits out
    episodes: int = 0
    needed: int = 0
    loss: float | None = None  # its latest loss, whatever step it came from
    tokens: int = 0
    cost: float | None = None
    error: str | None = None
    started: _dt.datetime | None = None  # its first stage of the current step started
    stage_started: _dt.datetime | None = None
    ended: _dt.datetime | None = None  # its part of the current step ended (done or failed)


@dataclass
class StepView:
    """One step of the run: who was scheduled, what each scored, and how the step ended."""

    key: StepKey
    first: int
    last: int
    works: tuple[str, ...]
    groups: list[list[str]]
    losses: dict[str, float] = field(default_factory=dict)
    reports: dict[str, str] = field(default_factory=dict)
    scores: dict[str, dict[str, float]] = field(default_factory=dict)  # work -> its loss's parts (chrf, ...)
    failed: set[str] = field(default_factory=set)
    val_losses: dict[str, float] = field(default_factory=dict)
    finished: bool = False
    # The engine's own figures from step_finished (sessions before the count existed recorded 0).
    mean_loss: float | None = None
    works_in_mean: int = 0
    val_mean_loss: float | None = None
    val_works_in_mean: int = 0
    # (stage, work or group) done in this step; emptied when the next step starts.
    stages_done: set[tuple[str, str | int]] = field(default_factory=set)
    started: _dt.datetime | None = None
    ended: _dt.datetime | None = None


@dataclass
class RunView:
    """Everything a run's events say about it, folded. Build with `RunView.of(run_id, run_dir)`."""

    run_id: str = ""
    run_dir: Path = field(default_factory=Path)
    works: dict[str, WorkView] = field(default_factory=dict)
    val_works: set[str] = field(default_factory=set)
    test_works: set[str] = field(default_factory=set)
    tests: list[ev.TestMeasured] = field(default_factory=list)  # the test points, in the order measured
    config: dict[str, Any] = field(default_factory=dict)
    steps_per_epoch: int | None = None
    workers: int = 1
    status: str = "starting"  # starting, running, review, then finished, stopped, interrupted, failed
    reason: str = ""
    paused: bool = False
    throttled: bool = False
    batch: str = ""  # the latest Message Batch's state (--batch); "" when none is pending
    steps: dict[StepKey, StepView] = field(default_factory=dict)  # in run order
    current: StepKey | None = None
    tokens: int = 0
    cost: float = 0.0
    cost_known: bool = True
    val_cost: float = 0.0
    # The validation of the notes training started from, when the gate measured it before the
    # first update (its "before" point): where the validation line of the summary starts.
    val_baseline: dict[str, float] = field(default_factory=dict)
    val_baseline_at: At | None = None  # the micro-step (epoch, step, group) it was measured before
    # Each gate verdict's "before" (its mean, the works it shares) by micro-step attempt, and the
    # first review asked: the figure that review's header showed is where validation starts
    # (figures.val_start). Later passes of the same notes (a rerun's, the fresh pass of a kept
    # candidate) move `val_baseline`, not what that review said.
    gate_before: dict[MicroKey, tuple[float, int]] = field(default_factory=dict)
    first_review: MicroKey | None = None
    marks: dict[str, Mark] = field(default_factory=dict)  # commit -> the decision that kept or dropped it
    decisions: dict[str, int] = field(default_factory=dict)  # approve / rerun / rollback -> how many
    micro_steps: dict[MicroKey, ev.MicroStep] = field(default_factory=dict)  # without patch, message
    kept: list[MicroKey] = field(default_factory=list)  # micro-steps approved, in order
    attribution: dict[str, dict[str, Any]] = field(default_factory=dict)  # the latest, per note
    pending_review: ev.ReviewRequested | None = None
    # Seconds finished (not skipped) stages took in this session, by stage: (total, how many),
    # the ETA's evidence. A sum, not every duration: a long run would keep thousands.
    stage_seconds: dict[str, tuple[float, int]] = field(default_factory=dict)
    # Stages running now, (stage, work or group) -> since when: the calls in flight.
    in_flight: dict[tuple[str, str | int], _dt.datetime] = field(default_factory=dict)
    started: _dt.datetime | None = None  # the current session's run_started
    ended: _dt.datetime | None = None
    epochs_done: int = 0
    sessions: int = 0
    first_started: str | None = None  # when the run's first session started (the record's time)
    # Works whose latest forward, loss or validation ended in failure: work -> "epoch E step S stage: why".
    failing: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, run_id: str, run_dir: Path, works: list[str] | None = None) -> RunView:
        return cls(run_id=run_id, run_dir=Path(run_dir), works={name: WorkView(name) for name in works or []})

    @property
    def active(self) -> bool:
        return self.status in LIVE

    @property
    def step(self) -> StepView | None:
        return self.steps.get(self.current) if self.current is not None else None

    def loss_steps(self, work: str) -> list[StepKey]:
        """The steps that have a loss report for `work`, in run order."""
        return [key for key, step in self.steps.items() if work in step.reports]

    def fold(self, events: list[ev.Event]) -> RunView:
        for event in events:
            self.apply(event)
        return self

    # -- the fold ------------------------------------------------------------------------

    def apply(self, event: ev.Event) -> RunView:
        """Fold one event in; returns this view."""
        if type(event) is ev.Delta:
            return self  # the hot path: streamed text is said by the app, not kept here
        match event:
            case ev.RunStarted():
                self._run_started(event, when(event))
            case ev.StepStarted():
                self._step_started(event, when(event))
            case ev.Stage():
                self._stage(event, when(event))
            case ev.EpisodeWritten():
                if (row := self._row(event.work)) is not None:
                    row.episodes += 1
            case ev.Call():
                self._call(event)
            case ev.Loss():
                step = self._step_of(event.epoch, event.step)
                step.losses[intern(event.work)] = event.loss
                step.reports[event.work] = event.report
                step.scores[event.work] = event.scores
                if (row := self._row(event.work)) is not None:
                    row.loss = event.loss
            case ev.ValLoss(point="step"):
                self._step_of(event.epoch, event.step).val_losses[intern(event.work)] = event.loss
            case ev.ValLoss(point="before"):
                at = At(event.epoch, event.step, event.group or 0)
                if self.val_baseline_at is None or at < self.val_baseline_at:
                    self.val_baseline, self.val_baseline_at = {}, at
                if at == self.val_baseline_at:
                    self.val_baseline[intern(event.work)] = event.loss
            case ev.TestMeasured():
                self.tests = [t for t in self.tests if t.point != event.point] + [event]
            case ev.GateChecked(before=float() as before):
                self.gate_before[event.at.micro_key] = (before, event.works)
            case ev.ValLoss() | ev.GateChecked() | ev.Summary() | ev.PoolChanged() | ev.HistoryAction():
                pass  # the gate's calls count as calls; the review screen and the pool panes read the rest
            case ev.MicroStep():
                # What it did to the pool, not its patch or message: the review and the history
                # read those from git and the record, and a patch can be most of a step's record.
                kept = replace(event, patch="", message="") if event.patch or event.message else event
                self.micro_steps[event.at.micro_key] = kept
            case ev.ReviewRequested():
                self.pending_review = event
                if self.first_review is None:
                    self.first_review = event.at.micro_key
                self.status = "review"
            case ev.DecisionMade():
                self._decision(event)
            case ev.MicroStepSkipped():
                self._step_of(event.epoch, event.step).stages_done.add(("backward", event.group))
            case ev.Attribution():
                self.attribution = dict(event.notes)
            case ev.StepFinished():
                self._step_finished(event, when(event))
            case ev.Paused():
                self.paused = event.paused
            case ev.Throttled():
                self.throttled = event.throttled
            case ev.BatchState():
                self.batch = "" if event.state == "ended" else batch_text(event)
            case ev.Warning_() | ev.ToolUsed():
                pass  # said, not kept: the app and the console show them as they pass
            case ev.RunFinished():
                self.status, self.reason, self.ended = event.status, event.reason, when(event)
                self.epochs_done = max(self.epochs_done, event.epochs_done)
                self.pending_review = None
                self.paused = False
                self.in_flight = {}
            case _:
                raise TypeError(f"the run model has no rule for {type(event).__name__}")
        return self

    def _row(self, name: str | None) -> WorkView | None:
        if name is None or name in self.val_works or name in self.test_works:
            return None  # validation works have no row: they never train, their numbers are the val curve
        if name not in self.works:
            self.works[name] = WorkView(name)
        return self.works[name]

    def _step_of(self, epoch: int, step: int) -> StepView:
        key = (epoch, step)
        if key not in self.steps:  # a record that starts mid-step (an old or a cut file)
            self.steps[key] = StepView(key, 0, 0, (), [])
        return self.steps[key]

    def _run_started(self, e: ev.RunStarted, at: _dt.datetime | None) -> None:
        self.run_id = e.run_id or self.run_id
        self.run_dir = Path(e.run_dir) if e.run_dir else self.run_dir
        self.val_works |= set(e.val_works)
        self.test_works |= set(e.test_works)
        self.config = dict(e.config)
        self.steps_per_epoch = e.steps_per_epoch if e.steps_per_epoch is not None else self.steps_per_epoch
        self.workers = e.workers or self.workers
        self.status, self.reason, self.paused, self.throttled, self.batch = "running", "", False, False, ""
        self.pending_review, self.started, self.ended, self.current = None, at, None, None
        self.in_flight = {}
        self.sessions += 1
        self.first_started = self.first_started or e.time
        # Durations measured by an earlier session (another machine load, a cache state) do
        # not predict this one's.
        self.stage_seconds = {}
        for name in e.works:
            self._row(name)
        for row in self.works.values():
            row.stage, row.episodes, row.error = "waiting", 0, None
            row.started = row.stage_started = row.ended = None

    def _step_started(self, e: ev.StepStarted, at: _dt.datetime | None) -> None:
        key = e.at.step_key
        if self.current is not None and self.current != key and self.current in self.steps:
            # Only the current step's progress is read (a resumed step starts a new view of
            # it): the last one's (stage, who) pairs would be kept for the length of the run.
            self.steps[self.current].stages_done = set()
        old = self.steps.get(key)
        works, groups = tuple(map(intern, e.works)), [list(map(intern, g)) for g in e.groups]
        step = StepView(key, e.first, e.last, works, groups, started=at)
        if old is not None:  # a resumed step keeps what its earlier session scored
            step.losses, step.reports, step.val_losses = old.losses, old.reports, old.val_losses
            step.scores = old.scores
        self.steps[key] = step
        self.current = key
        for name in e.works:
            self._row(name)
        for name, row in self.works.items():
            row.stage = "waiting" if name in e.works else "sits out"
            row.episodes, row.needed, row.error = 0, e.last - e.first + 1, None
            row.started = row.stage_started = row.ended = None

    def _stage(self, e: ev.Stage, at: _dt.datetime | None) -> None:
        if e.status == "finished" and e.seconds is not None:
            total, count = self.stage_seconds.get(e.stage, (0.0, 0))
            self.stage_seconds[e.stage] = (total + e.seconds, count + 1)
        who: str | int = e.work if e.work is not None else (e.group or 0)
        if e.status == "started" and at is not None:
            self.in_flight[(e.stage, who)] = at
        else:
            self.in_flight.pop((e.stage, who), None)
        step = self._step_of(e.epoch, e.step)
        if e.work is not None and e.status == "failed":
            self.failing[e.work] = f"epoch {e.epoch} step {e.step} {e.stage}: {e.error or 'failed'}"
        elif e.work is not None and e.status != "started":
            self.failing.pop(e.work, None)
        if e.work is not None and (e.work in self.val_works or e.work in self.test_works):
            return
        if e.work is None:  # a group's reduce or backward
            if e.group is not None and (
                (e.stage == "reduce" and e.status != "started") or (e.stage == "backward" and e.status == "skipped")
            ):
                step.stages_done.add((e.stage, e.group))
            return
        row = self._row(e.work)
        assert row is not None
        if e.status == "started":
            row.stage, row.stage_started = e.stage, at
            row.started = row.started or at
        elif e.status == "failed":
            row.stage, row.error, row.ended = "failed", e.error, at
            step.failed.add(intern(e.work))
            step.stages_done |= {("forward", e.work), ("loss", e.work)}  # a failed work has nothing left to run
        else:
            step.stages_done.add((e.stage, e.work))
            if e.stage == "forward" and e.status == "skipped":
                # Written in an earlier session: the episodes are all there, though this
                # session saw none of their `episode_written` events.
                row.episodes = max(row.episodes, row.needed)
            if e.stage == "loss":
                row.stage, row.ended = "done", at

    def _call(self, e: ev.Call) -> None:
        tokens = sum(getattr(e, name) for name in TOKEN_FIELDS)
        self.tokens += tokens
        if e.cost_usd is None:
            self.cost_known = False
        else:
            self.cost += e.cost_usd
            if e.work in self.val_works:
                self.val_cost += e.cost_usd
        row = self._row(e.work)
        if row is not None:
            row.tokens += tokens
            if e.cost_usd is not None:
                row.cost = (row.cost or 0.0) + e.cost_usd

    def _decision(self, e: ev.DecisionMade) -> None:
        self.marks[e.after] = Mark(e.decision, e.by)
        self.decisions[e.decision] = self.decisions.get(e.decision, 0) + 1
        if e.decision == "approve":
            self.kept.append(e.at.micro_key)
        if e.decision != "rerun":  # a rerun runs the group's backward again
            self._step_of(e.epoch, e.step).stages_done.add(("backward", e.group))
        self.pending_review = None
        if self.status == "review":
            self.status = "running"

    def _step_finished(self, e: ev.StepFinished, at: _dt.datetime | None) -> None:
        step = self._step_of(e.epoch, e.step)
        step.finished, step.ended = True, at
        step.failed |= set(map(intern, e.failed))
        step.mean_loss, step.works_in_mean = e.mean_loss, e.works_in_mean
        step.val_mean_loss, step.val_works_in_mean = e.val_mean_loss, e.val_works_in_mean
        self.epochs_done = max(self.epochs_done, e.epoch)


def batch_text(event: ev.BatchState) -> str:
    """One line for a batch's state: `loss e0 s1 msgbatch_01.. in_progress: 2 processing, 1 succeeded`."""
    counts = [
        f"{n} {name}"
        for name, n in (
            ("processing", event.processing),
            ("succeeded", event.succeeded),
            ("errored", event.errored),
            ("expired", event.expired),
            ("canceled", event.canceled),
        )
        if n
    ]
    return f"{event.purpose} e{event.epoch} s{event.step} {event.batch_id} {event.state}" + (
        f": {', '.join(counts)}" if counts else ""
    )
