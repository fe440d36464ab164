"""`skilltui check`, and the same check when `train` opens a work: said before a run folder exists."""

from __future__ import annotations

from pathlib import Path

from skilltui.cli import main
from tests.support.works import train_works


def check(capsys, *works: Path) -> tuple[int, str, str]:
    argv = ["check"]
    for work in works:
        argv += ["--work", str(work)]
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def diffuse(capsys, work: Path) -> None:
    assert main(["diffuse", "--work", str(work), "--backend", "offline"]) == 0
    capsys.readouterr()


def test_a_work_diffused_from_its_episodes_passes(make_work, capsys):
    work = make_work("sable-quay", 3, story=False)
    diffuse(capsys, work)
    assert (work / "story.sources.json").is_file()
    code, out, err = check(capsys, work)
    assert code == 0, err
    assert out.startswith("ok: ") and "3 episodes" in out
    assert err == ""


def test_an_episode_changed_since_diffuse_says_run_diffuse_again_and_train_makes_no_run(make_work, capsys, tmp_path):
    work = make_work("sable-quay", 3, story=False)
    diffuse(capsys, work)
    episode = work / "human" / "02.fountain"
    episode.write_text(episode.read_text(encoding="utf-8") + "\nTILDA\nOne more line.\n", encoding="utf-8")
    code, out, err = check(capsys, work)
    assert code == 2 and out == ""
    assert err.strip() == (
        f"skilltui: error: {episode} changed since story.md was made from it; "
        f"run `skilltui diffuse --work {work}` again"
    )
    runs = tmp_path / "runs"
    assert train_works(runs, [work]) == 2
    assert "changed since story.md" in capsys.readouterr().err
    assert not runs.exists()


def test_a_story_without_a_section_for_an_episode_stops_check_and_train(make_work, capsys, tmp_path):
    work = make_work("sable-quay", 2, story=False)
    (work / "story.md").write_text("## Episode 1\n\nA baker closes up.\n", encoding="utf-8")
    code, _, err = check(capsys, work)
    assert code == 2
    assert f"has no section for episode 2; run `skilltui diffuse --work {work}` again" in err
    assert len([line for line in err.splitlines() if line.startswith("skilltui: error: ")]) == 1
    assert train_works(tmp_path / "runs", [work]) == 2
    assert "no section for episode 2" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_gaps_and_ignored_files_are_named_and_do_not_stop_it(make_work, capsys):
    work = make_work("sable-quay", 4, story=False)
    (work / "human" / "03.fountain").unlink()
    (work / "human" / "notanumber.fountain").write_text("INT. X - DAY\n", encoding="utf-8")
    diffuse(capsys, work)
    code, out, err = check(capsys, work)
    assert code == 0, err
    assert f"note: ignores {work / 'human' / 'notanumber.fountain'} (not named like 01.fountain)" in err
    assert f"note: {work / 'human'} has no episode 3:" in err
    assert out.startswith("ok: ")


def test_a_story_from_an_older_diffuse_only_warns_and_still_trains(make_work, capsys, tmp_path):
    work = make_work("sable-quay", 4)  # story.md written without the record, as before this check
    assert not (work / "story.sources.json").exists()
    code, _, err = check(capsys, work)
    assert code == 0
    assert "has no record of the episodes it was made from" in err
    assert train_works(tmp_path / "runs", [work]) == 0


def test_an_episode_that_is_not_fountain_is_a_problem_before_diffuse_too(make_work, capsys):
    work = make_work("sable-quay", 2, story=False)
    (work / "human" / "02.fountain").write_text("just some notes about the episode\n", encoding="utf-8")
    code, out, err = check(capsys, work)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1  # the story not made yet is the next step, not a second problem
    assert "02.fountain has no scene heading and no dialogue" in lines[0]


def test_the_documented_order_import_check_diffuse_works_step_by_step(make_work, capsys, tmp_path):
    """import's `next:` line and docs/own-scripts.md say import, check, diffuse: check before
    diffuse checks the episodes, says what it checked and that diffuse comes next."""
    source = make_work("sable-quay", 2, story=False) / "human"
    work = tmp_path / "shows" / "harbour"
    assert main(["import", str(source / "01.fountain"), str(source / "02.fountain"), "--work", str(work)]) == 0
    hint = next(line for line in capsys.readouterr().err.splitlines() if line.startswith("next: "))
    assert hint.index("skilltui check") < hint.index("skilltui diffuse")
    docs = (Path(__file__).parents[1] / "docs" / "own-scripts.md").read_text(encoding="utf-8")
    assert docs.index("## 1. Import") < docs.index("## 2. Check") < docs.index("## 3. Diffuse")

    code, out, err = check(capsys, work)
    assert code == 0, err
    assert out == f"ok: {work} (2 episodes read as Fountain; no story.md yet)\n"
    assert err.startswith(f"next: skilltui diffuse --work {work} ")

    diffuse(capsys, work)
    code, out, err = check(capsys, work)
    assert code == 0 and err == ""
    made = "story.md has a section for each, made from it as it is now"
    assert out == f"ok: {work} (2 episodes read as Fountain; {made})\n"


def test_check_of_a_folder_that_is_no_work_is_one_line(tmp_path, capsys):
    code, out, err = check(capsys, tmp_path / "nowhere")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "does not exist" in err
