"""The headless display of `--auto`: a Rich view of the run, fed by the event stream.

On a terminal it is a live table, one row per work (stage, episodes written, latest loss,
tokens, cost) under a line for the run; when output goes to a file or a pipe it prints
plain lines instead, one per finished stage, loss, decision and step, so logs stay
readable. It is just another sink: it learns nothing the event stream does not say.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from . import events as ev


@dataclass
class WorkRow:
    stage: str = "waiting"
    episodes: int = 0
    loss: float | None = None
    tokens: int = 0
    cost: float | None = None


@dataclass
class Tally:
    """Totals the display shows, folded from events."""

    rows: dict[str, WorkRow] = field(default_factory=dict)
    tokens: int = 0
    cost: float = 0.0
    cost_known: bool = True
    where: str = ""
    last: str = ""
    throttled: bool = False
    batch: str = ""

    def add_call(self, event: ev.Call) -> WorkRow | None:
        tokens = event.input_tokens + event.output_tokens + event.cache_read_tokens + event.cache_write_tokens
        self.tokens += tokens
        if event.cost_usd is None:
            self.cost_known = False
        else:
            self.cost += event.cost_usd
        row = self.rows.get(event.work) if event.work else None
        if row is not None:
            row.tokens += tokens
            if event.cost_usd is not None:
                row.cost = (row.cost or 0.0) + event.cost_usd
        return row

    def cost_text(self, cost: float | None = None, known: bool | None = None) -> str:
        cost = self.cost if cost is None else cost
        known = self.cost_known if known is None else known
        return f"${cost:.4f}" if known else f"${cost:.4f}+ (some prices unknown)"


def batch_text(event: ev.BatchState) -> str:
    """One line for a batch's state: `loss e0 s1 msgbatch_01.. in_progress: 2 processing, 1 succeeded`."""
    counts = [
        f"{n} {name}"
        for name, n in (
            ("processing", event.processing),
            ("succeeded", event.succeeded),
            ("errored", event.errored),
            ("expired", event.expired),
            ("canceled", event.canceled),
        )
        if n
    ]
    return f"{event.purpose} e{event.epoch} s{event.step} {event.batch_id} {event.state}" + (
        f": {', '.join(counts)}" if counts else ""
    )


