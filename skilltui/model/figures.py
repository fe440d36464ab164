"""The figures every interface shows, derived from a `RunView`: means with their counts, progress, time, ETA.

A mean is never a bare number here: `Mean` carries how many works it covers and how many
were scheduled, so a step where works failed or sat out cannot pass for a step where all
took part. The current step's mean is the mean of the works scored so far in it, and says
so ("2 of 4 works"), which is what a legend labelled "mean" next to a live curve must show.

Anything that depends on the time takes `now` as an argument, so the figures stay pure.
The ETA uses only durations this session measured (a resumed run's earlier sessions ran
under another load) and leaves out the time a person takes to review: it is the machine's
remaining work, and says nothing until each kind of stage it needs has run once.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from .at import StepKey
from .view import RunView, StepView, WorkView

WORK_STAGES = ("forward", "loss")


@dataclass(frozen=True)
class Mean:
    """A mean loss over `works` works that took part, of `scheduled` scheduled."""

    value: float
    works: int
    scheduled: int
    covers: frozenset[str] = frozenset()

    @property
    def partial(self) -> bool:
        return self.works < self.scheduled

    def text(self) -> str:
        """`0.412 (3 works)`, or `0.412 (2 of 4 works)` when some did not take part."""
        of = f"{self.works} of {self.scheduled}" if self.partial else str(self.works)
        return f"{self.value:.3f} ({of} work{'' if self.scheduled == 1 and not self.partial else 's'})"


def step_mean(step: StepView) -> Mean | None:
    """The mean loss of a step over the works scored in it (all of them once it finished)."""
    scheduled = len(step.works) or step.works_in_mean
    if step.finished and step.mean_loss is not None and step.works_in_mean in (0, len(step.losses)):
        # The engine's own figure once the step ended (the record says the same number).
        count = len(step.losses) or step.works_in_mean
        return Mean(step.mean_loss, count, max(scheduled, count), frozenset(step.losses))
    if step.losses:
        values = list(step.losses.values())
        return Mean(sum(values) / len(values), len(values), max(scheduled, len(values)), frozenset(step.losses))
    if step.mean_loss is not None:  # a record cut before the step's losses, or written by hand
        return Mean(step.mean_loss, step.works_in_mean, max(scheduled, step.works_in_mean))
    return None


def val_mean(step: StepView) -> Mean | None:
    if step.val_losses:
        values = list(step.val_losses.values())
        scheduled = max(len(values), step.val_works_in_mean)
        return Mean(sum(values) / len(values), len(values), scheduled, frozenset(step.val_losses))
    if step.val_mean_loss is not None:
        return Mean(step.val_mean_loss, step.val_works_in_mean, step.val_works_in_mean)
    return None


def step_means(view: RunView) -> dict[StepKey, Mean]:
    """Every step's mean, the current one included (partial while works are still being scored)."""
    return {key: mean for key, step in view.steps.items() if (mean := step_mean(step)) is not None}


def val_start(view: RunView) -> Mean | None:
    """The validation of the notes training started from, before any update (a gated run), or None.

    The "before" of the gate verdict the first review showed (the first verdict, before any
    review): the one figure that review's header and the end summary both show. A run with no
    verdict yet (killed before it) falls back to the mean of the works' first "before" points.
    """
    if view.gate_before:
        first = view.first_review if view.first_review in view.gate_before else min(view.gate_before)
        before, works = view.gate_before[first]
        return Mean(before, works, works, frozenset(view.val_baseline))
    if not view.val_baseline:
        return None
    values = list(view.val_baseline.values())
    return Mean(sum(values) / len(values), len(values), len(values), frozenset(view.val_baseline))


def val_means(view: RunView) -> dict[StepKey, Mean]:
    return {key: mean for key, step in view.steps.items() if (mean := val_mean(step)) is not None}


def finished_means(view: RunView) -> dict[StepKey, Mean]:
    """The means of the steps that finished, in run order."""
    return {key: mean for key, mean in step_means(view).items() if view.steps[key].finished}


