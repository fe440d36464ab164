"""The facts a run is made of: one typed class per event kind, and the one way back from JSON.

The engine emits these; `events.jsonl` keeps them as one JSON object per line (`kind`, a UTC
`time`, then the fields); every interface folds them into a `RunView`. `parse_event` turns a
line back into its class and refuses a shape it does not know, saying which, so a renderer
never guesses at a dict. Fields added since a run was recorded have defaults, and fields
dropped since are named in their kind's `retired`, so an old `events.jsonl` still reads.
No Textual and no engine imports here: the engine, the run model and the apps all stand on it.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, ClassVar, dataclass_transform

from .at import At
from .plain import plain_fields


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(field,))
@dataclass(frozen=True, kw_only=True)
class Event:
    """Base of every event. `kind` names the shape; `time` is when it happened (UTC).

    Every subclass is a frozen, keyword-only dataclass without saying so, and names its
    kind among its bases: `class Paused(Event, kind="paused")`. A base that names no kind
    (`AtStep`, `AtAttempt`, `ByAgent`) is a shared place, not a kind: `parse` skips it.

    A field a kind no longer has, but that files written before still hold, is named in
    `retired` (`class ToolUsed(ByAgent, kind="tool", retired={"ok"})`): reading drops it,
    while a field nobody ever wrote is still refused.
    """

    kind: ClassVar[str] = "event"
    retired: ClassVar[frozenset[str]] = frozenset()
    time: str = field(default_factory=utc_now)

    def __init_subclass__(cls, kind: str | None = None, retired: frozenset[str] | set[str] = frozenset(), **kw: Any):
        super().__init_subclass__(**kw)
        if kind is not None:
            cls.kind = kind
        cls.retired = cls.retired | frozenset(retired)
        dataclass(frozen=True, kw_only=True)(cls)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **plain_fields(self)}


# Shared places, declared once: a kind that gains one says it by its base, one shape for all.
class AtStep(Event):
    """Happened in step `step` of epoch `epoch`."""

    epoch: int
    step: int

    @property
    def at(self) -> At:
        """The place as the one coordinate (with the group, attempt and work a kind has)."""
        return At.of(self)


class AtAttempt(AtStep):
    """About attempt `attempt` of group `group`'s micro-step in that step."""

    group: int
    attempt: int


class ByAgent(Event):
    """From an agent working for one work (forward, loss) or one group (reduce, backward)."""

    work: str | None = None
    group: int | None = None
    # The backward attempt (a candidate, with --candidates) the agent works for: parallel
    # candidates' tool events would otherwise be identical lines, dropped on reading as duplicates.
    attempt: int | None = None


class RunStarted(Event, kind="run_started"):
    run_id: str
    run_dir: str
    works: list[str]
    config: dict[str, Any]
    resumed: bool
    val_works: list[str] = field(default_factory=list)
    # The model each role calls (role -> model id), said at start so nobody pays for a default unawares.
    models: dict[str, str] = field(default_factory=dict)
    backend: str = ""
    # Steps an epoch has for these works (an epoch ends at the first step no work reaches): progress is a fraction.
    steps_per_epoch: int | None = None  # None: a run recorded before it was
    workers: int = 0  # works trained at once (--workers), so an ETA can tell waiting from working
    test_works: list[str] = field(default_factory=list)  # --test-work: no row, no prompt, only `test` events


class StepStarted(AtStep, kind="step_started"):
    first: int
    last: int
    works: list[str]
    groups: list[list[str]]


class Stage(AtStep, ByAgent, kind="stage"):
    """A stage of one work (forward, loss) or one group (reduce, backward) changed state.

    `status`: started, finished, skipped (its artifacts were already there), failed (`error` says why).
    """

    stage: str
    status: str
    attempt: int | None = None
    seconds: float | None = None
    error: str | None = None


class Delta(ByAgent, kind="delta"):
    """A piece of an agent's streamed output. Not written to events.jsonl."""

    role: str
    text: str
    attempt: int | None = None  # a backward attempt's number: K candidates stream at once


