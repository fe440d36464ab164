"""The optimizer sees its evidence: every path a prompt names opens, traces, history, feedback, attribution."""

from __future__ import annotations

import json
import re
import tracemalloc
from pathlib import Path

import pytest

from skilltui.agents.base import CallResult, Request
from skilltui.agents.offline import OfflineBackend
from skilltui.agents.tools import Sandbox, ToolError
from skilltui.engine.loss.scores import WEIGHTS
from skilltui.engine.update.attribution import Episode, attribute, episodes, run_attribution
from skilltui.engine.update.review import AutoReviewer
from skilltui.model.review import Decision
from skilltui.pool.notes import Pool, render_note
from skilltui.store.run_folder import Run, write_json
from tests.support.recorded import recorded
from tests.support.reviewing import ScriptedReviewer, train_once

BACKTICKED = re.compile(r"`([^`\s]+)`")
LISTED_NOTE = re.compile(r"^- ([a-z0-9-]+/[a-z0-9-]+\.md): ", re.MULTILINE)


def mentioned_paths(text: str) -> list[str]:
    """Every path a prompt names, exactly as written: backticked paths and the listed notes."""
    paths = [p for p in BACKTICKED.findall(text) if "/" in p]
    return list(dict.fromkeys(paths + LISTED_NOTE.findall(text)))


