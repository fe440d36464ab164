"""The person as a reviewer: the engine's review protocol, answered through the app.

The engine awaits `reviewer.review(request)` exactly as it does with `--auto`'s
`AutoReviewer`; here the answer comes from a screen. `ScreenReviewer` holds only a callable,
so it knows nothing of Textual and can be tested (or reused) without an app.

`ReviewCoordinator` is the app's one owner of a review, an object the app holds rather than
a part of it: it opens the review screen when it may, and resolves the engine's question
with the person's answer. Which review waits is the run's view (`RunView.pending_review`,
folded from the `review_requested` the engine recorded): the coordinator keeps no copy of
it, only the future for the one question it was asked, keyed by (epoch, step, group,
attempt), so an answer about any other micro-step (an earlier attempt's, a screen left open
over a rerun) changes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from textual.app import App

from ...drivers.messages import key_of
from ...model import events as ev
from ...model.at import At
from ...model.review import CandidateView, Decision, ReviewRequest
from ...model.view import RunView

REVIEW = "review"


def nothing_to_review(request: ReviewRequest) -> bool:
    """An epoch's consolidation whose commit (and every candidate's) adds, changes and removes no note."""
    shown: list[ReviewRequest | CandidateView] = [request, *request.candidates]
    return request.label.endswith(" consolidation") and not any(r.added or r.changed or r.removed for r in shown)


class ScreenReviewer:
    """Implements `model.review.Reviewer` by asking `ask(request)` and checking what it returns."""

    def __init__(self, ask: Callable[[ReviewRequest], Awaitable[Decision]]) -> None:
        self._ask = ask

    async def review(self, request: ReviewRequest) -> Decision:
        if nothing_to_review(request):
            # An epoch's consolidation that changed no note: no diff to judge, so no reason to stop.
            return Decision("approve", "auto", reason="the consolidation changed no note: nothing to review")
        decision = await self._ask(request)
        if decision.by != "human":
            # Only a person answers through the app; a decision claiming otherwise is a bug here.
            raise ValueError(f"the app returned a decision made by {decision.by!r}, not by a human")
        return decision


class ReviewCoordinator:
    """Where a review request waits until the review screen can open, and where its answer goes.

    A review never opens over a dialog, the help, the palette or the first-start hint: it
    would take their keys (and a second palette over it would crash the app). It waits, the
    header says a review waits, and it opens once they close (the app says when its main
    screen is back on top: `open_queued`).

    `hinting` says whether the first-start hint shows; `changed` is called when what the key
    bar offers may have changed (a review began or ended waiting for the person).
    """

    def __init__(self, app: App[Any], view: RunView, *, hinting: Callable[[], bool], changed: Callable[[], None]):
        self._app, self._view = app, view
        self._hinting, self._changed = hinting, changed
        self._answer: tuple[At, asyncio.Future[Decision]] | None = None
        self._queued = False  # the person was told a review waits under what they are reading

    @property
    def asking(self) -> ev.ReviewRequested | None:
        """The review that waits for the person: the view's, while its answer is still to give.

        None between an answer and the engine's record of it, so the key bar and the palette
        do not offer a review already answered.
        """
        waiting = self._view.pending_review
        if waiting is None or self._answer is None or self._answer[0] != waiting.key or self._answer[1].done():
            return None
        return waiting

    async def ask(self, request: ReviewRequest) -> Decision:
        """The engine's review request, answered by a person on the review screen."""
        from .screens.review import ReviewScreen

        key = key_of(request)
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._answer = (key, future)
        self._changed()
        app = self._app
        try:
            if app.is_screen_installed(REVIEW):
                await app.get_screen(REVIEW, ReviewScreen).show(request)
            else:
                app.install_screen(ReviewScreen(request), REVIEW)
            self.show()
            return await future
        finally:
            if self._answer is not None and self._answer[1] is future:
                self._answer = None
            # After the next paint: the screen the person returns to should show first.
            app.call_after_refresh(self._changed)

    def answer(self, key: At, decision: Decision) -> bool:
        """Give `decision` for the micro-step `key`; False, and nothing happens, unless that review waits."""
        waiting = self.asking
        if waiting is None or waiting.key != key or self._answer is None:
            return False
        self._answer[1].set_result(decision)
        return True

    def can_open(self) -> bool:
        from .screens.review import ReviewScreen

        return self.asking is not None and not isinstance(self._app.screen, ReviewScreen)

    def open_queued(self) -> None:
        if self._queued and len(self._app.screen_stack) == 1:
            self.show()

    def show(self) -> None:
        """Open the review screen on the review that waits, or say it waits under what is open."""
        from .screens.review import ReviewScreen

        app = self._app
        waiting = self.asking
        if waiting is None or not app.is_screen_installed(REVIEW):
            return
        screen = app.get_screen(REVIEW, ReviewScreen)
        if key_of(screen.request) != waiting.key or screen in app.screen_stack:
            return  # still showing an earlier review (`ask` shows this one next), or open already
        if len(app.screen_stack) > 1 or self._hinting():
            if not self._queued:
                self._queued = True
                what = "the hint" if self._hinting() else "this"
                app.notify(f"A micro-step waits for your review; it opens when {what} closes.", timeout=5)
            return
        self._queued = False
        key = waiting.key

        def decided(decision: Decision | None) -> None:
            if decision is None:
                app.notify("The micro-step waits for your review: press v to return to it.", timeout=5)
            else:
                self.answer(key, decision)

        app.push_screen(screen, decided)
