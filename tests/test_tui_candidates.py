"""The review screen with several candidates: `c` shows the next one, approve keeps the one shown."""

from __future__ import annotations

from scripted import ScriptedBackend
from test_tui_support import SIZE, decisions, screen_text, wait_for, wait_for_review

from skilltui.engine.pool import Pool
from skilltui.tui.app import TrainingApp


async def test_the_person_cycles_the_candidates_and_approve_keeps_the_one_shown(open_training):
    opened = open_training(("alpha",), candidates=2)
    backend = ScriptedBackend(by_candidate={1: ("add", "scene"), 2: ("add", "parenthetical")})
    app = TrainingApp(opened, backend, secrets=[], hint=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_for_review(pilot, app)
        assert [c.number for c in screen.request.candidates] == [1, 2]
        assert "candidate 1 of 2" in screen_text(app) and "+ scene/scene-headings.md" in screen_text(app)
        await pilot.press("c")
        await wait_for(pilot, lambda: "candidate 2 of 2" in screen_text(app))
        assert "+ dialogue/parentheticals.md" in screen_text(app)
        assert "+ scene/scene-headings.md" not in screen_text(app)
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
    (decision,) = decisions(opened)
    second = screen.request.candidates[1]
    assert (decision["decision"], decision["by"], decision["attempt"]) == ("approve", "human", second.attempt)
    pool = Pool(opened.run.memory)
    assert pool.head() == decision["after"]  # the candidate shown, kept with its provenance trailers
    assert pool.git("rev-parse", "HEAD^{tree}") == pool.git("rev-parse", f"{second.after}^{{tree}}")
    assert pool.note_paths() == ["dialogue/parentheticals.md"]
    assert any("candidates/0-0-1/1" in names for names in pool.kept_refs().values())