def change(view: RunView, before: StepKey, after: StepKey) -> tuple[float, float, int] | None:
    """Mean loss at `before` and at `after` over the works scored in both, and how many they are.

    What a micro-step learned from one step shows in the next only on the works both
    steps scored; a work that sat out or failed in one of them would move the mean alone.
    """
    a, b = view.steps.get(before), view.steps.get(after)
    if a is None or b is None:
        return None
    common = sorted(set(a.losses) & set(b.losses))
    if not common:
        return None
    return (
        sum(a.losses[w] for w in common) / len(common),
        sum(b.losses[w] for w in common) / len(common),
        len(common),
    )


def settled(step: StepView) -> bool:
    """Whether a step's losses are all in: it finished, or every work it scheduled scored or failed.

    Only a settled step can stand as the "after" of a change: the works a live step has not
    scored yet would otherwise be left out of it without anyone saying so.
    """
    return step.finished or (bool(step.works) and set(step.works) <= set(step.losses) | step.failed)


def next_changes(view: RunView, *, finished_only: bool = False) -> dict[StepKey, tuple[float, float, int]]:
    """Per step with losses: `change()` from it to the next settled step (mean before, after, works).

    This is what a micro-step that learned from a step is credited with: the next step is
    the first written with the notes it left. A step with no later settled step, or none
    that scored a work in common, has no entry. The backward prompt, written while its step
    runs, takes that step as soon as its losses are in; `finished_only` waits for the next
    step to finish (what `review` shows of a run another process may be training).
    """
    changes = {key: change(view, key, after) for key, after in _next_settled(view, finished_only).items()}
    return {key: moved for key, moved in changes.items() if moved is not None}


def _next_settled(view: RunView, finished_only: bool) -> dict[StepKey, StepKey]:
    """Per step with losses (in run order), the nearest later step with losses that settled (or finished)."""
    scored = [key for key, step in view.steps.items() if step.losses]
    done = (lambda step: step.finished) if finished_only else settled
    settled_keys = {key for key in scored if done(view.steps[key])}
    found: dict[StepKey, StepKey] = {}
    # One pass from the newest step back, carrying the nearest settled step after each: a
    # search of every later step for every step grew with the square of the run.
    nearest: StepKey | None = None
    for key in sorted(scored, reverse=True):
        if nearest is not None:
            found[key] = nearest
        if key in settled_keys:
            nearest = key
    return {key: found[key] for key in scored if key in found}


def loss_changes(view: RunView) -> dict[StepKey, tuple[float, float]]:
    """Per step, its mean and the next finished step's over the works both scored: what `review`,
    `report` and `runs` credit the micro-steps that learned from it with."""
    return {key: (before, after) for key, (before, after, _) in next_changes(view, finished_only=True).items()}


def loss_change_works(view: RunView) -> dict[StepKey, tuple[str, ...]]:
    """Per step with losses, the works its `loss_changes` figure covers: those scored in it and in
    the next finished step, or, with no such step, those its own mean covers.

    A step's mean covers every work of the step, not only the group a micro-step learned
    from, so whatever shows a micro-step's figure says which works it is over.
    """
    after = _next_settled(view, True)
    covers: dict[StepKey, tuple[str, ...]] = {}
    for key, step in view.steps.items():
        if not step.losses:
            continue
        mine = set(step.losses)
        if key in after and (common := mine & set(view.steps[after[key]].losses)):
            mine = common
        covers[key] = tuple(sorted(mine))
    return covers


def epoch_means(view: RunView, *, val: bool = False) -> dict[tuple[int, str], tuple[float, int]]:
    """Per (epoch, work): its train loss in the epoch (the mean of its step losses) and how many steps that covers.

    With `val`, a validation work's loss after the epoch's last step that measured it (what
    the notes as the epoch left them score), covering that one step. Every epoch covers the
    same episodes, so epochs compare; a work scored on fewer steps says so by its count.
    """
    per: dict[tuple[int, str], dict[int, float]] = {}
    for (epoch, step), scored in view.steps.items():
        for work, loss in (scored.val_losses if val else scored.losses).items():
            per.setdefault((epoch, work), {})[step] = loss
    if val:
        return {key: (steps[max(steps)], 1) for key, steps in per.items()}
    return {key: (sum(steps.values()) / len(steps), len(steps)) for key, steps in per.items()}


