"""What a run has done so far, read from its events: the facts behind `skilltui runs` and the review header.

Everything here comes from `events.jsonl` and the run lock, the run's own records, so a
run explains itself after its works moved on and while another process still trains it.
The events are folded by the run model (`RunView`), the same fold the live app and the
console render, so `runs`, `review` and the app cannot disagree about a run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.at import StepKey
from ..model.figures import Mean, finished_means, loss_change_works, loss_changes, val_mean
from ..model.parse import RunRecord
from ..model.summary import estimated_usd, test_delta_text
from ..model.tail import tail_of
from ..model.view import RunView
from ..store.run_folder import Run, is_locked, read_json


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
    step_means: dict[StepKey, Mean] = field(default_factory=dict)  # finished steps, as `figures.finished_means`
    latest_works: int | None = None  # how many works the latest mean covers
    latest_val: float | None = None  # mean validation loss after the latest step
    latest_val_works: int | None = None
    val_cost_usd: float = 0.0
    estimate_usd: float | None = None  # what `--estimate` forecast when the run started (estimate.json)
    # Works whose latest forward or loss failed: work -> "epoch E step S stage: why".
    failing: dict[str, str] = field(default_factory=dict)
    # Per scored step: its mean and the next scored step's, over the works both scored.
    changes: dict[StepKey, tuple[float, float]] = field(default_factory=dict, repr=False)
    # Per scored step: the works `loss_change` covers (a step's works, not only a micro-step's group).
    covers: dict[StepKey, tuple[str, ...]] = field(default_factory=dict, repr=False)
    # What reading events.jsonl left out (lines that are no event, exact copies), or None.
    skipped: str | None = None
    test_delta: str | None = None  # the latest test point's `Δ -0.041 [-0.060, -0.022]` (--test-work)

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
        mean = self.step_means.get(key)
        return (mean.value if mean is not None else None), None


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


def run_status(run: Run) -> RunStatus:
    """The run at a glance, its events file tailed (read on from the last look); one read at hand: `status_of`."""
    tail = tail_of(run.events_path)
    with tail.lock:
        return status_of(run, tail.poll(), tail.record)


def status_of(run: Run, view: RunView, record: RunRecord | None = None) -> RunStatus:
    """The run at a glance from a fold of its events; `record`, the read they came from, says what it left out."""
    try:
        config = read_json(run.config_path)
    except (OSError, ValueError):
        config = {}
    if not isinstance(config, dict):  # valid JSON, but not the settings a run writes
        config = {}
    means = finished_means(view)
    last = view.steps[max(means, key=list(view.steps).index)] if means else None
    latest = means[last.key] if last is not None else None
    latest_val = val_mean(last) if last is not None else None
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
        step_means=dict(sorted(means.items())),
        # Sessions before the count existed did not record it: unknown, not zero.
        latest_works=(latest.works or None) if latest is not None else None,
        latest_val=latest_val.value if latest_val is not None else None,
        latest_val_works=(latest_val.works or None) if latest_val is not None else None,
        val_cost_usd=round(view.val_cost, 6),
        estimate_usd=estimated_usd(run.root),
        failing=failing_works(view),
        changes=loss_changes(view),
        covers=loss_change_works(view),
        skipped=record.warning() if record is not None else None,
        test_delta=test_delta_text(view),
    )


def failing_works(view: RunView) -> dict[str, str]:
    """Each work whose latest forward or loss ended in failure, with where and why."""
    return {work: why for work, why in sorted(view.failing.items())}
