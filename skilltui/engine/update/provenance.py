"""Provenance trailers on a micro-step's commit, written when the micro-step is decided.

An attempt's commit is made by the agent (through the commit tool) before the gate has
measured it or a reviewer has seen it, so its message can say neither. When the decision
is made, every figure the trailers carry is known: the engine writes the commit once more
with the same tree and parent and the trailer block appended (`model/trailers.py` says
what each trailer holds), and that commit is what the pool keeps, or what a ref keeps for
a rerun, a roll back or a candidate not chosen. Subject and body stay as the agent wrote
them; the tree is the same, so the gate's samples (keyed by tree) still apply.

The agent's commit stays in `checked.json` (the attempt as it was reviewed); the one with
trailers is in `review.json` (`commit`) and `commit.txt`, which is what the history joins.

Decisions made later (a revert in `skilltui review`) go in as git notes (`note_later`), so
no commit changes after its micro-step was decided.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from ...model import trailers as tr
from ...model.at import At
from ...model.review import GateVerdict, ReviewRequest
from ...pool.notes import Pool
from ...store.micro_records import Checked
from ...store.places import Sample
from ...store.run_folder import read_json


def evidence_value(samples: list[Sample]) -> str:
    """'alpha ep 1-2 (loss 0.412), beta ep 1-2 (loss 0.380)': the reports the attempt acted on."""
    parts = []
    for s in samples:
        episodes = f"ep {s.first}" if s.first == s.last else f"ep {s.first}-{s.last}"
        parts.append(f"{s.work} {episodes} (loss {s.loss:.3f})")
    return ", ".join(parts) or "none"


def attempt_cost(adir: Path) -> tuple[float | None, int]:
    """What the attempt's calls cost, from the transcripts it kept (None when a price is unknown)."""
    total: float | None = 0.0
    calls = 0
    for path in sorted(adir.glob("transcript*.json")):
        try:
            cost = read_json(path).get("cost_usd")
        except (OSError, ValueError, AttributeError):
            cost = None
        calls += 1
        total = None if cost is None or total is None else total + float(cost)
    return (round(total, 6) if total is not None else None), calls


def trailer_pairs(
    at: At, evidence: str, verdict: GateVerdict | None, adir: Path, decision: str, kind: str = ""
) -> list[tuple[str, str]]:
    """The (key, value) pairs of decided attempt `at` (its folder `adir`), in the order `git log` shows them."""
    step = at.trailer()
    val = "not measured (no --gate)" if verdict is None else tr.val_value(verdict)
    pairs = [("Step", step), ("Evidence", evidence), ("Val", val)]
    pairs.append(("Cost", tr.cost_value(*attempt_cost(adir))))
    if kind:
        pairs.append(("Kind", kind))
    pairs.append(("Decision", decision))
    return pairs


def stamp(pool: Pool, sha: str, pairs: list[tuple[str, str]]) -> str:
    """A commit with `sha`'s tree, parents and message, the trailers appended; its id.

    A commit that already carries Skilltui trailers (a resumed decision) is stamped afresh
    from its message without them, so a trailer never appears twice; an agent's line that
    only looks like one (behind a carriage return, a U+2028, in another case) goes too.
    It keeps the agent's commit's dates, so the id is a function of that commit and the
    trailers: the review can name the commit a decision will keep before it is made.
    """
    # Read through git commands, not the shared object reader: the app may be reading the pool.
    body = pool.git("log", "-1", "--format=%B", sha)
    # The agent wrote the message: what looks like a trailer or splits a line for a reader goes.
    message = tr.agent_message(body).rstrip()
    tree = pool.git("rev-parse", f"{sha}^{{tree}}")
    parents = [arg for p in pool.parents(sha) for arg in ("-p", p)]
    authored, committed = pool.git("log", "-1", "--format=%ad%n%cd", "--date=raw", sha).splitlines()
    dates = {"GIT_AUTHOR_DATE": authored, "GIT_COMMITTER_DATE": committed}
    return pool.git("commit-tree", tree, *parents, "-m", f"{message}\n\n{tr.block(pairs)}\n", env=dates)


def with_lands(request: ReviewRequest, ranked: Sequence[Checked], stamp: Callable[..., str]) -> ReviewRequest:
    """`request` with the commit each decision by a person keeps (`stamp(attempt, action, "human")`,
    as the decision will stamp it), so the review names the id history will show, not the agent's."""
    lands = {c.attempt: {a: stamp(c, a, "human") for a in ("approve", "rerun", "rollback")} for c in ranked}
    views = [replace(v, lands=lands.get(v.attempt, {})) for v in request.candidates]
    return replace(request, lands=lands[ranked[0].attempt], candidates=views)


def note_later(pool: Pool, sha: str, pairs: list[tuple[str, str]]) -> None:
    """Add a decision made after the fact to `sha` as a git note (refs/notes/skilltui), commit unchanged."""
    pool.git("notes", f"--ref={tr.NOTES_REF}", "append", "-m", tr.block(pairs), sha)
