"""Bad input: exit code 2, one line that says what to do, no traceback, nothing new under runs/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skilltui.cli import main
from tests.support.cli import assert_refused, run_cli, snapshot


@pytest.mark.slow
@pytest.mark.subprocess
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


@pytest.mark.subprocess
def test_two_works_with_the_same_folder_name(tmp_path, make_work):
    first = make_work("twin", 2)
    other = tmp_path / "elsewhere"
    other.mkdir()
    second = shutil.copytree(first, other / "twin")
    result = run_cli(
        "train",
        "--auto",
        "--work",
        str(first),
        "--work",
        str(second),
        "--runs-dir",
        str(tmp_path / "runs"),
        cwd=tmp_path,
    )
    assert_refused(result, "two works are named 'twin'", "rename")
    assert snapshot(tmp_path / "runs") == []


@pytest.mark.subprocess
def test_missing_story_says_to_diffuse_first(tmp_path, make_work):
    work = make_work("raw", 2, story=False)
    result = run_cli("train", "--auto", "--work", str(work), "--runs-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert_refused(result, "story.md is missing", "skilltui diffuse")
    assert snapshot(tmp_path / "runs") == []


@pytest.mark.slow
@pytest.mark.subprocess
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


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--steps", "0"], "--steps must be at least 1"),
        (["--group-size", "-1"], "--group-size"),
        (["--run-id", "../escape"], "--run-id"),
        (["--prompts", "/nonexistent/prompts"], "--prompts"),
        (["--init-pool", "/nonexistent/pool"], "--init-pool"),
        (["--role-model", "critic=x"], "--role-model"),  # judge and writer name the loss and forward roles
        (["--role-model", "writer=openai:"], "--role-model"),
    ],
)
def test_bad_flags(tmp_path, make_work, argv, words):
    work = make_work("flags", 2)
    result = run_cli("train", "--auto", "--work", str(work), "--runs-dir", str(tmp_path / "runs"), *argv, cwd=tmp_path)
    assert_refused(result, words)
    assert snapshot(tmp_path / "runs") == []


@pytest.mark.subprocess
def test_anthropic_without_a_key_says_how_to_set_it(tmp_path, make_work):
    work = make_work("keyless", 2)
    result = run_cli(
        "train",
        "--auto",
        "--backend",
        "anthropic",
        "--work",
        str(work),
        "--runs-dir",
        str(tmp_path / "runs"),
        cwd=tmp_path,
    )
    assert_refused(result, "ANTHROPIC_API_KEY")
    assert snapshot(tmp_path / "runs") == []


@pytest.mark.subprocess
def test_init_pool_that_fails_the_linter_is_refused(tmp_path, make_work):
    pool = tmp_path / "badpool" / "dialogue"
    pool.mkdir(parents=True)
    (pool / "x.md").write_text("no front matter\n", encoding="utf-8")
    work = make_work("seeded", 2)
    result = run_cli(
        "train",
        "--auto",
        "--work",
        str(work),
        "--runs-dir",
        str(tmp_path / "runs"),
        "--init-pool",
        str(tmp_path / "badpool"),
        cwd=tmp_path,
    )
    assert_refused(result, "fails the linter", "skilltui lint")
    assert snapshot(tmp_path / "runs") == []


def test_diffuse_and_lint_refuse_missing_folders(tmp_path, capsys):
    assert main(["diffuse", "--work", str(tmp_path / "none")]) == 2
    assert main(["lint", str(tmp_path / "none")]) == 2
    assert main(["diffuse", "--work", str(tmp_path), "--noise", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("skilltui: error: ") for line in err)


# -- input that must fail the checks, not late in training ---------------------------------------


def _train_in_process(tmp_path: Path, works: list[Path], *argv: str, runs: Path | None = None) -> int:
    args = ["train", "--auto", "--runs-dir", str(runs or tmp_path / "runs")]
    for work in works:
        args += ["--work", str(work)]
    return main(args + list(argv))


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("skilltui: error: "), err
    return err


def test_an_empty_episode_file_is_refused(tmp_path, make_work, capsys):
    work = make_work("hollow", 3)
    (work / "human" / "02.fountain").write_text("\n  \n", encoding="utf-8")
    assert _train_in_process(tmp_path, [work]) == 2
    assert "02.fountain is empty" in _one_line(capsys)
    assert snapshot(tmp_path / "runs") == []


@pytest.mark.parametrize(
    ("content", "words"),
    [(b"\xff\xfe\x00broken", "not UTF-8"), (b"  \n\n", "is empty"), (b"A tale, told plainly.\n", "## Episode N")],
)
def test_a_story_that_is_not_text_or_is_empty_is_refused(tmp_path, make_work, capsys, content, words):
    work = make_work("blank-story", 2)
    (work / "story.md").write_bytes(content)
    assert _train_in_process(tmp_path, [work]) == 2
    err = _one_line(capsys)
    assert words in err and "skilltui diffuse" in err
    assert snapshot(tmp_path / "runs") == []


def test_a_broken_template_in_prompts_is_refused_before_the_run(tmp_path, make_work, capsys):
    prompts = tmp_path / "my-prompts"
    prompts.mkdir()
    (prompts / "backward.md.j2").write_text("Edit the notes.\n{% if label %}\nno end\n", encoding="utf-8")
    assert _train_in_process(tmp_path, [make_work("templ", 2)], "--prompts", str(prompts)) == 2
    assert "backward.md.j2" in _one_line(capsys)
    assert snapshot(tmp_path / "runs") == []


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--max-cost", "nan"], "--max-cost"),
        (["--max-cost", "inf"], "--max-cost"),
        (["--offline-latency", "nan"], "--offline-latency"),
        (["--pool-budget", "0"], "--pool-budget must be a positive number of tokens"),
        (["--pool-budget", "nan"], "--pool-budget must be a positive number of tokens"),
        (["--episodes-per-step", "5"], "--episodes-per-step 4 or less"),
    ],
)
def test_numbers_that_would_fail_late_are_refused(tmp_path, make_work, capsys, argv, words):
    assert _train_in_process(tmp_path, [make_work("short", 4), make_work("shorter", 3)], *argv) == 2
    assert words in _one_line(capsys)
    assert snapshot(tmp_path / "runs") == []


def test_runs_dir_under_a_regular_file_is_refused(tmp_path, make_work, capsys):
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    assert _train_in_process(tmp_path, [make_work("under", 2)], runs=tmp_path / "afile" / "runs") == 2
    assert "is a file" in _one_line(capsys)
    assert (tmp_path / "afile").read_text() == "x"


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "flags, word",
    [
        (["--steps", "nan"], "--steps"),
        (["--max-cost", "lots"], "--max-cost"),
        (["--consolidate-edit-lines", "nan"], "--consolidate-edit-lines"),
        (["--stpes", "3"], "unrecognized arguments: --stpes"),
    ],
)
def test_a_value_argparse_cannot_read_is_one_line_naming_the_flag_and_help(tmp_path, make_work, flags, word):
    # argparse's own refusals (a type it cannot read, an unknown flag) read like the rest: one line.
    runs = tmp_path / "runs"
    work = make_work("kestrel", 4)
    result = run_cli("train", "--auto", "--work", str(work), "--runs-dir", str(runs), *flags, cwd=tmp_path)
    assert_refused(result, word, "--help")
    assert snapshot(runs) == []
