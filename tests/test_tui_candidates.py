"""The review screen with several candidates: `c` shows the next one, approve keeps the one shown."""

from __future__ import annotations

from skilltui.apps.train.app import TrainingApp
from skilltui.pool.notes import Pool
from tests.support.scripted import ScriptedBackend
from tests.support.tui import SIZE, decisions, screen_text, wait_for, wait_for_review


async def test_the_person_cycles_the_candidates_and_approve_keeps_the_one_shown(open_training):
    opened = open_training(("alpha",), candidates=2)
    backend = ScriptedBackend(by_candidate={1: ("add", "scene"), 2: ("add", "parenthetical")})
    app = TrainingApp(opened, backend, secrets=[], hint=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_for_review(pilot, app)
        assert [c.number for c in screen.request.candidates] == [1, 2]
        assert "candidate 1 of 2" in screen_text(app) and "+ scene/scene-headings.md" in screen_text(app)
        # Both candidates stand side by side, one row each; the one shown is marked.
        rows = [line for line in screen_text(app).splitlines() if "│  read " in line]
        assert len(rows) == 2 and "▸ 1" in rows[0] and "▸" not in rows[1] and " 2 " in rows[1]
        assert all("+1 ~0 -0" in row for row in rows)
        await pilot.press("c")
        await wait_for(pilot, lambda: "candidate 2 of 2" in screen_text(app))
        assert "+ dialogue/parentheticals.md" in screen_text(app)
        assert "+ scene/scene-headings.md" not in screen_text(app)
        rows = [line for line in screen_text(app).splitlines() if "│  read " in line]
        assert "▸" not in rows[0] and "▸ 2" in rows[1]
        await pilot.press("C")  # every candidate's diff side by side
        from skilltui.apps.train.screens.candidates import CandidatesScreen

        await wait_for(pilot, lambda: isinstance(app.screen, CandidatesScreen))
        text = screen_text(app)
        assert "candidate 1:" in text and "candidate 2:" in text
        assert "scene-headings.md" in text and "parentheticals.md" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, CandidatesScreen))
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
