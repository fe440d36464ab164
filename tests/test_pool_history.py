"""`pool_log` and `pool_show`: the backward agent's read-only view of the pool's history."""

from __future__ import annotations

import json

import pytest

from skilltui.agents.pool_history import PoolHistory
from skilltui.agents.tools import Sandbox, ToolError
from skilltui.engine.update.feedback import commit_annotations, feedback_text
from skilltui.model.commits import parse_body
from skilltui.model.events import Loss, StepFinished, StepStarted, ValLoss, Warning_
from skilltui.pool.notes import Pool, render_note
from skilltui.store.run_folder import Run


@pytest.fixture
def pool(tmp_path) -> Pool:
    pool = Pool(tmp_path / "memory")
    pool.init()
    (pool.root / "scene").mkdir()
    (pool.root / "scene" / "a.md").write_text(render_note("First say.", "Old guidance."))
    pool.commit_all("add a")
    (pool.root / "scene" / "a.md").write_text(render_note("First say.", "New guidance."))
    pool.commit_all("change a\n\nObserved: x\nChanged: y\nPrediction: scenes should rise.")
    return pool


def test_pool_log_lists_commits_newest_first_with_what_the_run_recorded(pool):
    head = pool.head()
    history = PoolHistory(pool.root, {head: "epoch 0 step 1 micro 1/1: approved by auto; mean loss 0.5 -> 0.4"}.get)
    lines = history.log().splitlines()
    assert lines[0].startswith(head[:10]) and lines[0].endswith("change a")
    assert lines[1].strip() == "epoch 0 step 1 micro 1/1: approved by auto; mean loss 0.5 -> 0.4"
    assert lines[2].endswith("add a") and lines[3].endswith("pool: start empty")
    assert len(history.log(limit=1).splitlines()) == 2


def test_pool_show_gives_a_diff_an_old_note_or_a_listing(pool):
    history = PoolHistory(pool.root)
    shown = history.show("HEAD")
    assert "Prediction: scenes should rise." in shown
    assert "--- a/scene/a.md\n+++ b/scene/a.md" in shown
    assert "-Old guidance." in shown and "+New guidance." in shown
    added = history.show("HEAD~1")
    assert "--- /dev/null\n+++ b/scene/a.md" in added and "+Old guidance." in added
    assert "Old guidance." in history.show("HEAD~1", "scene/a.md")
    assert history.show("HEAD", ".") == "scene/a.md"
    assert "an empty commit" in history.show("HEAD~2")
    with pytest.raises(ToolError, match="is not a commit of the pool"):
        history.show("no-such-rev")
    with pytest.raises(ToolError, match="scene/b.md does not exist at"):
        history.show("HEAD", "scene/b.md")
    with pytest.raises(ToolError, match="needs a revision"):
        history.show("--all")


def test_the_sandbox_offers_history_only_when_given_and_never_opens_git(pool):
    with_history = Sandbox(read_roots=[pool.root], write_roots=[pool.root], history=PoolHistory(pool.root))
    assert "change a" in with_history.run("pool_log", {"limit": 5})
    assert "New guidance." in with_history.run("pool_show", {"rev": "HEAD", "path": "scene/a.md"})
    with pytest.raises(ToolError, match="git folder"):
        with_history.view(".git/HEAD")
    without = Sandbox(read_roots=[pool.root])
    with pytest.raises(ToolError, match="no history tools"):
        without.run("pool_log", {})


def test_parse_body_reads_the_three_parts_leniently():
    message = "train e0\n\nObserved: the scenes\nare unmarked.\n**Changed**: one note\n- prediction: scenes rise"
    assert parse_body(message) == {
        "observed": "the scenes are unmarked.",
        "changed": "one note",
        "prediction": "scenes rise",
    }
    assert parse_body("train e0\n\njust a sentence") == {"observed": "", "changed": "", "prediction": ""}


def _record(run: Run, events: list) -> None:
    run.events_path.write_text("".join(json.dumps(e.to_dict()) + "\n" for e in events))


def test_feedback_shows_validation_losses_as_numbers_and_the_trend(tmp_path):
    run = Run(tmp_path / "run")
    run.root.mkdir()
    _record(
        run,
        [
            Loss(epoch=0, step=0, work="a", loss=0.6, scores={}, report="x"),
            Loss(epoch=0, step=1, work="a", loss=0.4, scores={}, report="x"),
            ValLoss(epoch=0, step=0, work="v1", loss=0.5, scores={}),
            ValLoss(epoch=0, step=0, work="v2", loss=0.6, scores={}),
            ValLoss(epoch=0, step=1, work="v1", loss=0.1, scores={}, point="micro"),
            StepFinished(epoch=0, step=1, mean_loss=0.4, failed=[], works_in_mean=1, val_mean_loss=0.5),
            Warning_(message="unrelated"),
        ],
    )
    text = feedback_text(run)
    assert "first micro-step" in text
    assert "oldest first: e0s0 0.600 (1 work), e0s1 0.400 (1 work)." in text
    assert "From e0s0 to e0s1, over the one work both scored, it fell by 0.200." in text
    assert "Validation loss (works you never see), oldest first: e0s0 0.550 (2 works), e0s1 0.500." in text


