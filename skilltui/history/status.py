"""What a run has done so far, read from its events: the facts behind `skilltui runs` and the review header.

Everything here comes from `events.jsonl` and the run lock, the run's own records, so a
run explains itself after its works moved on and while another process still trains it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.events import read_events
from ..engine.run import Run, is_locked, read_json


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
    # Works whose latest forward or loss failed: work -> "epoch E step S stage: why".
    failing: dict[str, str] = field(default_factory=dict)

    @property
    def running(self) -> bool:
        return self.state == "running"


def step_means(events: list[dict[str, Any]]) -> dict[tuple[int, int], float]:
    """Mean loss of every finished step, in (epoch, step) order; a resumed step keeps its latest value."""
    means: dict[tuple[int, int], float] = {}
    for e in events:
        if e.get("kind") == "step_finished" and e.get("mean_loss") is not None:
            means[(int(e["epoch"]), int(e["step"]))] = float(e["mean_loss"])
    return dict(sorted(means.items()))


def run_state(run: Run, events: list[dict[str, Any]]) -> str:
    """running while a process holds the lock; else what the last session's run_finished said."""
    if is_locked(run.root):
        return "running"
    last_start = max((i for i, e in enumerate(events) if e.get("kind") == "run_started"), default=None)
    if last_start is None:
        return "not started"
    finished = [e for e in events[last_start:] if e.get("kind") == "run_finished"]
    if not finished:
        # A session that started and never said how it ended was killed (or crashed) mid-run.
        return "interrupted"
    last = finished[-1]
    status = str(last.get("status", "finished"))
    reason = str(last.get("reason") or "").strip()
    return f"{status}: {reason}" if reason and status != "finished" else status


def run_status(run: Run, events: list[dict[str, Any]] | None = None) -> RunStatus:
    if events is None:
        events = read_events(run.events_path)
    try:
        config = read_json(run.config_path)
    except (OSError, ValueError):
        config = {}
    if not isinstance(config, dict):  # valid JSON, but not the settings a run writes
        config = {}
    decisions = [e.get("decision") for e in events if e.get("kind") == "decision"]
    means = step_means(events)
    finished_epochs = [int(e.get("epochs_done") or 0) for e in events if e.get("kind") == "run_finished"]
    stepped_epochs = sorted({epoch for epoch, _ in means})
    # An epoch is done once a later epoch has finished a step, or when a session said so.
    epochs_done = max([*finished_epochs, len(stepped_epochs) - 1 if stepped_epochs else 0, 0])
    costs = [e.get("cost_usd") for e in events if e.get("kind") == "call"]
    latest = [e for e in events if e.get("kind") == "step_finished" and e.get("mean_loss") is not None]
    last = latest[-1] if latest else {}
    val_works = set(config.get("val_works") or [])
    val_costs = [e.get("cost_usd") or 0.0 for e in events if e.get("kind") == "call" and e.get("work") in val_works]
    return RunStatus(
        id=run.id,
        works=list(config.get("works") or []),
        epochs=config.get("epochs"),
        epochs_done=epochs_done,
        steps_done=len(means),
        approved=decisions.count("approve"),
        rerun=decisions.count("rerun"),
        rolled_back=decisions.count("rollback"),
        latest_loss=float(last["mean_loss"]) if latest else None,
        cost_usd=sum(c for c in costs if c is not None),
        cost_known=all(c is not None for c in costs),
        state=run_state(run, events),
        started=next((e.get("time") for e in events if e.get("kind") == "run_started"), None),
        step_means=means,
        # Sessions before the count existed did not record it: unknown, not zero.
        latest_works=last.get("works_in_mean") or None,
        latest_val=last.get("val_mean_loss"),
        latest_val_works=last.get("val_works_in_mean") or None,
        val_cost_usd=round(sum(val_costs), 6),
        failing=failing_works(events),
    )


def failing_works(events: list[dict[str, Any]]) -> dict[str, str]:
    """Each work whose latest forward or loss ended in failure, with where and why."""
    latest: dict[str, dict[str, Any]] = {}
    for e in events:
        if e.get("kind") == "stage" and e.get("work") and e.get("status") in ("finished", "skipped", "failed"):
            latest[str(e["work"])] = e
    return {
        work: f"epoch {e.get('epoch')} step {e.get('step')} {e.get('stage')}: {e.get('error') or 'failed'}"
        for work, e in sorted(latest.items())
        if e.get("status") == "failed"
    }
