"""Notes must transfer: the leakage guard, `skilltui lint --work`, and notes written the way the docs show."""

from __future__ import annotations

import re
from pathlib import Path

from skilltui.cli import main
from skilltui.engine.data.works import load_work
from skilltui.engine.notes.leakage import Lexicon
from skilltui.pool.notes import lint_note, parse_note, render_note

# The docs page that shows how a note is written (its example must pass the linter).
NOTES_PAGE = Path(__file__).resolve().parent.parent / "docs" / "data.md"

EPISODE = """INT. ROSIE'S DINER - NIGHT

Marguerite wipes the counter down for the third time tonight and waits.

MARGUERITE
(quietly)
The last bus left an hour ago and nobody ever walks this far out.

THEO
Then we wait for the first one.

EXT. SALT MARSH - DAWN

Theo walks the dyke alone.
"""


def work(tmp_path: Path, title: str = "Low Tide") -> Path:
    folder = tmp_path / "low-tide"
    (folder / "human").mkdir(parents=True)
    (folder / "human" / "01.fountain").write_text(EPISODE, encoding="utf-8")
    (folder / "work.toml").write_text(f'title = "{title}"\n', encoding="utf-8")
    return folder


def lexicon(tmp_path: Path) -> Lexicon:
    return Lexicon.from_works([load_work(work(tmp_path))])


def test_a_note_naming_a_character_place_or_title_is_refused_with_what_leaked(tmp_path):
    lx = lexicon(tmp_path)
    for text, what in (
        ("Give MARGUERITE a short line before the cut.", "the speaking character 'MARGUERITE'"),
        ("When Theo speaks, put his cue above the line.", "the speaking character 'Theo'"),
        ("Open on INT. ROSIE'S DINER - NIGHT.", 'the scene-heading location "ROSIE\'S DINER"'),
        ("A marsh at dawn: Salt Marsh in the heading.", "the scene-heading location 'Salt Marsh'"),
        ("Write it the way Low Tide does.", "the title 'Low Tide'"),
    ):
        problems = lx.check("dialogue/x.md", render_note("A cue above every line.", text))
        assert len(problems) == 1, (text, problems)
        assert problems[0].startswith(f"dialogue/x.md: names {what} of the training work low-tide"), problems


def test_a_note_sharing_eight_words_with_a_human_episode_is_refused_quoting_only_those_words(tmp_path):
    lx = lexicon(tmp_path)
    body = "A good line sounds like this: the last bus left an hour ago and nobody ever walks. Keep it short."
    problems = lx.check("dialogue/x.md", render_note("Lines that sound spoken.", body))
    assert problems == [
        'dialogue/x.md: shares a run of 11 words with low-tide episode 1 ("the last bus left an hour ago and '
        'nobody ever walks"); write the example in your own words'
    ]
    # Seven shared words in a row are not a copy.
    seven = "the last bus left an hour ago, then stop."
    assert lx.check("dialogue/x.md", render_note("Lines that sound spoken.", seven)) == []


def test_a_work_without_a_title_is_named_by_its_folder(tmp_path):
    folder = work(tmp_path)
    (folder / "work.toml").unlink()
    lx = Lexicon.from_works([load_work(folder)])
    problems = lx.check("scene/x.md", render_note("Headings.", "As in Low Tide, open on a heading."))
    assert problems and "the title 'Low Tide'" in problems[0]
    assert lx.check("scene/x.md", render_note("Headings.", "At low tide the boats sit on the mud.")) == []


def test_a_clean_note_passes_even_with_lower_case_common_words(tmp_path):
    lx = lexicon(tmp_path)
    note = render_note(
        "Open every scene with a scene heading: INT. or EXT., place, time of day.",
        "Write INT. SIGNAL BOX - NIGHT where the story says a scene is inside a signal box at night. "
        "A diner or a marsh is a place, not a name: theo-like nicknames in lower case are fine.",
    )
    assert lint_note("scene/headings.md", note) == []
    assert lx.check("scene/headings.md", note) == []


