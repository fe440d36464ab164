"""The backward micro-step: one group's evidence becomes exactly one commit to the pool.

An agent reads the group's commonality report (or its one loss report), the read traces,
the pool's history and what earlier updates did, edits the notes and commits
(`backward_attempt.py`). Three checks stand between that commit and a micro-step that
counts: the touched notes pass the linter (leakage guard included), a new commit exists
(no commit means no gradient step; an empty commit says "nothing was worth changing"),
and the working tree is clean.

An attempt that fails its checks is retried, up to `--backward-retries` times, each from
the reset pool and told what went wrong. When every attempt fails, the micro-step is
skipped: `commit.txt` records it with the reason, a `micro_step_skipped` event shows it,
the pool stays where it was and training goes on, because the other groups' evidence is
still good. `--strict` stops the run there instead, as it did before retries existed.

Then a reviewer decides (see `review.py`). Approve writes `commit.txt`, which is what
tells a resumed run the micro-step is done; rerun resets the pool and runs the agent
again with the reviewer's note; roll back resets the pool and writes `commit.txt` saying
so. Every commit a reset drops stays reachable under `refs/skilltui/...`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.words import counted
from ..model import events as ev
from ..model.review import Decision, GateVerdict, Reviewer, ReviewRequest
from .backward_attempt import AttemptFailed, Where, run_attempt
from .context import Context
from .pool import Pool
from .reconcile import kept_notice
from .run import read_json, write_atomic, write_json
from .stages import Sample

if TYPE_CHECKING:
    from .validation import Validator


class BackwardFailed(Exception):
    """Under --strict, a micro-step failed every attempt; the run stops, the pool is as before."""


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
    before, kept = await asyncio.to_thread(_base_commit, pool, out)
    if kept:
        ctx.bus.emit(ev.Warning_(message=f"{label}: " + kept_notice(pool, kept, before, " while training ran")))
    notes = _reviewer_notes(out)
    attempt = _attempts(out)
    failures = _failures_since_review(out, attempt)

    # A run stopped while a checked attempt awaited review asks for that review again
    # instead of paying for a new backward pass.
    pending = _pending_review(pool, out, attempt)
    if gate is not None:
        await gate.baseline(before, epoch, step, group)
    while True:
        if pending is None:
            attempt += 1
            where = Where(epoch, step, group, attempt, label, before, groups)
            try:
                checked = await run_attempt(ctx, samples, summary, out, where, notes, failures)
            except AttemptFailed as exc:
                failures.append(str(exc))
                if len(failures) <= ctx.settings.backward_retries:
                    continue
                return _give_up(ctx, out, where, failures)
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
            kept = await asyncio.to_thread(pool.reset, before)
            if kept:
                ctx.bus.emit(ev.Warning_(message=f"{label}: " + kept_notice(pool, kept, before, " during review")))
            ctx.bus.emit(ev.PoolChanged(head=before, reason=f"{decision.action} {label}"))
        write_json(
            adir / "review.json",
            {
                "decision": decision.action,
                "by": decision.by,
                "note": decision.note,
                "ref": ref,
                "reason": decision.reason,
                # The gate's figures, for the next prompt's list of rejected updates (feedback.py).
                "gate": gate_figures(verdict),
            },
        )
        at = {"epoch": epoch, "step": step, "group": group, "attempt": attempt}
        ctx.bus.emit(
            ev.DecisionMade(
                decision=decision.action,
                by=decision.by,
                **at,
                before=before,
                after=checked["after"],
                note=decision.note,
                ref=ref,
                reason=decision.reason,
                **decision_figures(verdict),
            )
        )
        if decision.action == "rerun":
            if decision.note.strip():
                notes.append(decision.note.strip())
            failures = []  # a new round of attempts: the retry budget starts again
            continue
        after = checked["after"] if decision.action == "approve" else before
        write_json(
            out / "commit.txt",
            {
                "before": before,
                "after": after,
                "subject": checked["subject"],
                "message": checked.get("message", ""),
                "decision": decision.action,
                "by": decision.by,
                "attempt": attempt,
                "attempt_commit": checked["after"],
                "ref": ref,
            },
        )
        return True


def gate_figures(verdict: GateVerdict | None) -> dict | None:
    """The numbers of a verdict, without its wording: nothing a validation work could be told by."""
    if verdict is None:
        return None
    keys = ("before", "after", "delta", "low", "high", "confidence", "n", "advice")
    return {k: getattr(verdict, k) for k in keys}


def decision_figures(verdict: GateVerdict | None) -> dict:
    """The gate's figures as the decision event records them beside the decision."""
    if verdict is None:
        return {}
    return {
        "gate_n": verdict.n,
        "gate_delta": verdict.delta,
        "gate_low": verdict.low,
        "gate_high": verdict.high,
        "gate_confidence": verdict.confidence,
    }


def _give_up(ctx: Context, out: Path, where: Where, failures: list[str]) -> bool:
    """Every attempt failed: skip this group's update (recorded), or stop the run under --strict."""
    reason = failures[-1]
    tries = len(failures)
    if ctx.settings.strict:
        raise BackwardFailed(f"{where.label} failed {counted(tries, 'attempt')} (--strict stops here): {reason}")
    write_json(
        out / "commit.txt",
        {
            "before": where.before,
            "after": where.before,
            "subject": "",
            "decision": "skipped",
            "by": "checks",
            "attempt": where.attempt,
            "reason": reason,
            "failures": failures,
        },
    )
    ctx.bus.emit(
        ev.MicroStepSkipped(
            epoch=where.epoch,
            step=where.step,
            group=where.group,
            attempts=tries,
            before=where.before,
            reason=reason,
            label=where.label,
        )
    )
    return True


def _base_commit(pool: Pool, out: Path) -> tuple[str, tuple[str, list[str]] | None]:
    """The commit this micro-step started from, fixed at its first attempt so every retry starts there too,
    and the edits no commit held (made while forward ran), kept under a ref before the pool went back."""
    path = out / "before.txt"
    if path.exists():
        return path.read_text(encoding="utf-8").strip(), None
    head, clean = pool.state()
    kept = None if clean else pool.reset(head)
    write_atomic(path, head + "\n")
    return head, kept


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


def _failures_since_review(out: Path, attempt: int) -> list[str]:
    """Why the attempts since the last review failed, so a resumed run keeps counting its retries."""
    failures: list[str] = []
    for n in range(1, attempt + 1):
        adir = out / f"attempt{n}"
        if (adir / "review.json").exists():
            failures = []
        elif (adir / "failed.json").exists():
            try:
                failures.append(str(read_json(adir / "failed.json").get("reason", "")))
            except (OSError, ValueError):
                failures.append("an earlier attempt failed")
    return failures


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
    # The notes the update touched passed the linter before it could be reviewed; what the
    # reviewer learns from lint is the rest of the pool, as recorded when the backward began.
    lint_report = out / "lint_report.txt"
    recorded = lint_report.read_text(encoding="utf-8").splitlines() if lint_report.exists() else []
    pool_lint = [line for line in recorded if line.strip() and line.strip() != "no problems"]
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
        lint_ok=not pool_lint,
        lint_problems=pool_lint,
        added=checked["added"],
        changed=checked["changed"],
        removed=checked["removed"],
        gate=verdict,
    )
    at = {"epoch": epoch, "step": step, "group": group, "attempt": attempt}
    ctx.bus.emit(ev.ReviewRequested(**at, label=label, before=checked["before"], after=checked["after"]))
    return await reviewer.review(request)
