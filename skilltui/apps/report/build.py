"""Build the report page of one run from its own records: config, events, attempts, and the pool.

Sections, in order: the settings; the train and validation curves (inline SVG); every
micro-step with its decision, who made it, the losses around it and its diff, coloured;
the notes as the run left them. The page is rendered from Jinja2 templates in
`skilltui/apps/report/templates/` with autoescaping on, carries its stylesheet inline, uses no
script and names no other file, so it opens anywhere and fetches nothing.

    skilltui report RUN --to FILE.html
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markdown_it import MarkdownIt

from ...core.errors import UsageError
from ...core.formats import parse_note
from ...core.words import counted
from ...engine.settings import DEFAULT_POOL_BUDGET
from ...model import events as ev
from ...model.at import StepKey
from ...model.commits import MicroStepRecord
from ...model.figures import Mean, finished_means, val_means
from ...model.parse import read_run
from ...model.review import delta_text
from ...model.summary import pool_by_step
from ...model.view import RunView
from ...runs.status import RunStatus, status_of
from ...store.micro_steps import micro_step_records
from ...store.run_folder import Run, read_json, run_containing, write_atomic
from .svg import Series, chart


@dataclass
class MicroStepView:
    """A micro-step attempt as the page shows it: the model's one record of it (`MicroStepRecord`,
    as its `micro_step` and `decision` events told it, read by `store.micro_steps`) and the
    page's figures beside it: the losses around it, the gate's verdict and its diff, coloured."""

    micro: MicroStepRecord
    loss_before: float | None = None
    loss_after: float | None = None
    val_before: float | None = None
    val_after: float | None = None
    gate_advice: str = ""
    gate_figures: str = ""  # the paired delta, its interval and n (verdicts since the interval rule)
    val_step: float | None = None  # mean validation loss after the micro-step's step
    diff: list[tuple[str, str]] = field(default_factory=list)  # (css class, line)

    @property
    def decision(self) -> str:
        return self.micro.decision or "awaiting review"


def _diff_lines(patch: str) -> list[tuple[str, str]]:
    out = []
    for line in patch.splitlines():
        if line.startswith(("+++ a/", "+++ b/", "+++ /dev/null", "--- a/", "--- b/", "--- /dev/null")) or (
            line.startswith(("diff --git ", "index ", "new file mode", "deleted file mode"))
        ):
            css = "file"
        elif line.startswith("@@"):
            css = "hunk"
        elif line.startswith("+"):
            css = "add"
        elif line.startswith("-"):
            css = "del"
        else:
            css = "ctx"
        out.append((css, line))
    return out


def micro_steps(run: Run, events: list[ev.Event], status: RunStatus, val: dict[StepKey, float]) -> list[MicroStepView]:
    """Every checked backward attempt as the event log told it (`store.micro_steps`), joined to its
    gate verdict and the losses around it.

    The losses are the run model's, as `skilltui review` shows them: the mean of the step the
    micro-step learned from and of the next finished step, over the works both scored.
    """
    found: list[MicroStepView] = []
    for micro in micro_step_records(run, events):
        for m in micro.told:
            before, after = status.loss_change((m.epoch, m.step))
            if m.decision is not None and m.decision != "approve":
                # The next step trained on the notes without it: its loss says nothing of this attempt.
                after = None
            patch = m.attempt_dir / "patch.diff"
            view = MicroStepView(
                m,
                loss_before=before,
                loss_after=after,
                val_step=val.get((m.epoch, m.step)),
                diff=_diff_lines(patch.read_text(encoding="utf-8")) if patch.exists() else [],
            )
            if (verdict := micro.verdicts.get(m.attempt)) is not None:
                view.val_before, view.val_after = verdict.before, verdict.after
                view.gate_advice = {"keep": "keep", "rollback": "roll back"}.get(verdict.advice, "nothing")
                if verdict.delta is not None:
                    view.gate_figures = delta_text(verdict.delta, verdict.low, verdict.high, verdict.level, verdict.n)
            found.append(view)
    return found


def notes(run: Run) -> list[dict[str, str]]:
    """The notes at the pool's HEAD: path, description, body rendered to HTML (raw HTML and images off)."""
    md = MarkdownIt("commonmark", {"html": False}).disable("image")
    pool = run.pool
    out = []
    for rel in sorted(pool.note_paths()):
        text = (pool.root / rel).read_text(encoding="utf-8", errors="replace")
        meta, body, _ = parse_note(text)
        description = str((meta or {}).get("description", ""))
        out.append({"path": rel, "description": description, "html": md.render(body)})
    return out


