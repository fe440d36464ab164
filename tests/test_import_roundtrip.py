"""`skilltui import` loses nothing the loss counts: Fountain -> PDF or FDX -> import -> the same episode.

Each episode is turned into a PDF and an FDX by screenplain, and into a production PDF by a
second layout these tests draw (tests/support/drawn_scripts.py: Final Draft's margins, scene numbers
in both margins, (MORE)/(CONT'D), revised pages, a running header), imported with the real
command, and scored against the original with the engine's own loss.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
from screenplain.export import pdf as screenplain_pdf
from screenplain.export.fdx import to_fdx
from screenplain.parsers import fountain

from skilltui.cli import main
from skilltui.engine.loss.scores import combine, score_episode
from tests.support.drawn_scripts import draw_pdf, lay_out_text
from tests.support.works import NAMES, make_varied_episode

EXAMPLES = Path(__file__).parent.parent / "skilltui" / "examples"
BUNDLED = sorted(EXAMPLES.glob("*/human/*.fountain"))


def generated(count: int = 4) -> list[str]:
    rng = random.Random(37)
    return ["\n\n".join(make_varied_episode(rng, rng.sample(NAMES, 3)) for _ in range(3)) for _ in range(count)]


def long_speeches() -> str:
    """An episode whose speeches are long enough that a page break has to cut one."""
    rng = random.Random(5)
    cast = ["MARTA", "IVO", "SOLEDAD"]
    blocks = []
    for scene in range(6):
        blocks.append(f"INT. BOATHOUSE {scene} - NIGHT")
        blocks.append("Rain on the tin roof. A lamp swings on its hook, and the hull creaks.")
        for _ in range(3):
            phrases = ["the tide", "won't wait", "for anyone", "and you know it", "so row"]
            words = " ".join(rng.choice(phrases) for _ in range(40))
            blocks.append(f"{rng.choice(cast)}\n{words.capitalize()}.")
    return "\n\n".join(blocks) + "\n"


def screenplain_files(text: str, folder: Path, name: str) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    pdf_path, fdx_path = folder / f"{name}.pdf", folder / f"{name}.fdx"
    with open(pdf_path, "wb") as out:
        screenplain_pdf.to_pdf(fountain.parse(io.StringIO(text)), out)
    with open(fdx_path, "w", encoding="utf-8") as out:
        to_fdx(fountain.parse(io.StringIO(text)), out)
    return pdf_path, fdx_path


def imported(capsys, files: list[Path], work: Path) -> dict:
    code = main(["import", *map(str, files), "--work", str(work), "--first", "1", "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def loss(work: Path, number: int, original: str) -> float:
    return combine(score_episode((work / "human" / f"{number:02d}.fountain").read_text(encoding="utf-8"), original))


@pytest.mark.parametrize("fmt", ["pdf", "fdx"])
def test_every_bundled_episode_survives_screenplains_pdf_and_fdx(tmp_path, capsys, fmt):
    for work_dir in sorted({p.parent.parent for p in BUNDLED}):
        episodes = sorted((work_dir / "human").glob("*.fountain"))
        src = tmp_path / "src" / work_dir.name
        files = [screenplain_files(p.read_text(encoding="utf-8"), src, p.stem) for p in episodes]
        work = tmp_path / work_dir.name
        imported(capsys, [pair[0 if fmt == "pdf" else 1] for pair in files], work)
        for number, original in enumerate(episodes, start=1):
            assert loss(work, number, original.read_text(encoding="utf-8")) <= 0.02, f"{work_dir.name} {number} ({fmt})"


@pytest.mark.parametrize("fmt", ["pdf", "fdx"])
def test_generated_episodes_survive_screenplains_pdf_and_fdx(tmp_path, capsys, fmt):
    texts = generated() + [long_speeches()]
    pairs = [screenplain_files(text, tmp_path / "src", f"ep{n}") for n, text in enumerate(texts)]
    files = [pair[0 if fmt == "pdf" else 1] for pair in pairs]
    imported(capsys, files, tmp_path / "work")
    for number, text in enumerate(texts, start=1):
        assert loss(tmp_path / "work", number, text) <= 0.02, f"episode {number} ({fmt})"


def test_production_pdfs_drawn_at_final_draft_margins_survive_with_every_artefact_counted(tmp_path, capsys):
    texts = [p.read_text(encoding="utf-8") for p in BUNDLED] + generated() + [long_speeches()]
    files, drawn = [], []
    for n, text in enumerate(texts, start=1):
        files.append(tmp_path / "src" / f"{n:02d}.pdf")
        files[-1].parent.mkdir(exist_ok=True)
        drawn.append(draw_pdf(text, files[-1], revised=(2,)))
    report = imported(capsys, files, tmp_path / "work")
    for number, (text, artefacts, found) in enumerate(zip(texts, drawn, report["files"], strict=True), start=1):
        assert found["removed"] == dict(sorted(artefacts.items())), f"episode {number}"
        assert found["unclassified"] == []
        assert loss(tmp_path / "work", number, text) <= 0.03, f"episode {number}"
    # The drawings hold every kind of artefact, a speech cut by a page among them.
    kinds = {kind for artefacts in drawn for kind in artefacts}
    assert kinds == {"running header", "page number", "scene number", "revision asterisk", "more", "cont'd"}


def test_a_speech_cut_by_a_page_break_is_one_speech_again(tmp_path, capsys):
    text = long_speeches()
    source = tmp_path / "01.pdf"
    drawn = draw_pdf(text, source)
    assert drawn["more"] >= 1
    imported(capsys, [source], tmp_path / "work")
    written = (tmp_path / "work" / "human" / "01.fountain").read_text(encoding="utf-8")
    assert "(MORE)" not in written and "CONT'D" not in written
    original_speeches = [b for b in text.split("\n\n") if b.split("\n")[0] in ("MARTA", "IVO", "SOLEDAD")]
    written_speeches = [b for b in written.split("\n\n") if b.split("\n")[0] in ("MARTA", "IVO", "SOLEDAD")]
    assert len(written_speeches) == len(original_speeches)
    assert [" ".join(b.split()) for b in written_speeches] == [" ".join(b.split()) for b in original_speeches]


def test_plain_text_laid_out_with_spaces_reads_like_the_pdf(tmp_path, capsys):
    texts = [BUNDLED[0].read_text(encoding="utf-8"), long_speeches()]
    files = []
    for n, text in enumerate(texts, start=1):
        files.append(tmp_path / f"{n:02d}.txt")
        files[-1].write_text(lay_out_text(text), encoding="utf-8")
    report = imported(capsys, files, tmp_path / "work")
    assert report["files"][1]["removed"]["more"] >= 1
    for number, text in enumerate(texts, start=1):
        assert loss(tmp_path / "work", number, text) <= 0.03


def test_fountain_is_normalised_and_a_title_page_names_the_work(tmp_path, capsys):
    body = BUNDLED[0].read_text(encoding="utf-8")
    source = tmp_path / "pilot 1.fountain"
    text = "\ufeffTitle: Dead Air\nAuthor: Someone\n\n" + body
    source.write_bytes(text.replace("\n", "\r\n").encode() + b"\tx\r\n")
    code = main(["import", str(source), "--work", str(tmp_path / "work")])
    out = capsys.readouterr()
    assert code == 0, out.err
    written = (tmp_path / "work" / "human" / "01.fountain").read_bytes()
    assert b"\r" not in written and b"\t" not in written and not written.startswith(b"\xef\xbb\xbf")
    assert (tmp_path / "work" / "work.toml").read_text(encoding="utf-8") == 'title = "Dead Air"\n'
    assert "page" in out.out


def test_the_report_counts_scenes_characters_and_dialogue(tmp_path, capsys):
    _, fdx = screenplain_files(BUNDLED[0].read_text(encoding="utf-8"), tmp_path, "01")
    code = main(["import", str(fdx), "--work", str(tmp_path / "work")])
    out = capsys.readouterr()
    assert code == 0
    assert "3 scenes, 3 characters, 9 lines of dialogue" in out.out
    assert "wrote 1 episode" in out.err


FDX = """<?xml version="1.0" encoding="UTF-8" standalone="no" ?>
<FinalDraft DocumentType="Script" Template="No" Version="5">
  <Content>
    <Paragraph Type="Scene Heading" Number="1"><Text>INT. FERRY - NIGHT</Text></Paragraph>
    <Paragraph Type="Action"><Text>Engines. </Text><Text Style="Bold">A horn.</Text></Paragraph>
    <Paragraph Type="Shot"><Text>CLOSE ON THE RAIL</Text></Paragraph>
    <Paragraph Type="General"><Text>WET ROPE ON THE DECK</Text></Paragraph>
    <Paragraph>
      <DualDialogue>
        <Paragraph Type="Character"><Text>MARTA</Text></Paragraph>
        <Paragraph Type="Dialogue"><Text>Now?</Text></Paragraph>
        <Paragraph Type="Character"><Text>IVO</Text></Paragraph>
        <Paragraph Type="Parenthetical"><Text>(shouting)</Text></Paragraph>
        <Paragraph Type="Dialogue"><Text>Now!</Text></Paragraph>
      </DualDialogue>
    </Paragraph>
    <Paragraph Type="Cast List"><Text>MARTA, IVO</Text></Paragraph>
    <Paragraph Type="Transition"><Text>CUT TO:</Text></Paragraph>
  </Content>
  <TitlePage><Content><Paragraph Alignment="Center"><Text>THE CROSSING</Text></Paragraph></Content></TitlePage>
