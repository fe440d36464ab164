"""A backward agent that makes mistakes: told at the commit tool, reminded, retried, and at worst skipped."""

from __future__ import annotations

import json
import re

from skilltui.agents import offline_backward
from skilltui.agents.base import Request
from skilltui.agents.offline import OfflineBackend
from skilltui.agents.tools import Sandbox, ToolCode, ToolError
from skilltui.engine.update.review import AutoReviewer
from skilltui.model.parse import parse_event
from skilltui.model.summary import summarise
from skilltui.model.view import RunView
from skilltui.pool.notes import Pool
from tests.support.recorded import recorded
from tests.support.recorded import recorded as read_events
from tests.support.reviewing import train_once
from tests.support.scripted_backward import GOOD, ScriptedBackward


def kinds(run, kind):
    return [e for e in recorded(run.events_path) if e["kind"] == kind]


def speaker_of(work) -> str:
    """A character who speaks in the work's first episode (the generated works pick three of these)."""
    lines = {line.strip() for line in (work / "human" / "01.fountain").read_text().splitlines()}
    return next(n for n in ("ADA", "BRUNO", "CELIA", "DMITRI", "EDITH", "FARID", "GRETA", "HUGO", "IRIS") if n in lines)


def test_a_leaking_note_is_refused_at_the_commit_tool_and_the_agent_fixes_it(tmp_path, make_work):
    works = [make_work("amber", 4)]
    name = speaker_of(works[0])
    agent = ScriptedBackward("leak", leak_name=name)
    run, outcome = train_once(tmp_path, works, agent, AutoReviewer(), steps=1)
    assert outcome.status == "finished"
    # The first commit was refused with a message that says what leaked and from which work ...
    assert len(agent.errors) == 1
    assert f"names the speaking character '{name}' of the training work amber" in agent.errors[0]
    assert agent.errors[0].startswith("not committed")
    assert agent.codes == [ToolCode.LEAK]  # what code acts on; the text above is what the agent reads
    # ... and the fixed note was committed in the same attempt.
    pool = Pool(run.memory)
    assert "QUILLON" in (pool.root / "dialogue" / "cues.md").read_text()
    assert name not in (pool.root / "dialogue" / "cues.md").read_text()
    assert not (run.backward_dir(0, 0, 1) / "attempt2").exists()
    assert int(pool.git("rev-list", "--count", "HEAD")) == 2


def test_retries_recover_from_a_forgotten_commit_and_say_what_went_wrong(tmp_path, make_work):
    works = [make_work("birch", 4)]
    # Attempt 1 forgets, and forgets again after the reminder; attempt 2 commits.
    agent = ScriptedBackward("forget", "forget", "commit")
    run, outcome = train_once(tmp_path, works, agent, AutoReviewer(), steps=1)
    assert outcome.status == "finished"
    g1 = run.backward_dir(0, 0, 1)
    assert json.loads((g1 / "attempt1" / "failed.json").read_text())["reason"].startswith("no commit was made")
    assert (g1 / "attempt1" / "transcript.reminder.json").exists()
    assert "## Reminder" in agent.prompts[1] and "## Reminder" not in agent.prompts[0]
    retry_prompt = (g1 / "attempt2" / "prompt.md").read_text()
    assert "What went wrong in the earlier attempt" in retry_prompt and "no commit was made" in retry_prompt
    record = json.loads((g1 / "commit.txt").read_text())
    assert record["decision"] == "approve" and record["attempt"] == 2
    assert "scene/scene-headings.md" in Pool(run.memory).note_paths()


def test_the_reminder_lets_an_agent_commit_within_the_same_attempt(tmp_path, make_work):
    works = [make_work("cedar", 4)]
    agent = ScriptedBackward("forget", "commit")
    run, outcome = train_once(tmp_path, works, agent, AutoReviewer(), steps=1)
    assert outcome.status == "finished" and agent.calls == 2
    g1 = run.backward_dir(0, 0, 1)
    assert not (g1 / "attempt2").exists()
    assert json.loads((g1 / "commit.txt").read_text())["attempt"] == 1
    assert any("reminding it once" in w["message"] for w in kinds(run, "warning"))


