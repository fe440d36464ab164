"""Outcome feedback for the optimizer: what its earlier updates did, read from the run's records.

An optimizer that is never told what its last step did to the loss cannot learn from it.
Before each micro-step the backward prompt is given:

- the run's earlier micro-steps (`model.commits.MicroStepRecord`, each one's outcome as
  the store's one reader of micro-steps gives it, `store.micro_steps`): what it did,
  decision, who decided, the reviewer's notes, the prediction its commit made, or why it
  was skipped;
- the mean loss before and after each (the step it acted on, and the next step, the first
  written with the notes it left) over the works both steps scored, saying how many: a work
  that sat out or failed in one of them would move a plain mean by itself;
- the last rejected updates with the gate's figures behind each (`rejected.py`);
- each recent step's mean with its count, and the trend over them (again over the works
  the first and the last both scored), and validation losses when the run recorded any
  (numbers only: nothing of the validation works themselves).

The numbers are the run model's (`model.figures`), folded from the same events every
interface reads, so the prompt, `pool_log` and the apps agree.

The same records annotate `pool_log`, so the history tool and the prompt agree.

A commit's body is structured (`Observed:`, `Changed:`, `Prediction:`); `commits.parse_body`
reads it back, leniently, for the prompt and the review screens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TypeVar, cast

from ...model.at import StepKey
from ...model.commits import DECISION_WORDS, MicroStepRecord
from ...model.figures import Mean, change, next_changes, settled, step_mean, step_means, val_mean
from ...model.tail import tail_of
from ...model.view import RunView, StepView
from ...store.micro_steps import step_records
from ...store.run_folder import Run
from ...store.settled import SettledCache, settled_and_live, step_keys
from .rejected import rejected_text

T = TypeVar("T")
TREND_STEPS = 6
SHOWN_MICRO_STEPS = 8


@dataclass(frozen=True)
class LossChange:
    """The loss around a micro-step: its step's mean, and the next scored step's over the works both scored."""

    before: Mean
    after: float | None = None
    before_common: float | None = None  # the step's mean over the works the next step scored too
    common: int = 0


def loss_text(change: LossChange | None) -> str:
    """`mean loss 0.700 -> 0.500 over the 2 works both steps scored`, or the step's mean alone."""
    if change is None:
        return "mean loss ? -> not yet measured"
    if change.after is None or change.before_common is None:
        return f"mean loss {_mean_text(change.before)} -> not yet measured"
    works = "the one work" if change.common == 1 else f"the {change.common} works"
    return f"mean loss {change.before_common:.3f} -> {change.after:.3f} over {works} both steps scored"


def _mean_text(mean: Mean) -> str:
    # Sessions before the count existed recorded none: then the number alone, not "0 works".
    return mean.text() if mean.works else f"{mean.value:.3f}"


def past_line(micro: MicroStepRecord, loss: LossChange | None) -> str:
    """One earlier micro-step as the prompt lists it: what it did, how it was decided, the loss around it."""
    word = DECISION_WORDS.get(micro.decision or "", micro.decision or "")
    if micro.decision == "skipped":
        word = "skipped (failed its checks)"
    who = f" by {micro.by}" if micro.by else ""
    text = f'- {micro.label}: "{micro.headline}", {word}{who}'
    if micro.attempt > 1:
        text += f" after {micro.attempt} attempts"
    text += f"; {loss_text(loss)}"
    if micro.prediction:
        text += f"\n  - it predicted: {micro.prediction}"
    if micro.reason:
        text += f"\n  - why it was skipped: {micro.reason}"
    for note in micro.rerun_notes:
        text += f"\n  - reviewer's note on an earlier attempt: {note}"
    return text


@contextmanager
def run_view(run: Run) -> Iterator[RunView]:
    """The run model of the run's records (the same fold, means and counts every interface shows).

    The process keeps one tail of the events file, so each micro-step folds only what the run
    recorded since the last look instead of parsing the whole file again (which grew with
    the run, and held the interpreter while the app drew). The view is the tail's own: it is
    held for the length of the `with`, so a poll from another thread cannot change it midway.
    """
    tail = tail_of(run.events_path)
    with tail.lock:
        yield tail.poll()


_MEMO: dict[tuple[str, str], tuple[RunView, tuple[object, ...], object]] = {}