def test_feedback_compares_steps_over_the_works_both_scored_when_one_sits_out(tmp_path):
    """Step 0 scores a 0.6, b 0.8, c 0.2; step 1 scores a 0.4, b 0.6 while c sits out.

    A plain mean says 0.533 -> 0.500 (fell 0.033, mostly because c, the best work, left);
    on the two works both steps scored the loss fell from 0.700 to 0.500, by 0.200.
    """
    run = Run(tmp_path / "run")
    run.root.mkdir()
    scores = {(0, "a"): 0.6, (0, "b"): 0.8, (0, "c"): 0.2, (1, "a"): 0.4, (1, "b"): 0.6}
    events: list = [StepStarted(epoch=0, step=0, first=1, last=1, works=["a", "b", "c"], groups=[["a", "b", "c"]])]
    events += [Loss(epoch=0, step=0, work=w, loss=v, scores={}, report="x") for (s, w), v in scores.items() if s == 0]
    events += [StepFinished(epoch=0, step=0, mean_loss=0.5333, failed=[], works_in_mean=3)]
    events += [StepStarted(epoch=0, step=1, first=2, last=2, works=["a", "b"], groups=[["a", "b"]])]
    events += [Loss(epoch=0, step=1, work=w, loss=v, scores={}, report="x") for (s, w), v in scores.items() if s == 1]
    _record(run, events)
    group = run.backward_dir(0, 0, 1)
    group.mkdir(parents=True)
    record = {"decision": "approve", "by": "auto", "after": "c0ffee", "message": "mark the scenes"}
    (group / "commit.txt").write_text(json.dumps(record))

    text = feedback_text(run)
    assert "mean loss 0.700 -> 0.500 over the 2 works both steps scored" in text
    assert "oldest first: e0s0 0.533 (3 works), e0s1 0.500 (2 works)." in text
    assert "From e0s0 to e0s1, over the 2 works both scored, it fell by 0.200." in text
    assert commit_annotations(run)["c0ffee"].endswith("mean loss 0.700 -> 0.500 over the 2 works both steps scored")


def test_a_step_still_being_scored_is_not_yet_the_after_of_a_micro_step(tmp_path):
    run = Run(tmp_path / "run")
    run.root.mkdir()
    events: list = [StepStarted(epoch=0, step=0, first=1, last=1, works=["a", "b"], groups=[["a", "b"]])]
    events += [Loss(epoch=0, step=0, work=w, loss=0.6, scores={}, report="x") for w in ("a", "b")]
    events += [StepStarted(epoch=0, step=1, first=2, last=2, works=["a", "b"], groups=[["a", "b"]])]
    events += [Loss(epoch=0, step=1, work="a", loss=0.2, scores={}, report="x")]  # b is still being scored
    _record(run, events)
    group = run.backward_dir(0, 0, 1)
    group.mkdir(parents=True)
    (group / "commit.txt").write_text(json.dumps({"decision": "approve", "by": "auto", "after": "c0ffee"}))
    assert commit_annotations(run)["c0ffee"].endswith("mean loss 0.600 (2 works) -> not yet measured")


def test_feedback_reads_on_as_the_run_records_more(tmp_path):
    """The prompt's figures come from a tail of events.jsonl: each look folds only what was added."""
    run = Run(tmp_path / "run")
    run.root.mkdir()
    _record(run, [Loss(epoch=0, step=0, work=w, loss=v, scores={}, report="x") for w, v in (("a", 0.6), ("b", 0.8))])
    assert "oldest first: e0s0 0.700 (2 works)." in feedback_text(run)
    with run.events_path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(Loss(epoch=0, step=1, work="a", loss=0.4, scores={}, report="x").to_dict()) + "\n")
    text = feedback_text(run)
    assert "oldest first: e0s0 0.700 (2 works), e0s1 0.400 (1 work)." in text
    assert "From e0s0 to e0s1, over the one work both scored, it fell by 0.200." in text


@pytest.mark.parametrize(
    "rev", ["@{-1}", "HEAD@{99}", "master@{push}", "main@{upstream}", "HEAD^{tree}", "HEAD~99", "HEAD..HEAD~1"]
)
def test_pool_show_of_a_revision_that_names_no_commit_is_a_tool_error(pool, rev):
    """A tool error the agent can read, not an IndexError or BadObject past the tool layer that ends its attempt."""
    sandbox = Sandbox(read_roots=[pool.root], write_roots=[pool.root], history=PoolHistory(pool.root))
    with pytest.raises(ToolError, match="is not a commit of the pool"):
        sandbox.run("pool_show", {"rev": rev})


def test_pool_show_reads_git_rev_colon_path_and_reflog_dates(pool):
    sandbox = Sandbox(read_roots=[pool.root], write_roots=[pool.root], history=PoolHistory(pool.root))
    assert "New guidance." in sandbox.run("pool_show", {"rev": "HEAD:scene/a.md"})
    assert "scene/a.md" in sandbox.run("pool_show", {"rev": "HEAD:scene"})
    assert sandbox.run("pool_show", {"rev": "HEAD@{yesterday}"}).startswith("commit ")
