"""Epoch-end consolidation: one more micro-step that merges, prunes and shortens the pool.

Training only adds: each update may add or edit a note, and nothing merges two notes that
say the same thing or drops one nobody reads. So an epoch that kept any update ends with a
consolidation (`--consolidate`, on by default; `--no-consolidate` skips it), the slow update
beside the fast ones. It is a `MicroStep` like any other, with another `Role`: its own
agent role (`consolidate`) and prompt (`prompts/consolidate.md.j2`), its own, larger edit
budget (`--consolidate-edit-lines`, 4 x --max-edit-lines unless set), and one more check
in the commit tool: it may not make the pool bigger, in tokens or in notes, so it cannot
add guidance. Lint, leakage, the gate and review are the ones every update has; the gate
asks it the question that fits its aim (within `--consolidate-margin`, `gate.judge`).

Its agent sees the whole pool, every note's attribution this epoch (forward passes that read
it, mean loss with and without it), the notes no writer read this epoch, pairs of notes
whose descriptions or bodies are near duplicates (rapidfuzz), and the pool's size against
`--pool-budget`. The same figures are written to `evidence.md` in its folder, which is what
the reviewer reads as the evidence it acted on.

It lives where the epoch's last step keeps its micro-steps, as group 0
(`epoch<E>/step<S>/backward/g0/`): no group of works has that number, the step's own
micro-steps are 1..N, and every reader of micro-step records finds it there; its label is
`epoch <E> consolidation`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rapidfuzz import fuzz

from ...core.formats import parse_note
from ...model.at import At
from ...model.review import Reviewer
from ...pool.notes import Pool
from ...store.micro_records import micro_step_done
from ...store.micro_steps import kept_updates
from ...store.run_folder import Run, write_atomic
from ..data.works import covers
from ..notes.note_checks import lint_pool, pool_tokens
from ..stages.context import Context
from ..stages.passes import note_policy, pool_context
from .attribution import NoteStats, attribute, episodes
from .backward_attempt import Role
from .backward_prompt import BackwardPrompt, Brief, Where
from .micro_step import Evidence, MicroStep

if TYPE_CHECKING:
    from ..validation.validator import Validator

GROUP = 0  # the consolidation's place among the last step's micro-steps (1..N are groups of works)
MATCH = 90  # a rapidfuzz score from which two descriptions say the same thing (the offline backend merges them)
NEAR = 80  # from which a pair is shown to the agent as near duplicates
FIGURES = ("passes", "mean_with", "mean_without")  # a note's attribution, as the prompt shows it


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    what: str  # "description" or "body"
    score: int


def notes_of(pool: Pool) -> dict[str, tuple[str, str, str]]:
    """path -> (description, body, whole text) of every note in the pool's working tree."""
    found = {}
    for rel in pool.note_paths():
        text = (pool.root / rel).read_text(encoding="utf-8", errors="replace")
        meta, body, _ = parse_note(text)
        found[rel] = (str((meta or {}).get("description", "")), body, text)
    return found


def near_duplicates(notes: dict[str, tuple[str, str, str]]) -> list[Pair]:
    """Pairs of notes whose descriptions (token order aside) or bodies (one's words inside the other's) are close."""
    pairs = []
    paths = sorted(notes)
    for i, a in enumerate(paths):
        for b in paths[i + 1 :]:
            described = fuzz.token_sort_ratio(notes[a][0], notes[b][0], processor=str.casefold)
            bodies = fuzz.token_set_ratio(notes[a][1], notes[b][1], processor=str.casefold)
            if described >= NEAR:
                pairs.append(Pair(a, b, "description", round(described)))
            elif bodies >= NEAR:
                pairs.append(Pair(a, b, "body", round(bodies)))
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))


def epoch_stats(run: Run, epoch: int, notes: list[str]) -> dict[str, NoteStats]:
    """Per note, the attribution of this epoch's forward passes alone (reads, loss with and without)."""
    return attribute([e for e in episodes(run) if e.epoch == epoch], notes)


