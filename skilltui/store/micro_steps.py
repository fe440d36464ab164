"""The one reader of a run's micro-steps: every reader of what an update did asks `micro_step_records`.

A micro-step is recorded three ways, each kept for its own reason: its attempt files
(`epoch<E>/step<S>/backward/g<G>/`: `batch.json`, `attempt<N>/checked.json`,
`attempt<N>/review.json`, `attempt<N>/failed.json`, `commit.txt`; `micro_records.py` writes
them), the event log (its `micro_step` and `decision` events, and the label the run gave it),
and the provenance trailers on its decided commit (`model/trailers.py`, with the git notes
of decisions made later). Readers once joined them each their own way (the backward
prompt from `commit.txt`, the history from `checked.json`, the report from the events,
`blame` from the trailers) and could drift apart after a resume or a damaged file. Here
they are joined once:

- `micro_step_records(run)`: every micro-step of the run, each a `MicroStepRecords` holding
  its attempts as the files record them (`attempts`), the same attempts as the event log
  told them (`told`: what the report pages show), its outcome (`commit.txt`), the attempts
  that failed their checks and the reviewer's notes;
- `step_records(run, key)`: one step's micro-steps from their files alone, for the backward
  prompt, which reads them at every micro-step and keeps settled steps (`settled.py`);
- `kept_updates(run, epoch)` and `step_end(run, key)`: what the engine asks of the outcomes
  (`commit.txt`) alone: which micro-steps of an epoch kept an update (consolidation), and
  the commit a step ended on (validation);
- `commit_trailers(run, sha)`: the trailers of one commit with its later notes.

A file that cannot be read leaves out what it would have said (a record edited by hand,
a write cut short): readers of a run's history must never fail on one damaged attempt.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..model import events as ev
from ..model import trailers as tr
from ..model.commits import MicroStepRecord, attempt_record, parse_body, plain_label
from ..model.parse import read_run
from ..model.view import StepKey
from .run_folder import OUTCOME, Run, read_json

GroupKey = tuple[int, int, int]  # (epoch, step, group)
AttemptKey = tuple[int, int, int, int]  # (epoch, step, group, attempt)
_GROUP = re.compile(r"g(\d+)")
_ATTEMPT = re.compile(r"attempt(\d+)")
_EPOCH = re.compile(r"epoch(\d+)")
_STEP = re.compile(r"step(\d+)")
_TRANSCRIPT = re.compile(r"attempt(\d+)")  # the attempt folder a call's transcript is kept in


@dataclass(frozen=True)
class MicroStepRecords:
    """Everything the run recorded about one micro-step (its group's update at one step)."""

    epoch: int
    step: int
    group: int
    label: str  # the run's own label (its last `micro_step` event's), or the plain one
    folder: Path  # backward/g<G>
    works: tuple[str, ...] = ()  # whose loss reports it acted on (batch.json)
    attempts: tuple[MicroStepRecord, ...] = ()  # each attempt that passed its checks, with its review
    told: tuple[MicroStepRecord, ...] = ()  # the attempts as the event log tells them, in its order
    outcome: MicroStepRecord | None = None  # commit.txt: done; its `attempt` is how many attempts it took
    failures: tuple[tuple[int, str], ...] = ()  # (attempt, why) for each attempt that failed its checks
    rerun_notes: tuple[tuple[int, str], ...] = ()  # (attempt, note) for each attempt sent back with a note
    verdicts: dict[int, ev.GateChecked] = field(default_factory=dict)  # attempt -> the gate's last verdict on it
    decided: tuple[Decided, ...] = ()  # its decisions as the event log told them, by attempt

    @property
    def rejected(self) -> list[MicroStepRecord]:
        """The attempts a reviewer refused: rolled back, sent back for a rerun, or a candidate not chosen."""
        return [a for a in self.attempts if a.decision in ("rollback", "rerun", "dropped")]


def _read(path: Path) -> Any:
    """A record's JSON, or None when it is missing or damaged."""
    try:
        return read_json(path)
    except (OSError, ValueError):
        return None


def _numbered(folder: Path, pattern: re.Pattern[str]) -> list[int]:
    try:
        with os.scandir(folder) as entries:
            return sorted(int(m.group(1)) for e in entries if (m := pattern.fullmatch(e.name)) and e.is_dir())
    except OSError:
        return []


def _outcome(at: GroupKey, label: str, folder: Path, notes: tuple[str, ...]) -> MicroStepRecord | None:
    """The micro-step's final record (`commit.txt`): its decision, or why it was skipped."""
    record = _read(folder / OUTCOME)
    if not isinstance(record, dict):
        return None
    message = str(record.get("message") or "")
    try:
        attempts = int(record.get("attempt") or 1)
    except (TypeError, ValueError):  # a record edited by hand: one attempt is the least it took
        attempts = 1
    return MicroStepRecord(
        *at,
        attempts,
        label=label,
        folder=folder,
        decision=str(record.get("decision", "")),
        by=str(record.get("by") or ""),
        subject=str(record.get("subject", "")),
        message=message,
        # The commit with the decision's trailers (provenance.py); a run from before them kept the agent's.
        after=str(record.get("attempt_commit") or record.get("after", "")),
        prediction=parse_body(f"subject\n{message}")["prediction"] if message else "",
        reason=str(record.get("reason", "")),
        rerun_notes=notes,
    )


def read_micro_step(run: Run, at: GroupKey, labels: dict[tuple[int, ...], str] | None = None) -> MicroStepRecords:
    """One micro-step's files, labelled by `labels` ((e, s, g, a) per attempt, (e, s, g) for the
    micro-step: the run's own, from its events) or by the plain words where the run gave none."""
    labels = labels or {}
    folder = run.backward_dir(*at)
    label = labels.get(at) or plain_label(*at)
    batch = _read(folder / "batch.json")
    works = tuple(b.get("work", "?") for b in batch if isinstance(b, dict)) if isinstance(batch, list) else ()
    attempts: list[MicroStepRecord] = []
    failures: list[tuple[int, str]] = []
    notes: list[tuple[int, str]] = []
    for n in _numbered(folder, _ATTEMPT):
        adir = folder / f"attempt{n}"
        review = _read(adir / "review.json")
        review = review if isinstance(review, dict) else {}
        if review.get("decision") == "rerun" and review.get("note"):
            notes.append((n, str(review["note"])))
        failed = _read(adir / "failed.json")
        if isinstance(failed, dict):
            failures.append((n, str(failed.get("reason", ""))))
        checked = _read(adir / "checked.json")
        if isinstance(checked, dict):
            own = labels.get((*at, n)) or plain_label(*at)
            attempts.append(replace(attempt_record((*at, n), own, folder, checked, review), works=list(works)))
    outcome = _outcome(at, label, folder, tuple(note for _, note in notes))
    return MicroStepRecords(
        *at,
        label=label,
        folder=folder,
        works=works,
        attempts=tuple(attempts),
        outcome=outcome,
        failures=tuple(failures),
        rerun_notes=tuple(notes),
    )


def _groups(run: Run, key: StepKey) -> list[GroupKey]:
    return [(*key, g) for g in _numbered(run.step_dir(*key) / "backward", _GROUP)]


def step_records(run: Run, key: StepKey) -> list[MicroStepRecords]:
    """The micro-steps of one step from their files alone (plain labels), by group."""
    return [read_micro_step(run, at) for at in _groups(run, key)]


def _decided(run: Run, key: StepKey) -> list[tuple[int, Path]]:
    """The step's decided micro-steps, by group: each with its final record (`commit.txt`)."""
    records = [(at[2], run.backward_dir(*at) / OUTCOME) for at in _groups(run, key)]
    return [(group, path) for group, path in records if path.exists()]


def kept_updates(run: Run, epoch: int) -> list[tuple[GroupKey, str]]:
    """The micro-steps of an epoch that kept an update, each with the commit it left the pool on:
    approved, and ending on another commit than it began from. A damaged record kept nothing."""
    found = []
    for step in _numbered(run.root / f"epoch{epoch}", _STEP):
        for group, path in _decided(run, (epoch, step)):
            record = _read(path)
            if isinstance(record, dict) and record.get("decision") == "approve":
                if record.get("after") != record.get("before"):
                    found.append(((epoch, step, group), str(record["after"])))
    return found


def step_end(run: Run, key: StepKey) -> str | None:
    """The commit a step ended on: the one its last decided micro-step (highest group) left the pool
    on, or None when none is decided. Read strictly: a damaged record must not move the step's
    validation point to another tree."""
    decided = _decided(run, key)
    return str(read_json(decided[-1][1])["after"]) if decided else None


@dataclass(frozen=True)
class Decided:
    """One decision as the event log told it: the attempt's label, the event, and the gate's verdict
    on the attempt when it was decided (None without --gate)."""

    label: str
    event: ev.DecisionMade
    gate: ev.GateChecked | None


@dataclass
class Told:
    """The micro-steps as the event log tells them, folded one event at a time (`apply`): what a
    reader that follows the log as it grows (the MLflow tracker) and the whole run's reader share.

    An attempt is told by its `micro_step` event (what it committed) and its `decision` event,
    which names only the attempt the reviewer chose: a candidate not chosen stays as its
    `micro_step` event left it, as the report has always shown it. Each decision is kept
    once, the first told (a resumed run emits one only when the log lacks it).
    """

    attempts: dict[AttemptKey, MicroStepRecord] = field(default_factory=dict)
    labels: dict[tuple[int, ...], str] = field(default_factory=dict)  # (e, s, g, a) and (e, s, g): micro_step's
    verdicts: dict[AttemptKey, ev.GateChecked] = field(default_factory=dict)  # the last verdict on each attempt
    decided: dict[AttemptKey, Decided] = field(default_factory=dict)
    _asked: dict[AttemptKey, str] = field(default_factory=dict)  # labels a review request gave
    # What the backward calls cost (None: no price known): by the attempt whose transcript holds
    # the call, and by group for a call kept without one, which no attempt can be told apart by.
    _paid: dict[AttemptKey, list[float | None]] = field(default_factory=dict)
    _paid_by_group: dict[GroupKey, list[float | None]] = field(default_factory=dict)

    def cost(self, key: AttemptKey) -> float | None:
        """What an attempt's calls cost, with its group's calls kept without a transcript (None: a price unknown)."""
        paid = self._paid.get(key, []) + self._paid_by_group.get(key[:3], [])
        return None if None in paid else round(sum(c for c in paid if c is not None), 6)

    def apply(self, e: ev.Event) -> None:
        match e:
            case ev.Call(epoch=int(epoch), step=int(step), group=int(group)) if e.role in ("backward", "consolidate"):
                found = _TRANSCRIPT.search(e.transcript or "")
                if found is None:
                    self._paid_by_group.setdefault((epoch, step, group), []).append(e.cost_usd)
                else:
                    self._paid.setdefault((epoch, step, group, int(found[1])), []).append(e.cost_usd)
            case ev.MicroStep():
                key = (e.epoch, e.step, e.group, e.attempt)
                self.labels[key] = self.labels[key[:3]] = self._asked[key] = e.label
                self.attempts[key] = MicroStepRecord(
                    *key,
                    e.label,
                    Path(),  # the folder is the run's: set by `micro_step_records`
                    subject=e.subject,
                    message=e.message,
                    after=e.after,
                    added=tuple(e.added),
                    changed=tuple(e.changed),
                    removed=tuple(e.removed),
                )
            case ev.ReviewRequested():
                self._asked[(e.epoch, e.step, e.group, e.attempt)] = e.label
            case ev.GateChecked():
                self.verdicts[(e.epoch, e.step, e.group, e.attempt)] = e
            case ev.DecisionMade():
                key = (e.epoch, e.step, e.group, e.attempt)
                if key not in self.decided:
                    self.decided[key] = Decided(self._asked.get(key, ""), e, self.verdicts.get(key))
                if (m := self.attempts.get(key)) is not None:
                    # The decided commit carries the provenance trailers: it is the one kept.
                    self.attempts[key] = replace(
                        m, decision=e.decision, by=e.by, reason=e.reason, note=e.note, after=e.after or m.after
                    )

    def by_group(self) -> dict[GroupKey, list[MicroStepRecord]]:
        """The told attempts of each micro-step, micro-steps and attempts in the order the log first told them."""
        found: dict[GroupKey, list[MicroStepRecord]] = {}
        for (epoch, step, group, _), record in self.attempts.items():
            found.setdefault((epoch, step, group), []).append(record)
        return found


def micro_step_records(run: Run, events: Sequence[ev.Event] | None = None) -> list[MicroStepRecords]:
    """Every micro-step of the run: in the order the event log first tells of them, then those only
    its folders hold (a record the log lost) in run order.

    `events` is the run's event log when the caller has read it already; otherwise it is read here.
    """
    if events is None:
        events = read_run(run.events_path).events
    fold = Told()
    for event in events:
        fold.apply(event)
    told = fold.by_group()
    on_disk = [at for key in _step_keys(run) for at in _groups(run, key)]
    order = list(told) + [at for at in on_disk if at not in told]
    found: list[MicroStepRecords] = []
    verdicts: dict[GroupKey, dict[int, ev.GateChecked]] = {}
    for (epoch, step, group, attempt), verdict in fold.verdicts.items():
        verdicts.setdefault((epoch, step, group), {})[attempt] = verdict
    decided: dict[GroupKey, list[Decided]] = {}
    for key in sorted(fold.decided):
        decided.setdefault(key[:3], []).append(fold.decided[key])
    for at in order:
        record = read_micro_step(run, at, fold.labels)
        told_here = tuple(replace(m, folder=record.folder) for m in told.get(at, []))
        found.append(replace(record, told=told_here, verdicts=verdicts.get(at, {}), decided=tuple(decided.get(at, ()))))
    return found


def _step_keys(run: Run) -> list[StepKey]:
    keys = []
    for epoch in _numbered(run.root, _EPOCH):
        keys += [(epoch, step) for step in _numbered(run.root / f"epoch{epoch}", _STEP)]
    return keys


def commit_trailers(run: Run, sha: str) -> tr.Provenance:
    """The Skilltui trailers of a pool commit, and the decisions a git note added after it
    (empty for a commit made outside training, or before trailers existed)."""
    pool = run.pool
    return tr.parse(pool.message(sha), pool.notes_of(sha, tr.NOTES_REF))
