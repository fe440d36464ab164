"""The person as a reviewer: the engine's review protocol, answered through the app.

The engine awaits `reviewer.review(request)` exactly as it does with `--auto`'s
`AutoReviewer`; here the answer comes from a screen. The reviewer holds only a callable,
so it knows nothing of Textual and can be tested (or reused) without an app.

`ReviewRouting` is the app's half: where a request waits until the review screen may open.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ..model.review import Decision, ReviewRequest

REVIEW = "review"


class ScreenReviewer:
    """Implements `engine.review.Reviewer` by asking `ask(request)` and checking what it returns."""

    def __init__(self, ask: Callable[[ReviewRequest], Awaitable[Decision]]) -> None:
        self._ask = ask

    async def review(self, request: ReviewRequest) -> Decision:
        decision = await self._ask(request)
        if decision.by != "human":
            # Only a person answers through the app; a decision claiming otherwise is a bug here.
            raise ValueError(f"the app returned a decision made by {decision.by!r}, not by a human")
        return decision


class ReviewRouting:
    """The app's side of review: a request waits as `pending` until the review screen can open.

    A review never opens over a dialog, the help, the palette or the first-start hint: it
    would take their keys (and a second palette over it crashed the app). It waits, the
    header says a review waits, and it opens once they close (the main screen says when it is
    back on top).
    """

    pending: tuple[ReviewRequest, asyncio.Future[Decision]] | None
    _review_queued: bool = False

    def open_queued_review(self: Any) -> None:
        if self._review_queued and len(self.screen_stack) == 1:
            self.show_review()

    async def ask_review(self: Any, request: ReviewRequest) -> Decision:
        """The engine's review request, answered by a person on the review screen."""
        from .screens.review import ReviewScreen

        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self.pending = (request, future)
        self.update_bindings()
        try:
            if self.is_screen_installed(REVIEW):
                await self.get_screen(REVIEW, ReviewScreen).show(request)
            else:
                self.install_screen(ReviewScreen(request), REVIEW)
            self.show_review()
            return await future
        finally:
            self.pending = None
            # After the next paint: the screen the person returns to should show first.
            self.call_after_refresh(self.update_bindings)

    def can_open_review(self: Any) -> bool:
        from .screens.review import ReviewScreen

        return self.pending is not None and not isinstance(self.screen, ReviewScreen)

    def show_review(self: Any) -> None:
        from .screens.review import ReviewScreen

        if self.pending is None or not self.is_screen_installed(REVIEW):
            return
        screen = self.get_screen(REVIEW, ReviewScreen)
        if screen in self.screen_stack:
            return
        if len(self.screen_stack) > 1 or self.main.hinting:
            if not self._review_queued:
                self._review_queued = True
                what = "the hint" if self.main.hinting else "this"
                self.notify(f"A micro-step waits for your review; it opens when {what} closes.", timeout=5)
            return
        self._review_queued = False
        future = self.pending[1]

        def decided(decision: Decision | None) -> None:
            if decision is None:
                self.notify("The micro-step waits for your review: press v to return to it.", timeout=5)
            elif not future.done():
                future.set_result(decision)

        self.push_screen(screen, decided)

    def action_open_review(self: Any) -> None:
        self.show_review()
