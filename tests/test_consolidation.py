"""Epoch-end consolidation: the pool gets smaller, and loses no guidance a writer used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltui.agents.offline import OfflineBackend
from skilltui.cli import main
from skilltui.core.formats import parse_note, render_note
from skilltui.engine.update.attribution import attribute, episodes
from skilltui.engine.update.consolidation import near_duplicates, no_growth, notes_of
from skilltui.pool.notes import Pool
from skilltui.runs import operations
from skilltui.store.run_folder import Run, read_json
from tests.support.recorded import recorded
from tests.support.validation import held_out_work, train_with

DIALOGUE = "Turn reported speech into dialogue blocks: the speaker's cue in capitals, the line below it."


def inviting_duplicates(folder: Path) -> Path:
    """A starting pool that invites duplicates: a note with the description of the dialogue move
    the offline optimizer adds, but guidance of its own that does not teach it, and a note whose
    description no writer opens (it names no topic the writer looks for)."""
    notes = {
        "dialogue/speech.md": (DIALOGUE, "Spoken words go in dialogue, not in the action.\nKeep each speech short."),
        "action/weather.md": (
            "Name the weather only when it changes what people do.",
            "Mention rain or wind only when someone reacts to it.",
        ),
    }
    for rel, (description, body) in notes.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(render_note(description, body), encoding="utf-8")
    return folder


def guidance(text: str) -> list[str]:
    return [line.strip() for line in parse_note(text)[1].splitlines() if line.strip() and not line.startswith("#")]


@pytest.mark.slow
def test_two_epochs_end_smaller_no_worse_and_every_removed_note_was_merged_or_unread(tmp_path, make_work, capsys):
    works = [make_work("sable-quay", 4), make_work("tin-orchard", 4)]
    val = held_out_work(tmp_path / "val")
    runs = tmp_path / "runs"
    donor = inviting_duplicates(tmp_path / "donor")
    extra = ("--steps", "2", "--epochs", "2", "--gate", "--init-pool", str(donor), "--consolidate")
    assert train_with(OfflineBackend(), runs, works, [val], *extra) == 0
    run = Run(runs / "r")
    pool = run.pool
    record = read_json(run.backward_dir(0, 1, 0) / "commit.txt")  # epoch 0's consolidation, after its last step
    assert record["decision"] == "approve"
    before = {p for p in pool.git("ls-tree", "-r", "--name-only", record["before"]).splitlines()}
    after = {p for p in pool.git("ls-tree", "-r", "--name-only", record["after"]).splitlines()}
    assert len(after) < len(before)  # fewer notes after consolidation than before it
    removed = before - after
    assert removed == {"dialogue/dialogue-blocks.md", "action/weather.md"}
    reads = attribute([e for e in episodes(run) if e.epoch == 0], sorted(before))
    kept_lines = {line for p in after for line in guidance(pool.blob_text(record["after"], p) or "")}
    for note in removed:
        lines = guidance(pool.blob_text(record["before"], note) or "")
        # Its guidance lives on in a kept note, or no writer of the epoch ever opened it.
        assert set(lines) <= kept_lines or reads[note].passes == 0, note
    assert reads["action/weather.md"].passes == 0 and reads["dialogue/dialogue-blocks.md"].passes > 0
    # Checked like any micro-step: the gate ran on it and it did not make validation worse.
    events = recorded(run.events_path)
    (gate,) = [e for e in events if e["kind"] == "gate" and (e["epoch"], e["step"], e["group"]) == (0, 1, 0)]
    assert gate["advice"] == "keep" and gate["after"] <= gate["before"]
    (micro,) = [e for e in events if e["kind"] == "micro_step" and (e["epoch"], e["group"]) == (0, 0)]
    assert micro["purpose"] == "consolidation" and micro["label"] == "epoch 0 consolidation"
    assert micro["pool_tokens"] < micro["pool_tokens_before"]
    asked = [e for e in events if e["kind"] == "review_requested" and e["group"] == 0]
    assert [e["label"] for e in asked] == ["epoch 0 consolidation", "epoch 1 consolidation"]
    calls = [e for e in events if e["kind"] == "call" and e["role"] == "consolidate"]
    assert len(calls) == 2  # one per epoch, under its own role
    prompt = (run.backward_dir(0, 1, 0) / "attempt1" / "prompt.md").read_text(encoding="utf-8")
    assert "`dialogue/dialogue-blocks.md` and `dialogue/speech.md`: description 100" in prompt
    assert "- `action/weather.md`" in prompt and "of the 4000 allowed" in prompt
    message = pool.git("log", "-1", "--format=%B", record["after"])
    assert "Skilltui-Kind: consolidation" in message and "Skilltui-Decision: kept by auto" in message
    # blame names the consolidation for the lines it moved into the note it kept.
    capsys.readouterr()  # what training printed
    assert main(["blame", str(run.root), "dialogue/speech.md", "--json"]) == 0
    origins = json.loads(capsys.readouterr().out)["origins"].values()
    assert any(o["micro_step"] == "e0 consolidation" and o["provenance"]["Kind"] == "consolidation" for o in origins)
    # The final pool is smaller than it would be without consolidation.
    plain_extra = [a for a in extra if a != "--consolidate"]  # train_with turns it off then
    assert train_with(OfflineBackend(), runs, works, [val], *plain_extra, run_id="plain") == 0
    plain = Run(runs / "plain")
    assert len(pool.note_paths()) < len(plain.pool.note_paths())
    assert not list(plain.root.glob("epoch*/step*/backward/g0"))


def test_an_epoch_that_kept_no_update_is_not_consolidated(tmp_path, make_work):
    works = [make_work("sable-quay", 4)]
    runs = tmp_path / "runs"
    # An edit budget no note fits: every micro-step commits "no change", so the epoch kept no update.
    assert train_with(OfflineBackend(), runs, works, [], "--steps", "1", "--max-edit-lines", "1", "--consolidate") == 0
    run = Run(runs / "r")
    records = [read_json(p) for p in run.root.glob("epoch0/step*/backward/g*/commit.txt")]
    assert [r["message"].split("\n")[0] for r in records] == ["no change"]
    assert not list(run.root.glob("epoch*/step*/backward/g0"))


def test_near_duplicates_are_found_by_description_and_by_body(tmp_path):
    pool = Pool(tmp_path / "pool")
    pool.init()
    notes = {
        "scene/a.md": ("Open each scene with a heading.", "Write INT. or EXT., the place, the time."),
        "scene/b.md": ("Open each scene with a heading!", "Something else entirely about headings."),
        "dialogue/c.md": ("Keep cues in capitals.", "Write INT. or EXT., the place, the time. Always."),
        "action/d.md": ("Present tense, always.", "Action says what is seen now."),
    }
    for rel, (description, body) in notes.items():
        (pool.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (pool.root / rel).write_text(render_note(description, body), encoding="utf-8")
    pairs = {(p.a, p.b): p for p in near_duplicates(notes_of(pool))}
    assert pairs[("scene/a.md", "scene/b.md")].what == "description"
    assert pairs[("dialogue/c.md", "scene/a.md")].what == "body"
    assert not any("action/d.md" in key for key in pairs)


def test_a_consolidation_may_not_grow_the_pool(tmp_path):
    pool = Pool(tmp_path / "pool")
    pool.init()
    (pool.root / "scene").mkdir()
    (pool.root / "scene" / "a.md").write_text(render_note("One.", "Short."), encoding="utf-8")
    before = pool.commit_all("one note")
    start = 20
    (pool.root / "scene" / "b.md").write_text(render_note("Two.", "A new rule nobody wrote before."), encoding="utf-8")
    pool.git("add", "-A")
    problems = no_growth(pool, before, start)
    assert any("may not grow the pool" in p for p in problems)
    assert any("may not add notes (1 added, 0 removed)" in p for p in problems)
    pool.git("reset", "-q", "--hard", before)
    (pool.root / "scene" / "a.md").unlink()
    pool.git("add", "-A")
    assert no_growth(pool, before, start) == []


def test_a_run_from_before_consolidation_is_not_reopened_at_an_epoch_it_left(tmp_path, make_work):
    from tests.support.runs import unfinish

    works = [make_work("sable-quay", 4)]
    runs = tmp_path / "runs"
    assert train_with(OfflineBackend(), runs, works, [], "--steps", "1", "--epochs", "2") == 0
    # As a version before the flag left it: no consolidation setting, and no end recorded.
    config = runs / "r" / "config.json"
    settings = json.loads(config.read_text())
    settings.pop("consolidate")
    config.write_text(json.dumps(settings))
    unfinish(runs)
    assert train_with(OfflineBackend(), runs, works, [], "--steps", "1", "--epochs", "2", "--consolidate") == 0
    run = Run(runs / "r")
    # Epoch 0 was left for epoch 1 before: it stays as it was; the epoch under way ends consolidated.
    assert not (run.backward_dir(0, 0, 0)).exists()
    assert (run.backward_dir(1, 0, 0) / "commit.txt").exists()


def test_a_consolidation_that_changes_nothing_leaves_no_commit_and_the_newest_update_reverts(tmp_path, make_work):
    works = [make_work("sable-quay", 4), make_work("tin-orchard", 4)]
    runs = tmp_path / "runs"
    # One note, read by the writers, with no twin: the consolidation finds nothing to merge or drop.
    assert train_with(OfflineBackend(), runs, works, [], "--steps", "1", "--consolidate") == 0
    run = Run(runs / "r")
    pool = run.pool
    update = read_json(run.backward_dir(0, 0, 1) / "commit.txt")
    consolidation = read_json(run.backward_dir(0, 0, 0) / "commit.txt")
    assert update["decision"] == "approve" and pool.files(update["after"]) != pool.files(update["before"])
    assert consolidation["decision"] == "approve" and consolidation["message"].startswith("no change")
    # The pool's HEAD is the last real update, not an empty commit above it.
    assert pool.head() == update["after"] == consolidation["before"] == consolidation["after"]
    # Decided like any micro-step: its decision on record, its stamped commit reachable from a ref.
    decisions = [e for e in recorded(run.events_path) if e["kind"] == "decision" and e["group"] == 0]
    assert [(d["decision"], d["after"]) for d in decisions] == [("approve", consolidation["attempt_commit"])]
    ref = consolidation["ref"]
    assert pool.git("rev-parse", ref) == consolidation["attempt_commit"]
    assert "Skilltui-Kind: consolidation" in pool.git("log", "-1", "--format=%B", ref)
    # The history browser's revert of the newest commit (it refused an empty one).
    done = operations.revert(run, pool.head())
    assert done.record.target == update["after"] and pool.head() != update["after"]
    assert pool.note_paths() == [p for p in pool.files(update["before"]) if p.endswith(".md")]