class PathOpener(OfflineBackend):
    """The offline backend, after first opening every path its prompt names through the sandbox it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: dict[str, list[str]] = {}
        self.refused: list[tuple[str, str, str]] = []
        self.text_prompts: dict[str, list[str]] = {}

    async def agent(self, request: Request, sandbox: Sandbox) -> CallResult:
        for path in mentioned_paths(f"{request.prefix}\n{request.prompt}"):
            try:
                real = sandbox.resolve(path)  # never refused for reading
                if real.exists():
                    sandbox.view(path)
                    self.opened.setdefault(request.role, []).append(path)
                elif not any(real == r or r in real.parents for r in sandbox.write_roots):
                    # Not there yet and not this role's to write (a pool folder with no note
                    # in it): the answer must say so, naming the folder it looked in.
                    with pytest.raises(ToolError, match="does not exist"):
                        sandbox.view(path)
            except ToolError as exc:
                self.refused.append((request.role, path, str(exc)))
        return await super().agent(request, sandbox)

    async def text(self, request: Request) -> CallResult:
        self.text_prompts.setdefault(request.role, []).append(f"{request.prefix}\n{request.prompt}")
        return await super().text(request)


def seed_pool(tmp_path: Path) -> Path:
    """A trained pool to start from, so the prompts list notes by their relative paths."""
    donor = tmp_path / "donor"
    for rel, description in (
        ("scene/scene-headings.md", "Open every scene with a scene heading: INT. or EXT., place, time."),
        ("dialogue/dialogue-blocks.md", "Turn reported speech into dialogue blocks under a character cue."),
    ):
        (donor / rel).parent.mkdir(parents=True, exist_ok=True)
        (donor / rel).write_text(render_note(description, f"Guidance for {rel}, with an invented example."))
    return donor


def test_every_path_a_prompt_names_opens_in_that_roles_sandbox(tmp_path, make_work):
    works = [make_work("gull", 4), make_work("heron", 4)]
    backend = PathOpener()
    run, outcome = train_once(
        tmp_path, works, backend, AutoReviewer(), steps=2, group_size=2, init_pool=seed_pool(tmp_path)
    )
    assert outcome.status == "finished"
    assert backend.refused == []
    opened = backend.opened
    # The writer opened the notes exactly as listed (relative to the pool) and its story.
    assert "scene/scene-headings.md" in opened["forward"]
    assert any(p.endswith("stories/gull.md") for p in opened["forward"])
    # The backward agent opened its summary, the loss reports, scores and read traces of its group.
    for name in ("gull", "heron"):
        assert any(p.endswith(f"works/{name}/reads.json") for p in opened["backward"])
        assert any(p.endswith(f"loss/{name}.md") for p in opened["backward"])
    assert any(p.endswith("summary.md") for p in opened["backward"])
    assert "dialogue/dialogue-blocks.md" in opened["backward"]
    # The text roles have no sandbox: their prompts carry their evidence inline and name no file of the run.
    assert set(backend.text_prompts) == {"loss", "reduce"}
    for prompts in backend.text_prompts.values():
        assert all(str(run.root) not in p for p in prompts)
    # No tool call of the run was refused either.
    assert [e for e in recorded(run.events_path) if e["kind"] == "tool" and e["error"] is not None] == []


def test_a_relative_path_that_is_missing_names_the_folder_it_looked_in(tmp_path):
    pool = tmp_path / "pool"
    (pool / "scene").mkdir(parents=True)
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    sandbox = Sandbox(read_roots=[pool], write_roots=[scripts], base=pool)
    with pytest.raises(ToolError, match=rf"scene/missing.md does not exist in {re.escape(str(pool))}"):
        sandbox.view("scene/missing.md")
    (pool / "scene" / "here.md").write_text("note\n")
    assert sandbox.read_text("scene/here.md") == "note\n"


def test_the_backward_sandbox_reaches_its_groups_evidence_and_nothing_else_of_the_run(tmp_path, make_work):
    works = [make_work("ibis", 4), make_work("jay", 4)]
    seen: list[Sandbox] = []

    class Spy(OfflineBackend):
        async def agent(self, request, sandbox):
            if request.role == "backward":
                seen.append(sandbox)
            return await super().agent(request, sandbox)

    run, outcome = train_once(tmp_path, works, Spy(), AutoReviewer(), steps=1, group_size=1)
    assert outcome.status == "finished" and len(seen) == 2
    first = seen[0]
    step = run.step_dir(0, 0)
    first.view(str(step / "works" / "ibis" / "reads.json"))
    for off_limits in (
        step / "works" / "jay" / "reads.json",  # another group's trace
        step / "loss" / "jay.md",  # another group's report
        step / "works" / "ibis" / "transcript.json",
        run.root / "events.jsonl",
        run.memory / ".git" / "HEAD",
    ):
        with pytest.raises(ToolError):
            first.view(str(off_limits))


def test_attribution_numbers_match_the_traces(tmp_path):
    """A hand-made run: every number below can be checked on paper."""
    run = Run(tmp_path / "run")

    def work_step(epoch, step, work, traces, losses):
        # Every part of an episode at similarity 1 - loss: any weighted mean of them gives that loss.
        parts = {n: {k: round(1 - v, 4) for k in WEIGHTS} for n, v in losses.items()}
        write_json(run.loss_scores(epoch, step, work), {"loss": 0, "episodes": parts})
        notes = sorted({n for t in traces.values() for n in t})
        write_json(run.work_dir(epoch, step, work) / "reads.json", {"notes": notes, "episodes": traces})

    work_step(0, 0, "a", {"1": [], "2": ["scene/x.md"]}, {"1": 0.8, "2": 0.6})
    work_step(
        0, 0, "b", {"1": ["scene/x.md", "dialogue/y.md"], "2": ["scene/x.md", "dialogue/y.md"]}, {"1": 0.5, "2": 0.3}
    )
    work_step(0, 1, "a", {"3": ["dialogue/y.md"], "4": ["dialogue/y.md"]}, {"3": 0.4, "4": 0.2})
    stats = run_attribution(run, ["scene/x.md", "dialogue/y.md", "action/z.md"])
    x, y, z = stats["scene/x.md"], stats["dialogue/y.md"], stats["action/z.md"]
    assert (x.passes, x.with_n, x.without_n) == (2, 3, 3)
    assert x.mean_with == pytest.approx((0.6 + 0.5 + 0.3) / 3, abs=1e-4)
    assert x.mean_without == pytest.approx((0.8 + 0.4 + 0.2) / 3, abs=1e-4)
    assert (y.passes, y.with_n, y.without_n) == (2, 4, 2)
    assert y.mean_with == pytest.approx((0.5 + 0.3 + 0.4 + 0.2) / 4, abs=1e-4)
    assert y.mean_without == pytest.approx((0.8 + 0.6) / 2, abs=1e-4)
    assert (z.passes, z.with_n, z.mean_with, z.without_n) == (0, 0, None, 6)
    # Up to step 0 only, step 1's episodes do not count.
    early = run_attribution(run, ["dialogue/y.md"], upto=(0, 0))["dialogue/y.md"]
    assert (early.passes, early.with_n, early.mean_without) == (1, 2, pytest.approx(0.7))


def test_a_training_run_emits_the_attribution_its_traces_give(tmp_path, make_work):
    works = [make_work("kite", 6), make_work("lark", 6)]
    run, outcome = train_once(tmp_path, works, OfflineBackend(), AutoReviewer(), steps=3, group_size=2)
    assert outcome.status == "finished"
    events = [e for e in recorded(run.events_path) if e["kind"] == "attribution"]
    assert [(e["epoch"], e["step"]) for e in events] == [(0, 0), (0, 1), (0, 2)]
    last = events[-1]["notes"]
    recomputed = attribute(episodes(run, (0, 2)), list(last))
    assert last and last == {k: v.to_dict() for k, v in recomputed.items()}
    # Recount one note by hand from the files.
    note = max(last, key=lambda n: last[n]["passes"])
    passes = 0
    for trace in run.root.glob("epoch0/step*/works/*/reads.json"):
        passes += note in json.loads(trace.read_text())["notes"]
    assert last[note]["passes"] == passes > 0


def test_the_prompt_tells_the_optimizer_what_its_earlier_updates_did(tmp_path, make_work):
    works = [make_work("moth", 6)]
    run, outcome = train_once(tmp_path, works, OfflineBackend(), AutoReviewer(), steps=3)
    assert outcome.status == "finished"
    means = {(e["epoch"], e["step"]): e["loss"] for e in recorded(run.events_path) if e["kind"] == "loss"}
    prompt = (run.backward_dir(0, 2, 1) / "attempt1" / "prompt.md").read_text()
    first = json.loads((run.backward_dir(0, 0, 1) / "commit.txt").read_text())["message"].splitlines()[0]
    # The body's first line says what the update did: the novice writer plays no dialogue, the
    # weakest part (0.0), so the first update teaches dialogue blocks.
    assert first.endswith(": teach dialogue")
    assert f'epoch 0 step 0 micro 1/1: "{first}", approved by auto' in prompt
    assert f"mean loss {means[(0, 0)]:.3f} -> {means[(0, 1)]:.3f} over the one work both steps scored" in prompt
    assert "it predicted: the " in prompt
    assert (
        f"e0s0 {means[(0, 0)]:.3f} (1 work), e0s1 {means[(0, 1)]:.3f} (1 work), e0s2 {means[(0, 2)]:.3f} (1 work)"
        in prompt
    )
    assert "| note | forward passes that read it |" in prompt
    # The offline optimizer read the history and the traces, and its commit says so.
    transcript = json.loads((run.backward_dir(0, 2, 1) / "attempt1" / "transcript.json").read_text())
    tools = [t.get("tool") for t in transcript["transcript"] if isinstance(t, dict)]
    assert "pool_log" in tools
    viewed = [t["input"]["path"] for t in transcript["transcript"] if isinstance(t, dict) and t.get("tool") == "view"]
    assert any(p.endswith("reads.json") for p in viewed)
    message = Pool(run.memory).git("log", "-1", "--format=%B")
    assert "Observed:" in message and "Changed:" in message and "Prediction:" in message
    assert "The last update (pool_log): epoch 0 step 1 micro 1/1: approved by auto" in message
    # Every step records the whole-pool lint it listed.
    assert (run.step_dir(0, 2) / "lint_report.txt").read_text() == "no problems\n"
    assert "The pool passes the linter" in prompt


def test_a_rerun_note_changes_the_offline_optimizers_next_attempt(tmp_path, make_work):
    works = [make_work("newt", 4)]
    reviewer = ScriptedReviewer(
        Decision("rerun", "human", "Teach the transitions between scenes instead"),
        Decision("rerun", "human", "Not this one"),
        Decision("approve", "human"),
    )
    run, outcome = train_once(tmp_path, works, OfflineBackend(), reviewer, steps=1)
    assert outcome.status == "finished"
    first, second, third = ([p for p in (*r.added, *r.changed)] for r in reviewer.requests)
    assert second == ["scene/transitions.md"] and first != second
    assert third not in (first, second)
    assert 'The reviewer asked: "Teach the transitions between scenes instead"' in reviewer.requests[1].message
    assert 'The reviewer asked: "Not this one"' in reviewer.requests[2].message


def test_attribution_of_a_long_run_needs_little_memory_beyond_its_episodes():
    """Every micro-step joins the whole run again: what that builds must not grow with every note read."""
    names = [f"scene/note-{n:02d}.md" for n in range(60)]
    found = [
        Episode(0, step, f"work-{w:02d}", 1, 0.5, frozenset(names[(step + w) % 30 : (step + w) % 30 + 30]))
        for step in range(100)
        for w in range(16)
    ]
    tracemalloc.start()
    try:
        stats = attribute(found, names)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sum(s.passes for s in stats.values()) == 1600 * 30
    assert all(s.with_n + s.without_n == 1600 for s in stats.values())
    # A set of (epoch, step, work) per note, one tuple per note read, peaked at 6 MB here.
    assert peak < 1024 * 1024, f"peak {peak / 1024:.0f} kB"
