"""Reopening a run whose folder or pool changed between sessions: repaired, kept, on record.

Each test sets up what a kill, a full disk or a person left behind,
then runs the same command again and checks that the run completes with its records
whole and nothing the user made lost.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.engine.notes.leakage import Lexicon
from skilltui.engine.update.backward_attempt import check_commit
from skilltui.pool.notes import Pool, render_note
from skilltui.runs import operations
from skilltui.store.run_folder import Run
from tests.support.recorded import recorded
from tests.support.works import train_works as train

NOTE = render_note("Cut an entrance late and leave early.", "Start a scene as late as it can start.")


def commits(pool: Pool) -> list[str]:
    return pool.git("rev-list", "HEAD").split()


def micro_steps(run: Run) -> int:
    return len(list(run.root.glob("epoch*/step*/backward/g*/commit.txt")))


def warnings(run: Run) -> list[str]:
    return [e["message"] for e in recorded(run.events_path) if e["kind"] == "warning"]


def test_a_pool_killed_after_git_init_before_its_first_commit_resumes(works, done: Run, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    fresh = runs / "again"
    (fresh / "memory").mkdir(parents=True)
    shutil.copyfile(done.config_path, fresh / "config.json")
    (fresh / "lock").write_text("")
    subprocess.run(["git", "init", "-q", str(fresh / "memory")], check=True)  # what the kill left
    assert train(runs, works, run_id="again") == 0
    run = Run(fresh)
    assert len(commits(run.pool)) == micro_steps(run) + 1 == 4 + 1
    assert recorded(run.events_path)[-1]["status"] == "finished"


def test_a_run_killed_between_its_lock_and_its_settings_resumes(works, tmp_path: Path) -> None:
    fresh = tmp_path / "runs" / "r"
    fresh.mkdir(parents=True)
    (fresh / "lock").write_text("4242")
    (fresh / ".config.json.tmp4242").write_text('{"wor')
    assert train(tmp_path / "runs", works) == 0
    assert not list(fresh.glob(".*.tmp*"))


def test_uncommitted_hand_edits_are_kept_under_a_ref_with_a_notice(works, done: Run, tmp_path: Path) -> None:
    pool = done.pool
    head = pool.head()
    edited = sorted(pool.note_paths())[0]
    mine = (pool.root / edited).read_text() + "\nMy own line.\n"
    (pool.root / edited).write_text(mine)
    (pool.root / "scene").mkdir(exist_ok=True)
    (pool.root / "scene" / "late-entrances.md").write_text(NOTE)
    assert train(tmp_path / "runs", works) == 0
    notice = [w for w in warnings(done) if "refs/skilltui/kept/" in w]
    assert len(notice) == 1 and "scene/late-entrances.md" in notice[0]
    ref = notice[0].split("kept them as ")[1].split()[0]
    assert pool.git("show", f"{ref}:scene/late-entrances.md") + "\n" == NOTE
    assert pool.git("show", f"{ref}:{edited}") + "\n" == mine
    assert pool.head() == head and pool.is_clean()


def _unfinish_last_micro_step(run: Run) -> Path:
    """What a kill while the last micro-step awaited review leaves: a checked attempt, no decision."""
    out = run.root / "epoch0" / "step1" / "backward" / "g2"
    (out / "commit.txt").unlink()
    (out / "decision.json").unlink()  # recorded before any move of the decision: a kill before it
    last = max(out.glob("attempt*"), key=lambda p: int(p.name[7:]))
    (last / "review.json").unlink()
    return out


def test_a_hand_commit_made_while_a_micro_step_was_unfinished_is_built_on(works, done: Run, tmp_path: Path) -> None:
    out = _unfinish_last_micro_step(done)
    pool = done.pool
    before = (out / "before.txt").read_text().strip()
    pool.reset(before)  # the person drops the unreviewed attempt, then commits a note of their own
    (pool.root / "scene").mkdir(exist_ok=True)
    (pool.root / "scene" / "late-entrances.md").write_text(NOTE)
    mine = pool.commit_all("scene: a note of my own")
    assert train(tmp_path / "runs", works) == 0
    assert (out / "before.txt").read_text().strip() == mine
    assert pool.git("rev-parse", "HEAD~1") == mine  # the redone micro-step sits on the hand commit
    assert (pool.root / "scene" / "late-entrances.md").read_text() == NOTE
    assert any("outside training" in w and mine[:7] in w for w in warnings(done))
    assert not [w for w in warnings(done) if "left dirty by an earlier attempt" in w]


def test_a_review_reset_while_a_micro_step_awaited_review_is_respected(works, done: Run, tmp_path: Path) -> None:
    out = _unfinish_last_micro_step(done)
    pool = done.pool
    first = commits(pool)[-1]
    result = operations.reset(done, first)
    assert train(tmp_path / "runs", works) == 0
    assert pool.git("rev-parse", "HEAD~1") == result.record.after == first  # built on the reset, not undone
    assert (out / "before.txt").read_text().strip() == first
    history = [e for e in recorded(done.events_path) if e["kind"] == "history"]
    assert history[-1]["after"] == first
    changed = [e for e in recorded(done.events_path) if e["kind"] == "pool_changed"]
    assert changed[-1]["head"] == pool.head()


def test_an_ignored_note_is_seen_by_the_checks_and_committed(tmp_path: Path) -> None:
    pool = Pool(tmp_path / "memory")
    before = pool.init()
    (pool.root / "scene").mkdir()
    (pool.root / "scene" / ".gitignore").write_text("*\n")
    (pool.root / "scene" / "hidden.md").write_text(NOTE)
    assert not pool.is_clean()
    pool.git("commit", "-q", "--allow-empty", "-m", "train epoch 0 step 0 micro 1/1")
    problem, _, _ = check_commit(pool, before, "train epoch 0 step 0 micro 1/1", Lexicon())
    assert problem == "uncommitted changes were left in the pool"
    pool.reset(before)
    (pool.root / "scene").mkdir()
    (pool.root / "scene" / ".gitignore").write_text("*\n")
    (pool.root / "scene" / "hidden.md").write_text(NOTE)
    pool.commit_all("train epoch 0 step 0 micro 1/1")
    assert "scene/hidden.md" in pool.git("ls-files").split()
    problem, _, _ = check_commit(pool, before, "train epoch 0 step 0 micro 1/1", Lexicon())
    assert problem and "scene/.gitignore" in problem


def test_a_torn_last_events_line_is_cut_before_the_next_session_appends(works, done: Run, tmp_path: Path) -> None:
    with open(done.events_path, "a", encoding="utf-8") as f:
        f.write('{"kind": "stage", "stage": "forw')
    assert train(tmp_path / "runs", works) == 0
    lines = done.events_path.read_text(encoding="utf-8").splitlines()
    assert all(json.loads(line) for line in lines)
    assert any("cut short" in w for w in warnings(done))


def test_settings_that_are_json_but_not_an_object_are_refused_and_runs_still_lists(
    works, done: Run, tmp_path: Path, capsys
) -> None:
    bad = tmp_path / "runs" / "bad"
    shutil.copytree(done.root, bad)
    (bad / "config.json").write_text("[]")
    capsys.readouterr()
    assert train(tmp_path / "runs", works, run_id="bad") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a JSON object" in err
    assert main(["runs", "--runs-dir", str(tmp_path / "runs")]) == 0
    assert "r " in capsys.readouterr().out


def test_a_stale_git_lock_left_by_a_killed_git_is_cleared(works, done: Run, tmp_path: Path) -> None:
    _unfinish_last_micro_step(done)
    (done.pool.root / ".git" / "index.lock").write_text("")
    assert train(tmp_path / "runs", works) == 0
    assert not (done.pool.root / ".git" / "index.lock").exists()
    assert micro_steps(done) == 4 and any("index.lock" in w for w in warnings(done))


def test_temporary_files_of_a_dead_writer_are_cleaned_on_open(works, done: Run, tmp_path: Path) -> None:
    stale = [done.root / ".config.json.tmp99999", done.root / "epoch0" / "step0" / "loss" / ".x.md.tmp99999"]
    for path in stale:
        path.write_text("half")
    assert train(tmp_path / "runs", works) == 0
    assert not any(p.exists() for p in stale)


def test_edits_made_while_training_runs_are_kept_under_a_ref_with_a_notice(
    works, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line added to a note and a new note, made while forward ran, are never reset away without a trace."""
    from skilltui.agents.offline import OfflineBackend

    pool_root = tmp_path / "runs" / "r" / "memory"
    mine: dict[str, str] = {}
    real_agent = OfflineBackend.agent

    async def agent(self, request, sandbox):
        notes = sorted(p for p in pool_root.glob("*/*.md"))
        if request.role == "forward" and notes and not mine:
            edited = notes[0]
            edited.write_text(edited.read_text() + "\nMy own line, typed while training ran.\n")
            (pool_root / "scene").mkdir(exist_ok=True)
            (pool_root / "scene" / "late-entrances.md").write_text(NOTE)
            mine[str(edited.relative_to(pool_root))] = edited.read_text()
        return await real_agent(self, request, sandbox)

    monkeypatch.setattr(OfflineBackend, "agent", agent)
    assert train(tmp_path / "runs", works) == 0
    run = Run(tmp_path / "runs" / "r")
    notice = [w for w in warnings(run) if "refs/skilltui/kept/" in w]
    assert len(notice) == 1 and "while training ran" in notice[0] and "scene/late-entrances.md" in notice[0]
    ref = notice[0].split("kept them as ")[1].split()[0]
    ((edited, text),) = mine.items()
    assert run.pool.git("show", f"{ref}:scene/late-entrances.md") + "\n" == NOTE
    assert run.pool.git("show", f"{ref}:{edited}") + "\n" == text
    assert recorded(run.events_path)[-1]["status"] == "finished"


