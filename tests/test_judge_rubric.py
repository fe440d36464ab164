"""The judge's rubric: validated by the engine, blended only with --judge-weight, never fatal.

The anthropic path runs against tests/support/fakeapi.py: one judge answer carries a good rubric,
one a malformed one and one none, in the same run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.engine.loss import rubric
from tests.support.fakeapi import FakeAnthropic, Recorded, Reply, text
from tests.support.fakemodel import KEY, FakeModel, role_of
from tests.support.recorded import recorded

GOOD = {
    "scene_purpose": {"score": 0.8, "reason": "each scene turns the story the way the human one does"},
    "voice": {"score": 0.6, "reason": "Ada sounds like herself; Bruno's lines are flat"},
    "visual_action": {"score": 0.4, "reason": "action narrates what people feel"},
    "structure": {"score": 1.0, "reason": "scenes in order, cues and headings right"},
}


def fenced(value: object) -> str:
    return f"```json\n{json.dumps(value)}\n```\n"


def test_a_good_rubric_is_kept_and_blended_by_weight():
    report, scores = rubric.judged(f"## Wrong\n\nToo long.\n\n{fenced(GOOD)}", {"loss": 0.4, "scores": {}}, 0.5)
    assert report == "## Wrong\n\nToo long.\n" and "```" not in report
    assert scores["rubric"] == GOOD and scores["rubric_error"] is None
    assert scores["rubric_loss"] == pytest.approx(1 - (0.8 + 0.6 + 0.4 + 1.0) / 4)
    assert scores["engine_loss"] == 0.4
    assert scores["loss"] == pytest.approx(0.5 * 0.4 + 0.5 * 0.3)
    # Weight 0 records the rubric and leaves the engine's number alone.
    assert rubric.judged(fenced(GOOD), {"loss": 0.4, "scores": {}}, 0.0)[1]["loss"] == 0.4


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ("## Report without a rubric\n", "no rubric"),
        ('```json\n{"scene_purpose": 0.5,\n```\n', "not valid JSON"),
        (fenced([1, 2]), "not a JSON object"),
        (fenced({k: v for k, v in GOOD.items() if k != "voice"}), "missing voice"),
        (fenced({**GOOD, "pacing": {"score": 1, "reason": "x"}}), "unknown pacing"),
        (fenced({**GOOD, "voice": {"score": 1.5, "reason": "x"}}), "outside 0..1"),
        (fenced({**GOOD, "voice": {"score": "high", "reason": "x"}}), "not a number"),
        (fenced({**GOOD, "voice": {"score": True, "reason": "x"}}), "not a number"),
        (fenced({**GOOD, "voice": {"score": 0.5, "reason": "two\nlines"}}), "one line"),
        (fenced({**GOOD, "voice": {"score": 0.5}}), "one line"),
        (fenced({**GOOD, "voice": 0.5}), "not an object"),
    ],
)
def test_a_missing_or_malformed_rubric_falls_back_to_the_engine_loss(answer, error):
    _, scores = rubric.judged(answer, {"loss": 0.37, "scores": {}}, 0.9)
    assert scores["loss"] == scores["engine_loss"] == 0.37
    assert scores["rubric"] is None and error in scores["rubric_error"]


def train(runs: Path, works: list[Path], *extra: str) -> int:
    argv = ["train", "--auto", "--runs-dir", str(runs), "--run-id", "r"]
    for work in works:
        argv += ["--work", str(work)]
    return main(argv + list(extra))


def test_the_offline_judge_returns_a_deterministic_rubric(tmp_path, make_work):
    works = [make_work("heron", 4)]
    for runs in ("a", "b"):
        assert train(tmp_path / runs, works, "--steps", "2", "--judge-weight", "0.25") == 0
    seen = [[e for e in recorded(tmp_path / r / "r" / "events.jsonl") if e["kind"] == "loss"] for r in "ab"]
    assert [e["rubric"] for e in seen[0]] == [e["rubric"] for e in seen[1]]
    for event in seen[0]:
        assert rubric.validate(json.dumps(event["rubric"])) == event["rubric"]
        assert event["rubric_error"] is None
        assert event["loss"] == rubric.blend(event["engine_loss"], event["rubric"], 0.25)
    report = (tmp_path / "a" / "r" / "epoch0" / "step0" / "loss" / "heron.md").read_text()
    assert "## Judge rubric" in report and "Blended into the loss with weight 0.25" in report


def test_judge_weight_outside_0_to_1_is_refused_before_anything_is_written(tmp_path, make_work, capsys):
    assert train(tmp_path / "runs", [make_work("stork", 2)], "--judge-weight", "1.5") == 2
    assert "--judge-weight must be between 0" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


class RubricJudge(FakeModel):
    """The judge answers each work differently: a good rubric, a malformed one, none at all."""

    ANSWERS = {
        "kestrel": "## What went wrong\n\nDialogue became action.\n\n" + fenced(GOOD),
        "lantern": '## What went wrong\n\nScenes run together.\n\n```json\n{"voice": {"score": 2}}\n```\n',
        "meadow": "## What went wrong\n\nThe writer skipped the ending.\n",
    }

    def __call__(self, r: Recorded) -> Reply:
        if role_of(r) == "loss":
            work = re.search(r"# Loss report: `([^`]+)`,", r.last_user_text).group(1)
            return Reply([text(self.ANSWERS[work])])
        return super().__call__(r)


def test_the_anthropic_judge_rubric_good_malformed_and_missing(tmp_path, make_work, monkeypatch):
    works = [make_work("kestrel", 2), make_work("lantern", 2), make_work("meadow", 2)]
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        server.script = RubricJudge(tmp_path / "works")
        runs = tmp_path / "runs"
        assert train(runs, works, "--backend", "anthropic", "--steps", "1", "--judge-weight", "0.5") == 0
        assert server.failures == []
    run = runs / "r"
    losses = {e["work"]: e for e in recorded(run / "events.jsonl") if e["kind"] == "loss"}
    assert set(losses) == {"kestrel", "lantern", "meadow"}

    good = losses["kestrel"]
    assert good["rubric"] == GOOD and good["rubric_error"] is None
    assert good["loss"] == pytest.approx(0.5 * good["engine_loss"] + 0.5 * 0.3, abs=1e-4)
    malformed, missing = losses["lantern"], losses["meadow"]
    assert malformed["loss"] == malformed["engine_loss"] and "missing scene_purpose" in malformed["rubric_error"]
    assert missing["loss"] == missing["engine_loss"] and "no rubric" in missing["rubric_error"]

    for work, event in losses.items():
        saved = json.loads((run / "epoch0" / "step0" / "loss" / f"{work}.json").read_text())
        assert saved["loss"] == event["loss"] and saved["rubric_error"] == event["rubric_error"]
        report = (run / "epoch0" / "step0" / "loss" / f"{work}.md").read_text()
        assert "```json\n" not in report and "## Judge rubric" in report
    assert "None used: the rubric's fields are wrong" in (run / "epoch0" / "step0" / "loss" / "lantern.md").read_text()
