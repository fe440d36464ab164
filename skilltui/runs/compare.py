"""`skilltui compare RUN [RUN ...]`: runs side by side, per work and per epoch, from their events.

The typical use is a trained run against its `--no-backward` control on the same works:
if training helped, the trained run's validation loss is below the control's.

- **train loss** of a work in an epoch: the mean of that work's step losses in the epoch
  (its `loss` events). Every epoch covers the same episodes, so epochs compare; when two
  runs scored a work on a different number of steps (a failed step), the row says so.
- **val loss** of a validation work in an epoch: its loss after the epoch's last step
  (`val_loss` events, point "step"): what the notes as the epoch left them score on
  episodes training never saw.
- **difference**: each run's value minus the first run's.
- **mean** rows average only the works every run has a value for, and say how many.
- **test**: each run's latest test point (`--test-work`), its trained pool against its start
  pool written in the same session, with the interval: the one figure a run may quote.

Everything comes from `events.jsonl` folded into the run model, the same `RunView` and the
same means (with the count of works each covers) that `runs`, `review` and the live app
show, so the table is exactly what the runs recorded and no second reading of it can drift.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

import plotext
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..core.piped import output_width
from ..model.at import StepKey
from ..model.figures import Mean, epoch_means, finished_means, val_means
from ..model.parse import read_run
from ..model.view import RunView
from ..store.run_folder import Run


@dataclass
class RunCurves:
    """One run's losses as compare reads them, from the run model (a resumed step keeps its latest value)."""

    id: str
    # (epoch, work) -> (loss, steps it covers), as `figures.epoch_means` gives them
    train: dict[tuple[int, str], tuple[float, int]] = field(default_factory=dict)
    val: dict[tuple[int, str], tuple[float, int]] = field(default_factory=dict)
    step_means: dict[StepKey, Mean] = field(default_factory=dict)  # finished steps: mean, works in it
    val_means: dict[StepKey, Mean] = field(default_factory=dict)
    skipped: str | None = None  # what reading its events.jsonl left out
    test: dict[str, Any] | None = None  # the latest test point: {"point", "figure", "text"}


def read_curves(run: Run) -> RunCurves:
    """A run's curves from the one fold every interface renders, so compare cannot disagree with `runs`."""
    record = read_run(run.events_path)
    curves = curves_of(RunView.of(run.id, run.root).fold(record.events), run.id)
    curves.skipped = record.warning(f"{run.id}/events.jsonl")
    return curves


def curves_of(view: RunView, run_id: str) -> RunCurves:
    """The curves of a folded view (what `read_curves` reads; the MLflow log follows a run with it)."""
    return RunCurves(
        run_id,
        train=epoch_means(view),
        val=epoch_means(view, val=True),
        step_means=finished_means(view),
        val_means={key: mean for key, mean in val_means(view).items() if view.steps[key].finished},
        test=({"point": t.point, "figure": t.figure, "text": t.text} if view.tests and (t := view.tests[-1]) else None),
    )


def _value(curves: RunCurves, kind: str, epoch: int, work: str) -> tuple[float | None, int]:
    """(value, steps it covers) of one work in one epoch."""
    found = (curves.train if kind == "train" else curves.val).get((epoch, work))
    if found is None:
        return None, 0
    return (round(found[0], 4) if kind == "train" else found[0]), found[1]


def compare_runs(runs: list[Run]) -> dict[str, Any]:
    """The comparison as data: what `--json` prints and the table shows."""
    all_curves = [read_curves(r) for r in runs]
    ids = [c.id for c in all_curves]
    first = ids[0]
    epochs = sorted({e for c in all_curves for e, _ in [*c.train, *c.val]})
    train_works = sorted({w for c in all_curves for _, w in c.train})
    val_works = sorted({w for c in all_curves for _, w in c.val} - set(train_works))
    rows: list[dict[str, Any]] = []
    for epoch in epochs:
        for kind, works in (("train", train_works), ("val", val_works)):
            kept = []
            for work in works:
                values = {c.id: _value(c, kind, epoch, work) for c in all_curves}
                if all(v is None for v, _ in values.values()):
                    continue
                loss = {run: v for run, (v, _) in values.items()}
                steps = {run: n for run, (_, n) in values.items()}
                row = _row(epoch, work, kind, loss, first)
                row["steps"] = steps
                row["same_steps"] = len({n for n in steps.values()}) == 1
                rows.append(row)
                kept.append(row)
            common = [r for r in kept if all(r["loss"][run] is not None for run in ids)]
            if len(common) > 1:
                loss = {run: round(sum(r["loss"][run] for r in common) / len(common), 4) for run in ids}
                row = _row(epoch, f"mean of {len(common)} works", kind, loss, first)
                row["mean_of"] = [r["work"] for r in common]
                rows.append(row)
    skipped = [c.skipped for c in all_curves if c.skipped]
    tests = {c.id: c.test for c in all_curves}
    return {
        "runs": ids,
        "rows": rows,
        "curves": {c.id: curve_points(c) for c in all_curves},
        "skipped": skipped,
        "test": tests,
    }


