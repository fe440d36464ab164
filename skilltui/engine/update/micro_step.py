"""The backward micro-step: one group's evidence becomes exactly one commit to the pool.

`MicroStep.run()` is the whole procedure, in the order a reader follows it:

    resume check -> baseline -> loop { attempt -> checks -> gate -> review -> decision -> record }

- **attempt** (`backward_attempt.py`, its prompt and evidence in `backward_prompt.py`): an
  agent reads the group's commonality report (or its one loss report), the read traces, the
  pool's history and what earlier updates did, edits the notes and commits. With
  `--candidates K` above 1, K attempts start from the same parent at once, each in its own
  working copy of the pool (`candidates.py`), each kept under its own ref.
- **checks**: the touched notes pass the linter (leakage guard included), a new commit
  exists (no commit means no gradient step; an empty commit says "nothing was worth
  changing"), the working tree is clean. A round whose every attempt fails its checks is
  retried, up to `--backward-retries` times, each from the reset pool and told what went
  wrong; then the micro-step is skipped (`commit.txt` records it, a `micro_step_skipped`
  event shows it, training goes on) or, under `--strict`, the run stops.
- **gate** (`--gate`, `validation.py`): every checked attempt is validated against the
  notes it started from; the candidates are ranked by the verdicts (`candidates.rank`).
- **review** (`review.py` for `--auto`, the app's screen for a person): the reviewer sees
  the best candidate first, with the others beside it, and decides.
- **decision**: approve keeps the chosen candidate's commit (the others are dropped, still
  reachable under their refs); rerun resets the pool and runs the round again with the
  reviewer's note; roll back resets the pool. Every commit a reset drops stays reachable
  under `refs/skilltui/...`.
- **record** (`micro_records.py`): each attempt's `review.json`, then `commit.txt`, which is
  what tells a resumed run the micro-step is done.

- **provenance** (`provenance.py`): once decided, each attempt's commit is written again with
  its trailers (step, evidence, validation, cost, decision); the pool or its ref keeps that one.

A consolidation micro-step (`consolidation.py`), or any other kind, is a `MicroStep` with
another `Role` (backward_attempt.py): its agent role, prompt, edit budget and checks; the
states around it stay the same.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.words import counted
from ...model import events as ev
from ...model import trailers
from ...model.review import Decision, GateVerdict, Reviewer
from ...store.micro_records import Checked, MicroRecords, Round
from ...store.places import Sample
from ...store.pool import Pool
from ...store.reconcile import kept_notice
from ..stages.context import Context
from . import decided, provenance
from .backward_attempt import BACKWARD, AttemptFailed, Brief, Candidate, Where, recheck, run_attempt
from .candidates import candidate_ref, close_copy, open_copy, rank, sweep_copies

if TYPE_CHECKING:
    from ..validation.validator import Validator


class BackwardFailed(Exception):
    """Under --strict, a micro-step failed every attempt; the run stops, the pool is as before."""


def label_of(epoch: int, step: int, group: int, groups: int) -> str:
    return f"epoch {epoch} step {step} micro {group}/{groups}"


class MicroStep:
    """One group's backward micro-step, from its evidence to its record; `run()` reads top to bottom."""

    def __init__(
        self,
        ctx: Context,
        reviewer: Reviewer,
        samples: list[Sample],
        summary: Path | None,
        epoch: int,
        step: int,
        group: int,
        groups: int,
        gate: Validator | None = None,
    ) -> None:
        self.ctx, self.reviewer, self.gate = ctx, reviewer, gate
        self.samples, self.summary = samples, summary
        self.epoch, self.step, self.group, self.groups = epoch, step, group, groups
        self.label = label_of(epoch, step, group, groups)
        self.records = MicroRecords(ctx.run, epoch, step, group)
        self.candidates = ctx.settings.candidates
        self.role = BACKWARD  # a consolidation (consolidation.py) is the same procedure with another role
        self.before = ""
        self.attempt = 0  # the last attempt number used
        self.notes: list[str] = []  # the reviewer's rerun notes, for the next prompt
        self.failures: list[str] = []  # why the rounds since the last review failed

    @property
    def pool(self) -> Pool:
        return self.ctx.run.pool

    @property
    def prefix(self) -> str:
        """How refs kept for this micro-step's attempts are named: e<E>-s<S>-g<G>-a<N>."""
        return f"e{self.epoch}-s{self.step}-g{self.group}"

    @property
    def at(self) -> dict[str, int]:
        return {"epoch": self.epoch, "step": self.step, "group": self.group}

    async def run(self) -> bool:
        """Run (or resume) the micro-step through review. True when it ran, False when already done."""
        if self.records.done():
            return False
        self.records.start(self.samples)
        fact = decided.pending(self.records)
        if fact is not None:  # killed inside a decision: carry it out, never decide again
            await decided.carry_out(self.ctx, self.records, fact, resumed=True)
            if fact.finished is not None:
                return True
        self.before, kept = await asyncio.to_thread(self.records.base_commit, self.pool)
        if kept:
            self.ctx.bus.emit(
                ev.Warning_(
                    message=f"{self.label}: " + kept_notice(self.pool, kept, self.before, " while training ran")
                )
            )
        self.notes = self.records.reviewer_notes()
        self.attempt = self.records.attempts()
        self.failures = self.records.failures_since_review(self.attempt)
        if self.candidates == 1 and self.attempt:  # killed between its commit and its record: check it now
            where = self.where(self.attempt)
            await asyncio.to_thread(recheck, self.ctx, self.records.attempt_dir(self.attempt), where)
        # A round of candidates killed mid-way left working copies; their commits stay under dead/.
        await asyncio.to_thread(sweep_copies, self.pool, self.records.out, self.before, self.prefix)
        # A run stopped while a checked round awaited review asks for that review again
        # instead of paying for new backward passes.
        pending = await asyncio.to_thread(self.records.pending, self.pool, self.attempt)
        if pending is not None and pending.checked[0].candidate is not None:
            await asyncio.to_thread(self.pool.reset, self.before)  # candidates live under their refs
        if self.gate is not None:
            await self.gate.baseline(self.before, self.epoch, self.step, self.group)
        while True:
            round_ = pending or await self.attempt_round()
            pending = None
            if not round_.checked:
                self.failures.append(round_.failures[-1])
                if len(self.failures) <= self.ctx.settings.backward_retries:
                    continue
                return self.give_up()
            ranked = await self.validate(round_)
            decision = await self.review(ranked)
            await self.decide(ranked, decision)
            if decision.action == "rerun":
                if decision.note.strip():
                    self.notes.append(decision.note.strip())
                self.failures = []  # a new round of attempts: the retry budget starts again
                continue
            return True

    # -- attempt and checks ----------------------------------------------------------------

    def where(self, attempt: int) -> Where:
        return Where(self.epoch, self.step, self.group, attempt, self.label, self.before, self.groups)

    async def attempt_round(self) -> Round:
        """One attempt, or K candidates from the same parent; each passes its checks or says why not."""
        brief = Brief(self.samples, self.summary, self.records.out, self.notes, self.failures)
        if self.candidates == 1:
            self.attempt += 1
            try:
                checked = await run_attempt(self.ctx, brief, self.where(self.attempt), role=self.role)
            except AttemptFailed as exc:
                return Round(self.attempt, failures=[str(exc)])
            return Round(self.attempt, [Checked(self.attempt, checked)])
        first = self.attempt + 1
        self.attempt += self.candidates
        numbers = range(1, self.candidates + 1)
        folders = {n: self.records.attempt_dir(first + n - 1) / "pool" for n in numbers}
        limit = asyncio.Semaphore(self.ctx.settings.workers)
        copies: dict[int, Pool] = {}

        async def one(n: int) -> Checked | str:
            kept = Candidate(n, first, candidate_ref(self.epoch, self.step, self.group, n))
            async with limit:
                try:
                    where = self.where(first + n - 1)
                    record = await run_attempt(self.ctx, brief, where, copies[n], kept, self.role)
                except AttemptFailed as exc:
                    return str(exc)
            return Checked(first + n - 1, record, candidate=n)

        try:
            for n in numbers:  # one after another: git registers each working copy in the shared repository
                copies[n] = await asyncio.to_thread(open_copy, self.pool, folders[n], self.before)
            async with asyncio.TaskGroup() as tasks:  # a fatal error in one stops the others
                running = [tasks.create_task(one(n)) for n in numbers]
        except BaseExceptionGroup as group:
            # The loop knows a stop or a refused key by its type, as it does for one attempt.
            raise group.exceptions[0] from None
        finally:
            for n in numbers:
                if n in copies:
                    copies[n].close()
                close_copy(self.pool, folders[n])
        results = [task.result() for task in running]
        return Round(
            first,
            [r for r in results if isinstance(r, Checked)],
            [r for r in results if isinstance(r, str)],
        )

    def give_up(self) -> bool:
        """Every round failed: skip this group's update (recorded), or stop the run under --strict."""
        reason, tries = self.failures[-1], len(self.failures)
        if self.ctx.settings.strict:
            raise BackwardFailed(f"{self.label} failed {counted(tries, 'attempt')} (--strict stops here): {reason}")
        self.records.skipped(self.before, self.attempt, self.failures)
        self.ctx.bus.emit(
            ev.MicroStepSkipped(**self.at, attempts=tries, before=self.before, reason=reason, label=self.label)
        )
        return True

    # -- gate and review -------------------------------------------------------------------

    async def validate(self, round_: Round) -> list[Checked]:
        """Validate every checked attempt (with --gate) and rank them, best first; the pool holds the best."""
        several = round_.checked[0].candidate is not None
        if self.gate is not None:
            for c in round_.checked:
                if several:  # validation measures the pool as it stands: put this candidate there
                    await asyncio.to_thread(self.pool.reset, c.after)
                where = (self.epoch, self.step, self.group, c.attempt)
                family = len(round_.checked) if several else 1  # tested together: gate.Rule's Bonferroni
                c.verdict = await self.gate.judge(self.before, where, no_worse=self.role.no_worse, family=family)
        ranked = rank(round_.checked)
        best = ranked[0]
        if self.gate is not None and several and best.verdict is not None and best.verdict.advice == "keep":
            # The lowest delta chose it: its recorded delta comes from passes that did not.
            at = (self.epoch, self.step, self.group, best.attempt)
            best.verdict = await self.gate.fresh(self.before, best.after, at, best.verdict)
        if several:
            await asyncio.to_thread(self.pool.reset, ranked[0].after)
            self.ctx.bus.emit(ev.PoolChanged(head=ranked[0].after, reason=f"commit {self.label}"))
        return ranked

    async def review(self, ranked: list[Checked]) -> Decision:
        request = self.records.request(self.samples, self.summary, self.at, self.label, ranked)
        self.ctx.bus.emit(
            ev.ReviewRequested(
                **self.at, attempt=request.attempt, label=self.label, before=request.before, after=request.after
            )
        )
        return await self.reviewer.review(request)

    # -- decision and record ---------------------------------------------------------------

    async def decide(self, ranked: list[Checked], decision: Decision) -> tuple[Checked, str | None]:
        """Move the pool as the decision says, keep what it drops under a ref, record each attempt's fate.

        Each attempt's commit is written once more with its provenance trailers (provenance.py);
        that commit is what the pool or a ref keeps. The whole decision is recorded before
        anything moves (decided.py), so a kill anywhere in it is carried out on resume, never
        decided again. Returns the chosen attempt and the ref its commit is kept under when
        the pool drops it.
        """
        chosen = next((c for c in ranked if c.attempt == decision.attempt), ranked[0])
        approve = decision.action == "approve"
        fates: dict[int, tuple[str, str, str]] = {}
        for c in ranked:
            if approve and c is not chosen:
                fates[c.attempt] = ("dropped", "", f"not chosen: candidate {chosen.candidate} was kept")
            else:
                fates[c.attempt] = (decision.action, decision.note if c is chosen else "", decision.reason)
            c.decided = await asyncio.to_thread(self.stamp, c, fates[c.attempt][0], decision.by)
        keep: dict[str, str] = {}  # every ref the decision moves -> the stamped commit it keeps
        refs: dict[int, str | None] = {}
        # A consolidation that changed nothing leaves no commit on the pool (an empty one at
        # HEAD would be the newest commit, which the history browser cannot revert): it is
        # approved, recorded and kept under a ref like any decided commit, and HEAD stays.
        unchanged = approve and self.role is not BACKWARD and await asyncio.to_thread(same_tree, self.pool, chosen)
        for c in ranked:
            if c.record.get("ref"):  # a candidate's own ref holds its stamped commit, whatever the decision
                keep[str(c.record["ref"])] = c.commit
            if approve:
                refs[c.attempt] = None if c is chosen else c.record.get("ref")
            else:
                kind = "rerun" if decision.action == "rerun" else "rolledback"
                refs[c.attempt] = f"refs/skilltui/{kind}/{self.prefix}-a{c.attempt}"
                keep[refs[c.attempt]] = c.commit
        if unchanged:
            refs[chosen.attempt] = f"refs/skilltui/unchanged/{self.prefix}-a{chosen.attempt}"
            keep[refs[chosen.attempt]] = chosen.commit
        reviews = {}
        for c in ranked:
            action, note, reason = fates[c.attempt]
            figures = gate_figures(c.verdict)
            reviews[str(c.attempt)] = self.records.review_of(
                fates[c.attempt], decision.by, refs[c.attempt], figures, c.commit
            )
        event = ev.DecisionMade(
            decision=decision.action,
            by=decision.by,
            **self.at,
            attempt=chosen.attempt,
            before=self.before,
            after=chosen.commit,
            note=decision.note,
            ref=refs[chosen.attempt],
            reason=decision.reason,
            **decision_figures(chosen.verdict),
        )
        head = chosen.commit if approve and not unchanged else self.before
        finished = None
        if decision.action != "rerun":
            finished = self.records.outcome(
                self.before, head, chosen, decision.action, decision.by, refs[chosen.attempt]
            )
        fields = {k: v for k, v in event.to_dict().items() if k != "kind"}
        fact = decided.Decided(self.label, decision.action, keep, head, reviews, fields, finished)
        await asyncio.to_thread(decided.record, self.records, fact)
        await decided.carry_out(self.ctx, self.records, fact)
        return chosen, refs[chosen.attempt]

    def stamp(self, c: Checked, action: str, by: str) -> str:
        """The attempt's commit with its trailers: step, evidence, validation, cost, decision."""
        why = f"candidate {c.candidate} of {self.candidates}" if c.candidate is not None else ""
        adir = self.records.attempt_dir(c.attempt)
        decided = trailers.decision_value(action, by, why)
        kind = "" if self.role is BACKWARD else self.role.purpose
        pairs = provenance.trailer_pairs(self.at, c.attempt, self.evidence(), c.verdict, adir, decided, kind)
        return provenance.stamp(self.pool, c.after, pairs)

    def evidence(self) -> str:
        """What the Skilltui-Evidence trailer says this micro-step acted on."""
        return provenance.evidence_value(self.samples)


def same_tree(pool: Pool, c: Checked) -> bool:
    """Whether an attempt's commit leaves the notes as its parent had them (an empty commit)."""
    return pool.git("rev-parse", f"{c.commit}^{{tree}}") == pool.git("rev-parse", f"{c.commit}^^{{tree}}")


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
