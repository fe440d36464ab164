"""The run folder's records of one micro-step: what a resumed run reads back, and what it writes.

A micro-step lives in `epoch<E>/step<S>/backward/g<G>/`:

```
batch.json            the samples it acts on
before.txt            the commit it started from, fixed at its first attempt
lint_report.txt       the pool's lint as the backward found it
attempt<N>/           prompt.md, transcript.json, then checked.json + patch.diff, or failed.json
attempt<N>/review.json  the decision on that attempt (approve, rerun, rollback, dropped)
decision.json         a round's decision, whole, written before it moves anything (decided.py)
commit.txt            written last: the micro-step is done (approved, rolled back or skipped)
```

With `--candidates K` above 1, one round of attempts is K consecutive attempt folders, one
per candidate; each `checked.json` then also says its `candidate` number and its `round`
(the first attempt of the round). `MicroStep` (micro_step.py) is the procedure; this
module writes these files and reads back what a resumed micro-step needs, and
`micro_steps.py` reads them for every other reader: nothing outside the store names them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..model.at import At
from ..model.review import CandidateView, GateVerdict, ReviewRequest
from ..pool.notes import Pool
from .places import Sample
from .run_folder import OUTCOME, Run, read_json, write_atomic, write_json


def micro_step_done(run: Run, at: At) -> bool:
    """The micro-step `at` (epoch, step, group) is decided: its final record, written last, exists."""
    return (run.backward_dir(at.epoch, at.step, at.group_index) / OUTCOME).exists()


def write_checked(adir: Path, checked: dict) -> None:
    """An attempt passed its checks: the record its review, a resume and every reader of micro-steps read."""
    write_json(adir / "checked.json", checked)


def attempt_ended(adir: Path) -> bool:
    """The attempt recorded how it ended (checked, failed or reviewed): nothing of it is left to finish."""
    return any((adir / name).exists() for name in ("checked.json", "failed.json", "review.json"))


def attempt_reviewed(adir: Path) -> bool:
    """The attempt was decided (its review is recorded): a round with one is over."""
    return (adir / "review.json").exists()


@dataclass
class Checked:
    """One attempt that passed its checks: its record (`checked.json`) and, once validated, its verdict."""

    attempt: int
    record: dict
    verdict: GateVerdict | None = None
    candidate: int | None = None  # 1..K with --candidates above 1; None for the one attempt of K=1
    decided: str | None = None  # once decided: the commit with its provenance trailers (provenance.py)

    @property
    def after(self) -> str:
        """The commit the agent made and the checks passed, as the reviewer saw it."""
        return str(self.record["after"])

    @property
    def commit(self) -> str:
        """The commit that stands for this attempt: the decided one once there is one."""
        return self.decided or self.after


@dataclass
class Round:
    """The attempts a reviewer judges together: one for K=1, the candidates that passed for K>1."""

    first: int  # the round's first attempt number
    checked: list[Checked] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Fate:
    """What a decision did to one attempt: its decision, the reviewer's note, and why."""

    decision: str
    note: str
    reason: str