class ConsoleSink:
    """Render events to a Rich console: live on a terminal, plain lines otherwise."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False)
        self.tally = Tally()
        self.live: Live | None = None
        if self.console.is_terminal:
            self.live = Live(self._render(), console=self.console, refresh_per_second=8, transient=False)
            self.live.start()

    def close(self) -> None:
        if self.live is not None:
            self.live.update(self._render())
            self.live.stop()
            self.live = None

    def __call__(self, event: ev.Event) -> None:
        t = self.tally
        line: str | None = None
        if isinstance(event, ev.RunStarted):
            t.rows = {w: WorkRow() for w in event.works}
            line = f"run {event.run_id} ({'resumed' if event.resumed else 'new'}): {event.run_dir}"
            if event.models:
                models = ", ".join(f"{role} {model}" for role, model in event.models.items())
                line += f"\nmodels ({event.backend}): {models}"
        elif isinstance(event, ev.StepStarted):
            t.where = f"epoch {event.epoch} step {event.step} | episodes {event.first}-{event.last}"
            for name, row in t.rows.items():
                row.stage = "waiting" if name in event.works else "sits out"
                row.episodes = 0
            line = f"=== {t.where} | {len(event.works)} works in {len(event.groups)} group(s) ==="
        elif isinstance(event, ev.Stage):
            if event.work and event.work in t.rows:
                row = t.rows[event.work]
                row.stage = {"started": event.stage, "failed": "failed"}.get(event.status, row.stage)
                if event.stage == "loss" and event.status in ("finished", "skipped"):
                    row.stage = "done"
            if event.status == "failed":
                line = f"[failed] {event.stage} {event.work or f'group {event.group}'}: {event.error}"
            elif event.status == "skipped" and event.stage != "validate":
                line = f"[skip] {event.stage} {event.work or f'group {event.group}'} (already done)"
            elif event.status == "finished" and event.stage in ("reduce", "backward"):
                line = f"[{event.stage}] group {event.group} done in {event.seconds:.1f}s"
        elif isinstance(event, ev.EpisodeWritten) and event.work in t.rows:
            t.rows[event.work].episodes += 1
        elif isinstance(event, ev.Call):
            t.add_call(event)
        elif isinstance(event, ev.Loss):
            if event.work in t.rows:
                t.rows[event.work].loss = event.loss
            parts = ", ".join(f"{k} {v:.2f}" for k, v in event.scores.items())
            line = f"[loss] {event.work}: {event.loss:.3f} ({parts})"
        elif isinstance(event, ev.ValLoss):
            where = {
                "step": "after the step",
                "micro": f"after micro-step {event.group}",
                "before": f"the notes micro-step {event.group} starts from",
            }.get(event.point, event.point)
            again = ", same notes as before" if event.reused else ""
            line = f"[val] {event.work}: {event.loss:.3f} ({where}{again})"
        elif isinstance(event, ev.GateChecked):
            advice = {"keep": "keep", "rollback": "roll back", "none": "no verdict"}[event.advice]
            line = f"[gate] {event.reason}: {advice} (validation cost ${event.cost_usd:.4f})"
        elif isinstance(event, ev.MicroStep):
            touched = len(event.added) + len(event.changed) + len(event.removed)
            what = event.message.splitlines()[0] if event.message else event.subject
            line = f"[commit] {event.label}: {what} ({touched} note(s) touched)"
        elif isinstance(event, ev.MicroStepSkipped):
            line = (
                f"[skipped] {event.label or f'group {event.group}'}: no update after {event.attempts} "
                f"attempt(s); the pool stays as it was ({event.reason})"
            )
        elif isinstance(event, ev.DecisionMade):
            line = f"[review] {event.decision} by {event.by}" + (f": {event.note}" if event.note else "")
            line += f" ({event.reason})" if event.reason else ""
        elif isinstance(event, ev.StepFinished):
            mean = "n/a" if event.mean_loss is None else f"{event.mean_loss:.3f} over {event.works_in_mean} work(s)"
            if event.val_mean_loss is not None:
                mean += f", validation {event.val_mean_loss:.3f} over {event.val_works_in_mean}"
            line = f"[step] epoch {event.epoch} step {event.step}: mean loss {mean}, cost so far {t.cost_text()}"
        elif isinstance(event, ev.Warning_):
            line = f"[warn] {event.message}"
        elif isinstance(event, ev.Throttled):
            t.throttled = event.throttled
            if event.throttled and event.wait_seconds:
                line = (
                    f"[throttled] {event.reason}: at most {event.limit} call(s) in flight, "
                    f"next call in {event.wait_seconds:g}s"
                )
            elif not event.throttled:
                line = f"[throttle lifted] {event.reason}"
        elif isinstance(event, ev.BatchState):
            t.batch = batch_text(event)
            line = f"[batch] {t.batch}"
        elif isinstance(event, ev.RunFinished):
            line = (
                f"=== {event.status}" + (f": {event.reason}" if event.reason else "") + f" | cost {t.cost_text()} ==="
            )
        if line is not None:
            t.last = line
            if self.live is None:
                self.console.print(line, markup=False, soft_wrap=True)
            else:
                self.live.console.print(Text(line))
        if self.live is not None:
            self.live.update(self._render())

    def _render(self) -> Group:
        t = self.tally
        table = Table(expand=False, box=None, pad_edge=False)
        for name in ("work", "stage", "episodes", "loss", "tokens", "cost"):
            table.add_column(name, justify="right" if name in ("episodes", "loss", "tokens", "cost") else "left")
        for name, row in t.rows.items():
            table.add_row(
                name,
                row.stage,
                str(row.episodes),
                "-" if row.loss is None else f"{row.loss:.3f}",
                f"{row.tokens:,}",
                "-" if row.cost is None else f"${row.cost:.4f}",
            )
        extra = (" | throttled" if t.throttled else "") + (f" | batch {t.batch}" if t.batch else "")
        head = Text(f"{t.where or 'starting'} | tokens {t.tokens:,} | cost {t.cost_text()}{extra}", style="bold")
        return Group(head, table)
