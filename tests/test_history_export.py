"""`skilltui export`: the pool as an Agent Skill folder, all or nothing."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from skilltui.cli import main
from skilltui.store.run_folder import Run

NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@pytest.fixture
def run(copied_run) -> Run:
    return copied_run("gull-harbour", "pine-tram")


def export(run: Run, to: Path, *extra: str) -> int:
    return main(["export", "r", "--runs-dir", str(run.root.parent), "--to", str(to), *extra])


def front_matter(skill: Path) -> tuple[dict, str]:
    text = (skill / "SKILL.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    head, _, body = text[4:].partition("\n---\n")
    return yaml.safe_load(head), body


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_export_writes_a_skill_whose_index_lists_every_note(run: Run, tmp_path: Path) -> None:
    skill = tmp_path / "skills" / "screen-craft"
    assert export(run, skill) == 0
    meta, body = front_matter(skill)
    assert meta["name"] == "screen-craft" and NAME.match(meta["name"]) and len(meta["name"]) <= 64
    assert 0 < len(meta["description"]) <= 1024 and "Use when" in meta["description"]
    assert meta["metadata"]["commit"] == run.pool.head()
    notes = run.pool.note_paths()
    assert notes
    for rel in notes:
        assert (skill / rel).read_bytes() == (run.pool.root / rel).read_bytes()
        assert f"[{rel}]({rel})" in body
    assert set(files(skill)) == {"SKILL.md", *notes}


def test_export_of_an_older_commit_holds_the_notes_of_that_commit(run: Run, tmp_path: Path) -> None:
    pool = run.pool
    older = pool.git("rev-parse", "HEAD~1")
    expected = sorted(pool.git("ls-tree", "-r", "--name-only", older).split())
    assert export(run, tmp_path / "old", "--commit", "HEAD~1") == 0
    assert sorted(set(files(tmp_path / "old")) - {"SKILL.md"}) == expected
    assert front_matter(tmp_path / "old")[0]["metadata"]["commit"] == older


def test_export_refuses_a_non_empty_folder_and_writes_nothing(run: Run, tmp_path: Path, capsys) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    (target / "keep.txt").write_text("mine", encoding="utf-8")
    assert export(run, target) == 2
    assert "--force" in capsys.readouterr().err
    assert files(target) == {"keep.txt": b"mine"}
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".mine")) == []


def test_force_refuses_a_folder_that_was_never_an_export_and_deletes_nothing(run: Run, tmp_path: Path, capsys) -> None:
    target = tmp_path / "drafts"
    (target / "act-one").mkdir(parents=True)
    (target / "keep.txt").write_text("mine", encoding="utf-8")
    (target / "act-one" / "notes.md").write_text("my notes", encoding="utf-8")
    capsys.readouterr()
    assert export(run, target, "--force") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no SKILL.md" in err[0] and "choose a new folder" in err[0]
    assert files(target) == {"keep.txt": b"mine", "act-one/notes.md": b"my notes"}
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".drafts")) == []


def test_force_replaces_an_earlier_export_whole(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "screen-craft"
    assert export(run, target) == 0
    (target / "stale.md").write_text("left from before", encoding="utf-8")
    assert export(run, target) == 2
    assert export(run, target, "--force") == 0
    assert "stale.md" not in files(target) and "SKILL.md" in files(target)


def test_export_into_an_empty_folder_needs_no_force(run: Run, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert export(run, tmp_path / "empty") == 0
    assert (tmp_path / "empty" / "SKILL.md").is_file()


def test_export_failure_leaves_no_half_written_folder(run: Run, tmp_path: Path, monkeypatch) -> None:
    real = os.rename

    def broken(src, dst):
        if Path(dst).name == "half":
            raise OSError("disk full")
        return real(src, dst)

    monkeypatch.setattr(os, "rename", broken)
    assert export(run, tmp_path / "half") == 1  # one line on stderr, no traceback
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs", "works"]


def test_export_with_force_keeps_the_old_folder_when_the_swap_fails(run: Run, tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "skill"
    target.mkdir()
    (target / "SKILL.md").write_text("old", encoding="utf-8")  # an earlier export: what --force replaces
    real = os.rename

    def broken(src, dst):
        if Path(dst).name == "skill" and Path(src).name.startswith(".skill.") and ".old." not in Path(src).name:
            raise OSError("disk full")
        return real(src, dst)

    monkeypatch.setattr(os, "rename", broken)
    assert export(run, target, "--force") == 1
    assert files(target) == {"SKILL.md": b"old"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs", "skill", "works"]


def test_force_never_replaces_the_run_or_the_current_folder(run: Run, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert export(run, run.root, "--force") == 2
    assert export(run, tmp_path, "--force") == 2
    assert (run.root / "config.json").is_file() and run.pool.exists()


def test_export_of_a_bad_commit_or_run_says_what_to_do(run: Run, tmp_path: Path, capsys) -> None:
    assert export(run, tmp_path / "x", "--commit", "no-such-rev") == 2
    assert "not a commit" in capsys.readouterr().err
    assert main(["export", "nope", "--runs-dir", str(run.root.parent), "--to", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "no run named nope" in err and "skilltui runs" in err
    assert not (tmp_path / "x").exists()


def test_a_folder_name_that_is_not_a_skill_name_is_slugged_and_noted(run: Run, tmp_path: Path, capsys) -> None:
    assert export(run, tmp_path / "My Skill!") == 0
    assert front_matter(tmp_path / "My Skill!")[0]["name"] == "my-skill"
    assert "rename" in capsys.readouterr().err


def test_export_takes_a_run_folder_path_too(run: Run, tmp_path: Path) -> None:
    assert main(["export", str(run.root), "--to", str(tmp_path / "by-path")]) == 0
    assert (tmp_path / "by-path" / "SKILL.md").is_file()


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("inside", ["epoch0", "memory/scene", "stories", "epoch0/step0/works/pine-tram", "fresh"])
def test_export_never_writes_inside_a_run_even_with_force(run: Run, tmp_path: Path, capsys, inside: str) -> None:
    before = snapshot(run.root)
    capsys.readouterr()
    assert export(run, run.root / inside, "--force") == 2
    assert "inside run r" in capsys.readouterr().err
    assert snapshot(run.root) == before


def test_force_never_replaces_a_folder_that_holds_another_run(run: Run, tmp_path: Path) -> None:
    shelf = tmp_path / "shelf"
    shutil.copytree(run.root, shelf / "old-runs" / "kept")
    assert export(run, shelf, "--force") == 2
    assert (shelf / "old-runs" / "kept" / "config.json").is_file()


def test_export_to_the_current_folder_when_it_is_empty(run: Run, tmp_path: Path, monkeypatch) -> None:
    here = tmp_path / "screen-craft"
    here.mkdir()
    monkeypatch.chdir(here)
    assert export(run, Path(".")) == 0
    meta, _ = front_matter(here)
    assert meta["name"] == "screen-craft"
    assert len([p for p in here.rglob("*.md") if p.name != "SKILL.md"]) == len(run.pool.note_paths())


def test_export_with_force_through_a_symlink_writes_where_it_points_and_leaves_nothing_behind(
    run: Run, tmp_path: Path
) -> None:
    real = tmp_path / "dotfiles" / "screen-craft"
    real.mkdir(parents=True)
    (real / "SKILL.md").write_text("old", encoding="utf-8")  # an earlier export
    (real / "stale.md").write_text("old", encoding="utf-8")
    link = tmp_path / "skills" / "screen-craft"
    link.parent.mkdir()
    link.symlink_to(real, target_is_directory=True)
    assert export(run, link, "--force") == 0
    assert link.is_symlink() and (real / "SKILL.md").is_file() and not (real / "stale.md").exists()
    assert sorted(p.name for p in link.parent.iterdir()) == ["screen-craft"]
    assert sorted(p.name for p in real.parent.iterdir()) == ["screen-craft"]
