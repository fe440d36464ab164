"""Build the report page of one run from its own records: config, events, attempts, and the pool.

Sections, in order: the settings; the train and validation curves (inline SVG); every
micro-step with its decision, who made it, the losses around it and its diff, coloured;
the notes as the run left them. The page is rendered from Jinja2 templates in
`skilltui/report/templates/` with autoescaping on, carries its stylesheet inline, uses no
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

from ..core.errors import UsageError
from ..core.formats import parse_note
from ..engine.run import Run, read_json, run_containing, write_atomic
from ..engine.session import DEFAULT_POOL_BUDGET
from ..model.bus import read_events
from ..model.view import StepKey
from ..runs.status import RunStatus, run_status
from .svg import Series, chart


@dataclass
class MicroStep:
    label: str
    epoch: int
    step: int
    group: int
    attempt: int
    subject: str
    message: str
    decision: str = "awaiting review"
    by: str = ""
    reason: str = ""
    note: str = ""
    loss_before: float | None = None
    loss_after: float | None = None
    val_before: float | None = None
    val_after: float | None = None
    gate_advice: str = ""
    val_step: float | None = None  # mean validation loss after the micro-step's step
    diff: list[tuple[str, str]] = field(default_factory=list)  # (css class, line)


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


def micro_steps(
    run: Run, events: list[dict[str, Any]], status: RunStatus, val: dict[StepKey, float]
) -> list[MicroStep]:
    """Every checked backward attempt, joined to its decision, its gate verdict and the losses around it.

    The losses are the run model's, as `skilltui review` shows them: the mean of the step the
    micro-step learned from and of the next finished step, over the works both scored.
    """
    found: dict[tuple[int, int, int, int], MicroStep] = {}
    for e in events:
        key = (e.get("epoch"), e.get("step"), e.get("group"), e.get("attempt"))
        if e["kind"] == "micro_step":
            patch = run.backward_dir(e["epoch"], e["step"], e["group"]) / f"attempt{e['attempt']}" / "patch.diff"
            before, after = status.loss_change((e["epoch"], e["step"]))
            found[key] = MicroStep(
                label=e["label"],
                epoch=e["epoch"],
                step=e["step"],
                group=e["group"],
                attempt=e["attempt"],
                subject=e["subject"],
                message=e.get("message", ""),
                loss_before=before,
                loss_after=after,
                val_step=val.get((e["epoch"], e["step"])),
                diff=_diff_lines(patch.read_text(encoding="utf-8")) if patch.exists() else [],
            )
        elif e["kind"] == "decision" and key in found:
            m = found[key]
            m.decision, m.by, m.reason, m.note = e["decision"], e["by"], e.get("reason", ""), e.get("note", "")
        elif e["kind"] == "gate" and key in found:
            m = found[key]
            m.val_before, m.val_after = e.get("before"), e.get("after")
            m.gate_advice = {"keep": "keep", "rollback": "roll back"}.get(e.get("advice", ""), "nothing")
    return list(found.values())


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


def curves(events: list[dict[str, Any]]) -> dict[str, Any]:
    steps: list[StepKey] = []
    train: dict[StepKey, float] = {}
    train_n: dict[StepKey, int] = {}
    val: dict[StepKey, float] = {}
    val_n: dict[StepKey, int] = {}
    for e in events:
        if e["kind"] == "step_finished" and e.get("mean_loss") is not None:
            key = (e["epoch"], e["step"])
            if key not in steps:
                steps.append(key)
            train[key] = e["mean_loss"]
            if e.get("works_in_mean"):
                train_n[key] = e["works_in_mean"]
            if e.get("val_mean_loss") is not None:
                val[key] = e["val_mean_loss"]
                val_n[key] = e.get("val_works_in_mean") or 0
    series = [Series("train mean", "train", train, train_n)]
    if val:
        series.append(Series("validation mean", "val", val, val_n))
    return {"chart": chart(sorted(steps), series) if steps else None, "val": val}


def pool_sizes(events: list[dict[str, Any]], budget: float) -> Any:
    """The pool's tokens after each step (its last kept micro-step's), from the micro_step and decision events."""
    sizes: dict[tuple[int, int, int, int], int] = {}
    after: dict[StepKey, int] = {}
    for e in events:
        key = (e.get("epoch"), e.get("step"), e.get("group"), e.get("attempt"))
        if e["kind"] == "micro_step" and e.get("pool_tokens") is not None:
            sizes[key] = e["pool_tokens"]  # type: ignore[index]
        elif e["kind"] == "decision" and e.get("decision") == "approve" and key in sizes:
            after[(e["epoch"], e["step"])] = sizes[key]  # type: ignore[index]
    if not after:
        return None
    steps = sorted(after)
    scale = max(budget, *after.values())
    return chart(steps, [Series("pool size", "pool", dict(after), {})], scale=scale, height=160)


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


def build(run: Run) -> str:
    events = read_events(run.events_path)
    try:
        config = read_json(run.config_path)
    except (OSError, ValueError):
        raise UsageError(f"{run.config_path} is unreadable; this run cannot be reported") from None
    status = run_status(run, events)
    drawn = curves(events)
    budget = float(config.get("pool_budget", DEFAULT_POOL_BUDGET))
    env = Environment(
        loader=PackageLoader("skilltui.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["setting"] = setting_text
    return env.get_template("report.html.j2").render(
        run=run,
        config=config,
        status=status,
        chart=drawn["chart"],
        pool_chart=pool_sizes(events, budget),
        pool_budget=budget,
        micro_steps=micro_steps(run, events, status, drawn["val"]),
        notes=notes(run),
        history_actions=[e for e in events if e.get("kind") == "history"],
        generated=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )


def write_report(run: Run, to: Path) -> Path:
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
    write_atomic(to, build(run))
    return to
