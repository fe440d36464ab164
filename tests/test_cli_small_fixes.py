"""Small command-line truths: the offline backend refuses a model it would ignore; blame's example is a real note."""

from __future__ import annotations

import pytest

from skilltui.agents.offline import MOVES
from skilltui.cli import build_parser, main


@pytest.mark.parametrize("flag", [["--model", "nonsense"], ["--role-model", "loss=nonsense"]])
def test_a_model_with_the_offline_backend_is_refused_before_anything_is_written(tmp_path, make_work, capsys, flag):
    argv = ["train", "--auto", "--backend", "offline", "--work", str(make_work("kestrel", 2))]
    code = main([*argv, "--runs-dir", str(tmp_path / "runs"), *flag])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "offline backend calls no model" in err and flag[1] in err
    assert not (tmp_path / "runs").exists()


def test_the_estimate_still_prices_a_model_without_a_key(tmp_path, make_work, capsys):
    argv = ["train", "--backend", "offline", "--model", "claude-sonnet-5-5", "--estimate"]
    assert main([*argv, "--work", str(make_work("kestrel", 2)), "--runs-dir", str(tmp_path / "runs")]) == 0


def test_blames_help_names_a_note_the_demo_writes(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["blame", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    example = text.split("(e.g. ", 1)[1].split(",", 1)[0]
    assert example in {move.path for move in MOVES}


def test_the_consolidation_evidence_table_says_dash_not_none():
    from skilltui.engine.update.attribution import NoteStats
    from skilltui.engine.update.consolidation import Findings

    stats = {
        "scene/a.md": NoteStats("scene/a.md", 0, 0, None, 4, 0.5),
        "scene/b.md": NoteStats("scene/b.md", 3, 3, 0.41234, 1, None),
    }
    text = Findings(stats, ["scene/a.md"], [], 100, {}).evidence(4000)
    assert "None" not in text
    assert "| scene/a.md | 0 | - | 0.500 (4) |" in text and "| scene/b.md | 3 | 0.412 (3) | - |" in text