def _memo(run: Run, view: RunView, name: str, compute: Callable[[RunView], T], *also: object) -> T:
    """`compute(view)`, once per state of the process's tail of the run's events.

    A figure over every step costs time that grows with the run, and one micro-step asks for
    it several times (the prompt, the history tool's annotations) while no event came in.
    A view that is not the tail's is computed afresh; `also` is what else the result depends on.
    """
    tail = tail_of(run.events_path)
    if tail.view is not view:
        return compute(view)
    key = (str(tail.path), name)
    cached = _MEMO.get(key)
    state = (tail.offset, *also)
    if cached is not None and cached[0] is view and cached[1] == state:
        return cast(T, cached[2])
    result = compute(view)
    _MEMO[key] = (view, state, result)
    return result


def prompt_loss_changes(view: RunView) -> dict[StepKey, LossChange]:
    """Per scored step: its mean, and what the next settled step made of the works both scored.

    The prompt's own reading of `model.figures.next_changes`: it takes the next step as soon
    as its losses are in and keeps the step's `Mean` with its count, where `figures.loss_changes`
    (what `review`, `report` and `runs` credit) waits for the next step to finish.
    What a micro-step learned from one step shows in the next only on the works both steps
    scored; a work that sat out or failed in one of them would move a plain mean by itself.
    """
    moved = next_changes(view)
    found: dict[StepKey, LossChange] = {}
    for key, mean in step_means(view).items():
        if key in moved:
            before, after, common = moved[key]
            found[key] = LossChange(mean, after=after, before_common=before, common=common)
        else:
            found[key] = LossChange(mean)
    return found


def _records_of(run: Run, key: StepKey) -> list[MicroStepRecord]:
    """The finished micro-steps of one step (their outcome, `store.micro_steps`), by group.

    Labelled by the default words here: the run's own label is the view's (`_past`), and a
    settled step's records are kept from one view to the next.
    """
    return [m.outcome for m in step_records(run, key) if m.outcome is not None]


_SETTLED: SettledCache[list[tuple[StepKey, list[MicroStepRecord]]]] = SettledCache(list)


def _all_records(run: Run) -> list[tuple[StepKey, list[MicroStepRecord]]]:
    """Every step's micro-step records, oldest first; settled steps are read once per process."""
    with _SETTLED.lock:
        fold = _SETTLED.get(run.root)
        settled, live = settled_and_live(step_keys(run.root), fold.through, None)
        for key in settled:
            if found := _records_of(run, key):
                fold.state.append((key, found))
            fold.through = key
        return fold.state + [(key, found) for key in live if (found := _records_of(run, key))]


_FINAL: dict[str, tuple[RunView, dict[StepKey, LossChange | None]]] = {}


def carried_loss_changes(run: Run, view: RunView) -> dict[StepKey, LossChange]:
    """`prompt_loss_changes(view)`, keeping what can no longer change from one look to the next.

    A step's change is final once the step and the next settled step it is measured against
    have both finished: neither gains a loss after that. Only the steps since are worked out
    again, so a micro-step late in a long run does not redo the whole run's figures.
    """
    tail = tail_of(run.events_path)
    if tail.view is not view:
        return prompt_loss_changes(view)
    kept = _FINAL.get(str(tail.path))
    if kept is None or kept[0] is not view:
        kept = _FINAL[str(tail.path)] = (view, {})
    final = kept[1]
    keys = sorted(view.steps)
    found: dict[StepKey, LossChange] = {}
    for i, key in enumerate(keys):
        if key in final:
            if (known := final[key]) is not None:
                found[key] = known
            continue
        step = view.steps[key]
        mean = step_mean(step)
        if mean is None:
            if step.finished:
                final[key] = None
            continue
        found[key], done = LossChange(mean), False
        if step.losses:
            nxt = next((k for k in keys[i + 1 :] if view.steps[k].losses and settled(view.steps[k])), None)
            moved = change(view, key, nxt) if nxt is not None else None
            if moved is not None:
                found[key] = LossChange(mean, after=moved[1], before_common=moved[0], common=moved[2])
            done = nxt is not None and step.finished and view.steps[nxt].finished
        if done:
            final[key] = found[key]
    return found