class MicroRecords:
    """Reads and writes one micro-step's folder."""

    def __init__(self, run: Run, at: At) -> None:
        """The records of micro-step `at` (epoch, step, group)."""
        self.run, self.at = run, at
        self.out = run.backward_dir(at.epoch, at.step, at.group_index)

    def attempt_dir(self, attempt: int) -> Path:
        return self.out / f"attempt{attempt}"

    # -- reading back (a resumed run) ------------------------------------------------------

    def done(self) -> bool:
        """A micro-step is done only when its commit.txt exists."""
        return micro_step_done(self.run, self.at)

    def start(self, samples: list[Sample]) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        write_json(self.out / "batch.json", [s.to_dict() for s in samples])

    def base_commit(self, pool: Pool) -> tuple[str, tuple[str, list[str]] | None]:
        """The commit this micro-step started from, fixed at its first attempt so every retry starts there too,
        and the edits no commit held (made while forward ran), kept under a ref before the pool went back."""
        path = self.out / "before.txt"
        if path.exists():
            return path.read_text(encoding="utf-8").strip(), None
        head, clean = pool.state()
        kept = None if clean else pool.reset(head)
        write_atomic(path, head + "\n")
        return head, kept

    def attempts(self) -> int:
        return max((int(p.name[7:]) for p in self.out.glob("attempt*") if p.name[7:].isdigit()), default=0)

    def reviewer_notes(self) -> list[str]:
        notes = []
        for n in range(1, self.attempts() + 1):
            review = self.attempt_dir(n) / "review.json"
            if review.exists():
                data = read_json(review)
                if data.get("decision") == "rerun" and data.get("note"):
                    notes.append(data["note"])
        return notes

    def failures_since_review(self, attempt: int) -> list[str]:
        """Why the rounds since the last review failed, so a resumed run keeps counting its retries.

        A round of candidates that all failed counts once, as it did when it ran; a candidate
        that failed in a round another candidate of which was reviewed counts not at all.
        """
        reviewed = {
            c.record.get("round")
            for n in range(1, attempt + 1)
            if (self.attempt_dir(n) / "review.json").exists() and (c := self._checked(n)) is not None
        } - {None}
        failures: list[str] = []
        rounds: set[int] = set()
        for n in range(1, attempt + 1):
            adir = self.attempt_dir(n)
            if (adir / "review.json").exists():
                failures, rounds = [], set()
            elif (adir / "failed.json").exists():
                try:
                    data = read_json(adir / "failed.json")
                except (OSError, ValueError):
                    data = {"reason": "an earlier attempt failed"}
                round_ = data.get("round")
                if round_ in reviewed:
                    continue
                if round_ is not None and round_ in rounds:
                    failures[-1] = str(data.get("reason", ""))
                    continue
                if round_ is not None:
                    rounds.add(round_)
                failures.append(str(data.get("reason", "")))
        return failures

    def pending(self, pool: Pool, attempt: int) -> Round | None:
        """A checked round that awaited review when the run stopped, to be asked again instead of paid for again."""
        if attempt == 0:
            return None
        last = self._checked(attempt)
        if last is None or (self.attempt_dir(attempt) / "review.json").exists():
            if last is None and (self.attempt_dir(attempt) / "failed.json").exists():
                return self._pending_round(attempt)
            return None
        if last.candidate is None:
            # One attempt: it stands in the pool, checked and clean, exactly as it was reviewed.
            return Round(attempt, [last]) if pool.state() == (last.after, True) else None
        return self._pending_round(attempt)

    def _pending_round(self, attempt: int) -> Round | None:
        """The candidates of the round that ends at `attempt`, if every one of them finished."""
        found: list[Checked] = []
        n = attempt
        while n >= 1:
            adir = self.attempt_dir(n)
            if (adir / "review.json").exists():
                break
            checked = self._checked(n)
            failed = (adir / "failed.json").exists()
            if checked is None and not failed:
                return None  # a candidate died unfinished: the round runs again
            round_ = checked.record.get("round") if checked else read_json(adir / "failed.json").get("round")
            if round_ is None:
                break
            if checked is not None:
                found.append(checked)
            if n == round_:
                return Round(n, sorted(found, key=lambda c: c.attempt)) if found else None
            n -= 1
        return None

    def _checked(self, attempt: int) -> Checked | None:
        path = self.attempt_dir(attempt) / "checked.json"
        if not path.exists():
            return None
        record = read_json(path)
        return Checked(attempt, record, candidate=record.get("candidate"))

    # -- writing ---------------------------------------------------------------------------

    @staticmethod
    def review_of(fate: Fate, by: str, ref: str | None, gate: dict | None, commit: str) -> dict:
        """One attempt's review.json. The gate's figures go beside the decision, for the next prompt's
        rejected updates (rejected.py); `commit` is the attempt's commit with its provenance trailers,
        the one the history joins."""
        return {
            "decision": fate.decision,
            "by": by,
            "note": fate.note,
            "ref": ref,
            "reason": fate.reason,
            "gate": gate,
            "commit": commit,
        }

    def reviewed(self, attempt: int, review: dict) -> None:
        write_json(self.attempt_dir(attempt) / "review.json", review)

    @staticmethod
    def outcome(before: str, after: str, chosen: Checked, decision: str, by: str, ref: str | None) -> dict:
        """commit.txt: the micro-step is done, and which attempt's commit (if any) it kept."""
        record = chosen.record
        return {
            "before": before,
            "after": after,
            "subject": record["subject"],
            "message": record.get("message", ""),
            "decision": decision,
            "by": by,
            "attempt": chosen.attempt,
            "attempt_commit": chosen.commit,
            "ref": ref,
        }

    def finished(self, outcome: dict) -> None:
        write_json(self.out / OUTCOME, outcome)

    def skipped(self, before: str, attempt: int, failures: list[str]) -> None:
        write_json(
            self.out / OUTCOME,
            {
                "before": before,
                "after": before,
                "subject": "",
                "decision": "skipped",
                "by": "checks",
                "attempt": attempt,
                "reason": failures[-1],
                "failures": failures,
            },
        )

    # -- the review request ------------------------------------------------------------------

    def request(self, samples: list[Sample], summary: Path | None, label: str, shown: list[Checked]) -> ReviewRequest:
        """Everything a reviewer needs, read from the records; `shown` is the round, best first."""
        first = shown[0]
        evidence = summary.read_text(encoding="utf-8") if summary else samples[0].report.read_text(encoding="utf-8")
        # The notes the update touched passed the linter before it could be reviewed; what the
        # reviewer learns from lint is the rest of the pool, as recorded when the backward began.
        lint_report = self.out / "lint_report.txt"
        recorded = lint_report.read_text(encoding="utf-8").splitlines() if lint_report.exists() else []
        pool_lint = [line for line in recorded if line.strip() and line.strip() != "no problems"]
        views = [self._view(c) for c in shown] if first.candidate is not None else []
        c = first.record
        return ReviewRequest(
            run_dir=self.run.root,
            **self.at.fields(),
            attempt=first.attempt,
            label=label,
            works=[s.work for s in samples],
            before=c["before"],
            after=c["after"],
            subject=c["subject"],
            message=c.get("message", ""),
            patch=self._patch(first.attempt),
            evidence=evidence,
            reports={s.work: s.report.read_text(encoding="utf-8") for s in samples},
            lint_ok=not pool_lint,
            lint_problems=pool_lint,
            added=c["added"],
            changed=c["changed"],
            removed=c["removed"],
            gate=first.verdict,
            candidates=views,
            reviewer_notes=self.reviewer_notes(),
        )

    def _patch(self, attempt: int) -> str:
        return (self.attempt_dir(attempt) / "patch.diff").read_text(encoding="utf-8")

    def _view(self, c: Checked) -> CandidateView:
        r = c.record
        return CandidateView(
            number=c.candidate or 1,
            attempt=c.attempt,
            after=r["after"],
            subject=r["subject"],
            message=r.get("message", ""),
            patch=self._patch(c.attempt),
            added=r["added"],
            changed=r["changed"],
            removed=r["removed"],
            reads=list(r.get("reads", [])),
            gate=c.verdict,
        )
