"""`skilltui import` on odd input: a file's own fault said first, control bytes cleaned and counted, deep XML walked.

A missing, empty, binary file or a folder is refused for what it is, before its name is
asked for an episode number; an NUL, ESC or BEL in a script never reaches the episode
file (and so no prompt or terminal), and the report says how many went from which file;
an FDX nested thousands of levels deep is read like a flat one, not a crash.
"""

from __future__ import annotations

import json

import pytest

from skilltui.cli import main
from tests.support.drawn_scripts import lay_out_text

GOOD = "INT. KITCHEN - NIGHT\n\nA kettle.\n\nANNA\nIt's late.\n"
# C0 but tab, newline and carriage return (a line end, normalised as CRLF is), DEL and C1.
CONTROLS = "".join(chr(c) for c in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F, *range(0x80, 0xA0)])


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["import", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _missing(path):
    pass


def _folder(path):
    path.mkdir()


def _empty(path):
    path.write_bytes(b"")


def _binary(path):
    path.write_bytes(bytes(range(256)) * 8)


def _not_a_pdf(path):
    path.write_text(GOOD, encoding="utf-8")


# Each name holds no episode number, so before each file's own reason came first, all four
# were refused for a name they could not help.
FAULTS = {
    "missing.fdx": (_missing, "missing.fdx: no such file"),
    "drafts": (_folder, "is a folder; pass the script files themselves"),
    "pilot.fdx": (_empty, "is empty (0 bytes)"),
    "pilot.fountain": (_binary, "is a binary file, not a script saved as text"),
    "pilot.pdf": (_not_a_pdf, "is not a PDF (it has no %PDF- header)"),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_a_files_own_fault_is_said_before_its_name_is_asked_for_a_number(tmp_path, capsys, name):
    make, said = FAULTS[name]
    bad = tmp_path / name
    make(bad)
    work = tmp_path / "work"
    code, out, err = run(capsys, str(bad), "--work", str(work))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert said in err and "episode number" not in err
    assert not work.exists()


def test_a_stray_nul_in_a_script_is_no_binary_file(tmp_path, capsys):
    source = tmp_path / "01.fountain"
    source.write_bytes(GOOD.replace("A kettle.", "A kettle.\x00").encode())
    code, _, err = run(capsys, str(source), "--work", str(tmp_path / "work"))
    assert code == 0, err


def dirty(text: str) -> str:
    """`text` with each of CONTROLS at the end of one of its lines that hold words."""
    lines = text.split("\n")
    worded = [i for i, line in enumerate(lines) if line.strip()]
    for n, char in enumerate(CONTROLS):
        lines[worded[(n * 7) % len(worded)]] += char
    return "\n".join(lines)


def test_control_bytes_are_cleaned_at_import_and_counted_per_file(tmp_path, capsys):
    body = "\n\n".join([GOOD.strip()] + ["EXT. YARD - DAY\n\nRain on the tin.\n\nBORIS\nStill raining."] * 8) + "\n"
    fountain = tmp_path / "01.fountain"
    fountain.write_text(dirty(body), encoding="utf-8")
    laid_out = tmp_path / "02.txt"
    laid_out.write_text(dirty(lay_out_text(body)), encoding="utf-8")
    fdx = tmp_path / "03.fdx"
    # XML 1.0 forbids C0 controls, so the ones an FDX can carry are DEL and C1 (CSI among them).
    fdx.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<FinalDraft><Content>'
        '<Paragraph Type="Scene Heading"><Text>INT. KITCHEN - NIGHT</Text></Paragraph>'
        '<Paragraph Type="Action"><Text>A kettle\u009b2J\u007f boils.</Text></Paragraph>'
        '<Paragraph Type="Character"><Text>ANNA\u0090</Text></Paragraph>'
        '<Paragraph Type="Dialogue"><Text>It\'s late.\u009d</Text></Paragraph>'
        "</Content></FinalDraft>\n",
        encoding="utf-8",
    )
    work = tmp_path / "work"
    code, out, err = run(capsys, str(fountain), str(laid_out), str(fdx), "--work", str(work))
    assert code == 0, err
    for number in (1, 2, 3):
        written = (work / "human" / f"{number:02d}.fountain").read_text(encoding="utf-8")
        assert not any(char in written for char in CONTROLS), number
    assert "It's late." in (work / "human" / "03.fountain").read_text(encoding="utf-8")
    lines = out.splitlines()
    # The report names the file, then how many control characters went from it (in a text laid
    # out as pages, a form feed starts a page).
    for source, count in ((fountain, len(CONTROLS)), (laid_out, len(CONTROLS) - 1), (fdx, 4)):
        head = next(i for i, line in enumerate(lines) if line.startswith(f"{source} -> "))
        assert f"control character x{count}" in lines[head + 1], (source, lines[head + 1])

    code, out, _ = run(capsys, str(fdx), "--work", str(tmp_path / "again"), "--json")
    assert code == 0 and json.loads(out)["files"][0]["removed"] == {"control character": 4}


def test_an_fdx_nested_thousands_deep_is_read_not_a_crash(tmp_path, capsys):
    depth = 5000
    inner = (
        '<Paragraph Type="Character"><Text>ANNA</Text></Paragraph>'
        '<Paragraph Type="Dialogue"><Text>Deep.</Text></Paragraph>'
    )
    body = "<Paragraph><DualDialogue>" * depth + inner + "</DualDialogue></Paragraph>" * depth
    source = tmp_path / "01.fdx"
    source.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<FinalDraft><Content>'
        '<Paragraph Type="Scene Heading"><Text>INT. WELL - NIGHT</Text></Paragraph>'
        f'{body}<Paragraph Type="Action"><Text>Water.</Text></Paragraph></Content></FinalDraft>\n',
        encoding="utf-8",
    )
    code, out, err = run(capsys, str(source), "--work", str(tmp_path / "work"))
    assert code == 0, err
    written = (tmp_path / "work" / "human" / "01.fountain").read_text(encoding="utf-8")
    assert written == "INT. WELL - NIGHT\n\nANNA\nDeep.\n\nWater.\n"
    assert "1 page" in out
