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
- **gate** (`--gate`, `validation/validator.py`): every checked attempt is validated against
  the notes it started from; the candidates are ranked by the verdicts (`candidates.rank`).
- **review** (`review.py` for `--auto`, the app's screen for a person): the reviewer sees
  the best candidate first, with the others beside it, and decides.
- **decision**: approve keeps the chosen candidate's commit (the others are dropped, still
  reachable under their refs); rerun resets the pool and runs the round again with the
  reviewer's note; roll back resets the pool. Every commit a reset drops stays reachable
  under `refs/skilltui/...`.
- **record** (`store/micro_records.py`): each attempt's `review.json`, then `commit.txt`,
  which is what tells a resumed run the micro-step is done.

- **provenance** (`provenance.py`): once decided, each attempt's commit is written again with
  its trailers (step, evidence, validation, cost, decision); the pool or its ref keeps that one.

A consolidation micro-step (`consolidation.py`), or any other kind, is a `MicroStep` with
another `Role` (backward_attempt.py): its agent role, prompt, edit budget and checks; the
states around it stay the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.words import counted
from ...model import events as ev
from ...model import trailers
from ...model.at import At
from ...model.review import Decision, GateVerdict, Reviewer
from ...pool.notes import Pool, changes_nothing
from ...store.micro_records import Checked, Fate, MicroRecords, Round, attempt_reviewed
from ...store.places import Sample
from ...store.reconcile import kept_notice
from ..stages.context import Context
from . import decided, provenance
from .backward_attempt import BACKWARD, AttemptFailed, Brief, Candidate, Where, recheck, run_attempt
from .candidates import candidate_ref, close_copy, open_copy, rank, recheck_copy, sweep_copies

if TYPE_CHECKING:
    from ..validation.validator import Validator


class BackwardFailed(Exception):
    """Under --strict, a micro-step failed every attempt; the run stops, the pool is as before."""


def label_of(at: At, groups: int) -> str:
    return f"epoch {at.epoch} step {at.step} micro {at.group}/{groups}"


@dataclass(frozen=True)
class Evidence:
    """What a micro-step acts on: its group's loss samples and their commonality report (None for one report)."""

    samples: list[Sample]
    summary: Path | None


