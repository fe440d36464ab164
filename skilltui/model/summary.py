"""The end of a run in a few lines: how the loss moved, what the notes became, what it cost, what to do next.

The app shows it when the run ends, prints it after it closes, and `--auto` prints it last,
all from the same `RunView`, so the three never disagree. Loss is compared first step to
the last step whose works were all scored (its micro-steps may still wait), with each
mean's count of works, and the notes are counted over the micro-steps that were kept
(approved): a note added and later changed counts once, as added; a note added and
removed again counts as neither.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..core.json_read import read_json
from .figures import Mean, change, settled, step_means, val_means, val_start
from .view import RunView


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    run_dir: Path
    status: str
    reason: str
    train: tuple[Mean, Mean] | None  # first and last finished step
    # When those two means cover different works: both steps' means over the works they share,
    # which the summary leads with (the like-for-like figure).
    same_works: tuple[float, float, int] | None
    val: tuple[Mean, Mean] | None
    added: int
    changed: int
    removed: int
    kept: int  # kept micro-steps that changed a note: the updates the cost is divided by
    cost: float
    cost_known: bool
    val_from_baseline: bool = False  # the validation line starts before any update
    # The pool's size in tokens before the first micro-step and after the last kept one (None: not recorded).
    pool_size: tuple[int, int] | None = None
    estimate: float | None = None  # the dollars `--estimate` forecast at the start (estimate.json)
    kept_empty: int = 0  # kept micro-steps whose commit changed nothing ("nothing was worth changing")
    test: str | None = None  # the latest test point's figure (`--test-work`): the one a person may quote

    def lines(self) -> list[str]:
        how = self.status + (f": {self.reason}" if self.reason else "")
        lines = [f"run {self.run_id} {how}"]
        if self.train is not None:
            first, last = self.train
            if self.same_works is not None:
                # Like for like first: means over different works would credit the notes with a work's absence.
                a, b, n = self.same_works
                lines.append(f"train loss {a:.3f} → {b:.3f} over the {n} work{'' if n == 1 else 's'} both steps scored")
                lines.append(f"  every work each step scored: {first.text()} → {last.text()}")
            elif first.covers and last.covers and first.covers != last.covers:
                lines.append(f"train loss {first.text()} → {last.text()}: no work was scored in both steps")
            else:
                lines.append(f"train loss {first.text()} → {last.text()}")
        else:
            lines.append("train loss: no step finished yet")
        if self.val is not None:
            start = self.val[0].text() + (" before any update" if self.val_from_baseline else "")
            # The gate chose updates on these works, so their figure is the selection's, not a test.
            lines.append(f"selection (validation) loss {start} → {self.val[1].text()}")
        if self.test is not None:
            lines.append(self.test)
        empty = f" (and {self.kept_empty} kept that changed nothing)" if self.kept_empty else ""
        lines.append(
            f"notes: {self.added} added, {self.changed} changed, {self.removed} removed "
            f"over {self.kept} kept micro-step{'' if self.kept == 1 else 's'}{empty}"
        )
        if self.pool_size is not None:
            lines.append(f"pool size {self.pool_size[0]:,} → {self.pool_size[1]:,} tokens")
        unknown = "" if self.cost_known else "+ (some prices unknown)"
        lines.append(f"cost ${self.cost:.4f}{unknown}{self._per_kept()}")
        where = shown_path(self.run_dir)
        lines.append(f"next: skilltui review {where}   ·   skilltui export {where} --to DIR")
        return lines

    def _per_kept(self) -> str:
        parts = []
        if self.kept:
            parts.append(f"${self.cost / self.kept:.4f} per kept update")
        if self.estimate is not None:
            parts.append(f"estimated ${self.estimate:.4f}")
        return f" ({', '.join(parts)})" if parts else ""


def pool_size(view: RunView) -> tuple[int, int] | None:
    """(tokens before the run's first micro-step, after its last kept one), from the micro-step events."""
    # In the order they ran, not by key: an epoch's consolidation (group 0) runs after its last step's groups.
    measured = [m for m in view.micro_steps.values() if m.pool_tokens is not None]
    if not measured or measured[0].pool_tokens_before is None:
        return None
    start = measured[0].pool_tokens_before
    kept = [view.micro_steps[k].pool_tokens for k in view.kept if k in view.micro_steps]
    tokens = [t for t in kept if t is not None]
    return start, tokens[-1] if tokens else start


def pool_by_step(view: RunView) -> dict[tuple[int, int], int]:
    """The pool's tokens after each step that kept an update: its last kept micro-step's figure (an
    epoch's consolidation counts to its last step). The pool pane's curve and the report's chart."""
    after: dict[tuple[int, int], int] = {}
    for key in view.kept:
        m = view.micro_steps.get(key)
        if m is not None and m.pool_tokens is not None:
            after[(m.epoch, m.step)] = m.pool_tokens
    return after


def pool_curve(view: RunView) -> list[int]:
    """The pool's tokens before the first micro-step, then after each step that kept one: what the pool pane draws."""
    size = pool_size(view)
    return [size[0], *pool_by_step(view).values()] if size is not None else []


def shown_path(path: Path) -> str:
    """The run folder as short as it can be said from here."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return relative if len(relative) < len(str(path)) and not relative.startswith("../..") else str(path)


def kept_updates(view: RunView) -> tuple[int, int]:
    """(kept micro-steps that changed a note, kept ones that changed nothing).

    An empty commit says nothing was worth changing (an epoch's consolidation that found no
    duplicate, say): it is kept, but it is no update, and the cost per kept update must not
    count it. A micro-step with no record of what it touched counts as an update.
    """
    updates = empty = 0
    for key in view.kept:
        micro = view.micro_steps.get(key)
        if micro is not None and not (micro.added or micro.changed or micro.removed):
            empty += 1
        else:
            updates += 1
    return updates, empty


def note_changes(view: RunView) -> tuple[int, int, int]:
    """(added, changed, removed) notes over the kept micro-steps, in order."""
    state: dict[str, str] = {}
    for key in view.kept:
        micro = view.micro_steps.get(key)
        if micro is None:
            continue
        for path in micro.added:
            state[path] = "changed" if state.get(path) == "removed" else "added"
        for path in micro.changed:
            state.setdefault(path, "changed")
        for path in micro.removed:
            if state.get(path) == "added":
                del state[path]
            else:
                state[path] = "removed"
    values = list(state.values())
    return values.count("added"), values.count("changed"), values.count("removed")


def summarise(view: RunView) -> RunSummary:
    # A step whose works have all been scored counts although its micro-steps still wait
    # (a person quit at its review): its loss is measured, and leaving it out would report
    # the step before as the last one.
    finished = {key: mean for key, mean in step_means(view).items() if settled(view.steps[key])}
    means = list(finished.values())
    keys = list(finished)
    same = None
    if len(means) > 1 and means[0].covers != means[-1].covers:
        same = change(view, keys[0], keys[-1])
    vals = [mean for key, mean in val_means(view).items() if view.steps[key].finished]
    start = val_start(view)
    baseline = start is not None and bool(vals)
    if start is not None and vals:
        # The notes training started from, as the gate measured them before the first update:
        # the first step's point already holds that step's updates.
        vals.insert(0, start)
    added, changed, removed = note_changes(view)
    updates, empty = kept_updates(view)
    return RunSummary(
        run_id=view.run_id,
        run_dir=view.run_dir,
        status=view.status,
        reason=view.reason,
        train=(means[0], means[-1]) if means else None,
        same_works=same,
        val=(vals[0], vals[-1]) if vals else None,
        val_from_baseline=baseline,
        added=added,
        changed=changed,
        removed=removed,
        kept=updates,
        kept_empty=empty,
        cost=view.cost,
        cost_known=view.cost_known,
        pool_size=pool_size(view),
        estimate=estimated_usd(view.run_dir),
        test=view.tests[-1].text if view.tests else None,
    )


def estimated_usd(run_dir: Path) -> float | None:
    """The dollars the run's `estimate.json` forecast (written when the run started), or None."""
    try:
        data = read_json(Path(run_dir) / "estimate.json")
        return float(data["usd"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def test_delta_text(view: RunView) -> str | None:
    """The latest paired test delta with its interval, short enough for a table cell."""
    figure = next((t.figure for t in reversed(view.tests) if t.figure), None)
    if figure is None:
        return None
    if figure.get("low") is None or figure.get("high") is None:
        return f"{figure['delta']:+.3f}"
    return f"{figure['delta']:+.3f} [{figure['low']:+.3f}, {figure['high']:+.3f}]"