def _recent_means(
    view: RunView, count: int, mean_of: Callable[[StepView], Mean | None] = step_mean
) -> dict[StepKey, Mean]:
    """The last `count` steps' means, oldest first (the trend the prompt shows), without the rest."""
    recent: list[tuple[StepKey, Mean]] = []
    for key in reversed(list(view.steps)):
        if (mean := mean_of(view.steps[key])) is not None:
            recent.append((key, mean))
            if len(recent) == count:
                break
    return dict(reversed(recent))


def past_micro_steps(run: Run, view: RunView | None = None) -> list[MicroStepRecord]:
    """Every finished micro-step of the run, oldest first (the loss around each: `past_losses`)."""
    if view is None:
        with run_view(run) as view:
            return past_micro_steps(run, view)
    records = _all_records(run)
    # The settled steps' records only grow, so their count and the live step's say what changed.
    built = _memo(run, view, "past", lambda v: _past(run, v, records), len(records), tuple(records[-2:]))
    return list(built)


def _past(run: Run, view: RunView, records: list[tuple[StepKey, list[MicroStepRecord]]]) -> list[MicroStepRecord]:
    labels = {(m.epoch, m.step, m.group): m.label for m in view.micro_steps.values()}
    return [
        replace(r, label=label) if (label := labels.get((r.epoch, r.step, r.group))) else r
        for _, found in records
        for r in found
    ]


def past_losses(run: Run, view: RunView) -> dict[StepKey, LossChange]:
    """The loss around each earlier micro-step, by the step it learned from (memoised like the records)."""
    return _memo(run, view, "loss_changes", lambda v: carried_loss_changes(run, v))


def commit_annotations(run: Run) -> dict[str, str]:
    """sha -> what the run recorded about the commit, for `pool_log` and `pool_show`."""
    out: dict[str, str] = {}
    with run_view(run) as view:
        past, losses = past_micro_steps(run, view), past_losses(run, view)
    for m in past:
        if m.decision == "skipped" or not m.after:
            continue
        word = DECISION_WORDS.get(m.decision or "", m.decision)
        out[m.after] = f"{m.label}: {word} by {m.by or '?'}; {loss_text(losses.get((m.epoch, m.step)))}"
    return out


def trend_text(view: RunView, first: StepKey, last: StepKey) -> str:
    """How the loss moved from step `first` to step `last`, over the works both scored."""
    span = f"From e{first[0]}s{first[1]} to e{last[0]}s{last[1]}"
    moved = change(view, first, last)
    if moved is None:
        return f"{span} no work was scored in both, so the trend is not measured."
    delta = moved[1] - moved[0]
    way = "fell" if delta < 0 else "rose" if delta > 0 else "held"
    works = "the one work" if moved[2] == 1 else f"the {moved[2]} works"
    return f"{span}, over {works} both scored, it {way} by {abs(delta):.3f}."


def feedback_text(run: Run) -> str:
    """The prompt section on what earlier updates did."""
    with run_view(run) as view:
        return _feedback_lines(run, view)


def _feedback_lines(run: Run, view: RunView) -> str:
    means = _recent_means(view, TREND_STEPS)
    past, losses = past_micro_steps(run, view), past_losses(run, view)
    lines: list[str] = []
    if past:
        shown = past[-SHOWN_MICRO_STEPS:]
        if len(past) > len(shown):
            lines.append(f"({len(past) - len(shown)} earlier micro-steps not shown; `pool_log` lists them all.)")
        lines += [past_line(m, losses.get((m.epoch, m.step))) for m in shown]
    else:
        lines.append("This is the run's first micro-step: no earlier update to learn from.")
    if means:
        recent = list(means.items())[-TREND_STEPS:]
        trend = ", ".join(f"e{e}s{s} {_mean_text(m)}" for (e, s), m in recent)
        lines += ["", f"Mean training loss per step (over the works it scored), oldest first: {trend}."]
        if len(recent) > 1:
            lines.append(trend_text(view, recent[0][0], recent[-1][0]))
    validation = _recent_means(view, TREND_STEPS, val_mean)
    if validation:
        recent_v = list(validation.items())[-TREND_STEPS:]
        lines.append(
            "Validation loss (works you never see), oldest first: "
            + ", ".join(f"e{e}s{s} {_mean_text(m)}" for (e, s), m in recent_v)
            + "."
        )
    rejected = rejected_text(run)
    if rejected:
        lines += ["", rejected]
    return "\n".join(lines)