class ToolUsed(ByAgent, kind="tool", retired={"ok"}):
    """An agent used a file tool. `error` says why when the sandbox or the tool refused; None when it ran.

    Runs recorded before wrote `ok` beside `error` as well; it was always `error is None`.
    """

    role: str
    tool: str
    path: str
    error: str | None = None
    attempt: int | None = None  # a backward attempt's: K candidates reading one note at once are K events

    @property
    def ok(self) -> bool:
        return self.error is None


class EpisodeWritten(AtStep, kind="episode_written"):
    work: str
    episode: int
    path: str


class Call(Event, kind="call"):
    """One backend call finished: its token usage and, where the price is known, its cost."""

    role: str
    backend: str
    model: str | None
    epoch: int | None = None
    step: int | None = None
    work: str | None = None
    group: int | None = None
    attempt: int | None = None  # the backward attempt (candidate) that made the call
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    cost_usd: float | None = None
    seconds: float = 0.0
    transcript: str | None = None
    turns: int = 1  # model requests the call made (every backend counts them the same way)


class Loss(AtStep, kind="loss"):
    """A scored work-step. `loss` is in [0, 1], lower is better; `scores` is its breakdown."""

    work: str
    loss: float
    scores: dict[str, float]
    report: str
    # The engine's own number and the judge's rubric; `loss` differs from `engine_loss` only
    # with --judge-weight. `rubric_error` says why no rubric was used (missing, malformed).
    engine_loss: float | None = None
    rubric: dict[str, Any] | None = None
    rubric_error: str | None = None


class Summary(AtStep, kind="summary"):
    group: int
    works: list[str]
    path: str


class MicroStep(AtAttempt, kind="micro_step"):
    """A backward attempt passed its checks (or failed them) and produced a commit."""

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
    # The pool's size in tokens (core.tokens) as the attempt began and after its commit; None before --pool-budget.
    pool_tokens_before: int | None = None
    pool_tokens: int | None = None
    # "update" (a group's backward pass) or "consolidation" (an epoch's end); older runs: update.
    purpose: str = "update"


class ReviewRequested(AtAttempt, kind="review_requested"):
    label: str
    before: str
    after: str

    @property
    def key(self) -> At:
        """The micro-step attempt this review is about."""
        return At(self.epoch, self.step, self.group, self.attempt)


class DecisionMade(AtAttempt, kind="decision"):
    """What a reviewer decided about a micro-step: approve, rerun or rollback, by human or auto.

    With `--gate`, the figures it was made beside: the paired delta, its interval (at the gate event's
    `level`; `gate_confidence` is the decision's), n (0 without a gate, and in older runs).
    """

    decision: str
    by: str
    before: str
    after: str
    note: str = ""
    ref: str | None = None
    reason: str = ""
    gate_n: int = 0
    gate_delta: float | None = None
    gate_low: float | None = None
    gate_high: float | None = None
    gate_confidence: float | None = None


class MicroStepSkipped(AtStep, kind="micro_step_skipped"):
    """A micro-step failed every attempt (`attempts`, the last `reason`): its group's update is skipped.

    The pool stays at `before`; training goes on (unless `--strict`, which stops the run instead).
    """

    group: int
    attempts: int
    before: str
    reason: str
    label: str = ""


class Attribution(AtStep, kind="attribution"):
    """Per-note attribution from the read traces, up to this step (see `attribution.py`).

    `notes` maps a note's path to passes (forward passes that read it), with / without (mean
    loss of the episodes written with / without it) and with_n / without_n (how many).
    """

    notes: dict[str, dict[str, Any]]


class PoolChanged(Event, kind="pool_changed"):
    """The pool's HEAD moved (a commit, a reset, a revert). Panes showing the pool refresh."""

    head: str
    reason: str