def test_a_reset_keeps_every_uncommitted_file_under_a_ref_first(tmp_path: Path) -> None:
    pool = Pool(tmp_path / "memory")
    head = pool.init()
    (pool.root / "scene").mkdir()
    (pool.root / "scene" / "late-entrances.md").write_text(NOTE)
    (pool.root / "scratch.txt").write_text("an untracked file of mine\n")
    kept = pool.reset(head)
    assert kept is not None and kept[0].startswith("refs/skilltui/kept/")
    assert sorted(kept[1]) == ["scene/late-entrances.md", "scratch.txt"]
    assert pool.git("show", f"{kept[0]}:scratch.txt") == "an untracked file of mine"
    assert pool.is_clean() and pool.reset(head) is None  # nothing to keep: no ref


def test_folders_the_writer_made_in_its_scripts_folder_neither_wedge_nor_crash_the_run(
    works, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder in the scripts folder must not fail the stale-file cleanup at every resume, nor a
    folder named 01.fountain fail forward with a raw IsADirectoryError."""
    from skilltui.agents.offline import OfflineBackend

    real_agent = OfflineBackend.agent
    calls = {"n": 0}

    async def agent(self, request, sandbox):
        result = await real_agent(self, request, sandbox)
        if request.role == "forward":
            calls["n"] += 1
            scripts = Path(request.context["out_dir"])
            (scripts / "drafts").mkdir(exist_ok=True)
            (scripts / "drafts" / "idea.txt").write_text("a draft\n")
            if calls["n"] == 1:
                episode = scripts / f"{request.context['first']:02d}.fountain"
                episode.unlink(missing_ok=True)
                episode.mkdir()  # a folder where the first episode should be
        return result

    monkeypatch.setattr(OfflineBackend, "agent", agent)
    assert train(tmp_path / "runs", works) == 0
    run = Run(tmp_path / "runs" / "r")
    failed = [e for e in recorded(run.events_path) if e["kind"] == "stage" and e["status"] == "failed"]
    assert failed and all("IsADirectoryError" not in (e.get("error") or "") for e in failed)


def test_a_folder_a_stopped_writer_left_in_its_scripts_folder_is_cleared_on_resume(
    works, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skilltui.agents.offline import OfflineBackend

    real_agent = OfflineBackend.agent

    async def agent(self, request, sandbox):
        if request.role == "forward":
            scripts = Path(request.context["out_dir"])
            (scripts / "drafts").mkdir(exist_ok=True)
            (scripts / "drafts" / "idea.txt").write_text("a draft\n")
            os.kill(os.getpid(), signal.SIGINT)  # the run is stopped while the writer works:
            os.kill(os.getpid(), signal.SIGINT)  # a second signal stops it at once
            await asyncio.sleep(30)
        return await real_agent(self, request, sandbox)

    monkeypatch.setattr(OfflineBackend, "agent", agent)
    assert train(tmp_path / "runs", works) != 0
    left = list((tmp_path / "runs" / "r").glob("epoch0/step0/works/*/scripts/drafts"))
    assert left
    monkeypatch.setattr(OfflineBackend, "agent", real_agent)
    assert train(tmp_path / "runs", works) == 0
    assert not any(p.exists() for p in left)


def test_a_hand_commit_whose_subject_mimics_a_micro_step_is_adopted_on_record(works, done: Run, tmp_path: Path) -> None:
    """A hand commit titled like a training micro-step is adopted with a notice and an event, never silently."""
    pool = done.pool
    (pool.root / "scene").mkdir(exist_ok=True)
    (pool.root / "scene" / "late-entrances.md").write_text(NOTE)
    mine = pool.commit_all("train epoch 0 step 1 micro 2/2: a note of my own")
    assert train(tmp_path / "runs", works) == 0
    assert any("outside training" in w and mine[:7] in w for w in warnings(done))
    changed = [e for e in recorded(done.events_path) if e["kind"] == "pool_changed"]
    assert changed[-1]["head"] == mine and changed[-1]["reason"] == "moved outside training"
