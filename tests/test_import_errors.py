"""`skilltui import` refuses bad files with one line and exit 2, having written nothing at all.

Each bad file is given after a good one, so the test also proves the good one was not
written first: the work folder does not exist afterwards.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from reportlab.lib.pagesizes import letter
from reportlab.pdfgen import canvas

from skilltui.cli import main

GOOD = "INT. KITCHEN - NIGHT\n\nA kettle.\n\nANNA\nIt's late.\n"
FDX_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'
FDX_BODY = '<FinalDraft><Content><Paragraph Type="Action"><Text>&x;</Text></Paragraph></Content></FinalDraft>\n'


def scan(path: Path) -> None:
    """A PDF of a scanned page: something drawn, no text."""
    pdf = canvas.Canvas(str(path), pagesize=letter)
    pdf.rect(72, 72, 400, 600, fill=1)
    pdf.showPage()
    pdf.save()


def encrypted(path: Path) -> None:
    pdf = canvas.Canvas(str(path), pagesize=letter, encrypt="secret")
    pdf.setFont("Courier", 12)
    pdf.drawString(108, 700, "INT. KITCHEN - NIGHT")
    pdf.showPage()
    pdf.save()


def external_entity(path: Path) -> None:
    path.write_text(FDX_HEAD + '<!DOCTYPE FinalDraft [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n' + FDX_BODY)


def xml_bomb(path: Path) -> None:
    # The billion laughs: each entity ten of the one before, 10**8 copies of "lol" from a few hundred bytes.
    layers = "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(8))
    entities = '<!ENTITY a "lol">' + layers
    path.write_text(FDX_HEAD + f"<!DOCTYPE FinalDraft [{entities}]>\n" + FDX_BODY.replace("&x;", "&i;"))


def zero_bytes(path: Path) -> None:
    path.write_bytes(b"")


def too_big(path: Path) -> None:
    path.write_text(GOOD * 100)


def unknown(path: Path) -> None:
    path.write_bytes(b"PK\x03\x04 a word processor file")


CASES = {
    "scan.pdf": (scan, "has no text layer; OCR it first"),
    "locked.pdf": (encrypted, "is an encrypted PDF"),
    "entity.fdx": (external_entity, "external entity"),
    "bomb.fdx": (xml_bomb, "XML bomb"),
    "empty.fdx": (zero_bytes, "is empty (0 bytes)"),
    "big.fountain": (too_big, "over --max-script-kb 4"),
    "draft.docx": (unknown, ".docx is not a format import reads"),
}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["import", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("name", list(CASES))
def test_a_bad_file_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, name):
    make, said = CASES[name]
    good = tmp_path / "src" / "01.fountain"
    good.parent.mkdir()
    good.write_text(GOOD, encoding="utf-8")
    bad = tmp_path / "src" / name
    make(bad)
    work = tmp_path / "work"
    code, out, err = run(capsys, str(good), str(bad), "--work", str(work), "--first", "1", "--max-script-kb", "4")
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert said in err and err.startswith("skilltui: error: ")
    assert not work.exists()


def test_an_existing_episode_needs_force_and_is_left_as_it_was(tmp_path, capsys):
    source = tmp_path / "01.fountain"
    source.write_text(GOOD, encoding="utf-8")
    work = tmp_path / "work"
    (work / "human").mkdir(parents=True)
    (work / "human" / "1.fountain").write_text("INT. OLD - DAY\n", encoding="utf-8")
    before = sorted(p.name for p in work.rglob("*"))
    code, out, err = run(capsys, str(source), "--work", str(work))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "exists (episode 1" in err and "--force" in err
    assert sorted(p.name for p in work.rglob("*")) == before
    assert (work / "human" / "1.fountain").read_text(encoding="utf-8") == "INT. OLD - DAY\n"

    code, _, err = run(capsys, str(source), "--work", str(work), "--force")
    assert code == 0, err
    assert sorted(p.name for p in (work / "human").iterdir()) == ["01.fountain"]
    assert "It's late." in (work / "human" / "01.fountain").read_text(encoding="utf-8")


def test_files_without_numbers_need_first_and_same_numbers_are_refused(tmp_path, capsys):
    a, b = tmp_path / "pilot.fountain", tmp_path / "ep 2.fountain"
    c = tmp_path / "S01E02 final.fountain"
    for path in (a, b, c):
        path.write_text(GOOD, encoding="utf-8")
    code, _, err = run(capsys, str(a), "--work", str(tmp_path / "w"))
    assert code == 2 and "pilot.fountain has no episode number" in err and "--first" in err
    code, _, err = run(capsys, str(b), str(c), "--work", str(tmp_path / "w"))
    assert code == 2 and "are both episode 2" in err
    assert not (tmp_path / "w").exists()
    code, _, err = run(capsys, str(a), str(b), "--work", str(tmp_path / "w"), "--first", "3")
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "w" / "human").iterdir()) == ["03.fountain", "04.fountain"]


@pytest.mark.parametrize("name", ["02\nlate.fountain", "late\nnight.fountain", "bell\a03.fdx"])
def test_a_file_name_with_a_newline_or_a_control_byte_is_spelled_out_in_the_one_line_error(tmp_path, capsys, name):
    good = tmp_path / "01.fountain"
    good.write_text(GOOD)
    bad = tmp_path / name
    bad.write_bytes(bytes(range(32)) * 4)  # binary: refused, so the error names the file
    work = tmp_path / "work"
    assert main(["import", str(good), str(bad), "--work", str(work)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("skilltui: error: "), err  # one line
    assert "\a" not in err and name.replace("\n", "\\n").replace("\a", "\\x07") in err
    assert not work.exists()
