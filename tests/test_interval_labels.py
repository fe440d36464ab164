"""A gate interval is labelled at the level it was computed at, in every view.

`GateVerdict.confidence` is the whole decision's (`--gate-confidence`); each look's interval
is wider, at Pocock's nominal level for the looks and Bonferroni's for the candidates
(`gate.Rule.nominal`). A view that printed `confidence` beside `low`/`high` called a 95.4%
interval a 90% one. These drive the gate's real rule and read each view's own text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltui.apps.train.screens.candidates import figures
from skilltui.apps.train.screens.review import gate_line
from skilltui.engine.update.micro_step import gate_figures
from skilltui.engine.update.rejected import rejected_line
from skilltui.engine.validation.gate import Rule, judge
from skilltui.model.commits import MicroStepRecord
from skilltui.model.review import GateVerdict, ReviewRequest, delta_text
from skilltui.model.trailers import val_value


def verdict(rule: Rule) -> GateVerdict:
    """A kept verdict of the real rule: three passes a side of one work, a clear gain."""
    parent = {("held", k): v for k, v in enumerate([[0.41, 0.42], [0.42, 0.41], [0.40, 0.41]], 1)}
    candidate = {("held", k): v for k, v in enumerate([[0.37, 0.36], [0.38, 0.37], [0.36, 0.38]], 1)}
    return judge(parent, candidate, rule, passes_left=False).verdict


def review_text(v: GateVerdict) -> str:
    request = ReviewRequest(Path("r"), 0, 0, 1, 1, "e0s0 micro 1", [], "a", "b", "s", "", "", {}, True, [], gate=v)
    line = gate_line(request)
    assert line is not None
    return line.plain


def rejected_text(v: GateVerdict) -> str:
    record = MicroStepRecord(
        0, 0, 1, 1, "e0s0 micro 1", Path("g1"), decision="rollback", by="auto", gate=gate_figures(v)
    )
    return rejected_line(record)


def candidates_text(v: GateVerdict) -> str:
    return figures(v).plain


VIEWS = {
    "review screen": review_text,
    "commit trailer": val_value,
    "rejected list": rejected_text,
    "candidates screen": candidates_text,
}


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize(("rule", "label"), [(Rule(0.9, looks=3), "95.4%"), (Rule(0.9, looks=3, family=3), "98.6%")])
def test_every_view_labels_a_gate_interval_at_the_level_it_was_computed_at(view: str, rule: Rule, label: str) -> None:
    v = verdict(rule)
    assert v.confidence == 0.9 and v.level == pytest.approx(rule.nominal)
    text = VIEWS[view](v)
    assert f"[{v.low:+.3f}, {v.high:+.3f}] at {label}" in text
    assert "at 90%" not in text


def test_the_report_and_the_review_screen_share_one_label() -> None:
    v = verdict(Rule(0.9, looks=3))
    assert delta_text(v.delta or 0.0, v.low, v.high, v.level, v.n) in review_text(v)


def test_a_verdict_recorded_before_its_level_was_kept_claims_no_level() -> None:
    old = GateVerdict(0.4, 0.37, 1, "keep", "gate: better", n=6, delta=-0.03, low=-0.05, high=-0.01, confidence=0.9)
    for view in VIEWS.values():
        text = view(old)
        assert "[-0.050, -0.010] (level not recorded)" in text and "at 90%" not in text
