"""The one reader of the pool's git: the notes each commit touched, patches, kept refs, reverts."""

from __future__ import annotations

from pathlib import Path

from skilltui.pool.notes import Pool, render_note
from skilltui.pool.repo import PoolGit, split_patch


def write(pool: Pool, rel: str, description: str) -> None:
    (pool.root / rel).parent.mkdir(parents=True, exist_ok=True)
    (pool.root / rel).write_text(render_note(description, "Keep it short."), encoding="utf-8")


def test_files_name_what_each_commit_added_changed_and_removed(tmp_path: Path) -> None:
    pool = Pool(tmp_path / "memory")
    pool.init()
    write(pool, "scene/a.md", "A")
    write(pool, "scene/b.md", "B")
    first = pool.commit_all("two notes")
    write(pool, "scene/a.md", "A again")
    (pool.root / "scene" / "b.md").unlink()
    write(pool, "dialogue/c.md", "C")
    second = pool.commit_all("one of each")
    reader = PoolGit(pool.root)
    assert reader.files(first) == [("A", "scene/a.md"), ("A", "scene/b.md")]
    assert sorted(reader.files(second)) == [("A", "dialogue/c.md"), ("D", "scene/b.md"), ("M", "scene/a.md")]
    commits = reader.log(files=True)
    assert [c.sha for c in commits[:2]] == [second, first] and commits[0].subject == "one of each"
    assert sorted(commits[0].files) == sorted(reader.files(second))
    assert reader.changes(first, second).added == ["dialogue/c.md"]
    assert reader.changes(first, second).removed == ["scene/b.md"]


def test_kept_refs_and_a_revert_that_was_itself_reverted(tmp_path: Path) -> None:
    pool = Pool(tmp_path / "memory")
    pool.init()
    write(pool, "scene/a.md", "A")
    target = pool.commit_all("add a")
    pool.keep("reset/x", target)
    reader = PoolGit(pool.root)
    assert reader.kept_refs() == {target: ["reset/x"]}
    assert reader.reverted_by(target) is None
    pool.git("revert", "--no-edit", target)
    revert = pool.head()
    assert reader.reverted_by(target) == revert
    pool.git("revert", "--no-edit", revert)
    assert reader.reverted_by(target) is None  # the note is back: nothing says it is undone


def test_split_patch_reads_empty_and_binary_notes_and_never_fails_on_text(tmp_path: Path) -> None:
    pool = Pool(tmp_path / "memory")
    pool.init()
    before = pool.head()
    (pool.root / "scene").mkdir()
    (pool.root / "scene" / "empty.md").write_text("")
    (pool.root / "scene" / "blob.md").write_bytes(b"\x00\x01")
    after = pool.commit_all("odd files")
    files = {f.path: f for f in split_patch(pool.patch(before, after))}
    assert files["scene/empty.md"].status == "added" and files["scene/empty.md"].lines == []
    assert files["scene/blob.md"].lines == ["\\ binary file"]
    [odd] = split_patch("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n+only one line\n")  # a hunk cut short
    assert "+only one line" in odd.lines  # shown whole rather than dropped
    assert split_patch("") == []
