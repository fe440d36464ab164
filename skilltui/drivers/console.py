"""The headless display of `--auto`: the run model rendered with Rich, live or as plain lines.

On a terminal it is a live table, one row per work (stage, episodes written, latest loss,
tokens, cost, time in the step) under a line for the run (where, progress, ETA); when output
goes to a file or a pipe it prints plain lines instead: a start line for every stage, one
per finished stage, loss, decision and step, and a heartbeat (`[working] ...`: each stage in
flight, its work, how long, the tokens so far) every `heartbeat` seconds while calls run, so
a piped log never goes silent. At the end it prints the run's summary.

It renders a `RunView` (the driver's, or its own when used alone) and keeps no other fold.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
from collections.abc import Callable

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from ..core.safe_text import visible
from ..core.words import counted
from ..model import events as ev
from ..model.figures import duration_text, eta, run_progress, step_mean, step_progress, val_mean, work_elapsed
from ..model.summary import summarise
from ..model.view import RunView, batch_text

HEARTBEAT_SECONDS = 15.0


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def cost_text(view: RunView) -> str:
    return f"${view.cost:.4f}" if view.cost_known else f"${view.cost:.4f}+ (some prices unknown)"


def who(event: ev.Stage) -> str:
    return event.work or f"group {event.group}"


def progress_text(view: RunView, now: _dt.datetime) -> str:
    """`stages 5/8 · steps 1/3 · ETA 2m10s step, 9m run` (the parts that are known)."""
    done, total = step_progress(view)
    steps_done, steps_total = run_progress(view)
    parts = []
    if total:
        parts.append(f"stages {done}/{total}")
    parts.append(f"steps {steps_done}/{steps_total}" if steps_total else f"steps {steps_done}")
    left = eta(view, now)
    if left.step is not None:
        parts.append(f"ETA step {duration_text(left.step)}" + (f", run {duration_text(left.run)}" if left.run else ""))
    return " · ".join(parts)


def event_line(view: RunView, event: ev.Event) -> str | None:
    """The plain line an event earns in the log, or None; `view` has already folded the event."""
    match event:
        case ev.RunStarted():
            line = f"run {event.run_id} ({'resumed' if event.resumed else 'new'}): {event.run_dir}"
            if event.models:
                line += f"\nmodels ({event.backend}): " + ", ".join(f"{r} {m}" for r, m in event.models.items())
            return line
        case ev.StepStarted():
            n, g = len(event.works), len(event.groups)
            return (
                f"=== epoch {event.epoch} step {event.step} | episodes {event.first}-{event.last} | "
                f"{n} work{'' if n == 1 else 's'} in {g} group{'' if g == 1 else 's'} ==="
            )
        case ev.Stage(status="started"):
            attempt = f" attempt {event.attempt}" if event.attempt else ""
            return f"[start] {event.stage} {who(event)}{attempt} (epoch {event.epoch} step {event.step})"
        case ev.Stage(status="failed"):
            return f"[failed] {event.stage} {who(event)}: {event.error}"
        case ev.Stage(status="skipped") if event.stage != "validate":
            return f"[skip] {event.stage} {who(event)} (already done)"
        case ev.Stage(status="finished", stage="reduce" | "backward"):
            return f"[{event.stage}] group {event.group} done in {event.seconds or 0:.1f}s"
        case ev.Loss():
            parts = ", ".join(f"{k} {v:.2f}" for k, v in event.scores.items())
            return f"[loss] {event.work}: {event.loss:.3f} ({parts})"
        case ev.ValLoss():
            where = {
                "step": "after the step",
                "micro": f"after micro-step {event.group}",
                "before": f"the notes micro-step {event.group} starts from",
            }.get(event.point, event.point)
            passes = f", mean of {event.samples} passes" if event.samples > 1 else ""
            same = ", same notes as before" if event.reused else ""
            return f"[val] {event.work}: {event.loss:.3f} ({where}{passes}{same})"
        case ev.TestMeasured():
            return f"[test] {event.point}: {event.text.removeprefix('test: ')}"
        case ev.GateChecked():
            advice = {"keep": "keep", "rollback": "roll back", "none": "no verdict"}.get(event.advice, event.advice)
            return f"[gate] {event.reason}; advice: {advice} (validation cost ${event.cost_usd:.4f})"
        case ev.MicroStep():
            touched = len(event.added) + len(event.changed) + len(event.removed)
            what = event.message.splitlines()[0] if event.message else event.subject
            return f"[commit] {event.label}: {what} ({counted(touched, 'note')} touched)"
        case ev.MicroStepSkipped():
            return (
                f"[skipped] {event.label or f'group {event.group}'}: no update after "
                f"{counted(event.attempts, 'attempt')}; the pool stays as it was ({event.reason})"
            )
        case ev.DecisionMade():
            line = f"[review] {event.decision} by {event.by}" + (f": {event.note}" if event.note else "")
            return line + (f" ({event.reason})" if event.reason else "")
        case ev.StepFinished():
            step = view.steps.get((event.epoch, event.step))
            mean = step_mean(step) if step is not None else None
            text = "n/a" if mean is None else mean.text()
            if step is not None and (val := val_mean(step)) is not None:
                text += f", selection {val.text()}"
            return f"[step] epoch {event.epoch} step {event.step}: mean loss {text}, cost so far {cost_text(view)}"
        case ev.Warning_():
            return f"[warn] {event.message}"
        case ev.Throttled(throttled=True, limit=int() as limit) if event.wait_seconds:
            return (
                f"[throttled] {event.reason}: at most {counted(limit, 'call')} in flight, "
                f"next call in {event.wait_seconds:g}s"
            )
        case ev.Throttled(throttled=False):
            return f"[throttle lifted] {event.reason}"
        case ev.BatchState():
            return f"[batch] {batch_text(event)}"
        case ev.RunFinished():
            return (
                f"=== {event.status}" + (f": {event.reason}" if event.reason else "") + f" | cost {cost_text(view)} ==="
            )
    return None


def heartbeat_line(view: RunView, now: _dt.datetime) -> str | None:
    """`[working] forward pine 42s 1,200 tok; backward group 1 12s | stages 3/8 ...`; None when nothing runs."""
    if not view.in_flight:
        return None
    parts = []
    for (stage, whom), since in sorted(view.in_flight.items(), key=lambda item: item[1]):
        row = view.works.get(whom) if isinstance(whom, str) else None
        name = whom if isinstance(whom, str) else f"group {whom}"
        tokens = f" {row.tokens:,} tok" if row is not None else ""
        parts.append(f"{stage} {name} {duration_text((now - since).total_seconds())}{tokens}")
    return f"[working] {'; '.join(parts)} | {progress_text(view, now)} | {view.tokens:,} tokens so far"


class ConsoleSink:
    """Render a run to a Rich console: live on a terminal, plain lines otherwise."""

    def __init__(
        self,
        console: Console | None = None,
        *,
        view: RunView | None = None,
        heartbeat: float = HEARTBEAT_SECONDS,
        now: Callable[[], _dt.datetime] = utc_now,
    ) -> None:
        self.console = console or Console(highlight=False)
        self.view = view if view is not None else RunView()
        self._folds = view is None  # alone, it folds the events itself; with a driver, the driver has
        self.heartbeat = heartbeat
        self.now = now
        self.live: Live | None = None
        if self.console.is_terminal:
            self.live = Live(self._render(), console=self.console, refresh_per_second=8, transient=False)
            self.live.start()

    def __call__(self, event: ev.Event) -> None:
        if self._folds:
            self.view.apply(event)
        line = event_line(self.view, event)
        if line is not None:
            self.say(line)
        if self.live is not None:
            self.live.update(self._render())

    def say(self, line: str) -> None:
        line = visible(line)  # a line may quote agent text: a subject, a reason, a path
        if self.live is None:
            self.console.print(line, markup=False, soft_wrap=True)
        else:
            self.live.console.print(Text(line))

    async def beat(self) -> None:
        """Print a heartbeat every `heartbeat` seconds while stages run; run it beside the trainer."""
        while True:
            await asyncio.sleep(self.heartbeat)
            line = heartbeat_line(self.view, self.now())
            if line is not None:
                self.say(line)
            if self.live is not None:
                self.live.update(self._render())

    def close(self, summary: bool = True) -> None:
        if self.live is not None:
            self.live.update(self._render())
            self.live.stop()
            self.live = None
        if summary and not self.view.active:
            for line in summarise(self.view).lines():
                self.console.print(visible(line), markup=False, soft_wrap=True)

    def _render(self) -> Group:
        view, now = self.view, self.now()
        table = Table(expand=False, box=None, pad_edge=False)
        for name in ("work", "stage", "episodes", "loss", "tokens", "cost", "time"):
            table.add_column(name, justify="left" if name in ("work", "stage") else "right")
        for name, row in view.works.items():
            table.add_row(
                name,
                row.stage,
                str(row.episodes),
                "-" if row.loss is None else f"{row.loss:.3f}",
                f"{row.tokens:,}",
                "-" if row.cost is None else f"${row.cost:.4f}",
                duration_text(work_elapsed(row, now)) if row.started else "-",
            )
        step = view.step
        where = (
            "starting"
            if step is None
            else f"epoch {step.key[0]} step {step.key[1]} | episodes {step.first}-{step.last}"
        )
        extra = (" | throttled" if view.throttled else "") + (f" | batch {view.batch}" if view.batch else "")
        head = Text(
            f"{where} | {progress_text(view, now)} | tokens {view.tokens:,} | cost {cost_text(view)}{extra}",
            style="bold",
        )
        return Group(head, table)
