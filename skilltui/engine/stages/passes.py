"""The per-work stages of a step: forward, loss; and the per-group reduce.

- forward: the writer reads the story and the pool (through traced tools) and writes
  episodes first..last as Fountain. Its tools cannot reach the work's human episodes or
  any loss report.
- loss: the engine scores the written episodes against the human ones; a judge turns the
  scores into a markdown report and a small rubric (engine/loss/rubric.py), blended in only
  with --judge-weight.
- reduce: a group's loss reports folded into one commonality report (only when the group
  has more than one report).

Each stage writes its marker last and atomically (`done.json`, `<work>.json`,
`summary.md`), which is what a resumed run checks to skip it.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...agents.base import BackendError
from ...agents.tools import Sandbox
from ...core.formats import BODY_HEADING, FOLDERS, MAX_BODY_CHARS, MAX_DESCRIPTION_CHARS, MAX_LINES
from ...model import events as ev
from ...model.at import At
from ...pool.notes import Pool
from ...store.places import Place, Sample
from ...store.run_folder import read_json, write_atomic, write_json
from ..data.works import Work
from ..loss import rubric
from ..loss.score_pool import score_in_worker
from ..prompts import Prompts, data
from .context import Context

EPISODE_FILE = re.compile(r"^0*(\d+)\.fountain$")


class StageError(Exception):
    """A stage could not finish for this work; it costs the work this step, nothing more."""


def written_episodes(scripts: Path, first: int, last: int) -> dict[int, str]:
    found: dict[int, str] = {}
    if scripts.is_dir():
        for file in scripts.iterdir():
            match = EPISODE_FILE.match(file.name)
            # A folder or a link under an episode's name is no episode (a link could lead anywhere).
            if match and first <= int(match.group(1)) <= last and file.is_file() and not file.is_symlink():
                found[int(match.group(1))] = file.read_text(encoding="utf-8", errors="replace")
    return found


def forward_prompt(
    prompts: Prompts, work: Work, episodes: tuple[int, int], story: Path, pool: Path, scripts: Path
) -> str:
    """The writer's task for episodes (first, last); `--estimate` sizes the same text."""
    first, last = episodes
    return prompts.render(
        "forward",
        work=work.name,
        meta=work.meta,
        first=first,
        last=last,
        story_path=str(story),
        pool_dir=str(pool),
        scripts_dir=str(scripts),
    )


def story_lead(story: Path) -> str:
    """The story as it leads the writer's prompt: marked as data, which its own text cannot close."""
    return f"# The story\n\n{data(story.read_text(encoding='utf-8'), 'markdown')}\n"


@dataclass(frozen=True)
class _ForwardInputs:
    """What the writer's pass reads from disk before its call: its cleared scripts folder, pool and story."""

    scripts: Path
    pool: Pool
    headers: list[tuple[str, str]]
    lead: str


def _prepare_forward(place: Place, run_pool: Pool) -> _ForwardInputs | None:
    """Ready a work's forward on disk; None when its artifacts are already there.

    Every file this touches (the done marker, a dead attempt's scripts, the pool's notes, the
    story) is read or removed here, in one function that `forward` runs in a thread: on the
    event loop, a slow disk or a big pool would stall the app's keys and every other work.
    """
    out = place.work_dir
    if (out / "done.json").exists():
        return None
    scripts = out / "scripts"
    if scripts.exists():  # a dead attempt's half-written episodes must not count
        for stale in scripts.iterdir():
            # The writer may make folders there too; only its own folder is cleared, never through a link.
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale)
            else:
                stale.unlink()
    scripts.mkdir(parents=True, exist_ok=True)
    pool = Pool(place.notes) if place.notes else run_pool
    # The story leads the prompt: the same work's forward re-reads it word for word every
    # step, so it is cached across steps when one comes later (cache_policy).
    return _ForwardInputs(scripts, pool, pool.headers(), story_lead(place.story))


