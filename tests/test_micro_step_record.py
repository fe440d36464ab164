"""One micro-step, one record: the history, the backward prompt, its rejected updates and the report
read a run's micro-steps into the same `MicroStepRecord` and say the same of each.

The run has what makes readers drift apart when each keeps its own idea of a micro-step:
an update the gate rolled back (a rejected update the next prompt lists) and one it kept.
"""

from __future__ import annotations

from skilltui.apps.report.build import micro_steps as report_micro_steps
from skilltui.engine.update.feedback import feedback_text, past_micro_steps
from skilltui.engine.update.rejected import rejected_updates
from skilltui.model.commits import MicroStepRecord
from skilltui.model.parse import read_run
from skilltui.model.view import RunView
from skilltui.runs.records import load_history
from skilltui.runs.status import status_of
from skilltui.store.run_folder import Run
from tests.support.scripted import ScriptedBackend, seed_pool
from tests.support.validation import held_out_work, train_with


def _facts(m: MicroStepRecord) -> tuple:
    return (m.epoch, m.step, m.group, m.attempt, m.decision, m.by, m.subject, m.message, m.after)


def test_history_prompt_rejected_updates_and_report_read_one_record_of_each_micro_step(tmp_path, make_work):
    works = [make_work("kestrel", 4), make_work("lantern", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    donor = seed_pool(tmp_path / "donor", "dialogue")
    backend = ScriptedBackend(script=[("remove", "dialogue/dialogue-blocks.md"), ("add", "scene")])
    assert train_with(backend, runs, works, [val], "--steps", "2", "--gate", "--init-pool", str(donor)) == 0
    run = Run(runs / "r")
    record = read_run(run.events_path)
    view = RunView().fold(record.events)

    history = [c.micro for c in load_history(run).commits if c.micro is not None]
    prompt = past_micro_steps(run)
    rejected = rejected_updates(run)
    page = [m.micro for m in report_micro_steps(run, record.events, status_of(run, view, record), {})]

    for found in (history, prompt, rejected, page):
        assert found and all(type(m) is MicroStepRecord for m in found)
    # Two micro-steps, one attempt each: the first rolled back by the gate, the second kept.
    assert sorted((m.step, m.decision, m.by) for m in history) == [(0, "rollback", "auto"), (1, "approve", "auto")]
    assert all(m.subject == f"train {m.label}" and m.headline.startswith("scripted: ") for m in history)
    assert all(len(m.after) == 40 for m in history)
    assert sorted(map(_facts, prompt)) == sorted(map(_facts, history)) == sorted(map(_facts, page))
    assert [_facts(m) for m in rejected] == [_facts(m) for m in history if m.decision == "rollback"]
    # The run's own label where the reader has the events, the same in each.
    assert {m.label for m in prompt} == {m.label for m in history} == {m.label for m in page}
    assert {m.label for m in history} == {"epoch 0 step 0 micro 1/1", "epoch 0 step 1 micro 1/1"}
    # What each reader adds from its own source is said in the prompt as it was recorded.
    text = feedback_text(run)
    for m in prompt:
        assert f'- {m.label}: "{m.headline}"' in text
