"""The exported skill's description says what the exported notes are about, and nothing else.

An agent picks a skill by its description, so it must not advertise a topic the skill has
no note on (a folder whose notes were rolled back) or name the training works, which mean
nothing to that agent.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from skilltui.cli import main
from skilltui.pool.notes import render_note
from skilltui.runs.export import MAX_DESCRIPTION, TOPICS, describe


def note(description: str) -> bytes:
    return render_note(description, "Some guidance.").encode("utf-8")


def test_only_the_topics_of_folders_with_a_note_are_named() -> None:
    text = describe(
        {
            "dialogue/cues.md": note("Put the speaker's name in capitals above the line."),
            "scene/headings.md": note("Open every scene with INT. or EXT., place and time."),
        }
    )
    assert TOPICS["dialogue"] in text and TOPICS["scene"] in text
    for folder in ("structure", "character", "action"):
        assert TOPICS[folder] not in text
    assert "Use when" in text
    assert "Put the speaker's name in capitals above the line" in text
    assert "Open every scene with INT. or EXT., place and time" in text


def test_the_description_fits_the_limit_with_whole_note_descriptions_only() -> None:
    rule = ("keep action lines short and visual " * 3).strip()
    notes = {f"action/n{i:03d}.md": note(f"Rule {i:03d}: {rule}") for i in range(60)}
    text = describe(notes)
    assert len(text) <= MAX_DESCRIPTION
    quoted = text.split("The notes: ", 1)[1].rstrip(".").split("; ")
    assert 0 < len(quoted) < 60
    for i, piece in enumerate(quoted):  # each quoted note is whole and in index order
        assert piece == f"Rule {i:03d}: {rule}"


def front_matter(skill: Path) -> dict:
    head = (skill / "SKILL.md").read_text(encoding="utf-8")[4:].partition("\n---\n")[0]
    return yaml.safe_load(head)


def test_a_folder_emptied_by_a_rollback_and_the_works_are_not_advertised(copied_run, tmp_path: Path) -> None:
    run = copied_run("gull-harbour", "pine-tram")
    pool = run.pool
    folders = sorted({rel.split("/")[0] for rel in pool.note_paths()})
    assert len(folders) >= 2, folders
    gone = folders[0]
    # What rolling back the only micro-steps that wrote that folder leaves behind: no note in it.
    pool.git("rm", "-q", "-r", gone)
    pool.git("commit", "-q", "-m", f"roll back every note in {gone}/")
    skill = tmp_path / "skill"
    assert main(["export", "r", "--runs-dir", str(run.root.parent), "--to", str(skill)]) == 0
    description = front_matter(skill)["description"]
    topics = description.split(". Use when")[0]  # the sentence that names the topics
    assert TOPICS[gone] not in topics
    for folder in folders[1:]:
        assert TOPICS[folder] in topics
    for name in ("gull-harbour", "pine-tram", "Gull-Harbour", "Pine-Tram", "Trained"):
        assert name not in description


def test_the_skill_body_counts_one_note_as_one_note() -> None:
    from types import SimpleNamespace

    from skilltui.runs.export import render_skill

    notes = {"scene/scene-headings.md": note("Scene headings name place and time.")}
    text = render_skill("craft", "d", SimpleNamespace(id="r"), "0" * 40, notes)  # type: ignore[arg-type]
    assert "1 short note learned by training" in text and "1 short notes" not in text
