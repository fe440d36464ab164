"""The one coordinate of a place in a run (`model/at.py`): the shapes it reads and writes are
the ones already on disk and on the pipe, so a run recorded before it still reads the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.drivers.messages import Answer, line_of, parse_for_trainer
from skilltui.model import events as ev
from skilltui.model.at import At, BadPlace
from skilltui.model.parse import parse_event


def test_an_events_json_round_trips_through_at_unchanged(make_work, tmp_path: Path):
    """Every line of a real run, its place taken apart into an `At` and written back, is the same line.

    The run has what names places most ways: stages of works and of groups, two candidates
    per micro-step (attempts), the gate's validation points before and after each.
    """
    argv = ["train", "--auto", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r", "--steps", "2"]
    argv += ["--work", str(make_work("sable-quay", 4)), "--work", str(make_work("tin-orchard", 4))]
    argv += ["--gate", "--candidates", "2", "--val-work", str(make_work("held-out", 2))]
    assert main(argv) == 0
    lines = (tmp_path / "runs" / "r" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    placed = 0
    for line in lines:
        data = json.loads(line)
        if not isinstance(data.get("epoch"), int) or not isinstance(data.get("step"), int):
            continue
        at = At.of(data)
        placed_keys = ("epoch", "step", "group", "attempt", "work")
        rebuilt = {k: (at.fields().get(k) if k in placed_keys else v) for k, v in data.items()}
        assert json.dumps(rebuilt, ensure_ascii=False) == line
        event = parse_event(data)
        assert At.of(event) == at
        if isinstance(event, ev.AtStep):
            assert event.at == at
        placed += 1
    assert placed > 20  # the run has stages, losses, micro-steps, decisions to check


def test_a_review_key_crosses_the_pipe_as_the_four_numbers_it_always_was():
    from skilltui.model.review import Decision

    answer = Answer(key=At(0, 1, 2, 3), decision=Decision(action="approve", by="human"))
    line = line_of(answer)
    assert json.loads(line)["key"] == [0, 1, 2, 3]
    back = parse_for_trainer(line)
    assert isinstance(back, Answer) and back.key == At(0, 1, 2, 3)


def test_places_order_as_the_run_goes():
    places = [At(1, 0), At(0, 1, 0, 1), At(0, 1), At(0, 0, 1, 0), At(0, 1, 0, 0), At(0, 0)]
    assert sorted(places) == [At(0, 0), At(0, 0, 1, 0), At(0, 1), At(0, 1, 0, 0), At(0, 1, 0, 1), At(1, 0)]
    assert At(0, 1, 0, 1).step_key == (0, 1) and At(0, 1, 0, 1, work="w").micro == At(0, 1, 0, 1)


@pytest.mark.parametrize(
    ("at", "kind", "text"),
    [
        (At(0, 1), "step", "e0-s1"),
        (At(2, 0, 1, 3), "micro", "e2-s0-g1-a3-micro"),
        (At(0, 0, 0, 0), "before", "e0-s0-g0-a0-before"),
    ],
)
def test_validation_point_ids_keep_their_names_on_disk(at: At, kind: str, text: str):
    assert at.point_id(kind) == text
    assert At.parse_point_id(text) == (at, kind)


def test_a_kept_refs_name_is_the_attempts_slug():
    assert At(0, 3, 1, 2).slug == "e0-s3-g1-a2" and At(0, 3, 1).slug == "e0-s3-g1"


def test_a_trailer_reads_back_to_its_attempt():
    assert At(0, 3, 1, 2).trailer() == "e0 s3 g1 a2"
    assert At.parse_trailer("e0 s3 g1 a2") == At(0, 3, 1, 2)


@pytest.mark.parametrize("text", ["e0", "e0-s1-x", "s1-e0", ""])
def test_a_malformed_point_id_is_refused_with_what_it_is(text: str):
    with pytest.raises(BadPlace, match="validation point"):
        At.parse_point_id(text)


def test_a_place_without_a_step_is_refused():
    with pytest.raises(BadPlace):
        At.of({"epoch": 0})
    with pytest.raises(ValueError, match="not inside a micro-step"):
        _ = At(0, 1).micro_key
