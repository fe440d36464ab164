"""A revised production draft as Final Draft prints it imports as the script it was made from.

Long episodes (a work's episodes one after another, 8 to 20 pages) are drawn the way Final
Draft prints a revised draft (tests/support/drawn_scripts.py `draw_final_draft`): no running
header but "REVISED 12/01/26" on the revised pages, an A-page numbered "2A.", scene numbers
in both margins with inserted scenes numbered 11A (whose number ends 0.2 inch before the
heading), asterisks beside revised lines, (CONTINUED) and "CONTINUED: (2)" where a page cuts
a scene, the automatic (CONT'D) of a speaker who speaks again after action, and dual
dialogue as two speeches side by side. Each is
imported with the real command and scored against its source with the engine's own loss;
every artefact drawn is removed and counted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.engine.loss.scores import combine, score_episode
from tests.support.drawn_scripts import draw_final_draft, lay_out, with_dual_dialogue

ROOT = Path(__file__).parent.parent
WORKS = sorted((ROOT / "skilltui" / "examples").glob("*/human")) + sorted((ROOT / "tests" / "data").glob("*/human"))
BAR = 0.03  # the loss every imported PDF keeps to, as the round trip's production PDFs do

VARIANTS = {
    "inserted scenes on a revised page and an A-page": dict(
        revised=frozenset({2}), a_pages=frozenset({3}), inserted=frozenset({11, 12, 20})
    ),
    "two revised pages apart": dict(revised=frozenset({2, 6}), a_pages=frozenset(), inserted=frozenset({5, 14})),
    "a locked draft with no revision": dict(revised=frozenset(), a_pages=frozenset(), inserted=frozenset()),
    "dual dialogue side by side": dict(revised=frozenset({2}), a_pages=frozenset(), inserted=frozenset({11})),
}
DUAL = {"dual dialogue side by side"}


def long_episodes() -> list[str]:
    """Each bundled work's episodes as one long episode, and the hand-written works' as another."""
    bundled = [w for w in WORKS if "examples" in w.parts]
    hand = [w for w in WORKS if "examples" not in w.parts]
    texts = ["\n\n".join(p.read_text(encoding="utf-8") for p in sorted(w.glob("*.fountain"))) for w in bundled]
    texts.append("\n\n".join(p.read_text(encoding="utf-8") for w in hand for p in sorted(w.glob("*.fountain"))))
    return texts


def import_pdfs(capsys, files: list[Path], work: Path) -> list[dict]:
    code = main(["import", *map(str, files), "--work", str(work), "--first", "1", "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)["files"]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_a_revised_final_draft_pdf_of_a_long_episode_scores_within_the_bar(tmp_path, capsys, variant):
    texts = [with_dual_dialogue(t) if variant in DUAL else t for t in long_episodes()]
    files, drawn = [], []
    for n, text in enumerate(texts, start=1):
        assert len(lay_out(text)[0]) >= 7, "a long episode"
        assert (" ^\n" in text) == (variant in DUAL)
        files.append(tmp_path / f"{n:02d}.pdf")
        drawn.append(draw_final_draft(text, files[-1], **VARIANTS[variant]))
    reports = import_pdfs(capsys, files, tmp_path / "work")
    for number, (text, artefacts, report) in enumerate(zip(texts, drawn, reports, strict=True), start=1):
        written = (tmp_path / "work" / "human" / f"{number:02d}.fountain").read_text(encoding="utf-8")
        assert report["removed"] == dict(sorted(artefacts.items())), f"episode {number}"
        assert report["unclassified"] == []
        assert combine(score_episode(written, text)) <= BAR, f"episode {number}"
        assert "CONTINUED" not in written and "REVISED" not in written and "CONT'D" not in written
        assert written.count(" ^\n") == text.count(" ^\n")
    kinds = {kind for artefacts in drawn for kind in artefacts}
    assert {"scene number", "continued", "page number", "cont'd"} <= kinds


def test_an_inserted_scenes_number_close_before_its_heading_leaves_the_heading_a_heading(tmp_path, capsys):
    text = long_episodes()[0]
    source = tmp_path / "01.pdf"
    draw_final_draft(text, source, inserted=frozenset({11, 12}))
    report = import_pdfs(capsys, [source], tmp_path / "work")[0]
    written = (tmp_path / "work" / "human" / "01.fountain").read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith(("INT.", "EXT."))]
    assert report["scenes"] == len(headings)
    assert [line for line in written.splitlines() if line.startswith(("INT.", "EXT."))] == headings


def test_a_word_wrapped_at_its_hyphen_is_one_word_again(tmp_path, capsys):
    # Wrapped at 60 characters, the line breaks after "eighty-".
    line = "The old boiler in the cellar was fitted in nineteen eighty-eight and nobody has touched it since."
    speeches = "MARTA\nIt runs hot.\n\nIVO\nIt always has.\n\nMARTA\nThen we leave it be.\n"
    text = f"INT. CELLAR - NIGHT\n\n{line}\n\n{speeches}"
    source = tmp_path / "01.pdf"
    draw_final_draft(text, source, revised=frozenset(), a_pages=frozenset())
    assert import_pdfs(capsys, [source], tmp_path / "work")[0]["unclassified"] == []
    assert (tmp_path / "work" / "human" / "01.fountain").read_text(encoding="utf-8") == text
