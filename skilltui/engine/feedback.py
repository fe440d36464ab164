"""Outcome feedback for the optimizer: what its earlier updates did, read from the run's records.

An optimizer that is never told what its last step did to the loss cannot learn from it.
Before each micro-step the backward prompt is given:

- the run's earlier micro-steps: subject, decision, who decided, the reviewer's notes,
  the prediction its commit made, or why it was skipped;
- the mean loss of the works before and after each (the step it acted on, and the next
  step, the first written with the notes it left), and validation losses when the run
  recorded any (numbers only: nothing of the validation works themselves);
- the loss trend over the last steps.

The same records annotate `pool_log`, so the history tool and the prompt agree.

A commit's body is structured (`Observed:`, `Changed:`, `Prediction:`); `commits.parse_body`
reads it back, leniently, for the prompt and the review screens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..commits import DECISION_WORDS, parse_body
from .events import read_events
from .run import Run, read_json

TREND_STEPS = 6
SHOWN_MICRO_STEPS = 8


@dataclass
class PastMicroStep:
    epoch: int
    step: int
    group: int
    label: str
    subject: str
    decision: str  # approve, rollback, skipped
    by: str
    attempts: int
    after: str
    notes: list[str] = field(default_factory=list)
    prediction: str = ""
    reason: str = ""
    loss_before: float | None = None
    loss_after: float | None = None

    def line(self) -> str:
        word = DECISION_WORDS.get(self.decision, self.decision)
        if self.decision == "skipped":
            word = "skipped (failed its checks)"
        who = f" by {self.by}" if self.by else ""
        before = "?" if self.loss_before is None else f"{self.loss_before:.3f}"
        after = "not yet measured" if self.loss_after is None else f"{self.loss_after:.3f}"
        text = f'- {self.label}: "{self.subject}", {word}{who}'
        if self.attempts > 1:
            text += f" after {self.attempts} attempts"
        text += f"; mean loss {before} -> {after}"
        if self.prediction:
            text += f"\n  - it predicted: {self.prediction}"
        if self.reason:
            text += f"\n  - why it was skipped: {self.reason}"
        for note in self.notes:
            text += f"\n  - reviewer's note on an earlier attempt: {note}"
        return text


def step_means(events: list[dict[str, Any]], kind: str = "loss") -> dict[tuple[int, int], float]:
    """Mean loss per (epoch, step) from `loss` events (the last score of each work wins)."""
    per: dict[tuple[int, int], dict[str, float]] = {}
    for e in events:
        if e.get("kind") == kind and isinstance(e.get("loss"), int | float):
            per.setdefault((e["epoch"], e["step"]), {})[e.get("work") or ""] = float(e["loss"])
    return {key: round(sum(v.values()) / len(v), 4) for key, v in sorted(per.items()) if v}


def validation_means(events: list[dict[str, Any]]) -> dict[tuple[int, int], float]:
    """Validation losses the run recorded, as numbers per step: nothing else of those works.

    A step's `step_finished` carries `val_mean_loss` when validation ran; without it, the
    mean of the step's `val_loss` events measured after the step (`point` "step").
    """
    out: dict[tuple[int, int], float] = {}
    per: dict[tuple[int, int], dict[str, float]] = {}
    for e in events:
        if "epoch" not in e or "step" not in e:
            continue
        key = (e["epoch"], e["step"])
        if e.get("kind") == "step_finished" and isinstance(e.get("val_mean_loss"), int | float):
            out[key] = round(float(e["val_mean_loss"]), 4)
        elif e.get("kind") == "val_loss" and e.get("point", "step") == "step":
            if isinstance(e.get("loss"), int | float):
                per.setdefault(key, {})[e.get("work") or ""] = float(e["loss"])
    for key, works in per.items():
        out.setdefault(key, round(sum(works.values()) / len(works), 4))
    return dict(sorted(out.items()))


def _next(means: dict[tuple[int, int], float], key: tuple[int, int]) -> float | None:
    later = [k for k in means if k > key]
    return means[min(later)] if later else None


def past_micro_steps(run: Run, events: list[dict[str, Any]] | None = None) -> list[PastMicroStep]:
    """Every finished micro-step of the run, oldest first, with the loss around it."""
    events = read_events(run.events_path) if events is None else events
    means = step_means(events)
    labels = {(e["epoch"], e["step"], e["group"]): e.get("label", "") for e in events if e.get("kind") == "micro_step"}
    found: list[PastMicroStep] = []
    for record_path in run.root.glob("epoch*/step*/backward/g*/commit.txt"):
        gdir = record_path.parent
        try:
            epoch = int(gdir.parent.parent.parent.name.removeprefix("epoch"))
            step = int(gdir.parent.parent.name.removeprefix("step"))
            group = int(gdir.name.removeprefix("g"))
            record = read_json(record_path)
        except (ValueError, OSError):
            continue
        notes = []
        for review in sorted(gdir.glob("attempt*/review.json")):
            try:
                data = read_json(review)
            except (ValueError, OSError):
                continue
            if data.get("decision") == "rerun" and data.get("note"):
                notes.append(str(data["note"]))
        message = record.get("message") or ""
        # The subject is always "train <label>"; the body's first line is what the update did.
        headline = next((line.strip() for line in message.splitlines() if line.strip()), "")
        found.append(
            PastMicroStep(
                epoch=epoch,
                step=step,
                group=group,
                label=labels.get((epoch, step, group)) or f"epoch {epoch} step {step} micro {group}",
                subject=headline or record.get("subject", ""),
                decision=record.get("decision", ""),
                by=record.get("by") or "",
                attempts=int(record.get("attempt") or 1),
                after=record.get("attempt_commit") or record.get("after", ""),
                notes=notes,
                prediction=parse_body(f"subject\n{message}")["prediction"] if message else "",
                reason=record.get("reason", ""),
                loss_before=means.get((epoch, step)),
                loss_after=_next(means, (epoch, step)),
            )
        )
    return sorted(found, key=lambda m: (m.epoch, m.step, m.group))


def annotations(run: Run) -> dict[str, str]:
    """sha -> what the run recorded about the commit, for `pool_log` and `pool_show`."""
    out: dict[str, str] = {}
    for m in past_micro_steps(run):
        if m.decision == "skipped" or not m.after:
            continue
        word = DECISION_WORDS.get(m.decision, m.decision)
        before = "?" if m.loss_before is None else f"{m.loss_before:.3f}"
        after = "not yet measured" if m.loss_after is None else f"{m.loss_after:.3f}"
        out[m.after] = f"{m.label}: {word} by {m.by or '?'}; mean loss {before} -> {after}"
    return out


def feedback_text(run: Run) -> str:
    """The prompt section on what earlier updates did."""
    events = read_events(run.events_path)
    means = step_means(events)
    past = past_micro_steps(run, events)
    lines: list[str] = []
    if past:
        shown = past[-SHOWN_MICRO_STEPS:]
        if len(past) > len(shown):
            lines.append(f"({len(past) - len(shown)} earlier micro-steps not shown; `pool_log` lists them all.)")
        lines += [m.line() for m in shown]
    else:
        lines.append("This is the run's first micro-step: no earlier update to learn from.")
    if means:
        recent = list(means.items())[-TREND_STEPS:]
        trend = ", ".join(f"e{e}s{s} {v:.3f}" for (e, s), v in recent)
        lines += ["", f"Mean training loss per step, oldest first: {trend}."]
        if len(recent) > 1:
            delta = recent[-1][1] - recent[0][1]
            way = "fell" if delta < 0 else "rose" if delta > 0 else "held"
            lines.append(f"Over these {len(recent)} steps it {way} by {abs(delta):.3f}.")
    validation = validation_means(events)
    if validation:
        recent_v = list(validation.items())[-TREND_STEPS:]
        lines.append(
            "Validation loss (works you never see), oldest first: "
            + ", ".join(f"e{e}s{s} {v:.3f}" for (e, s), v in recent_v)
            + "."
        )
    return "\n".join(lines)