def part_means(view: RunView) -> dict[StepKey, dict[str, float]]:
    """Each step's mean of every loss part (chrf, scenes, ...) over the works that scored it."""
    means: dict[StepKey, dict[str, float]] = {}
    for key, step in view.steps.items():
        works = [scores for scores in step.scores.values() if scores]
        if not works:
            continue
        names = sorted({name for scores in works for name in scores})
        means[key] = {
            name: round(sum(s[name] for s in works if name in s) / sum(name in s for s in works), 4) for name in names
        }
    return means


# -- progress ----------------------------------------------------------------------------


def group_stages(view: RunView, step: StepView) -> list[tuple[str, int]]:
    """The reduce and backward stages a step's groups run (none with --no-backward)."""
    if view.config.get("no_backward"):
        return []
    stages: list[tuple[str, int]] = []
    for number, names in enumerate(step.groups, 1):
        if len(names) > 1:
            stages.append(("reduce", number))
        stages.append(("backward", number))
    return stages


def step_progress(view: RunView) -> tuple[int, int]:
    """(stages done, stages in the step) of the current step: forward and loss per work, then the groups'."""
    step = view.step
    if step is None:
        return 0, 0
    planned = [(stage, work) for work in step.works for stage in WORK_STAGES] + group_stages(view, step)
    return sum(1 for stage in planned if stage in step.stages_done), len(planned)


def run_progress(view: RunView) -> tuple[int, int | None]:
    """(steps finished, steps in the run); the total is None when the run did not record its plan."""
    done = sum(1 for step in view.steps.values() if step.finished)
    epochs = view.config.get("epochs")
    if view.steps_per_epoch is None or not isinstance(epochs, int):
        return done, None
    return done, epochs * view.steps_per_epoch


# -- time --------------------------------------------------------------------------------


def seconds_between(start: _dt.datetime | None, end: _dt.datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return max(0.0, (end - start).total_seconds())


def work_elapsed(row: WorkView, now: _dt.datetime) -> float | None:
    """How long the work has been in the current step (until it finished it)."""
    return seconds_between(row.started, row.ended or now)


def stage_elapsed(row: WorkView, now: _dt.datetime) -> float | None:
    """How long the work's running stage has run; None when none runs."""
    if row.stage not in WORK_STAGES:
        return None
    return seconds_between(row.stage_started, now)


def typical(view: RunView, stage: str) -> float | None:
    total, count = view.stage_seconds.get(stage, (0.0, 0))
    return total / count if count else None


@dataclass(frozen=True)
class Eta:
    """Seconds left in the current step and in the run (None: not known yet)."""

    step: float | None
    run: float | None


def eta(view: RunView, now: _dt.datetime) -> Eta:
    """Time left from the durations of this session's earlier stages; review waits are not counted."""
    step = view.step
    if step is None or not view.active:
        return Eta(None, None)
    workers = max(1, view.workers)
    needed = {stage for stage, _ in group_stages(view, step)} | set(WORK_STAGES)
    means = {stage: typical(view, stage) for stage in needed}
    if any(value is None for value in means.values()):
        return Eta(None, None)
    seconds: dict[str, float] = {stage: value for stage, value in means.items() if value is not None}
    work_left = 0.0
    for name in step.works:
        row = view.works.get(name)
        for stage in WORK_STAGES:
            if (stage, name) in step.stages_done:
                continue
            running = row is not None and row.stage == stage
            spent = (stage_elapsed(row, now) or 0.0) if running and row is not None else 0.0
            work_left += max(0.0, seconds[stage] - spent)
    left = work_left / min(workers, max(1, len(step.works)))
    left += sum(seconds[stage] for stage, group in group_stages(view, step) if (stage, group) not in step.stages_done)
    done, total = run_progress(view)
    if total is None:
        return Eta(left, None)
    whole = len(step.works) * (seconds["forward"] + seconds["loss"]) / min(workers, max(1, len(step.works)))
    whole += sum(seconds[stage] for stage, _ in group_stages(view, step))
    later = max(0, total - done - (0 if step.finished else 1))
    return Eta(left, left + later * whole)


def duration_text(seconds: float | None) -> str:
    """`42s`, `3m05s`, `1h02m`; `?` when unknown."""
    if seconds is None:
        return "?"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"