@dataclass(frozen=True)
class Findings:
    """What the consolidation is shown: every note's figures, the unread ones, the near-duplicate pairs."""

    stats: dict[str, NoteStats]
    unread: list[str]
    pairs: list[Pair]
    tokens: int
    notes: dict[str, tuple[str, str, str]]  # `notes_of` the pool, as the figures were taken on it

    def evidence(self, budget: float) -> str:
        """`evidence.md`: the figures as a reviewer reads them."""
        lines = [f"# Consolidation evidence\n\nPool: {self.tokens:,} tokens of {budget:,.0f} (--pool-budget).\n"]
        lines.append("| note | read by | loss with | loss without |\n|---|---|---|---|")
        for path, s in sorted(self.stats.items()):
            # As the attribution table writes them: `-` where no episode was written with (or without) it.
            w = "-" if s.mean_with is None else f"{s.mean_with:.3f} ({s.with_n})"
            wo = "-" if s.mean_without is None else f"{s.mean_without:.3f} ({s.without_n})"
            lines.append(f"| {path} | {s.passes} | {w} | {wo} |")
        lines.append("\nOffered to the writers and never read this epoch: " + (", ".join(self.unread) or "none"))
        pairs = "; ".join(f"{p.a} / {p.b} ({p.what} {p.score})" for p in self.pairs)
        lines.append("\nNear duplicates: " + (pairs or "none"))
        return "\n".join(lines) + "\n"


def offered(run: Run, pool: Pool, epoch: int, step: int) -> set[str] | None:
    """The notes the writers of the epoch's last step could open: the pool as its first micro-step found it.

    A note added by that step's own updates was never offered to a writer, so its having no
    reads says nothing; None when the step recorded no micro-step (then every note counts).
    """
    backward = run.step_dir(epoch, step) / "backward"
    for gdir in sorted(backward.glob("g*"), key=lambda g: int(g.name[1:]) if g.name[1:].isdigit() else -1):
        if gdir.name != f"g{GROUP}" and (gdir / "before.txt").exists():
            start = (gdir / "before.txt").read_text(encoding="utf-8").strip()
            return {p for p in pool.git("ls-tree", "-r", "--name-only", start).splitlines() if p.endswith(".md")}
    return None


def findings(run: Run, pool: Pool, epoch: int, step: int) -> Findings:
    notes = notes_of(pool)
    stats = epoch_stats(run, epoch, sorted(notes))
    stats = {path: s for path, s in stats.items() if path in notes}
    seen = offered(run, pool, epoch, step)
    unread = sorted(p for p in notes if stats[p].passes == 0 and (seen is None or p in seen))
    return Findings(stats, unread, near_duplicates(notes), pool_tokens(pool), notes)


async def build_prompt(ctx: Context, pool: Pool, brief: Brief, where: Where, tokens: int) -> BackwardPrompt:
    """The consolidation's prompt (kept as prompt.md): the whole pool and the epoch's figures on it."""
    found = await asyncio.to_thread(findings, ctx.run, pool, where.at.epoch, where.at.step)
    notes = found.notes
    lexicon = await asyncio.to_thread(lambda: ctx.training.lexicon)
    problems = await asyncio.to_thread(lint_pool, pool, lexicon)
    write_atomic(brief.out / "lint_report.txt", "\n".join(problems) + "\n" if problems else "no problems\n")
    subject = f"train {where.label}"
    shown = [
        {"path": p, "text": notes[p][2], **{k: getattr(found.stats[p], k) for k in FIGURES}} for p in sorted(notes)
    ]
    pairs = [vars(p) for p in found.pairs]
    prompt = ctx.prompts.render(
        "consolidate",
        label=where.label,
        pool_dir=str(pool.root),
        notes=shown,
        unread=found.unread,
        pairs=pairs,
        pool_tokens=tokens,
        pool_budget=ctx.settings.pool_budget,
        max_edit_lines=ctx.settings.consolidation_budget,
        commit_subject=subject,
        reviewer_notes=brief.notes,
        failures=brief.failures,
        lint_problems=problems,
        note_policy=note_policy(ctx.prompts),
    )
    headers = pool.headers()
    prefix = pool_context(ctx.prompts, headers, pool.root, policy=False)
    write_atomic(brief.out / f"attempt{where.at.attempt}" / "prompt.md", f"{prefix}\n{prompt}")
    context = {
        "pool": str(pool.root),
        "headers": headers,
        "reads": {p: s.passes for p, s in found.stats.items()},
        "unread": found.unread,
        "pairs": pairs,
        "match": MATCH,
        "pool_tokens": tokens,
        "pool_budget": ctx.settings.pool_budget,
        "notes": brief.notes,
        "failures": brief.failures,
        "lint": problems,
    }
    return BackwardPrompt("", prefix, prompt, context, subject, None)


