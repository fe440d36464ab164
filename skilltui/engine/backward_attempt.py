"""One backward attempt: the prompt with its evidence, the sandbox, the agent call and the checks.

What the agent is given, so it works with its eyes open:

- its group's loss reports, scores and per-episode read traces (readable in its sandbox,
  nothing else of the run: never a validation work, never another group's evidence);
- the pool's history through `pool_log` / `pool_show`;
- what earlier micro-steps did to the loss (`feedback.py`) and per-note attribution
  (`attribution.py`);
- the problems already in the pool (the whole pool is linted, leaks included; the list is
  also kept as `lint_report.txt`);
- when this is a retry, what went wrong before; when a reviewer asked for a rerun, their notes.

The commit tool checks before it commits (`note_checks.commit_problems`: lint, leakage,
edit budget) and answers a problem with a tool error, so the agent can fix it in the same
attempt. An agent that ends its turn without committing is reminded once. After the call,
the three checks still stand between the attempt and a micro-step that counts: a new
commit, a clean tree, touched notes that pass the linter. A failure raises
`AttemptFailed` with the pool back at `before`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

from ..agents.base import FatalBackendError
from ..agents.pool_history import PoolHistory
from ..agents.tools import Sandbox, ToolError
from ..model import events as ev
from .attribution import attribution_table, run_attribution
from .context import Context
from .feedback import annotations, feedback_text
from .leakage import Lexicon
from .note_checks import commit_problems, lint_pool, pool_tokens
from .pool import Pool
from .run import write_atomic, write_json
from .stages import Sample, note_policy, pool_context

REMINDER = (
    "You ended your turn without calling the commit tool, so nothing of this update counts yet. "
    "Your edits are still in the pool. Check them, then call commit once (an empty commit if "
    "nothing is worth changing)."
)


class AttemptFailed(Exception):
    """One attempt did not pass its checks; the pool is back at `before`. The message says why."""


@dataclass
class Where:
    epoch: int
    step: int
    group: int
    attempt: int
    label: str
    before: str
    groups: int = 1  # micro-steps in this step

    @property
    def at(self) -> dict[str, int]:
        """Where this attempt is, as the events that speak of it say it."""
        return {"epoch": self.epoch, "step": self.step, "group": self.group, "attempt": self.attempt}


def lexicon_of(ctx: Context) -> Lexicon:
    """The leakage guard for the run's training works, built once per run."""
    if ctx.lexicon is None:
        ctx.lexicon = Lexicon.from_works(ctx.works)
    return ctx.lexicon


def group_read_roots(pool: Pool, samples: list[Sample], summary: Path | None) -> list[Path]:
    """What a backward agent may read: the pool and its group's evidence, file by file."""
    roots: list[Path] = [pool.root]
    for s in samples:
        roots += [s.report, s.scores, s.reads]
    return roots + ([summary] if summary else [])


def _lead_ttl(ctx: Context, where: Where) -> str | None:
    """The cache life of the backward lead: marked when a later micro-step re-reads it, or to
    read what an earlier one cached; a run's only backward call leaves it unmarked."""
    s = ctx.settings
    if where.group < where.groups:  # the next micro-step of this step starts when this one ends
        return "5m"
    if where.step < s.steps - 1 or where.epoch < s.epochs - 1:  # past the next step's forward and loss
        return ctx.reread_ttl()
    return "5m" if (where.epoch, where.step, where.group) != (0, 0, 1) else None