def test_lint_with_work_reports_leaks_and_exits_1(tmp_path, capsys):
    pool = tmp_path / "pool"
    (pool / "dialogue").mkdir(parents=True)
    (pool / "dialogue" / "cues.md").write_text(render_note("Cues in capitals.", "Like MARGUERITE above her line."))
    (pool / "scene").mkdir()
    (pool / "scene" / "ok.md").write_text(render_note("Scene headings.", "INT. SIGNAL BOX - NIGHT."))
    source = work(tmp_path)
    assert main(["lint", str(pool)]) == 0  # the note rules alone see nothing wrong
    capsys.readouterr()
    assert main(["lint", str(pool), "--work", str(source)]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert out == [
        "dialogue/cues.md: names the speaking character 'MARGUERITE' of the training work low-tide; "
        "illustrate with an invented name or place instead"
    ]


def test_lint_with_a_missing_work_is_a_one_line_error(tmp_path, capsys):
    pool = tmp_path / "pool"
    pool.mkdir()
    assert main(["lint", str(pool), "--work", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not exist" in err[0]


def test_a_description_written_the_way_the_examples_show_passes_lint():
    text = (
        "---\ndescription: Open every scene with a scene heading: INT. or EXT., place, time of day.\n---\n"
        "## Guidance\n\nWrite INT. SIGNAL BOX - NIGHT.\n"
    )
    assert lint_note("scene/scene-headings.md", text) == []
    meta, _, _ = parse_note(text)
    assert meta == {"description": "Open every scene with a scene heading: INT. or EXT., place, time of day."}
    # Quoted the YAML way, it reads the same.
    quoted = text.replace("description: Open", "description: 'Open").replace("of day.\n---", "of day.'\n---")
    assert parse_note(quoted)[0] == meta


def test_the_docs_example_note_passes_skilltui_lint(tmp_path, capsys):
    page = NOTES_PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"```\n(---\ndescription:.*?)```", page, re.DOTALL)
    assert blocks, "docs/data.md shows an example note"
    pool = tmp_path / "pool"
    (pool / "scene").mkdir(parents=True)
    for n, block in enumerate(blocks):
        (pool / "scene" / f"example-{n}.md").write_text(block, encoding="utf-8")
    assert main(["lint", str(pool)]) == 0, capsys.readouterr().out


# A work written for these tests: names in the ways a guard can miss them. The folder is
# harbour-cafe with no work.toml; its title page gives the other title, accents and all.
HARBOUR = """Title: _Café Lumière_
Credit: written by
Author: A. Tester

.THE LANTERN HOUSE

Rain on the big window. Hélène wipes the counter. The radio mutters about the Kittiwake,
overdue off Porthcurnow since noon.

HÉLÈNE
Mrs Abernethy says the boat was low in the water when it left.

O'BRIEN
(shaking off his coat)
Abernethy says a great many things.

DR. NOVAK
Sit down, both of you. Nobody goes out until the lifeboat calls.

KIT
I can take the van to the point.

MCKEE
Every night you say that, and every night the van breaks down.

EXT. HARBOUR WALL - NIGHT

Kit and McKee stand at the rail. The lantern swings.
"""


def harbour(tmp_path: Path) -> Lexicon:
    folder = tmp_path / "harbour-cafe"
    (folder / "human").mkdir(parents=True)
    (folder / "human" / "01.fountain").write_text(HARBOUR, encoding="utf-8")
    return Lexicon.from_works([load_work(folder)])


def leaks(lx: Lexicon, body: str) -> list[str]:
    return lx.check("character/x.md", render_note("Give each character one prop.", body))


def test_names_are_found_the_ways_readers_write_them(tmp_path):
    lx = harbour(tmp_path)
    for body, what in (
        ("A line for O'Brien.", 'the speaking character "O\'Brien"'),
        ("A line for O’Brien.", "the speaking character 'O’Brien'"),  # a curly apostrophe
        ("Let McKee answer.", "the speaking character 'McKee'"),
        ("Let Mckee answer.", "the speaking character 'Mckee'"),
        ("Novak sits them down.", "the speaking character 'Novak'"),  # the title is optional
        ("Let Dr Novak sit them down.", "the speaking character 'Dr Novak'"),
        ("Let Dr. Novak sit them down.", "the speaking character 'Dr. Novak'"),
        ("Helene wipes the counter.", "the speaking character 'Helene'"),  # accents fold
        ("Béatrice or Hélène, say.", "the speaking character 'Hélène'"),
        ("Open in the Lantern House.", "the scene-heading location 'Lantern House'"),  # "The" is optional
        ("As Harbour Café does it.", "the title 'Harbour Café'"),  # the folder's name, accented as a reader would
        ("As Cafe Lumiere does it.", "the title 'Cafe Lumiere'"),  # the title page, accents folded
        ("As Café Lumière does it.", "the title 'Café Lumière'"),
        ("Ask after Mrs Abernethy early.", "the character 'Mrs Abernethy'"),  # a surname said only in dialogue
        ("Ask after Abernethy early.", "the proper noun 'Abernethy'"),
        ("The radio talks of the Kittiwake.", "the proper noun 'Kittiwake'"),  # a ship
        ("A storm off Porthcurnow.", "the proper noun 'Porthcurnow'"),  # a town
    ):
        problems = leaks(lx, body)
        assert len(problems) == 1, (body, problems)
        assert problems[0].startswith(f"character/x.md: names {what} of the training work harbour-cafe"), problems


def test_a_common_word_that_is_also_a_name_leaks_only_where_it_reads_as_the_name(tmp_path):
    lx = harbour(tmp_path)
    assert leaks(lx, "Kit each character out with a prop. Will the scene end on a line?") == []
    assert leaks(lx, "Kit: a bag of what a character carries.") == []
    assert "'KIT'" in leaks(lx, "Give KIT a prop.")[0]  # in capitals, as a cue
    assert "'Kit'" in leaks(lx, "Let Kit speak first.")[0]  # mid-sentence, with a capital
    # Ordinary words of the work in lower case, and common words capitalised at a sentence start.
    assert leaks(lx, "A harbour wall at night; a lantern house. Rain on the window. Nobody moves.") == []


def test_lint_show_terms_lists_the_lexicon_of_a_work(tmp_path, capsys):
    folder = tmp_path / "harbour-cafe"
    (folder / "human").mkdir(parents=True)
    (folder / "human" / "01.fountain").write_text(HARBOUR, encoding="utf-8")
    assert main(["lint", "--work", str(folder), "--show-terms"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "harbour-cafe  speaking character  Novak" in out
    assert "harbour-cafe  proper noun  Kittiwake" in out
    assert "harbour-cafe  title  Cafe Lumiere" in out
    assert not any(line.endswith("  Rain") or line.endswith("  Nobody") for line in out)  # sentence starts
    assert main(["lint", "--show-terms"]) == 2  # nothing to show without a work
    assert "--show-terms needs --work" in capsys.readouterr().err


# Names that are neither cues nor capitalised mid-sentence, appended to a generated work: a
# surname met only in an introduction with a title, odd capitals, names said once in dialogue.
INTRODUCTIONS = """INT. GLASSWORKS - DAY

MRS. HALVERSEN (60s) enters, shaking rain from an umbrella. Mr. Quenby holds the door.

McAllister drags a crate to the kiln. O'brien counts the panes.

ADA
Thanks, Ottilie. Wrap the big one twice.

BRUNO
Wenzeslaw, the van. Now.

ADA
Fine. Hand it over, Grace.

BRUNO
Whoa, easy. Psst, over here. Ugh, fine. Brannagh, the ladder. Knead it. Heel, fold, turn.
Morally, it is theft.

Ada shoves it at MCALLISTER. Mrs Smith watches from the stairs.
"""


def introduced(make_work) -> Lexicon:
    folder = make_work("glass-house")
    with (folder / "human" / "02.fountain").open("a", encoding="utf-8") as episode:
        episode.write("\n" + INTRODUCTIONS)
    return Lexicon.from_works([load_work(folder)])


def test_names_a_reader_meets_outside_cues_and_mid_sentence_capitals_leak(make_work):
    lx = introduced(make_work)
    for body, what in (
        ("Ask Halversen about the kiln.", "'Halversen'"),  # the surname of an introduction with a title
        ("Ask Mrs Halversen about the kiln.", "'Mrs Halversen'"),
        ("HALVERSEN owns the kiln.", "'HALVERSEN'"),
        ("Let Quenby hold the door.", "'Quenby'"),  # title-case with a title's full stop
        ("Let Mrs Smith watch.", "'Mrs Smith'"),  # a common surname is a name after a title
        ("Let O'brien count.", '"O\'brien"'),  # odd capitals, in the script and in the note
        ("Let O'Brien count.", '"O\'Brien"'),
        ("Let McAllister drag it.", "'McAllister'"),
        ("Let MCALLISTER drag it.", "'MCALLISTER'"),
        ("Let Mcallister drag it.", "'Mcallister'"),
        ("Say thanks to Ottilie.", "'Ottilie'"),  # a first name said once in dialogue
        ("Wenzeslaw drives.", "'Wenzeslaw'"),  # said once, opening a line
        ("Brannagh holds the ladder.", "'Brannagh'"),  # said once, opening a sentence inside a line
        ("Let Grace take it.", "'Grace'"),  # a common word said to someone, never a word in the work
    ):
        problems = leaks(lx, body)
        assert len(problems) == 1, (body, problems)
        assert problems[0].startswith("character/x.md: names the "), problems
        assert f" {what} of the training work glass-house" in problems[0], problems


def test_common_craft_prose_still_passes_beside_those_names(make_work):
    lx = introduced(make_work)
    prose = (
        "Introduce a character in capitals with an age the first time (20s), then in plain case. "
        "Fine. Listen to how people talk: a line can open on a name, a title or an order. "
        "Thanks, yes and no are cheap; cut them. Now let the scene end on an action. "
        "Write Mr, Mrs or Dr only when the story does, and never Mrs Invented twice in a row. "
        "Smith the blacksmith is a trade, not a name. Grace notes in music are ornaments: grace in lower case. "
        "Cut the Whoa, the Psst and the Ugh that open lines; WHOA in capitals is a shout. "
        "A baker's Heel, fold, turn is a rhythm, not a name; say what is Morally at stake."
    )
    assert leaks(lx, prose) == []
