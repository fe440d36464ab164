"""Bad input: exit code 2, one line that says what to do, no traceback, nothing new under runs/."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skilltui.cli import main


def snapshot(runs: Path) -> list[str]:
    return sorted(str(p.relative_to(runs)) for p in runs.rglob("*")) if runs.exists() else []


def run_cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skilltui", *argv], capture_output=True, text=True, cwd=cwd,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)})


def assert_refused(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_missing_folder_no_episodes_duplicates_undecodable(tmp_path, make_work):
    runs = tmp_path / "runs"
    empty = tmp_path / "empty"
    (empty / "human").mkdir(parents=True)
    dup = make_work("dup", 2)
    (dup / "human" / "1.fountain").write_text("INT. X - DAY\n", encoding="utf-8")
    binary = make_work("binary", 2)
    (binary / "human" / "02.fountain").write_bytes(b"\xff\xfe\x00bad")
    cases = [
        (tmp_path / "nowhere", "does not exist"),
        (empty, "no episodes"),
        (dup, "both episode 1"),
        (binary, "not UTF-8"),
    ]
    for work, words in cases:
        result = run_cli("train", "--auto", "--work", str(work), "--runs-dir", str(runs), cwd=tmp_path)
        assert_refused(result, words)
    assert snapshot(runs) == []


def test_two_works_with_the_same_folder_name(tmp_path, make_work):
    first = make_work("twin", 2)
    other = tmp_path / "elsewhere"
    other.mkdir()
    second = shutil.copytree(first, other / "twin")
    result = run_cli("train", "--auto", "--work", str(first), "--work", str(second), "--runs-dir",
                     str(tmp_path / "runs"), cwd=tmp_path)
    assert_refused(result, "two works are named 'twin'", "rename")
    assert snapshot(tmp_path / "runs") == []


def test_missing_story_says_to_diffuse_first(tmp_path, make_work):
    work = make_work("raw", 2, story=False)
    result = run_cli("train", "--auto", "--work", str(work), "--runs-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert_refused(result, "story.md is missing", "skilltui diffuse")
    assert snapshot(tmp_path / "runs") == []


def test_re_noised_story_and_changed_settings_are_refused_on_reopen(tmp_path, make_work):
    work = make_work("drift", 4)
    runs = tmp_path / "runs"
    base = ["train", "--auto", "--work", str(work), "--runs-dir", str(runs), "--run-id", "r", "--steps", "1"]
    assert run_cli(*base, cwd=tmp_path).returncode == 0
    before = snapshot(runs)

    changed = run_cli(*base[:-1], "2", cwd=tmp_path)
    assert_refused(changed, "other settings", "steps", "--run-id")

    assert run_cli("diffuse", "--work", str(work), "--seed", "9", cwd=tmp_path).returncode == 0
    renoised = run_cli(*base, cwd=tmp_path)
    assert_refused(renoised, "re-noised", "new --run-id")
    assert snapshot(runs) == before


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--steps", "0"], "--steps must be at least 1"),
        (["--group-size", "-1"], "--group-size"),
        (["--run-id", "../escape"], "--run-id"),
        (["--prompts", "/nonexistent/prompts"], "--prompts"),
        (["--init-pool", "/nonexistent/pool"], "--init-pool"),
        (["--role-model", "judge=x"], "--role-model"),
    ],
)
def test_bad_flags(tmp_path, make_work, argv, words):
    work = make_work("flags", 2)
    result = run_cli("train", "--auto", "--work", str(work), "--runs-dir", str(tmp_path / "runs"), *argv,
                     cwd=tmp_path)
    assert_refused(result, words)
    assert snapshot(tmp_path / "runs") == []


def test_anthropic_without_a_key_says_how_to_set_it(tmp_path, make_work):
    work = make_work("keyless", 2)
    result = run_cli("train", "--auto", "--backend", "anthropic", "--work", str(work), "--runs-dir",
                     str(tmp_path / "runs"), cwd=tmp_path)
    assert_refused(result, "ANTHROPIC_API_KEY")
    assert snapshot(tmp_path / "runs") == []


def test_init_pool_that_fails_the_linter_is_refused(tmp_path, make_work):
    pool = tmp_path / "badpool" / "dialogue"
    pool.mkdir(parents=True)
    (pool / "x.md").write_text("no front matter\n", encoding="utf-8")
    work = make_work("seeded", 2)
    result = run_cli("train", "--auto", "--work", str(work), "--runs-dir", str(tmp_path / "runs"), "--init-pool",
                     str(tmp_path / "badpool"), cwd=tmp_path)
    assert_refused(result, "fails the linter", "skilltui lint")
    assert snapshot(tmp_path / "runs") == []


def test_diffuse_and_lint_refuse_missing_folders(tmp_path, capsys):
    assert main(["diffuse", "--work", str(tmp_path / "none")]) == 2
    assert main(["lint", str(tmp_path / "none")]) == 2
    assert main(["diffuse", "--work", str(tmp_path), "--noise", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("skilltui: error: ") for line in err)
