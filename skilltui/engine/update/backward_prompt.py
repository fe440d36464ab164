"""What a backward attempt is told and may read: its prompt, its evidence and its sandbox's read roots.

What the agent is given, so it works with its eyes open:

- its group's loss reports, scores and per-episode read traces (readable in its sandbox,
  nothing else of the run: never a validation work, never another group's evidence);
- the pool's history through `pool_log` / `pool_show`;
- what earlier micro-steps did to the loss (`feedback.py`) and per-note attribution
  (`attribution.py`);
- the problems already in the pool (the whole pool is linted, leaks included; the list is
  also kept as `lint_report.txt`);
- when this is a retry, what went wrong before; when a reviewer asked for a rerun, their notes.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...model.at import At
from ...pool.notes import Pool
from ...store.places import Sample
from ...store.run_folder import write_atomic
from ..notes.note_checks import lint_pool
from ..stages.context import Context
from ..stages.passes import note_policy, pool_context
from .attribution import attribution_table, run_attribution
from .feedback import feedback_text


@dataclass(frozen=True)
class Where:
    """Which attempt of which micro-step (`at`: epoch, step, group, attempt), and the commit it starts from."""

    at: At
    label: str
    before: str
    groups: int = 1  # micro-steps in this step


@dataclass(frozen=True)
class Brief:
    """What one attempt is given: its group's evidence, its folder, the reviewer's notes, the failures before it."""

    samples: list[Sample]
    summary: Path | None
    out: Path  # the micro-step's folder; the attempt writes attempt<N>/ in it
    notes: list[str]
    failures: list[str]


@dataclass(frozen=True)
class BackwardPrompt:
    """One attempt's request text: the run-wide lead, the pool listing, the update's own prompt."""

    lead: str
    prefix: str
    prompt: str
    context: dict[str, Any]
    subject: str
    lead_ttl: str | None


def group_read_roots(pool: Pool, samples: list[Sample], summary: Path | None) -> list[Path]:
    """What a backward agent may read: the pool and its group's evidence, file by file."""
    roots: list[Path] = [pool.root]
    for s in samples:
        roots += [s.report, s.scores, s.reads]
    return roots + ([summary] if summary else [])


def lead_ttl(ctx: Context, where: Where) -> str | None:
    """The cache life of the backward lead: marked when a later micro-step re-reads it, or to
    read what an earlier one cached; a run's only backward call leaves it unmarked."""
    s = ctx.settings
    if where.at.group_index < where.groups:  # the next micro-step of this step starts when this one ends
        return "5m"
    if where.at.step < s.steps - 1 or where.at.epoch < s.epochs - 1:  # past the next step's forward and loss
        return ctx.calls.reread_ttl()
    return "5m" if (where.at.epoch, where.at.step, where.at.group) != (0, 0, 1) else None


async def build_prompt(ctx: Context, pool: Pool, brief: Brief, where: Where, pool_tokens: int) -> BackwardPrompt:
    """Lint the pool as the attempt finds it, gather the evidence and render the prompt (kept as prompt.md).

    `pool_tokens` is the pool's size as the attempt found it (the attempt counts it once, for
    the prompt, the commit tool's budget check and its event).
    """
    samples, summary, out, notes, failures = brief.samples, brief.summary, brief.out, brief.notes, brief.failures
    e, s, g, a = where.at.micro_key
    subject = f"train {where.label}"
    lexicon = await asyncio.to_thread(lambda: ctx.training.lexicon)  # built once: it reads every episode
    headers = pool.headers()
    problems = await asyncio.to_thread(lint_pool, pool, lexicon)
    report = "\n".join(problems) + "\n" if problems else "no problems\n"
    write_atomic(out / "lint_report.txt", report)
    step_report = ctx.run.step_dir(e, s) / "lint_report.txt"
    if (g == 1 and a == 1) or not step_report.exists():  # the pool as the step's backward found it
        write_atomic(step_report, report)
    stats = await asyncio.to_thread(run_attribution, ctx.run, [rel for rel, _ in headers], (e, s))
    prompt = ctx.prompts.render(
        "backward",
        label=where.label,
        pool_dir=str(pool.root),
        summary=str(summary) if summary else None,
        samples=[x.to_dict() for x in samples],
        commit_subject=subject,
        reviewer_notes=notes,
        failures=failures,
        lint_problems=problems,
        feedback=await asyncio.to_thread(feedback_text, ctx.run),
        attribution=attribution_table(stats, [rel for rel, _ in headers]),
        max_edit_lines=ctx.settings.max_edit_lines,
        pool_tokens=pool_tokens,
        pool_budget=ctx.settings.pool_budget,
    )
    # What is the same for every backward call of the run (the instructions, the rules, how a
    # note is written) leads, so each micro-step reads it from the cache; the pool listing,
    # which every commit changes, and this micro-step's evidence follow.
    lead = ctx.prompts.render(
        "backward_rules",
        pool_dir=str(pool.root),
        max_edit_lines=ctx.settings.max_edit_lines,
        note_policy=note_policy(ctx.prompts),
    )
    prefix = pool_context(ctx.prompts, headers, pool.root, policy=False)
    write_atomic(out / f"attempt{a}" / "prompt.md", f"{lead}\n{prefix}\n{prompt}")
    context = {
        "pool": str(pool.root),
        "headers": headers,
        "summary": str(summary) if summary else None,
        "reports": [str(x.report) for x in samples],
        "reads": [str(x.reads) for x in samples],
        "notes": notes,
        "failures": failures,
        "lint": problems,
    }
    return BackwardPrompt(lead, prefix, prompt, context, subject, lead_ttl(ctx, where))