def curve_points(curves: RunCurves) -> dict[str, list[list[Any]]]:
    """The step means as `--json` prints them: [epoch, step, mean rounded to 4 places, works in it]."""
    return {
        "train": [[e, s, round(m.value, 4), m.works] for (e, s), m in sorted(curves.step_means.items())],
        "val": [[e, s, round(m.value, 4), m.works] for (e, s), m in sorted(curves.val_means.items())],
    }


def _row(epoch: int, work: str, kind: str, loss: dict[str, float | None], first: str) -> dict[str, Any]:
    base = loss[first]
    diff = {run: (round(v - base, 4) if v is not None and base is not None else None) for run, v in loss.items()}
    return {"epoch": epoch, "work": work, "kind": kind, "loss": loss, "diff": diff}


def table(data: dict[str, Any]) -> Table:
    ids = data["runs"]
    t = Table(title="loss per work and epoch (lower is better)", title_justify="left", header_style="bold")
    t.add_column("epoch", justify="right")
    t.add_column("work")
    t.add_column("kind")
    for i, run in enumerate(ids):
        t.add_column(run, justify="right", overflow="fold")
        if i:
            t.add_column(f"Δ {run}", justify="right", overflow="fold")
    uneven = False
    for row in data["rows"]:
        cells: list[str | Text] = [str(row["epoch"]), row["work"], row["kind"]]
        for i, run in enumerate(ids):
            value = row["loss"][run]
            mark = "" if row.get("same_steps", True) else "*"
            uneven |= bool(mark)
            cells.append("-" if value is None else f"{value:.3f}{mark}")
            if i:
                d = row["diff"][run]
                style = "" if d is None or d == 0 else ("green" if d < 0 else "red")
                cells.append(Text("-" if d is None else f"{d:+.3f}", style=style))
        t.add_row(*cells, style="bold" if row["work"].startswith("mean of") else "")
    caption = [
        "train: mean of the work's step losses in the epoch; val: the selection (validation) works after the "
        "epoch's last step; "
        f"Δ: minus {ids[0]}; mean rows: works every run scored"
    ]
    if uneven:
        caption.append("*: the runs scored this work on a different number of steps; its means cover other episodes")
    t.caption = "\n".join(caption)
    t.caption_justify = "left"
    return t


def plot(data: dict[str, Any], width: int = 100, height: int = 20, color: bool = True) -> str:
    """The step-mean curves of every run (train and validation) as a terminal plot."""
    keys = sorted({(e, s) for c in data["curves"].values() for part in c.values() for e, s, _, _ in part})
    if not keys:
        return "(no finished steps to plot)"
    index = {k: i for i, k in enumerate(keys)}
    plotext.clf()
    plotext.theme("pro" if color else "clear")
    plotext.plotsize(width, height)
    markers = {"train": "hd", "val": "dot"}
    series = 0
    # Validation first, as points: the train lines are drawn after them, so a control whose
    # train and validation coincide still shows its train line (it hid under the dots).
    for part in ("val", "train"):
        for run, parts in data["curves"].items():
            points = parts.get(part)
            if not points:
                continue
            xs = [index[(e, s)] for e, s, _, _ in points]
            ys = [m for _, _, m, _ in points]
            counts = sorted({n for _, _, _, n in points})
            covers = f"{counts[0]} work" if counts == [1] else f"{counts[0]}-{counts[-1]} works"
            if len(counts) == 1 and counts != [1]:
                covers = f"{counts[0]} works"
            draw = plotext.scatter if part == "val" else plotext.plot
            draw(xs, ys, label=f"{run} {part} ({covers})", marker=markers[part])
            series += 1
    # The legend sits in the plot's top rows, one a series: the y axis goes on above 1.0 by
    # that many rows, so the legend covers empty space and never a point.
    rows = max(1, height - 6)
    top = 1.0 / max(0.3, 1 - (series + 1) / rows)
    plotext.ylim(0, top)
    plotext.yticks([0, 0.25, 0.5, 0.75, 1.0], ["0", "0.25", "0.50", "0.75", "1.00"])
    ticks = list(range(0, len(keys), max(1, len(keys) // 8)))
    plotext.xticks(ticks, [f"e{keys[i][0]}s{keys[i][1]}" for i in ticks])
    plotext.title("mean loss per step (train: the works scored that step; val: after the step)")
    return plotext.build()


def print_compare(runs: list[Run], as_json: bool, console: Console | None = None) -> int:
    data = compare_runs(runs)
    for skipped in data["skipped"]:
        print(f"warning: {skipped}", file=sys.stderr)
    if as_json:
        print(json.dumps(data, indent=2))
        return 0
    console = console or Console(width=output_width(160))
    console.print(table(data))
    console.print(Text.from_ansi(plot(data, width=min(console.width, 120), color=console.is_terminal)))
    if any(data["test"].values()):
        console.print("test split (each run's trained pool against its own start pool, paired):")
        for run, test in data["test"].items():
            console.print(f"  {run}: {test['text'] if test else 'no test point (train with --test-work)'}")
    return 0