def test_a_micro_step_that_fails_every_attempt_is_skipped_and_training_goes_on(tmp_path, make_work):
    works = [make_work("dune", 4)]
    agent = ScriptedBackward("leak-stubborn", leak_name=speaker_of(works[0]))
    run, outcome = train_once(tmp_path, works, agent, AutoReviewer(), steps=2, backward_retries=1)
    assert outcome.status == "finished"
    g1 = run.backward_dir(0, 0, 1)
    assert sorted(p.name for p in g1.glob("attempt*")) == ["attempt1", "attempt2"]
    record = json.loads((g1 / "commit.txt").read_text())
    assert record["decision"] == "skipped" and record["reason"].startswith("no commit was made")
    assert "the commit tool had refused it" in record["reason"] and "speaking character" in record["reason"]
    assert record["before"] == record["after"]
    skipped = kinds(run, "micro_step_skipped")
    assert [(e["epoch"], e["step"], e["attempts"]) for e in skipped] == [(0, 0, 2), (0, 1, 2)]
    pool = Pool(run.memory)
    assert pool.is_clean() and pool.note_paths() == []
    assert (run.step_dir(0, 1) / "works").exists(), "the next step ran"
    # A resumed run takes a skipped micro-step as done.
    again = ScriptedBackward("commit")
    run, outcome = train_once(tmp_path, works, again, AutoReviewer(), steps=2, backward_retries=1)
    assert outcome.status == "finished" and again.calls == 0


def test_strict_stops_the_run_where_a_micro_step_fails(tmp_path, make_work):
    works = [make_work("elm", 4)]
    agent = ScriptedBackward("forget")
    run, outcome = train_once(tmp_path, works, agent, AutoReviewer(), steps=2, strict=True, backward_retries=1)
    assert outcome.status == "failed" and "--strict" in outcome.reason and "no commit" in outcome.reason
    assert agent.calls == 4  # two attempts, each reminded once
    assert not (run.backward_dir(0, 0, 1) / "commit.txt").exists()
    assert not run.step_dir(0, 1).exists()
    assert Pool(run.memory).is_clean() and Pool(run.memory).note_paths() == []


def test_the_commit_tool_holds_an_update_to_the_edit_budget(tmp_path, make_work):
    works = [make_work("fern", 4)]
    agent = ScriptedBackward("overrun", "commit")
    run, outcome = train_once(tmp_path, works, agent, AutoReviewer(), steps=1, max_edit_lines=40)
    assert outcome.status == "finished"
    assert "the budget for one micro-step is 40 (--max-edit-lines)" in agent.errors[0]
    assert re.search(r"adds and removes (\d+) lines", agent.errors[0])
    assert int(re.search(r"adds and removes (\d+) lines", agent.errors[0]).group(1)) > 40
    # The refused attempt ended without a commit: reminded, then committed a small note.
    notes = Pool(run.memory).note_paths()
    assert notes == ["scene/scene-headings.md"]
    assert "Keep the update small: at most 40 lines" in agent.prompts[0]


def test_the_offline_optimizer_keeps_to_a_budget_too_small_for_any_note(tmp_path, make_work):
    works = [make_work("gorse", 4)]
    run, outcome = train_once(tmp_path, works, OfflineBackend(), AutoReviewer(), steps=1, max_edit_lines=3)
    assert outcome.status == "finished"
    pool = Pool(run.memory)
    assert pool.note_paths() == [] and pool.is_clean()
    message = pool.git("log", "-1", "--format=%B")
    assert "no change" in message and "the commit tool refused every note it could add" in message
    assert json.loads((run.backward_dir(0, 0, 1) / "commit.txt").read_text())["decision"] == "approve"


def test_the_review_evidence_shows_failed_attempts_and_what_the_writer_opened(tmp_path, make_work):
    from skilltui.apps.history.evidence import evidence_markdown
    from skilltui.runs.records import load_history

    works = [make_work("heath", 4)]
    run, outcome = train_once(tmp_path, works, ScriptedBackward("forget", "forget", "commit"), AutoReviewer(), steps=1)
    assert outcome.status == "finished"
    commit = next(c for c in load_history(run).commits if c.micro is not None)
    text = evidence_markdown(run, commit)
    assert "## Attempts that failed their checks" in text
    assert "- attempt 1: no commit was made" in text
    assert "Notes the writer opened: none." in text  # the pool was empty when heath was written


def test_a_commit_over_the_pool_budget_is_refused_with_the_figure_and_the_agent_makes_room(tmp_path, make_work):
    works = [make_work("heath", 4)]
    # Step 1 commits a note of 60 tokens; step 2 adds one of 56, which would take the pool to
    # 116, over a budget of 100: refused, the agent removes the older note and commits again.
    agent = ScriptedBackward("commit", "crowd")
    run, outcome = train_once(tmp_path, works, agent, AutoReviewer(), steps=2, pool_budget=100)
    assert outcome.status == "finished"
    assert len(agent.errors) == 1
    assert "the pool would be 116 tokens, over --pool-budget 100: shorten, merge or remove notes" in agent.errors[0]
    assert agent.errors[0].startswith("not committed")
    assert agent.codes == [ToolCode.NOT_COMMITTED]  # not a leak: the budget
    pool = Pool(run.memory)
    assert pool.note_paths() == ["dialogue/cue-lines.md"]
    # The agent was told the size and the budget before it wrote anything.
    assert "The notes come to 60 tokens now; the commit tool refuses a pool over 100 tokens" in agent.prompts[1]
    sizes = [(e["pool_tokens_before"], e["pool_tokens"]) for e in kinds(run, "micro_step")]
    assert sizes == [(0, 60), (60, 56)]
    assert not (run.backward_dir(0, 1, 1) / "attempt2").exists()  # made room within the refused attempt
    # The end of the run says the pool's size before and after.
    view = RunView.of("r", run.root)
    for event in read_events(run.events_path):
        view.apply(parse_event(event))
    assert "pool size 0 → 56 tokens" in summarise(view).lines()


