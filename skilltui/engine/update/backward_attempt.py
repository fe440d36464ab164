"""One backward attempt: the agent call in its sandbox, the commit tool, and the checks after it.

The prompt and the evidence come from `backward_prompt.py`. The commit tool checks before
it commits (`note_checks.commit_problems`: lint, leakage, edit budget) and answers a
problem with a tool error, so the agent can fix it in the same attempt. An agent that ends
its turn without committing is reminded once. After the call, the three checks still stand
between the attempt and a micro-step that counts: a new commit, a clean tree, touched notes
that pass the linter. A failure raises `AttemptFailed` with the pool back at `before`.

The attempt acts on the `pool` it is given: the run's pool, or with `--candidates` above 1
a candidate's own working copy of it (`candidates.py`); the sandbox, the commit tool and
the checks all act on that copy, and a candidate's commit is kept under its ref
(`Candidate.ref`) before its record says it passed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

from ...agents.base import FatalBackendError
from ...agents.pool_history import PoolHistory
from ...agents.tools import Sandbox, ToolCode, ToolError
from ...model import events as ev
from ...model import trailers
from ...pool.notes import Pool
from ...store.micro_records import attempt_ended, write_checked
from ...store.reconcile import kept_notice
from ...store.run_folder import write_atomic, write_json
from ..notes.leakage import Leak, Lexicon
from ..notes.note_checks import commit_problems, lint_pool, pool_tokens
from ..stages.context import Context
from .backward_prompt import BackwardPrompt, Brief, Where, build_prompt, group_read_roots
from .feedback import commit_annotations

__all__ = ["BACKWARD", "AttemptFailed", "Attempted", "Brief", "Candidate", "Role", "Where", "run_attempt"]

REMINDER = (
    "You ended your turn without calling the commit tool, so nothing of this update counts yet. "
    "Your edits are still in the pool. Check them, then call commit once (an empty commit if "
    "nothing is worth changing)."
)


class AttemptFailed(Exception):
    """One attempt did not pass its checks; the pool is back at `before`. The message says why."""


@dataclass(frozen=True)
class Candidate:
    """This attempt is candidate `number` of a round that began at attempt `round`, kept under `ref`."""

    number: int
    round: int
    ref: str


@dataclass(frozen=True)
class Attempted:
    """An attempt that passed its checks: the commit it made and what it changed, as `checked.json` records it.

    A candidate's (`--candidates` above 1) also carries its number, its round, the notes it
    read and the ref its commit is kept under.
    """

    before: str
    after: str
    subject: str
    message: str
    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]
    candidate: int | None = None
    round: int | None = None
    reads: tuple[str, ...] = ()
    ref: str | None = None

    def record(self) -> dict[str, Any]:
        """The `checked.json` record, key for key what runs have always written (`lint` is always empty)."""
        record: dict[str, Any] = {
            "before": self.before,
            "after": self.after,
            "subject": self.subject,
            "message": self.message,
            "added": list(self.added),
            "changed": list(self.changed),
            "removed": list(self.removed),
            "lint": [],
        }
        if self.candidate is not None:
            record.update(candidate=self.candidate, round=self.round, reads=list(self.reads), ref=self.ref)
        return record


@dataclass(frozen=True)
class Role:
    """What kind of micro-step the attempt serves: its agent role, its prompt, its edit budget, its own checks.

    A group's update is `BACKWARD`; an epoch's consolidation (consolidation.py) is another
    Role on the same attempt, checks and commit tool.
    """

    name: str
    purpose: str  # what the micro_step event calls it: "update", "consolidation"
    build: Callable[[Context, Pool, Brief, Where, int], Awaitable[BackwardPrompt]]
    max_edit_lines: Callable[[Context], int]
    # More reasons the commit tool refuses a commit: (pool, before, tokens at the start) -> problems.
    check: Callable[[Pool, str, int], list[str]] | None = None
    no_worse: bool = False  # the gate keeps it when shown within --consolidate-margin (gate.judge)


BACKWARD = Role("backward", "update", build_prompt, lambda ctx: ctx.settings.max_edit_lines)


async def run_attempt(
    ctx: Context,
    brief: Brief,
    where: Where,
    pool: Pool | None = None,
    candidate: Candidate | None = None,
    role: Role = BACKWARD,
) -> Attempted:
    """One backward pass (or another `role`'s) and its checks. Returns what passed; raises AttemptFailed."""
    samples, summary, out = brief.samples, brief.summary, brief.out
    pool = pool or ctx.run.pool
    own = pool is ctx.run.pool  # the run's pool, not a candidate's copy: the app follows its HEAD
    adir = out / f"attempt{where.at.attempt}"
    adir.mkdir(parents=True, exist_ok=True)
    extra = {"round": candidate.round} if candidate else {}
    await _start_clean(ctx, pool, where)
    lexicon = await asyncio.to_thread(lambda: ctx.training.lexicon)
    start_tokens = await asyncio.to_thread(pool_tokens, pool)
    asked = await role.build(ctx, pool, brief, where, start_tokens)
    subject, prompt, prefix, context = asked.subject, asked.prompt, asked.prefix, asked.context
    if candidate is not None:
        context = {**context, "candidate": candidate.number}  # a backend may vary its proposals by it
    commits: list[str] = []
    refused: list[list[str]] = []
    sizes: dict[str, int] = {}  # commit -> the pool's tokens the commit tool counted for it

    def on_commit(message: str) -> str:
        trouble, size = commit_problems(
            pool,
            where.before,
            lexicon,
            role.max_edit_lines(ctx),
            pool_budget=ctx.settings.pool_budget,
            start_tokens=start_tokens,
        )
        if role.check is not None:
            trouble += role.check(pool, where.before, start_tokens)
        if trouble:
            refused.append(trouble)
            listed = "\n".join(f"- {t}" for t in trouble)
            code = ToolCode.LEAK if any(isinstance(t, Leak) for t in trouble) else ToolCode.NOT_COMMITTED
            raise ToolError(f"not committed; fix these, then call commit again:\n{listed}", code)
        body = trailers.agent_message(message).strip()  # provenance is the engine's to write, at the decision
        full = body if body.startswith(subject) else f"{subject}\n\n{body}"
        # commit_problems staged every change already: commit the index as it stands.
        pool.git("commit", "-q", "--allow-empty", "--no-verify", "-m", full)
        commits.append(pool.head())
        if size is not None:
            sizes[commits[-1]] = size
        return f"committed {commits[-1][:10]}"

    marks = await asyncio.to_thread(commit_annotations, ctx.run)
    sandbox = Sandbox(
        read_roots=group_read_roots(pool, samples, summary),
        write_roots=[pool.root],
        # A candidate's reads are shown beside its diff when the reviewer picks among several.
        traced=pool.root if candidate else None,
        on_commit=on_commit,
        base=pool.root,
        history=PoolHistory(pool.root, marks.get),
    )
    ctx.stage("backward", "started", where.at)
    started = time.monotonic()
    try:
        request = ctx.calls.request(role.name, prompt, context, where.at, prefix=prefix)
        request.lead, request.lead_ttl = asked.lead, asked.lead_ttl
        # The pool listing changes with every commit, so no other request re-reads this prefix;
        # once the commit is made, the agent's next answer is its last (cache_policy).
        request.prefix_shared = False
        request.finished = lambda: bool(commits)
        await ctx.calls.call(request, adir / "transcript.json", where.at, sandbox)
        if not commits:
            # Ended its turn without committing: remind it once, within this attempt.
            ctx.bus.emit(ev.Warning_(message=f"{where.label}: the agent ended without committing; reminding it once"))
            reminded = f"{prompt}\n## Reminder\n\n{REMINDER}\n"
            again = ctx.calls.request(role.name, reminded, {**context, "reminder": True}, where.at, prefix=prefix)
            again.prefix_shared = False
            again.lead, again.lead_ttl = asked.lead, request.lead_ttl  # reads what the first call cached
            again.finished = request.finished
            await ctx.calls.call(again, adir / "transcript.reminder.json", where.at, sandbox)
    except FatalBackendError:
        await _reset(ctx, pool, where, "failed")
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the agent did, the pool goes back to `before`
        await _failed(ctx, pool, where, adir, f"the backward agent failed ({exc})", extra)
    if candidate is not None:  # the calls are over: a kill from here on leaves a round to finish, not redo
        write_json(adir / "reads.json", list(sandbox.reads))
    problem, checked, patch = await asyncio.to_thread(check_commit, pool, where.before, subject, lexicon)
    if checked is None:
        why = str(problem)
        if refused and not commits:
            # The agent gave up after the commit tool refused: the retry must know why.
            why += "; the commit tool had refused it: " + "; ".join(refused[-1])
        await _failed(ctx, pool, where, adir, why, extra)
    write_atomic(adir / "patch.diff", patch)
    if candidate is not None:
        await asyncio.to_thread(pool.keep, candidate.ref, checked.after)
        checked = replace(
            checked,
            candidate=candidate.number,
            round=candidate.round,
            reads=tuple(sandbox.reads),
            ref=f"refs/skilltui/{candidate.ref}",
        )
    write_checked(adir, checked.record())
    ctx.stage("backward", "finished", where.at, started=started)
    ctx.bus.emit(
        ev.MicroStep(
            **where.at.fields(),
            label=where.label,
            before=where.before,
            after=checked.after,
            subject=checked.subject,
            added=list(checked.added),
            changed=list(checked.changed),
            removed=list(checked.removed),
            lint_ok=True,
            patch=str(adir / "patch.diff"),
            message=checked.message,
            pool_tokens_before=start_tokens,
            # The checks found the tree clean at the tool's commit: its count is the pool's size.
            # A commit made otherwise (or squashed from several) is counted here.
            pool_tokens=sizes.get(checked.after) or await asyncio.to_thread(pool_tokens, pool),
            purpose=role.purpose,
        )
    )
    if own:
        ctx.bus.emit(ev.PoolChanged(head=checked.after, reason=f"commit {where.label}"))
    return checked


def recheck(ctx: Context, adir: Path, where: Where) -> bool:
    """Finish the checks of an attempt a kill stopped between its commit and its record; True when it passed.

    The agent's call was paid and its commit stands in the pool (one attempt, K=1): running
    the checks again on it (they read only the pool) gives the record the attempt would
    have written, so the review is asked again instead of the round paid for again.
    """
    pool = ctx.run.pool
    if attempt_ended(adir) or not (adir / "transcript.json").exists():
        return False
    head, clean = pool.state()
    if head == where.before or not clean or pool.parents(head) != [where.before]:
        return False
    if not pool.log(f"{where.before}..{head}")[0].subject.startswith(f"train {where.label}"):
        return False  # not this attempt's commit: the usual start (kept under dead/) handles it
    _, checked, patch = check_commit(pool, where.before, f"train {where.label}", ctx.training.lexicon)
    if checked is None:
        return False
    write_atomic(adir / "patch.diff", patch)
    write_checked(adir, checked.record())
    return True


async def _start_clean(ctx: Context, pool: Pool, where: Where) -> None:
    """A dead or failed attempt may have left edits or even a commit; nothing of it may leak into this one."""
    stale, clean = await asyncio.to_thread(pool.state)
    if stale != where.before or not clean:
        if stale != where.before:
            ref = f"dead/{where.at.slug}"
            await asyncio.to_thread(pool.keep, ref, stale)
        kept = await asyncio.to_thread(pool.reset, where.before)
        words = kept_notice(pool, kept, where.before, " before this attempt") if kept else "reset a pool left dirty"
        ctx.bus.emit(ev.Warning_(message=f"{where.label}: {words}" + ("" if kept else " by an earlier attempt")))


Checks = tuple[str | None, "Attempted | None", str]  # (the problem, None, "") or (None, what passed, its patch)


def check_commit(pool: Pool, before: str, subject: str, lexicon: Lexicon | None = None) -> Checks:
    """The checks after the call, cheapest first. Returns (the problem, None, "") or (None, what passed, its patch)."""
    after, clean = pool.state()
    if after == before:
        return "no commit was made (an empty commit says 'nothing to change'; no commit says nothing)", None, ""
    if not clean:
        return "uncommitted changes were left in the pool", None, ""
    commits = pool.commits_between(before, after)
    if len(commits) > 1:
        # One micro-step is one commit: an agent that committed twice gets its commits folded together.
        after = pool.squash(before, f"{subject}\n\n" + "\n".join(f"- {s}" for _, s, _ in commits))
        commits = pool.commits_between(before, after)
    patch, changes = pool.diff(before, after)
    problems = lint_pool(pool, lexicon, changes.touched)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return f"the pool fails the linter: {problems[0]}{more}", None, ""
    passed = Attempted(
        before=before,
        after=after,
        subject=commits[-1][1],
        message=commits[-1][2],
        added=tuple(changes.added),
        changed=tuple(changes.changed),
        removed=tuple(changes.removed),
    )
    return None, passed, patch


async def _reset(ctx: Context, pool: Pool, where: Where, kind: str) -> None:
    head = await asyncio.to_thread(pool.head)
    if head != where.before:
        ref = f"{kind}/{where.at.slug}"
        await asyncio.to_thread(pool.keep, ref, head)
    kept = await asyncio.to_thread(pool.reset, where.before)
    if kept:
        words = kept_notice(pool, kept, where.before, " after the attempt")
        ctx.bus.emit(ev.Warning_(message=f"{where.label}: {words}"))


async def _failed(
    ctx: Context, pool: Pool, where: Where, adir: Path, problem: str, extra: dict | None = None
) -> NoReturn:
    """Record why the attempt failed, put the pool back and raise AttemptFailed."""
    await _reset(ctx, pool, where, "failed")
    write_json(adir / "failed.json", {"reason": problem, **(extra or {})})
    ctx.stage("backward", "failed", where.at, error=f"{where.label}: {problem}")
    raise AttemptFailed(problem)
