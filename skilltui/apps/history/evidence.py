"""The evidence a micro-step acted on, as one markdown document: what `e` shows in the review app.

A backward micro-step read its group's commonality report (or, for a group of one, that
work's loss report) and read traces, and may have been given the reviewer's notes of
earlier reruns and the reasons earlier attempts failed their checks. All
of it is in the run folder; nothing here is recomputed, so what the app shows is what the
agent saw.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...model.commits import DECISION_WORDS, Commit, MicroStepRecord
from ...store.micro_steps import read_micro_step
from ...store.run_folder import Run, read_json

HEADING = re.compile(r"^(#{1,5}) ")
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def _embedded(text: str) -> str:
    """A report shown inside another document: its headings one level down, its machine comments gone."""
    out = []
    fenced = False
    for line in COMMENT.sub("", text).strip().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        out.append(line if fenced else HEADING.sub(lambda m: "#" + m.group(1) + " ", line))
    return "\n".join(out)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def _loss(run: Run, micro: MicroStepRecord, work: str) -> float | None:
    try:
        return float(read_json(run.loss_scores(micro.epoch, micro.step, work))["loss"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def evidence_markdown(run: Run, commit: Commit) -> str:
    """Everything the micro-step behind `commit` acted on, or a sentence saying why there is none."""
    micro = commit.micro
    if micro is None:
        return (
            f"# No evidence for {commit.short}\n\n"
            f"`{commit.subject}` was not made by a backward micro-step ({commit.decision or 'no record'}), "
            "so no loss report stands behind it."
        )
    decision = DECISION_WORDS.get(micro.decision or "", "awaiting review")
    who = f" by {micro.by}" if micro.by else ""
    before = f"{commit.loss_before:.3f}" if commit.loss_before is not None else "-"
    after = f"{commit.loss_after:.3f}" if commit.loss_after is not None else "none yet (no later step has finished)"
    parts = [
        f"# Evidence for {micro.label}",
        "",
        f"Commit `{commit.short}`, attempt {micro.attempt}, {decision}{who}. Works: {', '.join(micro.works) or '-'}.",
        "",
        f"Step mean loss {before}; the next step's mean {after} (lower is better). The next step is the "
        "first written with the notes as this step's micro-steps left them.",
    ]
    if scope := commit.loss_scope():
        parts[-1] += f" Both are {scope}."
    summary = _read(micro.folder / "summary.md")
    if summary is not None:
        parts += ["", "## The commonality report it read (summary.md)", "", _embedded(summary)]
    elif len(micro.works) == 1:
        parts += ["", f"A group of one work: the micro-step read the loss report of {micro.works[0]} directly."]
    recorded = read_micro_step(run, (micro.epoch, micro.step, micro.group))
    notes = _before(recorded.rerun_notes, micro)
    if notes:
        parts += ["", "## Reviewer notes from earlier attempts", ""]
        parts += [f"- attempt {n}: {note}" for n, note in notes]
    failed = _before(recorded.failures, micro)
    if failed:
        parts += ["", "## Attempts that failed their checks (each retried from the reset pool)", ""]
        parts += [f"- attempt {n}: {reason}" for n, reason in failed]
    for work in micro.works:
        report = _read(run.loss_report(micro.epoch, micro.step, work))
        loss = _loss(run, micro, work)
        title = f"Loss report: {work}"
        if report is not None and report.startswith("# "):
            # The report's own title (it names the episodes) becomes the section's title.
            first, _, report = report.partition("\n")
            title = first[2:].strip()
        title = f"## {title}" + (f" (loss {loss:.3f})" if loss is not None else "")
        parts += ["", title, "", _reads_line(run, micro, work)]
        parts += ["", _embedded(report) if report is not None else "(the report is missing from the run)"]
    return "\n".join(parts) + "\n"


def _reads_line(run: Run, micro: MicroStepRecord, work: str) -> str:
    """What the writer opened before writing, from its read trace."""
    try:
        trace = read_json(run.work_dir(micro.epoch, micro.step, work) / "reads.json")
    except (OSError, ValueError):
        return "*No read trace was kept for this work.*"
    notes = trace.get("notes", []) if isinstance(trace, dict) else trace
    return "Notes the writer opened: " + (", ".join(f"`{n}`" for n in notes) if notes else "none") + "."


def _before(found: tuple[tuple[int, str], ...], micro: MicroStepRecord) -> list[tuple[int, str]]:
    """What the store recorded of the attempts before this one."""
    return [(n, text) for n, text in found if n < micro.attempt]