async def run_attempt(
    ctx: Context,
    samples: list[Sample],
    summary: Path | None,
    out: Path,
    where: Where,
    notes: list[str],
    failures: list[str],
) -> dict:
    """One backward pass and its checks. Returns the checked record; raises AttemptFailed."""
    pool = ctx.run.pool
    adir = out / f"attempt{where.attempt}"
    adir.mkdir(parents=True, exist_ok=True)
    e, s, g, a = where.epoch, where.step, where.group, where.attempt
    await _start_clean(ctx, pool, where)
    subject = f"train {where.label}"
    lexicon = await asyncio.to_thread(lexicon_of, ctx)
    headers = pool.headers()
    problems = await asyncio.to_thread(lint_pool, pool, lexicon)
    start_tokens = await asyncio.to_thread(pool_tokens, pool)
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
        pool_tokens=start_tokens,
        pool_budget=ctx.settings.pool_budget,
    )
    # What is the same for every backward call of the run (the instructions, the rules, how a
    # note is written) leads, so each micro-step reads it from the cache; the pool listing,
    # which every commit changes, and this micro-step's evidence follow.
    lead = ctx.prompts.render(
        "backward_rules",
        pool_dir=str(pool.root),
        max_edit_lines=ctx.settings.max_edit_lines,
        note_policy=note_policy(ctx),
    )
    prefix = pool_context(ctx, headers, policy=False)
    write_atomic(adir / "prompt.md", f"{lead}\n{prefix}\n{prompt}")
    commits: list[str] = []
    refused: list[list[str]] = []

    def on_commit(message: str) -> str:
        trouble = commit_problems(
            pool,
            where.before,
            lexicon,
            ctx.settings.max_edit_lines,
            pool_budget=ctx.settings.pool_budget,
            start_tokens=start_tokens,
        )
        if trouble:
            refused.append(trouble)
            listed = "\n".join(f"- {t}" for t in trouble)
            raise ToolError(f"not committed; fix these, then call commit again:\n{listed}")
        body = message.strip()
        full = body if body.startswith(subject) else f"{subject}\n\n{body}"
        # commit_problems staged every change already: commit the index as it stands.
        pool.git("commit", "-q", "--allow-empty", "--no-verify", "-m", full)
        commits.append(pool.head())
        return f"committed {commits[-1][:10]}"

    marks = await asyncio.to_thread(annotations, ctx.run)
    sandbox = Sandbox(
        read_roots=group_read_roots(pool, samples, summary),
        write_roots=[pool.root],
        traced=None,
        on_commit=on_commit,
        base=pool.root,
        history=PoolHistory(pool.root, marks.get),
    )
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
    ctx.stage("backward", "started", e, s, group=g, attempt=a)
    started = time.monotonic()
    try:
        request = ctx.request("backward", prompt, context, prefix=prefix, group=g)
        request.lead, request.lead_ttl = lead, _lead_ttl(ctx, where)
        # The pool listing changes with every commit, so no other request re-reads this prefix;
        # once the commit is made, the agent's next answer is its last (cache_policy).
        request.prefix_shared = False
        request.finished = lambda: bool(commits)
        await ctx.call(request, adir / "transcript.json", sandbox, epoch=e, step=s, group=g)
        if not commits:
            # Ended its turn without committing: remind it once, within this attempt.
            ctx.bus.emit(ev.Warning_(message=f"{where.label}: the agent ended without committing; reminding it once"))
            again = ctx.request(
                "backward",
                f"{prompt}\n## Reminder\n\n{REMINDER}\n",
                {**context, "reminder": True},
                prefix=prefix,
                group=g,
            )
            again.prefix_shared = False
            again.lead, again.lead_ttl = lead, request.lead_ttl  # reads what the first call cached
            again.finished = request.finished
            await ctx.call(again, adir / "transcript.reminder.json", sandbox, epoch=e, step=s, group=g)
    except FatalBackendError:
        await _reset(ctx, pool, where, "failed")
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the agent did, the pool goes back to `before`
        await _failed(ctx, pool, where, adir, f"the backward agent failed ({exc})")
    problem, checked = await asyncio.to_thread(_check, pool, where.before, subject, lexicon)
    if problem:
        if refused and not commits:
            # The agent gave up after the commit tool refused: the retry must know why.
            problem += "; the commit tool had refused it: " + "; ".join(refused[-1])
        await _failed(ctx, pool, where, adir, problem)
    write_atomic(adir / "patch.diff", checked.pop("patch"))
    write_json(adir / "checked.json", checked)
    ctx.stage("backward", "finished", e, s, group=g, attempt=a, started=started)
    ctx.bus.emit(
        ev.MicroStep(
            **where.at,
            label=where.label,
            before=where.before,
            after=checked["after"],
            subject=checked["subject"],
            added=checked["added"],
            changed=checked["changed"],
            removed=checked["removed"],
            lint_ok=True,
            patch=str(adir / "patch.diff"),
            message=checked.get("message", ""),
            pool_tokens_before=start_tokens,
            pool_tokens=await asyncio.to_thread(pool_tokens, pool),
        )
    )
    ctx.bus.emit(ev.PoolChanged(head=checked["after"], reason=f"commit {where.label}"))
    return checked


async def _start_clean(ctx: Context, pool: Pool, where: Where) -> None:
    """A dead or failed attempt may have left edits or even a commit; nothing of it may leak into this one."""
    stale, clean = await asyncio.to_thread(pool.state)
    if stale != where.before or not clean:
        if stale != where.before:
            ref = f"dead/e{where.epoch}-s{where.step}-g{where.group}-a{where.attempt}"
            await asyncio.to_thread(pool.keep, ref, stale)
        await asyncio.to_thread(pool.reset, where.before)
        ctx.bus.emit(ev.Warning_(message=f"{where.label}: reset a pool left dirty by an earlier attempt"))


def _check(pool: Pool, before: str, subject: str, lexicon: Lexicon | None = None) -> tuple[str | None, dict]:
    """The checks after the call, cheapest first. Returns (problem or None, the checked record with its patch)."""
    after, clean = pool.state()
    if after == before:
        return "no commit was made (an empty commit says 'nothing to change'; no commit says nothing)", {}
    if not clean:
        return "uncommitted changes were left in the pool", {}
    commits = pool.commits_between(before, after)
    if len(commits) > 1:
        # One micro-step is one commit: an agent that committed twice gets its commits folded together.
        after = pool.squash(before, f"{subject}\n\n" + "\n".join(f"- {s}" for _, s, _ in commits))
        commits = pool.commits_between(before, after)
    patch, changes = pool.diff(before, after)
    problems = lint_pool(pool, lexicon, changes.touched)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return f"the pool fails the linter: {problems[0]}{more}", {}
    return None, {
        "before": before,
        "after": after,
        "subject": commits[-1][1],
        "message": commits[-1][2],
        "added": changes.added,
        "changed": changes.changed,
        "removed": changes.removed,
        "lint": [],
        "patch": patch,
    }


async def _reset(ctx: Context, pool: Pool, where: Where, kind: str) -> None:
    head = await asyncio.to_thread(pool.head)
    if head != where.before:
        ref = f"{kind}/e{where.epoch}-s{where.step}-g{where.group}-a{where.attempt}"
        await asyncio.to_thread(pool.keep, ref, head)
    await asyncio.to_thread(pool.reset, where.before)


async def _failed(ctx: Context, pool: Pool, where: Where, adir: Path, problem: str) -> None:
    """Record why the attempt failed, put the pool back and raise AttemptFailed."""
    await _reset(ctx, pool, where, "failed")
    write_json(adir / "failed.json", {"reason": problem})
    ctx.stage(
        "backward",
        "failed",
        where.epoch,
        where.step,
        group=where.group,
        attempt=where.attempt,
        error=f"{where.label}: {problem}",
    )
    raise AttemptFailed(problem)
