"""A stage's context: frozen, with the mutable books in `Calls` and the leakage guard in `TrainingWorks`."""

from __future__ import annotations

import dataclasses

import pytest

from skilltui.engine.data.works import load_work
from skilltui.engine.notes import leakage
from skilltui.engine.stages.context import Context, TrainingWorks


def test_the_leakage_guard_is_built_once_per_run(make_work, monkeypatch):
    """It reads every episode of every training work: the second micro-step must not pay for it again."""
    built = []
    real = leakage.Lexicon.from_works

    def counting(works):
        built.append(len(works))
        return real(works)

    monkeypatch.setattr(leakage.Lexicon, "from_works", staticmethod(counting))
    training = TrainingWorks([load_work(make_work("sable-quay", 2))])
    assert training.lexicon is training.lexicon
    assert built == [1]


def test_a_context_cannot_be_changed_under_a_running_stage():
    """What changes while a run trains has one owner (the spend: `Calls`); the context itself is frozen."""
    assert dataclasses.fields(Context)  # a dataclass
    with pytest.raises(dataclasses.FrozenInstanceError):
        object.__new__(Context).__setattr__("run", None)