def curves(view: RunView) -> dict[str, Any]:
    """The train and validation curves of the finished steps: the means `runs`, `compare` and the app show."""
    train = finished_means(view)
    val = {key: mean for key, mean in val_means(view).items() if key in train}
    series = [Series("train mean", "train", *_points(train))]
    if val:
        series.append(Series("selection (validation) mean", "val", *_points(val)))
    values = {key: mean.value for key, mean in val.items()}
    return {"chart": chart(sorted(train), series) if train else None, "val": values}


def pool_sizes(view: RunView, budget: float) -> Any:
    """The pool's tokens after each step that kept an update, as a chart against the budget."""
    after = pool_by_step(view)
    if not after:
        return None
    scale = max(budget, *after.values())
    return chart(sorted(after), [Series("pool size", "pool", after, {})], scale=scale, height=160)


def setting_text(value: Any) -> str:
    """A setting as a person reads it: yes / no, a list joined, a mapping as key=value, – for none."""
    if value is None or value == {} or value == []:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{key}={setting_text(item)}" for key, item in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(setting_text(item) for item in value)
    return str(value)


def _points(means: dict[StepKey, Mean]) -> tuple[dict[StepKey, float], dict[StepKey, int]]:
    # A mean recorded before the count existed covers an unknown number of works: no count, not zero.
    return {k: m.value for k, m in means.items()}, {k: m.works for k, m in means.items() if m.works}


@dataclass
class Page:
    """The report's HTML, and what reading the run's events left out: said by the command on stderr only,
    since the page is for a reader of the run, not of its record's repairs."""

    html: str
    skipped: str | None


def build(run: Run) -> Page:
    record = read_run(run.events_path)
    try:
        config = read_json(run.config_path)
    except (OSError, ValueError):
        raise UsageError(f"{run.config_path} is unreadable; this run cannot be reported") from None
    view = RunView().fold(record.events)
    status = status_of(run, view, record)
    drawn = curves(view)
    budget = float(config.get("pool_budget", DEFAULT_POOL_BUDGET))
    env = Environment(
        loader=PackageLoader("skilltui.apps.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["setting"] = setting_text
    env.filters["counted"] = counted
    html = env.get_template("report.html.j2").render(
        run=run,
        config=config,
        status=status,
        chart=drawn["chart"],
        pool_chart=pool_sizes(view, budget),
        pool_budget=budget,
        micro_steps=micro_steps(run, record.events, status, drawn["val"]),
        notes=notes(run),
        tests=view.tests,
        history_actions=[e for e in record.events if isinstance(e, ev.HistoryAction)],
        generated=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )
    return Page(html, status.skipped)


def write_report(run: Run, to: Path) -> Page:
    """Write the page atomically; refuse a target that is a folder or sits in a folder that does not exist."""
    to = Path(to).expanduser()
    if to.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"--to {to}: name the page FILE.html")
    if to.is_dir():
        raise UsageError(f"--to {to} is a folder; name the page FILE.html")
    if not to.parent.is_dir():
        raise UsageError(f"--to {to}: folder {to.parent} does not exist; create it first")
    inside = run_containing(to.parent)
    if inside is not None:
        raise UsageError(f"--to {to} is inside run {inside.name} ({inside}); write the page outside every run")
    page = build(run)
    write_atomic(to, page.html)
    return page