</FinalDraft>
"""


def test_fdx_paragraph_types_dual_dialogue_and_the_title_page(tmp_path, capsys):
    source = tmp_path / "crossing 01.fdx"
    source.write_text(FDX, encoding="utf-8")
    report = imported(capsys, [source], tmp_path / "work")["files"][0]
    written = (tmp_path / "work" / "human" / "01.fountain").read_text(encoding="utf-8")
    assert written == (
        "INT. FERRY - NIGHT\n\nEngines. A horn.\n\nCLOSE ON THE RAIL\n\nWET ROPE ON THE DECK\n\n"
        "MARTA\nNow?\n\nIVO ^\n(shouting)\nNow!\n\nMARTA, IVO\n\nCUT TO:\n"
    )
    assert report["title"] == "THE CROSSING" and report["characters"] == ["MARTA", "IVO"]
    assert report["unclassified"] == [{"page": None, "text": "[Cast List] MARTA, IVO"}]
    assert (tmp_path / "work" / "work.toml").read_text(encoding="utf-8") == 'title = "THE CROSSING"\n'


def test_a_line_in_no_column_is_reported_with_its_page_and_kept(tmp_path, capsys):
    laid_out = lay_out_text(BUNDLED[0].read_text(encoding="utf-8"))
    first, rest = laid_out.split("\f", 1)
    stray = " " * 47 + "pencilled: call the depot"
    source = tmp_path / "01.txt"
    source.write_text(first + "\f" + rest.replace("\n\n", f"\n\n{stray}\n\n", 1), encoding="utf-8")
    code = main(["import", str(source), "--work", str(tmp_path / "work")])
    out = capsys.readouterr().out
    assert code == 0
    assert "  unclassified (page 2): pencilled: call the depot" in out.splitlines()
    assert "pencilled: call the depot" in (tmp_path / "work" / "human" / "01.fountain").read_text(encoding="utf-8")


def test_a_script_with_other_margins_still_reads(tmp_path, capsys, monkeypatch):
    from tests.support import drawn_scripts

    # Everything half an inch further left, and the speech columns closer together than Final Draft's.
    columns = {
        "heading": 1.0,
        "action": 1.0,
        "dialogue": 1.8,
        "parenthetical": 2.3,
        "character": 2.9,
        "transition": 5.5,
    }
    monkeypatch.setattr(drawn_scripts, "COLUMNS", columns)
    texts = [p.read_text(encoding="utf-8") for p in BUNDLED[:3]] + [long_speeches()]
    files, drawn = [], []
    for n, text in enumerate(texts, start=1):
        files.append(tmp_path / f"{n:02d}.pdf")
        drawn.append(draw_pdf(text, files[-1]))
    report = imported(capsys, files, tmp_path / "work")
    for number, (text, artefacts, found) in enumerate(zip(texts, drawn, report["files"], strict=True), start=1):
        assert found["removed"] == dict(sorted(artefacts.items()))
        assert loss(tmp_path / "work", number, text) <= 0.03