def test_a_pool_that_starts_over_budget_may_still_be_trained_down(tmp_path, make_work):
    works = [make_work("ling", 4)]
    donor = tmp_path / "donor"
    (donor / "scene").mkdir(parents=True)
    (donor / "scene" / "scene-headings.md").write_text(GOOD)
    # The pool starts at 60 tokens, over a budget of 50. Adding a note is refused (116); then
    # replacing the old note by the new one leaves it over (56) but smaller, so it is let through.
    agent = ScriptedBackward("crowd")
    run, outcome = train_once(tmp_path, works, agent, AutoReviewer(), steps=1, pool_budget=50, init_pool=donor)
    assert outcome.status == "finished"
    assert len(agent.errors) == 1 and "the pool would be 116 tokens, over --pool-budget 50" in agent.errors[0]
    sizes = [(e["pool_tokens_before"], e["pool_tokens"]) for e in kinds(run, "micro_step")]
    assert sizes == [(60, 56)]
    assert Pool(run.memory).note_paths() == ["dialogue/cue-lines.md"]


def test_over_budget_a_commit_that_grows_the_pool_is_refused_and_no_change_passes(tmp_path, make_work):
    works = [make_work("ling", 4)]
    donor = tmp_path / "donor"
    (donor / "scene").mkdir(parents=True)
    (donor / "scene" / "scene-headings.md").write_text(GOOD)  # 60 tokens, over a budget of 50
    agent = ScriptedBackward("grow-then-keep")
    run, outcome = train_once(tmp_path, works, agent, AutoReviewer(), steps=1, pool_budget=50, init_pool=donor)
    assert outcome.status == "finished"
    # Growing it is refused with the figures; the agent's "no change" commit passes.
    assert len(agent.errors) == 1, agent.errors
    assert "the pool would be 116 tokens, over --pool-budget 50" in agent.errors[0]
    assert "it started this micro-step at 60 tokens" in agent.errors[0]
    assert [(e["pool_tokens_before"], e["pool_tokens"]) for e in kinds(run, "micro_step")] == [(60, 60)]
    assert not kinds(run, "micro_step_skipped")
    assert json.loads((run.backward_dir(0, 0, 1) / "commit.txt").read_text())["decision"] == "approve"
    # Said once, before the first call: the figures, and that updates may only shrink it.
    events = recorded(run.events_path)
    first_call = next(i for i, e in enumerate(events) if e["kind"] == "call")
    warnings = [(i, e["message"]) for i, e in enumerate(events) if e["kind"] == "warning"]
    said = [(i, message) for i, message in warnings if "--pool-budget" in message]
    assert len(said) == 1 and said[0][0] < first_call, said
    assert "60 tokens" in said[0][1] and "50" in said[0][1] and "only shrink it" in said[0][1]
    assert "\n" not in said[0][1]


def offline_attempt(tmp_path, refusal: ToolError) -> list[str]:
    """The offline optimizer's notes created in one attempt whose first commit is refused with `refusal`."""
    created: list[str] = []
    commits: list[str] = []

    def tool(command: str, **args: str) -> str:
        if command == "create":
            created.append(args["path"])
        if command == "commit":
            commits.append(args["message"])
            if len(commits) == 1:
                raise refusal
        return "ok"

    scores = '<!-- scores: {"dialogue": 0.1, "speakers": 0.2, "scenes": 0.9} -->'
    request = Request("backward", "", context={"reports": ["loss.md"], "headers": []})
    offline_backward.backward(request, Sandbox(read_roots=[tmp_path], write_roots=[tmp_path]), tool, lambda _: scores)
    return created


def test_the_offline_optimizer_knows_a_leak_by_its_code_not_its_words(tmp_path):
    # A leak, however it is worded: the same note again, with other invented examples.
    leak = offline_attempt(tmp_path, ToolError("not committed: reworded", ToolCode.LEAK))
    assert len(leak) == 2 and leak[0] == leak[1]
    # Words a leak once had, under another code: that note is given up for the next move.
    other = offline_attempt(tmp_path, ToolError("names X of the training work w", ToolCode.NOT_COMMITTED))
    assert len(other) == 2 and other[0] != other[1]
