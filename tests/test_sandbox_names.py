"""Every name the sandbox refuses is refused however it is written, and git run for an agent runs
nothing else.

On a case-insensitive file system (macOS by default, Windows) `.GIT/config` is the pool's
real `.git/config`, and a config there with `core.fsmonitor` had its command run by the
commit tool's `git add`: a way out of the sandbox. Names are compared case-folded and
Unicode-normalised, the pool's git files are refused to every agent, and every git the
engine runs carries hooks and fsmonitor off, whatever the pool's config says.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skilltui.agents.claude_code_confine import permissions
from skilltui.agents.tools import Sandbox, ToolError
from skilltui.pool.notes import Pool, render_note

NOTE = render_note("Cues in capitals.", "Write MARA, not Mara.")


@pytest.fixture
def pool(tmp_path: Path) -> Pool:
    pool = Pool(tmp_path / "run" / "memory")
    pool.init()
    return pool


@pytest.mark.parametrize(
    "name",
    [
        ".GIT/config",
        ".Git/hooks/post-commit",
        "scene/../.gIt/config",
        ".git./config",  # Windows drops trailing dots
        ".g\u200cit/config",  # HFS+ ignores zero-width joiners
        "GIT~1/config",  # NTFS's short name for .git
        ".gitattributes",
        "scene/.GITMODULES",
    ],
)
def test_git_files_are_refused_however_their_name_is_written(pool: Pool, name: str) -> None:
    sandbox = Sandbox(read_roots=[pool.root], write_roots=[pool.root], base=pool.root)
    with pytest.raises(ToolError, match="git"):
        sandbox.create(name, "[core]\n\tfsmonitor = touch /tmp/pwned\n")
    with pytest.raises(ToolError, match="git"):
        sandbox.view(name)
    assert not any(p.name.casefold().startswith((".git", "git~")) and p.name != ".git" for p in pool.root.iterdir())


def test_a_denied_folder_is_refused_in_any_case_and_normal_form(tmp_path: Path) -> None:
    run = tmp_path / "run"
    loss = run / "epoch0" / "step0" / "loss"
    loss.mkdir(parents=True)
    (loss / "w.md").write_text("the judge's report\n")
    sandbox = Sandbox(read_roots=[run], denied=[loss])
    for path in [loss / "w.md", run / "epoch0" / "step0" / "LOSS" / "w.md", run / "EPOCH0" / "step0" / "Loss" / "w.md"]:
        with pytest.raises(ToolError, match="off-limits"):
            sandbox.view(str(path))


def test_a_hard_link_to_a_file_the_agent_may_not_read_is_refused(tmp_path: Path, pool: Pool) -> None:
    human = tmp_path / "works" / "w" / "human" / "01.fountain"
    human.parent.mkdir(parents=True)
    human.write_text("INT. SECRET - DAY\n")
    (pool.root / "scene").mkdir()
    os.link(human, pool.root / "scene" / "linked.md")
    sandbox = Sandbox(read_roots=[pool.root], denied=[human.parent.parent], base=pool.root)
    with pytest.raises(ToolError, match="hard links"):
        sandbox.view("scene/linked.md")


def _marker_program(tmp_path: Path, name: str) -> tuple[Path, Path]:
    marker = tmp_path / f"{name}-ran"
    program = tmp_path / name
    program.write_text(f"#!/bin/sh\ntouch {marker}\n")
    program.chmod(0o755)
    return program, marker


def test_git_run_for_an_agent_runs_no_hook_and_no_fsmonitor_of_the_pool_config(tmp_path: Path, pool: Pool) -> None:
    monitor, monitor_ran = _marker_program(tmp_path, "fsmonitor")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    hook, hook_ran = _marker_program(hooks, "post-commit")
    hook.rename(hooks / "post-commit")
    config = pool.root / ".git" / "config"
    config.write_text(config.read_text() + f"[core]\n\tfsmonitor = {monitor}\n\thooksPath = {hooks}\n")
    (pool.root / "dialogue").mkdir()
    (pool.root / "dialogue" / "cues.md").write_text(NOTE)
    pool.state()
    pool.commit_all("dialogue: cues")  # what the commit tool runs
    pool.log(files=True)
    assert not monitor_ran.exists() and not (hooks / "post-commit-ran").exists() and not hook_ran.exists()


def test_claude_code_may_not_edit_the_pool_git_folder(tmp_path: Path) -> None:
    pool = tmp_path / "memory"
    (pool / ".git").mkdir(parents=True)
    rules = permissions([], [pool], [])["permissions"]
    assert f"Edit(/{pool.as_posix()}/.git/**)" in rules["deny"]
    assert f"Write(/{pool.as_posix()}/.git/**)" in rules["deny"]


def test_write_atomic_never_writes_through_a_link_planted_at_its_temporary_name(tmp_path: Path) -> None:
    from skilltui.core.durable import write_atomic

    outside = tmp_path / "outside.txt"
    outside.write_text("untouched\n")
    folder = tmp_path / "pool"
    folder.mkdir()
    target = folder / "note.md"
    (folder / f".note.md.tmp{os.getpid()}").symlink_to(outside)
    write_atomic(target, "the note\n")
    assert outside.read_text() == "untouched\n" and target.read_text() == "the note\n" and not target.is_symlink()


def test_a_committed_symlink_note_is_not_read_into_the_prompt_and_fails_the_linter(tmp_path: Path, pool: Pool) -> None:
    secret = tmp_path / "human.fountain"
    secret.write_text("---\ndescription: INT. SECRET - DAY\n---\n## Guidance\n\nThe human episode.\n")
    (pool.root / "scene").mkdir()
    (pool.root / "scene" / "cues.md").write_text(NOTE)
    (pool.root / "scene" / "link.md").symlink_to(secret)
    assert [path for path, _ in pool.headers()] == ["scene/cues.md"]
    assert any("symbolic link" in p for p in pool.lint())


def test_a_gitattributes_saying_md_minus_diff_does_not_hide_edit_lines(pool: Pool) -> None:
    from skilltui.engine.notes.note_checks import edit_size

    (pool.root / ".gitattributes").write_text("*.md -diff\n")
    base = pool.commit_all("attributes by hand")
    (pool.root / "scene").mkdir()
    (pool.root / "scene" / "cues.md").write_text(NOTE)
    lines, touched, _ = edit_size(pool, base)
    assert lines == NOTE.count("\n") and touched == ["scene/cues.md"]
    after = pool.commit_all("scene: cues")
    patch, changes = pool.diff(base, after)
    assert changes.added == ["scene/cues.md"] and "+Write MARA, not Mara." in patch


def test_a_user_wide_hook_does_not_run_when_a_pool_is_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    hook, ran = _marker_program(hooks, "post-commit")
    config = tmp_path / "gitconfig"
    config.write_text(f"[core]\n\thooksPath = {hooks}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    Pool(tmp_path / "fresh" / "memory").init()
    assert hook.exists() and not ran.exists()
