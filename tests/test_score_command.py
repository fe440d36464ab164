"""`skilltui score`: the loss of any pair of scripts, as a user checks one by hand."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.engine.loss.scores import WEIGHTS, score_step
from tests.support.corruptions import drop_words, reverse_scenes

HUMAN = Path(str(resources.files("skilltui") / "examples" / "night-oven" / "human" / "01.fountain"))


def score(capsys, human: Path, written: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["score", "--human", str(human), "--written", str(written), *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_score_prints_the_loss_and_every_part(tmp_path, capsys):
    code, out, err = score(capsys, HUMAN, HUMAN)
    assert code == 0 and err == ""
    assert out.splitlines()[0].startswith("loss 0.000")
    for name in WEIGHTS:
        assert f"  {name} " in out


def test_score_json_is_the_engine_loss_and_ranks_like_a_screenwriter(tmp_path, capsys):
    human = HUMAN.read_text(encoding="utf-8")
    results = {}
    for name, text in {"small": drop_words(human), "reversed": reverse_scenes(human)}.items():
        written = tmp_path / f"{name}.fountain"
        written.write_text(text, encoding="utf-8")
        code, out, _ = score(capsys, HUMAN, written, "--json")
        assert code == 0
        results[name] = json.loads(out)
        expected = score_step({1: text}, {1: human})
        assert results[name]["loss"] == expected["loss"] and results[name]["scores"] == expected["scores"]
    assert results["small"]["loss"] + 0.1 <= results["reversed"]["loss"]
    assert results["reversed"]["scores"]["order"] == 0.0


@pytest.mark.parametrize("which", ["--human", "--written"])
def test_a_missing_file_is_one_line_and_exit_2(tmp_path, capsys, which):
    missing = tmp_path / "nope.fountain"
    args = (missing, HUMAN) if which == "--human" else (HUMAN, missing)
    code, out, err = score(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"{which} {missing}: no such file" in err


def test_a_folder_or_non_utf8_file_is_one_line_and_exit_2(tmp_path, capsys):
    code, _, err = score(capsys, tmp_path, HUMAN)
    assert code == 2 and err.count("\n") == 1 and "is a folder" in err
    latin = tmp_path / "latin1.fountain"
    latin.write_bytes("INT. CAFÉ - DAY\n\nÉLISE\nBonjour.\n".encode("latin-1"))
    code, out, err = score(capsys, HUMAN, latin)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "is not UTF-8 text" in err and "Traceback" not in err