class MicroStep:
    """One group's backward micro-step, from its evidence to its record; `run()` reads top to bottom."""

    def __init__(
        self,
        ctx: Context,
        reviewer: Reviewer,
        evidence: Evidence,
        at: At,
        groups: int,
        gate: Validator | None = None,
    ) -> None:
        """Micro-step `at` (epoch, step, group) of the `groups` in its step."""
        self.ctx, self.reviewer, self.gate = ctx, reviewer, gate
        self.samples, self.summary = evidence.samples, evidence.summary
        self.at, self.groups = at, groups
        self.epoch, self.step, self.group = at.epoch, at.step, at.group
        self.label = label_of(at, groups)
        self.records = MicroRecords(ctx.run, at)
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
        return self.at.slug

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
        elif self.attempt:  # a round of candidates killed before its records were all written
            await self.finish_round()
        # A round of candidates killed mid-way left working copies; their commits stay under dead/.
        await asyncio.to_thread(sweep_copies, self.pool, self.records.out, self.before, self.prefix)
        # A run stopped while a checked round awaited review asks for that review again
        # instead of paying for new backward passes.
        pending = await asyncio.to_thread(self.records.pending, self.pool, self.attempt)
        if pending is not None and pending.checked[0].candidate is not None:
            await asyncio.to_thread(self.pool.reset, self.before)  # candidates live under their refs
        if self.gate is not None:
            await self.gate.baseline(self.before, self.at)
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
        return Where(self.at.to(attempt=attempt), self.label, self.before, self.groups)

    async def attempt_round(self) -> Round:
        """One attempt, or K candidates from the same parent; each passes its checks or says why not."""
        if self.candidates == 1:
            self.attempt += 1
            brief = Brief(self.samples, self.summary, self.records.out, self.notes, self.failures)
            try:
                passed = await run_attempt(self.ctx, brief, self.where(self.attempt), role=self.role)
            except AttemptFailed as exc:
                return Round(self.attempt, failures=[str(exc)])
            return Round(self.attempt, [Checked(self.attempt, passed.record())])
        first = self.attempt + 1
        self.attempt += self.candidates
        return await self.run_candidates(first, range(1, self.candidates + 1))

    async def finish_round(self) -> None:
        """Finish the last round of candidates where a kill left it, instead of paying for a new one.

        A candidate whose calls were over has its commit checked where it stands
        (`candidates.recheck_copy`); only those cut short inside their calls run again, in
        their own attempt folders and told what the round was told. `records.pending` then
        reads the whole round back and it goes on to the gate and the review.
        """
        k = self.candidates
        first = (self.attempt - 1) // k * k + 1  # every round takes K attempt numbers
        dirs = {n: self.records.attempt_dir(first + n - 1) for n in range(1, k + 1)}
        if any(attempt_reviewed(d) for d in dirs.values()):
            return  # decided: the next round is a new one
        lexicon = await asyncio.to_thread(lambda: self.ctx.training.lexicon)
        cut: list[int] = []
        for n, adir in dirs.items():
            kept = Candidate(n, first, candidate_ref(self.at, n))
            failed = f"failed/{self.prefix}-a{first + n - 1}"
            if not await asyncio.to_thread(recheck_copy, self.pool, adir, self.before, lexicon, kept, failed):
                cut.append(n)
        self.attempt = first + k - 1
        if cut:
            await asyncio.to_thread(sweep_copies, self.pool, self.records.out, self.before, self.prefix)
            self.failures = self.records.failures_since_review(first - 1)  # what the round's prompt said
            await self.run_candidates(first, cut)
        self.failures = self.records.failures_since_review(self.attempt)

    async def run_candidates(self, first: int, numbers: Sequence[int]) -> Round:
        """Candidates `numbers` of the round that begins at attempt `first`, each in its own working copy."""
        brief = Brief(self.samples, self.summary, self.records.out, self.notes, self.failures)
        folders = {n: self.records.attempt_dir(first + n - 1) / "pool" for n in numbers}
        limit = asyncio.Semaphore(self.ctx.settings.workers)
        copies: dict[int, Pool] = {}

        async def one(n: int) -> Checked | str:
            kept = Candidate(n, first, candidate_ref(self.at, n))
            async with limit:
                try:
                    where = self.where(first + n - 1)
                    passed = await run_attempt(self.ctx, brief, where, copies[n], kept, self.role)
                except AttemptFailed as exc:
                    return str(exc)
            return Checked(first + n - 1, passed.record(), candidate=n)

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
            ev.MicroStepSkipped(**self.at.fields(), attempts=tries, before=self.before, reason=reason, label=self.label)
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
                family = len(round_.checked) if several else 1  # tested together: gate.Rule's Bonferroni
                c.verdict = await self.gate.judge(
                    self.before, self.at.to(attempt=c.attempt), no_worse=self.role.no_worse, family=family
                )
        ranked = rank(round_.checked)
        best = ranked[0]
        if self.gate is not None and best.verdict is not None and best.verdict.advice == "keep":
            # Its passes chose it (the look that stopped; the lowest delta): record it from ones that did not.
            at = self.at.to(attempt=best.attempt)
            best.verdict = await self.gate.record_kept(self.before, best.after, at, best.verdict)
        if several:
            await asyncio.to_thread(self.pool.reset, ranked[0].after)
            self.ctx.bus.emit(ev.PoolChanged(head=ranked[0].after, reason=f"commit {self.label}"))
        return ranked

    async def review(self, ranked: list[Checked]) -> Decision:
        request = self.records.request(self.samples, self.summary, self.label, ranked)
        request = await asyncio.to_thread(provenance.with_lands, request, ranked, self.stamp)
        self.ctx.bus.emit(
            ev.ReviewRequested(
                **self.at.fields(),
                attempt=request.attempt,
                label=self.label,
                before=request.before,
                after=request.after,
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
        fates: dict[int, Fate] = {}
        for c in ranked:
            if approve and c is not chosen:
                fates[c.attempt] = Fate("dropped", "", f"not chosen: candidate {chosen.candidate} was kept")
            else:
                fates[c.attempt] = Fate(decision.action, decision.note if c is chosen else "", decision.reason)
            c.decided = await asyncio.to_thread(self.stamp, c, fates[c.attempt].decision, decision.by)
        keep: dict[str, str] = {}  # every ref the decision moves -> the stamped commit it keeps
        refs: dict[int, str | None] = {}
        # A consolidation that changed nothing leaves no commit on the pool (an empty one at
        # HEAD would be the newest commit, which the history browser cannot revert): it is
        # approved, recorded and kept under a ref like any decided commit, and HEAD stays.
        unchanged = (
            approve and self.role is not BACKWARD and await asyncio.to_thread(changes_nothing, self.pool, chosen.commit)
        )
        for c in ranked:
            if c.record.get("ref"):  # a candidate's own ref holds its stamped commit, whatever the decision
                keep[str(c.record["ref"])] = c.commit
            if approve:
                refs[c.attempt] = None if c is chosen else c.record.get("ref")
            else:
                kind = "rerun" if decision.action == "rerun" else "rolledback"
                ref = f"refs/skilltui/{kind}/{self.prefix}-a{c.attempt}"
                refs[c.attempt], keep[ref] = ref, c.commit
        if unchanged:
            ref = f"refs/skilltui/unchanged/{self.prefix}-a{chosen.attempt}"
            refs[chosen.attempt], keep[ref] = ref, chosen.commit
        reviews = {}
        for c in ranked:
            figures = gate_figures(c.verdict)
            reviews[str(c.attempt)] = self.records.review_of(
                fates[c.attempt], decision.by, refs[c.attempt], figures, c.commit
            )
        event = ev.DecisionMade(
            decision=decision.action,
            by=decision.by,
            **self.at.fields(),
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
        pairs = provenance.trailer_pairs(self.at.to(attempt=c.attempt), self.evidence(), c.verdict, adir, decided, kind)
        return provenance.stamp(self.pool, c.after, pairs)

    def evidence(self) -> str:
        """What the Skilltui-Evidence trailer says this micro-step acted on."""
        return provenance.evidence_value(self.samples)


def gate_figures(verdict: GateVerdict | None) -> dict | None:
    """The numbers of a verdict, without its wording: nothing a validation work could be told by."""
    if verdict is None:
        return None
    keys = ("before", "after", "delta", "low", "high", "confidence", "level", "n", "advice")
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
