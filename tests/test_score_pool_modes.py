"""The score pool and the inline mode the test suite scores in give the same scores.

The suite scores inline (`SKILLTUI_SCORING=inline`, tests/conftest.py) so that it does not
start workers for every run; what it proves about losses holds for the product only if the
pool, which the product uses, returns exactly what inline scoring does.
"""

from __future__ import annotations

import random

import pytest

from skilltui.agents.offline import MOVES, write_episode
from skilltui.engine.data.diffuse import noise_work, story_episodes
from skilltui.engine.data.works import load_work
from skilltui.engine.loss import score_pool
from tests.support.works import make_episode, make_varied_episode


def pairs(make_work) -> list[tuple[dict[int, str | None], dict[int, str]]]:
    """(written, human) episodes of a few kinds: the offline writer's, varied ones, a missing one, an empty one."""
    work = load_work(make_work("quill", 3, story=False))
    human = {n: work.episode_text(n) for n in work.episodes}
    retold = story_episodes(noise_work(work, seed=2, noise=0.5))
    written = {n: write_episode(prose, set(MOVES)) for n, prose in retold.items()}
    rng = random.Random(7)
    varied = {n: make_varied_episode(rng, ["ANA", "BO"]) for n in human}
    return [
        (written, human),
        (varied, human),
        ({**written, 2: None}, human),
        ({1: "", 2: make_episode(rng, ["CY"]), 3: human[3]}, human),
    ]


@pytest.mark.subprocess
async def test_the_pool_and_inline_scoring_give_identical_scores(make_work, pooled_scoring, monkeypatch):
    cases = pairs(make_work)
    pooled = [await score_pool.score_in_worker(written, human) for written, human in cases]
    assert score_pool._POOL is not None  # the pool did the scoring
    monkeypatch.setenv(score_pool.MODE_VARIABLE, "inline")
    monkeypatch.setattr(score_pool, "pool", lambda: pytest.fail("inline scoring reached the pool"))
    inline = [await score_pool.score_in_worker(written, human) for written, human in cases]
    assert inline == pooled
    assert len({repr(result) for result in pooled}) == len(cases)  # four different scorings, not one repeated


async def test_inline_scoring_starts_no_worker(make_work, monkeypatch):
    monkeypatch.setattr(score_pool, "pool", lambda: pytest.fail("inline scoring reached the pool"))
    [(written, human), *_] = pairs(make_work)
    score_pool.start()
    assert (await score_pool.score_in_worker(human, human))["loss"] == 0.0
    assert (await score_pool.score_in_worker(written, human))["loss"] > 0.0