async def forward(ctx: Context, work: Work, at: At, episodes: tuple[int, int], place: Place | None = None) -> bool:
    """The writer's pass for one work in step `at`, episodes (first, last).

    True when it ran, False when its artifacts were already there.
    """
    (epoch, step), (first, last) = at.step_key, episodes
    place = place or Place.training(ctx.run, epoch, step, work.name)
    out = place.work_dir
    inputs = await asyncio.to_thread(_prepare_forward, place, ctx.run.pool)
    if inputs is None:
        return False
    scripts, pool, headers, lead, story = inputs.scripts, inputs.pool, inputs.headers, inputs.lead, place.story
    prompt = forward_prompt(ctx.prompts, work, episodes, story, pool.root, scripts)
    prefix = pool_context(ctx.prompts, headers, pool.root)
    # Records are synced to disk: written off the loop, so the app's keys never wait on a disk.
    await asyncio.to_thread(write_atomic, out / "prompt.md", f"{lead}\n{prefix}\n{prompt}")
    sandbox = Sandbox(
        read_roots=[story, pool.root],
        write_roots=[scripts],
        denied=[work.root, place.loss_dir, pool.root / ".git"],
        traced=pool.root,
        base=pool.root,  # the prompt lists notes relative to the pool
    )
    here = At(epoch, step, work=work.name)  # a validation point's group and attempt are not the call's
    request = ctx.calls.request(
        "forward",
        prompt,
        {
            "story": str(story),
            "pool": str(pool.root),
            "out_dir": str(scripts),
            "first": first,
            "last": last,
            "headers": headers,
        },
        here,
        prefix=prefix,
    )
    request.lead = lead
    # Marked when a later step re-reads it, or to read what an earlier step cached (a request
    # reads the cache only up to a mark of its own); a story read once is left unmarked.
    earlier = epoch > 0 or first > 1
    request.lead_ttl = ctx.calls.reread_ttl() if _reread_later(ctx, work, epoch, last) else ("5m" if earlier else None)
    request.finished = lambda: all((scripts / f"{n:02d}.fountain").is_file() for n in range(first, last + 1))
    seen: set[int] = set()
    # The read trace per episode: the notes opened before each episode was first written.
    before_episode: dict[str, list[str]] = {}
    inner_tool = request.on_tool

    def on_tool(tool: str, path: str, error: str | None) -> None:
        inner_tool(tool, path, error)
        match = EPISODE_FILE.match(os.path.basename(path))
        if error is None and tool == "create" and match and int(match.group(1)) not in seen:
            seen.add(int(match.group(1)))
            before_episode[str(int(match.group(1)))] = list(sandbox.reads)
            ctx.bus.emit(ev.EpisodeWritten(**here.fields(), episode=int(match.group(1)), path=path))

    request.on_tool = on_tool
    result = await ctx.calls.call(request, out / "transcript.json", here, sandbox)
    written = await asyncio.to_thread(written_episodes, scripts, first, last)
    missing = [n for n in range(first, last + 1) if not written.get(n, "").strip()]
    await asyncio.to_thread(write_json, out / "reads.json", {"notes": sandbox.reads, "episodes": before_episode})
    if missing:
        raise StageError(
            f"the writer did not write episode{'s' if len(missing) > 1 else ''} "
            f"{', '.join(map(str, missing))} of {work.name}"
        )
    await asyncio.to_thread(
        write_json,
        out / "done.json",
        {"episodes": sorted(written), "reads": sandbox.reads, "turns": result.turns, "cost_usd": result.cost_usd},
    )
    return True


async def loss(
    ctx: Context, work: Work, at: At, episodes: tuple[int, int], place: Place | None = None
) -> tuple[Sample, bool]:
    """Score one work in step `at`, episodes (first, last), and have the judge write its report.

    Returns the sample and whether it ran. A validation place gets no `loss` event:
    validation reports its own (`val_loss`).
    """
    (epoch, step), (first, last) = at.step_key, episodes
    place = place or Place.training(ctx.run, epoch, step, work.name)
    report, scores_path = place.loss_dir / f"{work.name}.md", place.loss_dir / f"{work.name}.json"
    reads = place.work_dir / "reads.json"
    if scores_path.exists() and report.exists():
        saved = _saved_loss(scores_path)
        if saved is not None:
            return Sample(work.name, first, last, saved, report, scores_path, reads), False
        # Scores are derived from the scripts and the human episodes, so a damaged file (a
        # torn write, a hand edit) is computed again rather than failing a finished step.
        ctx.bus.emit(
            ev.Warning_(
                message=f"{scores_path} was damaged (not the scores the loss stage writes); "
                f"the loss of {work.name} for epoch {epoch} step {step} was recomputed"
            )
        )
    scripts = place.work_dir / "scripts"
    written = written_episodes(scripts, first, last)
    human = {n: work.episode_text(n) for n in range(first, last + 1)}
    scores = await score_in_worker(written, human)
    prompt = ctx.prompts.render(
        "loss",
        work=work.name,
        first=first,
        last=last,
        scores=scores,
        episodes=[{"number": n, "human": human[n], "written": written.get(n, "")} for n in sorted(human)],
    )
    here = At(epoch, step, work=work.name)
    request = ctx.calls.request(
        "loss", prompt, {"work": work.name, "first": first, "last": last, "scores": scores, "written": written}, here
    )
    # The human episodes lead the prompt: the judge of the next epoch re-reads them word for
    # word, an epoch later (past 5 minutes), so they are cached for an hour when there is one;
    # the last epoch's judge marks them only to read that entry (a read renews it, writes nothing).
    request.lead = ctx.prompts.render(
        "loss_targets",
        work=work.name,
        first=first,
        last=last,
        episodes=[{"number": n, "human": human[n]} for n in sorted(human)],
    )
    request.lead_ttl = "1h" if epoch < ctx.settings.epochs - 1 else ("5m" if epoch > 0 else None)
    result = await ctx.calls.call(request, place.loss_dir / f"{work.name}.transcript.json", here)
    # The rubric is optional: a missing or malformed one leaves the engine's number in charge.
    text, judged = rubric.judged(result.text, scores, ctx.settings.judge_weight)
    if not text.strip():
        raise StageError(f"the judge wrote an empty loss report for {work.name}")
    await asyncio.to_thread(write_atomic, report, _with_scores(text, judged))
    await asyncio.to_thread(write_json, scores_path, judged)
    if not place.validation:
        ctx.bus.emit(
            ev.Loss(
                epoch=epoch,
                step=step,
                work=work.name,
                loss=judged["loss"],
                scores=judged["scores"],
                report=str(report),
                engine_loss=judged["engine_loss"],
                rubric=judged["rubric"],
                rubric_error=judged["rubric_error"],
            )
        )
    return Sample(work.name, first, last, judged["loss"], report, scores_path, reads), True


