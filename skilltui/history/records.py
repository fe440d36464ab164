"""The pool's commits, each joined to the micro-step that made it and what the loss did next.

`git log` says what changed; the run's records say why. A commit made by a backward
micro-step is found through the `checked.json` its attempt wrote (keyed by the commit it
checked), and gets that micro-step's label, works, decision, reviewer and the loss of the
step whose reports it acted on. A revert made by `skilltui review` is found through its
`history` event. Commits that a rerun, a roll back or a reset dropped are still kept
under `refs/skilltui/...`; they are read too, marked as off the pool's history.

Loss before / after a commit is a step-level figure: the mean loss of the step whose loss
reports the micro-step read, and the mean loss of the next step, which is the first one
written with the notes as that micro-step (and the others of its step) left them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import git

from ..engine.attribution import NoteStats, run_attribution
from ..engine.events import read_events
from ..engine.feedback import parse_body
from ..engine.pool import Pool
from ..engine.run import Run, read_json
from .status import RunStatus, run_status

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})")
LABEL = re.compile(r"epoch (\d+) step (\d+) micro (\d+)/(\d+)")
DROPPED = {
    "reset": "dropped by reset",
    "failed": "failed its checks",
    "dead": "left by a dead attempt",
    "kept": "uncommitted changes kept on reopen",
}
DECISION_WORDS = {"approve": "approved", "rerun": "rerun", "rollback": "rolled back"}


@dataclass(frozen=True)
class MicroStepRecord:
    """One backward attempt, as the run recorded it."""

    epoch: int
    step: int
    group: int
    attempt: int
    label: str
    folder: Path  # backward/g<G>
    works: list[str]
    decision: str | None  # approve, rerun, rollback; None while it awaits review
    by: str | None
    note: str

    @property
    def short_label(self) -> str:
        m = LABEL.search(self.label)
        micro = f"{m.group(3)}/{m.group(4)}" if m else str(self.group)
        return f"e{self.epoch} s{self.step} m{micro}" + (f" a{self.attempt}" if self.attempt > 1 else "")

    @property
    def attempt_dir(self) -> Path:
        return self.folder / f"attempt{self.attempt}"


@dataclass
class Commit:
    """One commit of the pool with everything the review app shows about it."""

    sha: str
    parents: list[str]
    time: int
    message: str
    files: list[tuple[str, str]]  # (A/M/D, path)
    in_history: bool  # reachable from HEAD: part of the pool as it stands
    micro: MicroStepRecord | None = None
    decision: str = ""  # what the decision column says: "approved by auto", "revert by human", ...
    loss_before: float | None = None
    loss_after: float | None = None
    kept_as: list[str] = field(default_factory=list)
    # Earlier attempts that produced this very commit (a deterministic agent reruns to the same one).
    earlier: list[MicroStepRecord] = field(default_factory=list)
    reverts: str | None = None
    reverted_by: str | None = None
    # The commit body's prediction, and the mean of each loss part around the micro-step (what then happened).
    prediction: str = ""
    parts_before: dict[str, float] = field(default_factory=dict)
    parts_after: dict[str, float] = field(default_factory=dict)

    @property
    def short(self) -> str:
        return self.sha[:7]

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]

    @property
    def paths(self) -> list[str]:
        return [path for _, path in self.files]


@dataclass
class History:
    """Every commit of the pool, newest first, and the facts about the run the app shows around them."""

    run: Run
    head: str
    commits: list[Commit]
    status: RunStatus
    dirty: bool
    # Per note: forward passes that read it, mean loss of episodes written with / without it.
    attribution: dict[str, NoteStats] = field(default_factory=dict)

    def find(self, sha: str) -> Commit | None:
        return next((c for c in self.commits if c.sha == sha), None)

    @property
    def in_history(self) -> list[Commit]:
        return [c for c in self.commits if c.in_history]


def micro_steps(run: Run, events: list[dict[str, Any]]) -> dict[str, list[MicroStepRecord]]:
    """Every checked backward attempt of the run, keyed by the commit it produced, in the order they ran."""
    labels = {
        (e["epoch"], e["step"], e["group"], e["attempt"]): e.get("label", "")
        for e in events
        if e.get("kind") == "micro_step"
    }
    found: dict[str, list[MicroStepRecord]] = {}
    for checked_path in run.root.glob("epoch*/step*/backward/g*/attempt*/checked.json"):
        adir = checked_path.parent
        gdir = adir.parent
        try:
            epoch = int(gdir.parent.parent.parent.name.removeprefix("epoch"))
            step = int(gdir.parent.parent.name.removeprefix("step"))
            group = int(gdir.name.removeprefix("g"))
            attempt = int(adir.name.removeprefix("attempt"))
            checked = read_json(checked_path)
        except (ValueError, OSError):
            continue
        review = _read_or_none(adir / "review.json") or {}
        batch = _read_or_none(gdir / "batch.json") or []
        found.setdefault(checked["after"], []).append(
            MicroStepRecord(
                epoch=epoch,
                step=step,
                group=group,
                attempt=attempt,
                label=labels.get((epoch, step, group, attempt)) or f"epoch {epoch} step {step} micro {group}",
                folder=gdir,
                works=[b.get("work", "?") for b in batch if isinstance(b, dict)],
                decision=review.get("decision"),
                by=review.get("by"),
                note=review.get("note") or "",
            )
        )
    for attempts in found.values():
        attempts.sort(key=lambda m: (m.epoch, m.step, m.group, m.attempt))
    return found


def _read_or_none(path: Path) -> Any:
    try:
        return read_json(path)
    except (OSError, ValueError):
        return None


def _log(pool: Pool) -> list[tuple[str, list[str], int, str, list[tuple[str, str]]]]:
    """(sha, parents, time, message, files) of HEAD's history and every commit kept under refs/skilltui."""
    out = pool.git(
        "log",
        "--date-order",
        "--no-renames",
        "--name-status",
        "--format=%x1e%H%x1f%P%x1f%ct%x1f%B%x1f",
        "HEAD",
        "--glob=refs/skilltui",
    )
    commits = []
    for chunk in out.split("\x1e")[1:]:
        sha, parents, stamp, message, rest = chunk.split("\x1f", 4)
        files = []
        for line in rest.strip("\n").splitlines():
            status, _, path = line.partition("\t")
            if path:
                files.append((status[:1], path))
        commits.append((sha, parents.split(), int(stamp), message.strip("\n"), files))
    return commits


