"""What a run has done so far, read from its events: the facts behind `skilltui runs` and the review header.

Everything here comes from `events.jsonl` and the run lock, the run's own records, so a
run explains itself after its works moved on and while another process still trains it.
The events are folded by the run model (`RunView`), the same fold the live app and the
console render, so `runs`, `review` and the app cannot disagree about a run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.run import Run, is_locked, read_json
from ..model.figures import finished_means, next_changes
from ..model.parse import EventShapeError, parse_event
from ..model.summary import estimated_usd
from ..model.tail import tail_of
from ..model.view import RunView


@dataclass
class RunStatus:
    """One run at a glance. `state` is running, finished, stopped: why, failed: why, interrupted or not started."""

    id: str
    works: list[str]
    epochs: int | None
    epochs_done: int
    steps_done: int
    approved: int
    rerun: int
    rolled_back: int
    latest_loss: float | None
    cost_usd: float
    cost_known: bool
    state: str
    started: str | None
    step_means: dict[tuple[int, int], float] = field(default_factory=dict)
    latest_works: int | None = None  # how many works the latest mean covers
    latest_val: float | None = None  # mean validation loss after the latest step
    latest_val_works: int | None = None
    val_cost_usd: float = 0.0
    estimate_usd: float | None = None  # what `--estimate` forecast when the run started (estimate.json)
    # Works whose latest forward or loss failed: work -> "epoch E step S stage: why".
    failing: dict[str, str] = field(default_factory=dict)
    # Per scored step: its mean and the next scored step's, over the works both scored.
    changes: dict[tuple[int, int], tuple[float, float]] = field(default_factory=dict, repr=False)

    @property
    def running(self) -> bool:
        return self.state == "running"

    def loss_change(self, key: tuple[int, int]) -> tuple[float | None, float | None]:
        """Mean loss of step `key` and of the next scored step, over the works both scored.

        This is what a micro-step that learned from step `key` is credited with; a mean
        over fewer works (one sat out or failed) would credit it with a change it did not make.
        """
        if key in self.changes:
            return self.changes[key]
        return self.step_means.get(key), None


def loss_changes(view: RunView) -> dict[tuple[int, int], tuple[float, float]]:
    return {key: (before, after) for key, (before, after, _) in next_changes(view, finished_only=True).items()}


def step_means(view: RunView) -> dict[tuple[int, int], float]:
    """Mean loss of every finished step, in (epoch, step) order; a resumed step keeps its latest value."""
    return {key: mean.value for key, mean in sorted(finished_means(view).items())}


def run_state(run: Run, view: RunView) -> str:
    """running while a process holds the lock; else what the last session's run_finished said."""
    if is_locked(run.root):
        return "running"
    if view.sessions == 0:
        return "not started"
    if view.active:
        # A session that started and never said how it ended was killed (or crashed) mid-run.
        return "interrupted"
    reason = view.reason.strip()
    return f"{view.status}: {reason}" if reason and view.status != "finished" else view.status


def fold_records(events: list[dict[str, Any]]) -> RunView:
    """The run model of a run's recorded events (dicts as `read_events` gives them); unknown shapes are left out."""
    view = RunView()
    for data in events:
        try:
            view.apply(parse_event(data))
        except EventShapeError:
            continue
    return view


def run_status(run: Run, events: list[dict[str, Any]] | None = None) -> RunStatus:
    """The run at a glance; without `events`, its events file is tailed (read on from the last look)."""
    if events is not None:
        return status_of(run, fold_records(events))
    tail = tail_of(run.events_path)
    with tail.lock:
        return status_of(run, tail.poll())


def status_of(run: Run, view: RunView) -> RunStatus:
    try:
        config = read_json(run.config_path)
    except (OSError, ValueError):
        config = {}
    if not isinstance(config, dict):  # valid JSON, but not the settings a run writes
        config = {}
    means = finished_means(view)
    last = view.steps[max(means, key=list(view.steps).index)] if means else None
    latest = means[last.key] if last is not None else None
    return RunStatus(
        id=run.id,
        works=list(config.get("works") or []),
        epochs=config.get("epochs"),
        epochs_done=max(view.epochs_done, len({epoch for epoch, _ in means}) - 1, 0),
        steps_done=len(means),
        approved=view.decisions.get("approve", 0),
        rerun=view.decisions.get("rerun", 0),
        rolled_back=view.decisions.get("rollback", 0),
        latest_loss=latest.value if latest is not None else None,
        cost_usd=view.cost,
        cost_known=view.cost_known,
        state=run_state(run, view),
        started=view.first_started,
        step_means={key: mean.value for key, mean in sorted(means.items())},
        # Sessions before the count existed did not record it: unknown, not zero.
        latest_works=(latest.works or None) if latest is not None else None,
        latest_val=last.val_mean_loss if last is not None else None,
        latest_val_works=(last.val_works_in_mean or None) if last is not None else None,
        val_cost_usd=round(view.val_cost, 6),
        estimate_usd=estimated_usd(run.root),
        failing=failing_works(view),
        changes=loss_changes(view),
    )


def failing_works(view: RunView) -> dict[str, str]:
    """Each work whose latest forward or loss ended in failure, with where and why."""
    return {work: why for work, why in sorted(view.failing.items())}
