"""Where every line of a note came from: `git blame` of the pool, joined to the micro-steps that wrote it.

A person looking at a note asks which update wrote a line, from which evidence, what it did
to validation and what it cost. `git blame` (through GitPython) names the commit that last
changed each line; the run's records (`records.load_history`) say which micro-step made
that commit, on which works' reports it acted and how it was decided; the run's `call`
events say what its backward attempt cost; its decision event carries the gate's figures.
A commit with provenance trailers (`model/trailers.py`, read by the store's one reader of
micro-steps, `store.micro_steps`) says its decision and validation itself, and a git note
under `refs/notes/skilltui` a decision made after it (a revert); those are preferred,
and a run from before trailers reads from its records as it did.

A line written outside training (the pool's first commit, a seed, a hand edit) names its
commit and says so; it has no micro-step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, cast

import git

from ..core.errors import UsageError
from ..core.safe_text import visible_line
from ..model import trailers as tr
from ..model.parse import read_run
from ..store.micro_steps import Told, commit_trailers
from ..store.run_folder import Run
from .records import load_history


@dataclass(frozen=True)
class Origin:
    """The commit a line comes from and, when training made it, its micro-step's facts."""

    commit: str
    subject: str
    micro_step: str | None = None  # "e0 s1 m1/2" (attempt too when not the first)
    epoch: int | None = None
    step: int | None = None
    group: int | None = None
    attempt: int | None = None
    evidence: list[str] = field(default_factory=list)  # the works whose loss reports it acted on
    decision: str = ""  # "approved by auto", "made outside training", ...
    validation: str = ""  # the gate's reason, when the gate ran
    loss: str = ""  # train loss of its step → the next, over the works both scored
    loss_works: list[str] = field(default_factory=list)  # those works: its step's, not only its evidence
    cost_usd: float | None = None  # its backward attempt's calls (None: no price known)
    provenance: dict[str, str] = field(default_factory=dict)  # its Skilltui trailers and later notes


@dataclass(frozen=True)
class BlameLine:
    number: int
    text: str
    commit: str


@dataclass(frozen=True)
class Blame:
    note: str
    lines: list[BlameLine]
    origins: dict[str, Origin]

    def to_dict(self) -> dict[str, Any]:
        return {
            "note": self.note,
            "lines": [asdict(line) for line in self.lines],
            "origins": {sha: asdict(origin) for sha, origin in self.origins.items()},
        }


def blame(run: Run, note: str) -> Blame:
    """Blame `note` at the pool's HEAD; UsageError when the run has no such note."""
    pool = run.pool
    if not (pool.root / ".git").exists():
        raise UsageError(f"run {run.id} has no pool (memory/ is not a git repository); there is nothing to blame")
    notes = pool.note_paths()
    if note not in notes:
        # Both names may hold any character (the person's argument, an agent's file name): one line, shown.
        listed = ", ".join(visible_line(n) for n in notes[:6])
        hint = f"its notes: {listed}{' …' if len(notes) > 6 else ''}" if notes else "the pool has none"
        raise UsageError(f"{visible_line(note)} is not a note of run {run.id} at HEAD; {hint}")
    try:
        entries = pool.repo.blame("HEAD", note)
    except git.GitCommandError as exc:
        raise UsageError(
            f"git blame of {note} failed ({exc.stderr.strip() or exc}); run git -C {pool.root} fsck"
        ) from None
    lines: list[BlameLine] = []
    # Not incremental, blame gives [commit, lines] pairs; GitPython's type is the union of both modes.
    for commit, texts in cast("list[tuple[git.Commit, list[str | bytes]]]", entries or []):
        for text in texts:
            line = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
            lines.append(BlameLine(len(lines) + 1, line, commit.hexsha))
    return Blame(note, lines, _origins(run, {line.commit for line in lines}))


def _origins(run: Run, shas: set[str]) -> dict[str, Origin]:
    history = load_history(run)
    told = Told()  # the micro-steps as the event log tells them: each decision's reason, each attempt's cost
    for event in read_run(run.events_path).events:
        told.apply(event)
    reasons = {key: d.event.reason for key, d in told.decided.items() if d.event.reason}
    origins: dict[str, Origin] = {}
    for sha in sorted(shas):
        commit = history.find(sha)
        if commit is None:
            origins[sha] = Origin(sha, "", decision="not in the pool's records")
            continue
        micro = commit.micro
        if micro is None:
            origins[sha] = Origin(sha, commit.subject, decision=commit.decision or "made outside training")
            continue
        key = (micro.epoch, micro.step, micro.group, micro.attempt)
        # The commit's own trailers say what was decided and measured; a note adds what was decided later.
        # A run from before trailers has none, and its records say it instead.
        said = commit_trailers(run, sha)
        before = f"{commit.loss_before:.3f}" if commit.loss_before is not None else "?"
        after = f"{commit.loss_after:.3f}" if commit.loss_after is not None else "…"
        origins[sha] = Origin(
            commit=sha,
            subject=commit.summary,
            micro_step=micro.short_label,
            epoch=micro.epoch,
            step=micro.step,
            group=micro.group,
            attempt=micro.attempt,
            evidence=list(micro.works),
            decision=said.get("Decision") or commit.decision,
            validation=said.get("Val") or (reasons.get(key, "") if reasons.get(key, "").startswith("gate") else ""),
            loss=f"{before}→{after}",
            loss_works=list(commit.loss_works),
            cost_usd=told.cost(key),
            provenance={key: said.get(key) for key in tr.KEYS if said.get(key)},
        )
    return origins


def blame_text(result: Blame) -> list[str]:
    """The lines `skilltui blame` prints: each note line after its micro-step, then what each one was."""
    width = max((len(o.micro_step or "—") for o in result.origins.values()), default=1)
    out = []
    for line in result.lines:
        origin = result.origins[line.commit]
        out.append(f"{(origin.micro_step or '—'):<{width}} {line.commit[:7]} {line.number:>3} │ {line.text}")
    out.append("")
    for sha, origin in sorted(result.origins.items(), key=lambda item: (item[1].epoch or -1, item[1].step or -1)):
        cost = "cost unknown" if origin.cost_usd is None else f"cost ${origin.cost_usd:.4f}"
        if origin.micro_step is None:
            out.append(f"{sha[:7]}: {origin.decision}: {origin.subject}")
            continue
        # A step mean covers the step's works, which may be more than the evidence: say which.
        over = f" over {', '.join(origin.loss_works)}" if origin.loss_works else ""
        facts = [f"evidence {', '.join(origin.evidence) or '—'}", f"loss {origin.loss}{over}", cost, origin.decision]
        if origin.validation:
            facts.append(f"validation {origin.validation}" if origin.provenance else origin.validation)
        out.append(f"{origin.micro_step} {sha[:7]}: {origin.subject}  ({'; '.join(facts)})")
    return out