def _saved_loss(scores_path: Path) -> float | None:
    """The loss a scores file holds, or None when it is not one the loss stage wrote."""
    try:
        saved = read_json(scores_path)
    except (OSError, ValueError):
        return None
    loss = saved.get("loss") if isinstance(saved, dict) else None
    if isinstance(loss, bool) or not isinstance(loss, int | float) or not math.isfinite(loss):
        return None
    return float(loss)


def _reread_later(ctx: Context, work: Work, epoch: int, last: int) -> bool:
    """Whether a later step of this run gives this work another forward (so re-reads its story)."""
    s = ctx.settings
    reach = s.steps * s.episodes_per_step
    return epoch < s.epochs - 1 or any(last < e <= reach for e in work.episodes if e % s.episodes_per_step == 0)


def _with_scores(report: str, scores: dict[str, Any]) -> str:
    """The judge's report with the engine's numbers and the rubric appended, so the evidence carries the truth."""
    judged = rubric.render(scores)
    if "<!-- scores:" in report:
        return f"{report.rstrip()}\n\n{judged}"
    table = "\n".join(f"| {name} | {value:.3f} |" for name, value in scores["scores"].items())
    return (
        f"{report.rstrip()}\n\n## Scores computed by the engine\n\nLoss {scores['engine_loss']:.3f}.\n\n"
        f"| part | similarity |\n|---|---|\n{table}\n\n{judged}\n"
        f"<!-- scores: {json.dumps(scores['scores'], sort_keys=True)} -->\n"
    )


async def reduce(ctx: Context, samples: list[Sample], at: At) -> tuple[Path, bool]:
    """Fold group `at`'s reports into one commonality report. Returns its path and whether it ran."""
    epoch, step, group = at.epoch, at.step, at.group
    if group is None:
        raise ValueError(f"a reduce folds a group's reports: {at} names no group")
    out = ctx.run.backward_dir(epoch, step, group) / "summary.md"
    if out.exists():
        return out, False
    reports = {s.work: s.report.read_text(encoding="utf-8") for s in samples}
    # The reduce is one text call with no file tools, so its evidence comes inline: the
    # reports and the notes each writer opened (its read trace), never a path to open.
    reads = {s.work: _notes_read(s.reads) for s in samples}
    prompt = ctx.prompts.render("reduce", reports=reports, count=len(reports), reads=reads)
    request = ctx.calls.request("reduce", prompt, {"reports": reports, "reads": reads}, at)
    result = await ctx.calls.call(request, out.parent / "reduce.transcript.json", at)
    if not result.text.strip():
        raise BackendError("the reduce call returned an empty commonality report")
    await asyncio.to_thread(write_atomic, out, result.text if result.text.endswith("\n") else result.text + "\n")
    ctx.bus.emit(ev.Summary(**at.fields(), works=[s.work for s in samples], path=str(out)))
    return out, True


def _notes_read(trace: Path) -> list[str]:
    try:
        data = read_json(trace)
    except (OSError, ValueError):
        return []
    return list(data.get("notes", [])) if isinstance(data, dict) else list(data)


def note_policy(prompts: Prompts) -> str:
    """The note rules: what a note is, the same for every call of a run."""
    return prompts.render(
        "note_policy",
        folders=FOLDERS,
        body_heading=BODY_HEADING,
        max_lines=MAX_LINES,
        max_body_chars=MAX_BODY_CHARS,
        max_description_chars=MAX_DESCRIPTION_CHARS,
    )


def pool_context(prompts: Prompts, headers: list[tuple[str, str]], pool_dir: Path, *, policy: bool = True) -> str:
    """The pool's headers and (with `policy`) the note rules: the prompt prefix every work of a step shares.

    The backward agent gets the rules in its run-wide lead instead (`backward_prompt`),
    since its pool listing changes with every commit and the rules never do; a candidate
    of several (`candidates.py`) names its own working copy as `pool_dir`, and the cost
    estimate the pool a run would have.
    """
    return prompts.render(
        "pool_context",
        pool_dir=str(pool_dir),
        headers=Pool.headers_text(headers),
        note_policy=note_policy(prompts) if policy else "",
    )