class StepFinished(AtStep, kind="step_finished"):
    """A step ended. `mean_loss` is over the `works_in_mean` works scored this step (the ones that
    took part and did not fail); `val_mean_loss` over `val_works_in_mean` validation works."""

    mean_loss: float | None
    failed: list[str]
    works_in_mean: int = 0
    val_mean_loss: float | None = None
    val_works_in_mean: int = 0


class ValLoss(AtStep, kind="val_loss"):
    """A validation work scored with the pool as it stood (`commit`). Never read by backward or reduce.

    `point`: "step" (after the step's updates: the validation curve), "micro" (the gate, after
    micro-step `group` attempt `attempt`, before its review) or "before" (the pool a gated
    micro-step started from, when nothing had validated it yet). `reused` is True when the
    same notes were already validated, so no call was made.
    """

    work: str
    loss: float
    scores: dict[str, float]
    point: str = "step"
    group: int | None = None
    attempt: int | None = None
    commit: str = ""
    report: str = ""
    reused: bool = False
    samples: int = 1  # passes behind `loss` (its mean over them); older runs had one
    spread: float | None = None  # the sample standard deviation of those passes' losses


class TestMeasured(Event, kind="test"):
    """A test point (engine/validation/test_points.py): `start` before the first update, `e<E>` after epoch E.

    `figure` is the paired comparison of the pool at `commit` with the start pool (None at
    `start`): start, trained, delta, low, high, confidence, works, episodes, passes. Read by
    the summary, `runs`, `report`, `compare` and MLflow; never by a prompt or the gate.
    """

    __test__ = False
    point: str
    epoch: int | None
    commit: str
    start: float | None
    figure: dict[str, Any] | None = None
    text: str = ""
    cost_usd: float = 0.0


class GateChecked(AtAttempt, kind="gate", retired={"tolerance"}):
    """The gate's verdict on one micro-step: mean validation loss before and after it.

    `advice` is "keep" or "rollback" ("none" when validation could not measure both sides);
    `works` is how many validation works the two means share; `cost_usd` what the extra
    validation calls cost. Since the interval rule: `n` paired deltas, their mean `delta`, the
    interval `low`..`high` at `level` (each look's; `confidence` is the decision's), `passes` per
    side; older runs recorded none of these and read with the defaults. The retired `tolerance`
    of runs before format 1 was 0, or a consolidation's margin (which `reason` says).
    """

    before: float | None
    after: float | None
    works: int
    advice: str
    reason: str
    cost_usd: float = 0.0
    n: int = 0
    delta: float | None = None
    low: float | None = None
    high: float | None = None
    confidence: float | None = None
    passes: int = 0
    level: float | None = None


class Paused(Event, kind="paused"):
    paused: bool


class Warning_(Event, kind="warning"):
    message: str
    work: str | None = None


class Throttled(Event, kind="throttle"):
    """The API rate-limited the key (429): fewer calls in flight for a while, or the limit lifted."""

    throttled: bool
    limit: int | None = None  # calls allowed in flight while throttled
    wait_seconds: float = 0.0  # no new call starts before this wait is over
    reason: str = ""


class BatchState(AtStep, kind="batch"):
    """A step's loss-judge (or reduce) calls sent as one Message Batch (`--batch`): where it stands."""

    purpose: str  # loss or reduce
    batch_id: str
    state: str  # submitted, in_progress, ended, resumed
    processing: int = 0
    succeeded: int = 0
    errored: int = 0
    expired: int = 0
    canceled: int = 0


class HistoryAction(Event, kind="history"):
    """A person changed the pool's history after the fact (revert, reset) from `skilltui review`."""

    action: str
    target: str
    before: str
    after: str
    ref: str | None = None
    by: str = "human"


class RunFinished(Event, kind="run_finished"):
    """The run ended. `status`: finished; stopped (a limit or a person stopped it between stages);
    interrupted (cancelled mid-stage: calls in flight were dropped); failed (`reason` says why)."""

    status: str
    reason: str = ""
    epochs_done: int = 0
    cost_usd: float | None = None
