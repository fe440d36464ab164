"""`pool_log` and `pool_show`: the backward agent's read-only view of the pool's history."""

from __future__ import annotations

import json

import pytest

from skilltui.agents.pool_history import PoolHistory
from skilltui.agents.tools import Sandbox, ToolError
from skilltui.commits import parse_body
from skilltui.engine.events import Loss, Warning_
from skilltui.engine.feedback import feedback_text
from skilltui.engine.pool import Pool, render_note
from skilltui.engine.run import Run


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


def test_feedback_shows_validation_losses_as_numbers_and_the_trend(tmp_path):
    run = Run(tmp_path / "run")
    run.root.mkdir()
    lines = [
        Loss(epoch=0, step=0, work="a", loss=0.6, scores={}, report="x").to_dict(),
        Loss(epoch=0, step=1, work="a", loss=0.4, scores={}, report="x").to_dict(),
        {"kind": "val_loss", "epoch": 0, "step": 0, "work": "v1", "loss": 0.5, "point": "step"},
        {"kind": "val_loss", "epoch": 0, "step": 0, "work": "v2", "loss": 0.6, "point": "step"},
        {"kind": "val_loss", "epoch": 0, "step": 1, "work": "v1", "loss": 0.1, "point": "micro"},
        {"kind": "step_finished", "epoch": 0, "step": 1, "mean_loss": 0.4, "failed": [], "val_mean_loss": 0.5},
        Warning_(message="unrelated").to_dict(),
    ]
    run.events_path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    text = feedback_text(run)
    assert "first micro-step" in text
    assert "Mean training loss per step, oldest first: e0s0 0.600, e0s1 0.400." in text
    assert "Over these 2 steps it fell by 0.200." in text
    assert "Validation loss (works you never see), oldest first: e0s0 0.550, e0s1 0.500." in text