def no_growth(pool: Pool, before: str, start_tokens: int) -> list[str]:
    """A consolidation adds no guidance: the pool may not grow in tokens or in notes."""
    problems = []
    size = pool_tokens(pool)
    if size > start_tokens:
        problems.append(
            f"a consolidation may not grow the pool ({start_tokens:,} → {size:,} tokens): merge, shorten or remove"
        )
    status = pool.git("diff", "--cached", "--name-status", "--no-renames", before).splitlines()
    added = sum(1 for line in status if line.startswith("A") and line.endswith(".md"))
    removed = sum(1 for line in status if line.startswith("D") and line.endswith(".md"))
    if added > removed:
        problems.append(f"a consolidation may not add notes ({added} added, {removed} removed): merge into one kept")
    return problems


CONSOLIDATE = Role(
    "consolidate", "consolidation", build_prompt, lambda ctx: ctx.settings.consolidation_budget, no_growth, True
)


class Consolidation(MicroStep):
    """The epoch's consolidation: `MicroStep.run()` with the consolidate role, at group 0 of its last step."""

    def __init__(self, ctx: Context, reviewer: Reviewer, at: At, evidence: Path, gate: Validator | None) -> None:
        """The consolidation of `at`'s epoch, at group 0 of the step `at` names (its last)."""
        super().__init__(ctx, reviewer, Evidence([], evidence), at.to(group=GROUP), GROUP, gate)
        self.label = f"epoch {at.epoch} consolidation"
        self.role = CONSOLIDATE

    def evidence(self) -> str:
        return f"epoch {self.epoch}'s attribution of every note (evidence.md)"


def last_step(ctx: Context, epoch: int) -> int | None:
    """The last step the loop ran in this epoch (it stops at the first step no work covers)."""
    s, last = ctx.settings, None
    for step in range(s.steps):
        first, end = step * s.episodes_per_step + 1, (step + 1) * s.episodes_per_step
        if not any(covers(w, first, end) for w in ctx.training.works):
            break
        last = step
    return last


def kept_an_update(run: Run, epoch: int) -> bool:
    """Whether any micro-step of the epoch (not an earlier consolidation) kept a commit that changed a note."""
    return any(group != GROUP and run.pool.files(after) for (_, _, group), after in kept_updates(run, epoch))


async def consolidate_epoch(
    ctx: Context, reviewer: Reviewer, gate: Validator | None, epoch: int, before: Callable[[], Awaitable[None]]
) -> None:
    """End the epoch with its consolidation, when it is on and the epoch kept an update; resumes like any micro-step.

    `before` is the loop's check before a stage (pause, stop, --max-cost).
    """
    s = ctx.settings
    step = last_step(ctx, epoch)
    if not s.consolidate or s.no_backward or step is None:
        return
    out = ctx.run.backward_dir(epoch, step, GROUP)
    done = micro_step_done(ctx.run, At(epoch, step, GROUP))
    if not done and ctx.run.step_dir(epoch + 1, 0).exists():
        return  # a run made before consolidation already trained on: the epoch is not reopened under it
    if not done and not await asyncio.to_thread(kept_an_update, ctx.run, epoch):
        return
    evidence = out / "evidence.md"
    if not done and not evidence.exists():  # fixed at the first attempt, as its before.txt is
        found = await asyncio.to_thread(findings, ctx.run, ctx.run.pool, epoch, step)
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(evidence, found.evidence(s.pool_budget))
    await before()
    if not await Consolidation(ctx, reviewer, At(epoch, step), evidence, gate).run():
        ctx.stage("backward", "skipped", At(epoch, step, GROUP))
