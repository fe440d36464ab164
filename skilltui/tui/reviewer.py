"""The person as a reviewer: the engine's review protocol, answered through the app.

The engine awaits `reviewer.review(request)` exactly as it does with `--auto`'s
`AutoReviewer`; here the answer comes from a screen. The reviewer holds only a callable,
so it knows nothing of Textual and can be tested (or reused) without an app.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..engine.review import Decision, ReviewRequest


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
