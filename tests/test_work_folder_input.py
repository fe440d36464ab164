"""What a work folder's user is told: a file given as a work, and an episode file training leaves out."""

from __future__ import annotations

from skilltui.cli import main
from tests.support.recorded import recorded
from tests.support.works import train_works


def test_a_file_given_as_a_work_folder_says_it_is_a_file(tmp_path, capsys):
    script = tmp_path / "pilot.fountain"
    script.write_text("INT. X - DAY\n", encoding="utf-8")
    code = main(["train", "--auto", "--work", str(script), "--runs-dir", str(tmp_path / "runs")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "is a file, not a folder" in err and "does not exist" not in err
    assert not (tmp_path / "runs").exists()


def test_a_fountain_file_not_named_by_its_number_is_named_when_training_starts(tmp_path, make_work, capsys):
    work = make_work("kestrel", 2)
    (work / "human" / "notanumber.fountain").write_text("INT. X - DAY\n\nA line.\n", encoding="utf-8")
    (work / "human" / "notes.txt").write_text("not a script\n", encoding="utf-8")  # not a .fountain: no word
    runs = tmp_path / "runs"
    assert train_works(runs, [work]) == 0
    warnings = [e["message"] for e in recorded(runs / "r" / "events.jsonl") if e["kind"] == "warning"]
    said = [w for w in warnings if "notanumber.fountain" in w]
    assert len(said) == 1 and said[0].startswith("kestrel: human/notanumber.fountain left out")
    assert not any("notes.txt" in w for w in warnings)
    assert "notanumber.fountain" in capsys.readouterr().out  # the headless console prints it too


def test_pairs_in_order_reads_as_a_count():
    from skilltui.engine.loss.scores import pairs_text

    assert pairs_text(1.0, 3) == "1 of 3"
    assert pairs_text(1.4, 3) == "1.4 of 3"
    assert pairs_text(0.0, 0) == "0 of 0"
