"""The books of one Messages API call: its usage, its price and its transcript, turn by turn.

An agent call is many API requests (one per turn, and the retries of each); a batched call
is one result read back later (agents/batches.py). Both keep their books here, the same
way: each request is priced on its own by `pricing.cost_usd` and summed, a request that
broke off still counts what it had reported (it was billed), every record passes through
`redact`, and a failure carries what the call cost so far as `.partial`. Kept apart from the
backend's tool loop (anthropic_backend.py) and its retry policy (anthropic_requests.py) so
the accounting is written once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import pricing
from .base import BackendError, CallResult, FatalBackendError, Usage
from .redact import redact


@dataclass
class Call:
    """The accounting and the record of one `text` or `agent` call, built up turn by turn."""

    model: str
    secrets: list[str]
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0
    transcript: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0
    priced: bool = True

    def add_turn(self, message: Any) -> tuple[Usage, float | None]:
        u = message.usage
        turn = Usage(
            input_tokens=u.input_tokens or 0,
            output_tokens=u.output_tokens or 0,
            cache_write_tokens=u.cache_creation_input_tokens or 0,
            cache_read_tokens=u.cache_read_input_tokens or 0,
            cache_write_1h_tokens=getattr(getattr(u, "cache_creation", None), "ephemeral_1h_input_tokens", 0) or 0,
        )
        self.turns += 1
        return turn, self._charge(turn)

    def add_usage(self, turn: Usage, reported_cost: float | None = None) -> float | None:
        """Count one finished request of any API (the `openai` backend's turns). A price the
        provider reported itself (OpenRouter's `usage.cost`) is taken over the table's."""
        self.turns += 1
        return self._charge(turn, reported_cost)

    def add_unreported(self) -> None:
        """Count a finished request whose server reported no usage: the call's tokens and price are
        then not known, so the call has no price rather than a figure too low."""
        self.turns += 1
        self.priced = False
        self.cost_usd = None

    def add_partial(self, usage: Any, output_tokens: int | None) -> None:
        """Count what a request that broke off had already reported (its `message_start` usage,
        and the output count of a `message_delta` if one came): it was billed all the same."""
        turn = Usage(
            input_tokens=getattr(usage, "input_tokens", 0) or 0,
            output_tokens=(output_tokens if output_tokens is not None else getattr(usage, "output_tokens", 0)) or 0,
            cache_write_tokens=getattr(usage, "cache_creation_input_tokens", 0) or 0,
            cache_read_tokens=getattr(usage, "cache_read_input_tokens", 0) or 0,
        )
        cost = self._charge(turn)
        self.record({"event": "partial_usage", "turn": self.turns + 1, "usage": usage_dict(turn), "cost_usd": cost})

    def _charge(self, turn: Usage, reported_cost: float | None = None) -> float | None:
        """Count one request's usage and add its price; one unpriced request leaves the call unpriced."""
        self.usage.add(turn)
        cost = reported_cost if reported_cost is not None else pricing.cost_usd(self.model, turn)
        if cost is None:
            self.priced = False
            self.cost_usd = None
        elif self.priced:
            self.cost_usd = (self.cost_usd or 0.0) + cost
        return cost

    def record(self, entry: dict[str, Any]) -> None:
        self.transcript.append(redact(entry, self.secrets))

    def result(self, text: str) -> CallResult:
        self.record(
            {
                "event": "result",
                "text": text,
                "turns": self.turns,
                "usage": usage_dict(self.usage),
                "cost_usd": self.cost_usd,
            }
        )
        return CallResult(
            text=redact(text, self.secrets),
            usage=self.usage,
            cost_usd=self.cost_usd,
            model=self.model,
            transcript=self.transcript,
            turns=max(self.turns, 1),
        )

    def fail(self, message: str, *, fatal: bool = False) -> BackendError:
        """The error to raise, with what the call cost so far attached as `.partial`."""
        message = redact(message, self.secrets)
        self.record(
            {
                "event": "error",
                "message": message,
                "fatal": fatal,
                "turns": self.turns,
                "usage": usage_dict(self.usage),
                "cost_usd": self.cost_usd,
            }
        )
        error = (FatalBackendError if fatal else BackendError)(message)
        error.partial = CallResult(
            text="",
            usage=self.usage,
            cost_usd=self.cost_usd,
            model=self.model,
            transcript=self.transcript,
            turns=self.turns,
        )
        return error


def block_dict(block: Any) -> dict[str, Any]:
    """A content block as the API sent it, ready to be sent back unchanged."""
    if isinstance(block, dict):
        return block
    return block.to_dict(mode="json", exclude_unset=True, exclude_none=True)


def text_of(content: list[dict[str, Any]]) -> str:
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def usage_dict(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_1h_tokens": usage.cache_write_1h_tokens,
    }


def loggable(params: dict[str, Any]) -> dict[str, Any]:
    """The request as the transcript keeps it: everything sent, messages as they were at the start."""
    return {k: (list(v) if isinstance(v, list) else v) for k, v in params.items()}
