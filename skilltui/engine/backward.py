"""The backward micro-step: one group's evidence becomes exactly one commit to the pool.

An agent reads the group's commonality report (or its one loss report), edits the notes
and commits. Three checks stand between that commit and a micro-step that counts:

- the pool passes the linter (only the touched notes are linted: a pool that passed
  stays passed, so the cost follows the size of the change, not of the pool);
- a new commit exists: no commit means no gradient step (an empty commit is allowed and
  says "nothing was worth changing");
- the working tree is clean: half-committed edits would ride into the next step unseen.

Then a reviewer decides (see `review.py`). Approve writes `commit.txt`, which is what
tells a resumed run the micro-step is done; rerun resets the pool and runs the agent
again with the reviewer's note; roll back resets the pool and writes `commit.txt` saying
so. Every commit a reset drops stays reachable under `refs/skilltui/...`.

A micro-step that fails its checks stops the run with the pool reset to the commit
before it, because every later micro-step would build on a pool nobody trusts.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..agents.tools import Sandbox
from . import events as ev
from .pool import Pool
from .review import Decision, GateVerdict, Reviewer, ReviewRequest
from .run import read_json, write_atomic, write_json
from .stages import Context, Sample, pool_context

if TYPE_CHECKING:
    from .validation import Validator


class BackwardFailed(Exception):
    """A micro-step did not pass its checks or its agent failed; the run stops, the pool is as before."""


def label_of(epoch: int, step: int, group: int, groups: int) -> str:
    return f"epoch {epoch} step {step} micro {group}/{groups}"


async def micro_step(
    ctx: Context,
    reviewer: Reviewer,
    samples: list[Sample],
    summary: Path | None,
    epoch: int,
    step: int,
    group: int,
    groups: int,
    gate: Validator | None = None,
) -> bool:
    """Run (or resume) one micro-step through review. True when it ran, False when already done.

    With a `gate`, the notes it starts from are validated first, and every attempt that
    passes its checks is validated before review; the reviewer gets the verdict.
    """
    out = ctx.run.backward_dir(epoch, step, group)
    if (out / "commit.txt").exists():
        return False
    out.mkdir(parents=True, exist_ok=True)
    pool = ctx.run.pool
    label = label_of(epoch, step, group, groups)
    write_json(out / "batch.json", [s.to_dict() for s in samples])
    before = await asyncio.to_thread(_base_commit, pool, out)
    notes = _reviewer_notes(out)
    attempt = _attempts(out)

    # A run stopped while a checked attempt awaited review asks for that review again
    # instead of paying for a new backward pass.
    pending = _pending_review(pool, out, attempt)
    if gate is not None:
        await gate.baseline(before, epoch, step, group)
    while True:
        if pending is None:
            attempt += 1
            checked = await _attempt(
                ctx, pool, samples, summary, out, epoch, step, group, attempt, label, before, notes
            )
        else:
            checked, pending = pending, None
        verdict = await gate.judge(before, epoch, step, group, attempt) if gate is not None else None
        decision = await _review(
            ctx, reviewer, samples, summary, out, epoch, step, group, attempt, label, checked, verdict
        )
        adir = out / f"attempt{attempt}"
        ref = None
        if decision.action != "approve":
            kind = "rerun" if decision.action == "rerun" else "rolledback"
            ref = await asyncio.to_thread(pool.keep, f"{kind}/e{epoch}-s{step}-g{group}-a{attempt}", checked["after"])
            await asyncio.to_thread(pool.reset, before)
            ctx.bus.emit(ev.PoolChanged(head=before, reason=f"{decision.action} {label}"))
        write_json(
            adir / "review.json",
            {
                "decision": decision.action,
                "by": decision.by,
                "note": decision.note,
                "ref": ref,
                "reason": decision.reason,
            },
        )
        ctx.bus.emit(
            ev.DecisionMade(
                decision=decision.action,
                by=decision.by,
                epoch=epoch,
                step=step,
                group=group,
                attempt=attempt,
                before=before,
                after=checked["after"],
                note=decision.note,
                ref=ref,
                reason=decision.reason,
            )
        )
        if decision.action == "rerun":
            if decision.note.strip():
                notes.append(decision.note.strip())
            continue
        after = checked["after"] if decision.action == "approve" else before
        write_json(
            out / "commit.txt",
            {
                "before": before,
                "after": after,
                "subject": checked["subject"],
                "decision": decision.action,
                "by": decision.by,
                "attempt": attempt,
                "attempt_commit": checked["after"],
                "ref": ref,
            },
        )
        return True


def _base_commit(pool: Pool, out: Path) -> str:
    """The commit this micro-step started from, fixed at its first attempt so every retry starts there too."""
    path = out / "before.txt"
    if path.exists():
        return path.read_text(encoding="utf-8").strip()
    head, clean = pool.state()
    if not clean:
        pool.reset(head)
    write_atomic(path, head + "\n")
    return head


def _attempts(out: Path) -> int:
    return max((int(p.name[7:]) for p in out.glob("attempt*") if p.name[7:].isdigit()), default=0)


def _reviewer_notes(out: Path) -> list[str]:
    notes = []
    for n in range(1, _attempts(out) + 1):
        review = out / f"attempt{n}" / "review.json"
        if review.exists():
            data = read_json(review)
            if data.get("decision") == "rerun" and data.get("note"):
                notes.append(data["note"])
    return notes


def _pending_review(pool: Pool, out: Path, attempt: int) -> dict | None:
    if attempt == 0:
        return None
    adir = out / f"attempt{attempt}"
    if not (adir / "checked.json").exists() or (adir / "review.json").exists():
        return None
    checked = read_json(adir / "checked.json")
    if pool.state() == (checked["after"], True):
        return checked
    return None


async def _attempt(
    ctx: Context,
    pool: Pool,
    samples: list[Sample],
    summary: Path | None,
    out: Path,
    epoch: int,
    step: int,
    group: int,
    attempt: int,
    label: str,
    before: str,
    notes: list[str],
) -> dict:
    """One backward pass and its checks. Returns the checked record; raises BackwardFailed."""
    adir = out / f"attempt{attempt}"
    adir.mkdir(parents=True, exist_ok=True)
    # A dead attempt may have left edits or even a commit; nothing of it may leak into this one.
    stale, clean = await asyncio.to_thread(pool.state)
    if stale != before or not clean:
        if stale != before:
            await asyncio.to_thread(pool.keep, f"dead/e{epoch}-s{step}-g{group}-a{attempt}", stale)
        await asyncio.to_thread(pool.reset, before)
        ctx.bus.emit(ev.Warning_(message=f"{label}: reset a pool left dirty by an earlier attempt"))
    subject = f"train {label}"
    headers = pool.headers()
    prompt = ctx.prompts.render(
        "backward",
        label=label,
        pool_dir=str(pool.root),
        summary=str(summary) if summary else None,
        samples=[s.to_dict() for s in samples],
        commit_subject=subject,
        reviewer_notes=notes,
    )
    prefix = pool_context(ctx, headers)
    write_atomic(adir / "prompt.md", f"{prefix}\n{prompt}")
    loss_dir = ctx.run.loss_dir(epoch, step)
    commits: list[str] = []

    def on_commit(message: str) -> str:
        body = message.strip()
        full = body if body.startswith(subject) else f"{subject}\n\n{body}"
        commits.append(pool.commit_all(full))
        return f"committed {commits[-1][:10]}"

    read_roots = [pool.root, loss_dir, *([summary] if summary else [])]
    sandbox = Sandbox(read_roots=read_roots, write_roots=[pool.root], traced=None, on_commit=on_commit)
    where = {"group": group}
    request = ctx.request(
        "backward",
        prompt,
        {
            "pool": str(pool.root),
            "headers": headers,
            "summary": str(summary) if summary else None,
            "reports": [str(s.report) for s in samples],
            "notes": notes,
        },
        prefix=prefix,
        **where,
    )
    # The pool listing changes with every commit, so no other request re-reads this prefix;
    # once the commit is made, the agent's next answer is its last (cache_policy).
    request.prefix_shared = False
    request.finished = lambda: bool(commits)
    ctx.bus.emit(ev.Stage(stage="backward", status="started", epoch=epoch, step=step, group=group, attempt=attempt))
    started = time.monotonic()
    try:
        await ctx.call(request, adir / "transcript.json", sandbox, epoch=epoch, step=step, **where)
    except Exception as exc:  # noqa: BLE001 - whatever the agent did, the pool goes back to `before`
        await _fail(ctx, pool, before, epoch, step, group, attempt, f"{label}: the backward agent failed ({exc})")
    problem, checked = await asyncio.to_thread(_check, pool, before, subject)
    if problem:
        await _fail(ctx, pool, before, epoch, step, group, attempt, f"{label} rejected: {problem}")
    write_atomic(adir / "patch.diff", checked.pop("patch"))
    write_json(adir / "checked.json", checked)
    ctx.bus.emit(
        ev.Stage(
            stage="backward",
            status="finished",
            epoch=epoch,
            step=step,
            group=group,
            attempt=attempt,
            seconds=round(time.monotonic() - started, 3),
        )
    )
    ctx.bus.emit(
        ev.MicroStep(
            epoch=epoch,
            step=step,
            group=group,
            attempt=attempt,
            label=label,
            before=before,
            after=checked["after"],
            subject=checked["subject"],
            added=checked["added"],
            changed=checked["changed"],
            removed=checked["removed"],
            lint_ok=True,
            patch=str(adir / "patch.diff"),
            message=checked.get("message", ""),
        )
    )
    ctx.bus.emit(ev.PoolChanged(head=checked["after"], reason=f"commit {label}"))
    return checked


def _check(pool: Pool, before: str, subject: str) -> tuple[str | None, dict]:
    """The three checks, cheapest first. Returns (problem or None, the checked record with its patch)."""
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
    problems = pool.lint(changes.touched)
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


async def _fail(
    ctx: Context, pool: Pool, before: str, epoch: int, step: int, group: int, attempt: int, message: str
) -> None:
    head = await asyncio.to_thread(pool.head)
    if head != before:
        await asyncio.to_thread(pool.keep, f"failed/e{epoch}-s{step}-g{group}-a{attempt}", head)
    await asyncio.to_thread(pool.reset, before)
    ctx.bus.emit(
        ev.Stage(stage="backward", status="failed", epoch=epoch, step=step, group=group, attempt=attempt, error=message)
    )
    raise BackwardFailed(message)


async def _review(
    ctx: Context,
    reviewer: Reviewer,
    samples: list[Sample],
    summary: Path | None,
    out: Path,
    epoch: int,
    step: int,
    group: int,
    attempt: int,
    label: str,
    checked: dict,
    verdict: GateVerdict | None = None,
) -> Decision:
    adir = out / f"attempt{attempt}"
    evidence = summary.read_text(encoding="utf-8") if summary else samples[0].report.read_text(encoding="utf-8")
    request = ReviewRequest(
        run_dir=ctx.run.root,
        epoch=epoch,
        step=step,
        group=group,
        attempt=attempt,
        label=label,
        works=[s.work for s in samples],
        before=checked["before"],
        after=checked["after"],
        subject=checked["subject"],
        message=checked.get("message", ""),
        patch=(adir / "patch.diff").read_text(encoding="utf-8"),
        evidence=evidence,
        reports={s.work: s.report.read_text(encoding="utf-8") for s in samples},
        lint_ok=not checked["lint"],
        lint_problems=checked["lint"],
        added=checked["added"],
        changed=checked["changed"],
        removed=checked["removed"],
        gate=verdict,
    )
    ctx.bus.emit(
        ev.ReviewRequested(
            epoch=epoch,
            step=step,
            group=group,
            attempt=attempt,
            label=label,
            before=checked["before"],
            after=checked["after"],
        )
    )
    return await reviewer.review(request)