def _kept_refs(pool: Pool) -> dict[str, list[str]]:
    refs: dict[str, list[str]] = {}
    out = pool.git("for-each-ref", "--format=%(objectname) %(refname)", "refs/skilltui")
    for line in out.splitlines():
        sha, _, name = line.partition(" ")
        refs.setdefault(sha, []).append(name.removeprefix("refs/skilltui/"))
    return refs


def part_means(events: list[dict[str, Any]]) -> dict[tuple[int, int], dict[str, float]]:
    """Each step's mean of every loss part (chrf, scenes, ...) over its works, from `loss` events."""
    per: dict[tuple[int, int], dict[str, dict[str, float]]] = {}
    for e in events:
        if e.get("kind") == "loss" and isinstance(e.get("scores"), dict):
            per.setdefault((e["epoch"], e["step"]), {})[e.get("work") or ""] = e["scores"]
    means: dict[tuple[int, int], dict[str, float]] = {}
    for key, works in per.items():
        names = {name for scores in works.values() for name in scores}
        means[key] = {
            name: round(sum(s[name] for s in works.values() if name in s) / sum(name in s for s in works.values()), 4)
            for name in sorted(names)
        }
    return means


def load_history(run: Run) -> History:
    """Read the pool's commits and join them to the run's records. Blocking: git and file reads."""
    pool = run.pool
    events = read_events(run.events_path)
    status = run_status(run)  # tailed: the run model reads on from the last look
    head = pool.head()
    in_history = set(pool.git("rev-list", "HEAD").split())
    records = micro_steps(run, events)
    kept = _kept_refs(pool)
    history_actions = {e.get("after"): e for e in events if e.get("kind") == "history" and e.get("action") == "revert"}
    parts = part_means(events)
    commits: list[Commit] = []
    for sha, parents, stamp, message, files in _log(pool):
        commit = Commit(sha, parents, stamp, message, files, sha in in_history, kept_as=kept.get(sha, []))
        attempts = records.get(sha, [])
        micro = attempts[-1] if attempts else None
        commit.earlier = attempts[:-1]
        reverted = REVERTS.search(message)
        if micro is not None:
            commit.micro = micro
            word = DECISION_WORDS.get(micro.decision or "", "awaiting review")
            commit.decision = f"{word} by {micro.by}" if micro.by else word
            commit.loss_before, commit.loss_after = status.loss_change((micro.epoch, micro.step))
            commit.prediction = parse_body(message)["prediction"]
            commit.parts_before = parts.get((micro.epoch, micro.step), {})
            later = [k for k in parts if k > (micro.epoch, micro.step)]
            commit.parts_after = parts[min(later)] if later else {}
        elif sha in history_actions:
            commit.decision = f"revert by {history_actions[sha].get('by', 'human')}"
        elif reverted:
            commit.decision = "revert"
        elif LABEL.fullmatch(commit.subject.removeprefix("train ")):
            # A backward commit whose checks have not been written yet (or never were: the attempt died).
            commit.decision = "being checked" if status.running else "unchecked"
        elif not parents:
            commit.decision = "start"
        elif commit.subject.startswith("pool: seed"):
            commit.decision = "seed"
        else:
            commit.decision = "made outside training"
        if reverted:
            commit.reverts = reverted.group(1)
        if not commit.in_history and micro is None:
            commit.decision = _why_dropped(commit.kept_as) or commit.decision
        commits.append(commit)
    by_sha = {c.sha: c for c in commits}
    for c in commits:
        if c.reverts and c.in_history:
            target = by_sha.get(c.reverts) or next((t for t in commits if t.sha.startswith(c.reverts)), None)
            if target is not None and target.reverted_by is None:
                target.reverted_by = c.sha
    return History(
        run=run,
        head=head,
        commits=commits,
        status=status,
        dirty=not pool.is_clean(),
        attribution=run_attribution(run, pool.note_paths()),
    )


def _why_dropped(kept_as: list[str]) -> str:
    kinds = {name.split("/", 1)[0] for name in kept_as}
    for kind, words in DROPPED.items():
        if kind in kinds:
            return words
    return ""


def commit_patch(pool: Pool, sha: str) -> str:
    """The diff a commit made (the root commit against the empty tree)."""
    return pool.git("show", "--no-color", "--no-renames", "--format=", sha).strip("\n")


def range_patch(pool: Pool, older: str, newer: str) -> str:
    """The diff from one commit to another: what the pool gained between them."""
    return pool.patch(older, newer)


def search_text(repo: git.Repo, commit: Commit) -> str:
    """What `/` searches in one commit: its message, the notes it touched and their contents at that commit.

    A removed note is read from the commit before, so searching for a removed rule finds
    the commit that removed it.
    """
    parts = [commit.message, *commit.paths]
    for status, path in commit.files:
        rev = commit.parents[0] if status == "D" and commit.parents else commit.sha
        try:
            blob = repo.commit(rev).tree / path
            parts.append(blob.data_stream.read().decode("utf-8", errors="replace"))
        except (KeyError, ValueError, git.BadName):
            continue
    return "\n".join(parts).casefold()
