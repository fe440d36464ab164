"""The one small interface every backend implements.

A backend does two things:

- `text(request)`: a single text answer (diffuse, loss, reduce);
- `agent(request, sandbox)`: an agent that works with the file tools inside the sandbox's
  roots until it is done (forward, backward).

Both stream their output through `request.on_delta` as it arrives and return a
`CallResult` with the final text, the token usage, the cost when it is known and the full
transcript. The engine records the transcript and turns usage into events; the backend
never writes into the run on its own.

`request.context` carries the structured facts the prompt was rendered from (episode
range, paths). A model reads the prompt; the offline backend, which is a program and not
a model, reads the context. Both are given the same task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .tools import Sandbox

if TYPE_CHECKING:
    from .throttle import ThrottleView

ROLES = ("diffuse", "forward", "loss", "reduce", "backward")


@dataclass(frozen=True)
class Connection:
    """How a backend reaches Claude; every backend that talks to Anthropic takes the same one.

    `api_key`: None reads `ANTHROPIC_API_KEY` (Claude Code may use its own login instead);
    `base_url`: None is Anthropic's; `max_retries`: how many more times a failed request is
    tried; `timeout`: how long one HTTP request may take, in seconds.
    """

    api_key: str | None = None
    base_url: str | None = None
    max_retries: int = 6
    timeout: float = 600.0


class BackendError(Exception):
    """A call failed after whatever retries the backend does. Costs the work, not the run.

    `partial` holds what the call did before it failed (usage, cost, transcript), so a
    failed call is still recorded and still counts toward the run's spend.
    """

    partial: CallResult | None = None


class FatalBackendError(BackendError):
    """A failure no retry or other work can fix (bad key, unknown model): stop the run."""


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    # The part of cache_write_tokens written with the 1-hour life (billed at 2x input, not 1.25x).
    cache_write_1h_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_1h_tokens += other.cache_write_1h_tokens

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_write_tokens + self.cache_read_tokens


@dataclass
class Request:
    """One call: who is asking (`role`), what (`prompt`, `system`), with which model."""

    role: str
    prompt: str
    system: str = ""
    # Text shared, word for word, by every call of this role in a step (the pool's headers,
    # the note rules). Backends that cache send it ahead of `prompt` and mark it, so other
    # works read it from cache; the others may ignore it, since `prompt` repeats nothing of it.
    prefix: str = ""
    # Text that leads the prompt because other requests send it word for word (a work's
    # story in every step's forward, the human episodes a judge sees again next epoch).
    # `lead_ttl` is the cache life a mark on it needs: "1h" when the next re-read is more
    # than 5 minutes away, "5m" when sooner (or only to read what an earlier request
    # cached: a request reads the cache only up to a mark of its own), None when no other
    # request sends it, so a backend that caches marks it only where a mark is read.
    lead: str = ""
    lead_ttl: str | None = None
    # Whether other calls of this role will send `prefix` again soon (other works of the step).
    prefix_shared: bool = True
    # For agents: True once the task's outputs exist (every episode written, the commit
    # made), so the answer that follows is the last request and its tail is one-shot.
    finished: Callable[[], bool] | None = None
    model: str | None = None
    context: dict[str, Any] = field(default_factory=dict)
    on_delta: Callable[[str], None] = lambda text: None
    # (tool, path, error): error is None when the tool ran, and says why when the sandbox or the tool refused.
    on_tool: Callable[[str, str, str | None], None] = lambda tool, path, error: None
    max_turns: int = 40
    timeout: float = 1800.0


@dataclass
class CallResult:
    text: str
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    model: str | None = None
    transcript: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 1

    def spent(self) -> dict[str, Any]:
        """The tokens and the cost of the call, named as a `Call` event records them."""
        u = self.usage
        return {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cache_write_tokens": u.cache_write_tokens,
            "cache_read_tokens": u.cache_read_tokens,
            "cost_usd": self.cost_usd,
        }


class Backend(Protocol):
    """What the engine calls, and the capabilities it asks every backend about (`BackendBase` gives the defaults).

    The facts are read-only properties because the engine only reads them: a backend may hold
    one as a plain attribute, narrow its type (a model it always has) or work it out (the
    offline backend's determinism from its noise).
    """

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str | None:
        """The model of requests that name none."""
        ...

    @property
    def checks_models(self) -> bool:
        """The backend can check its models before a run (`preflight`); one that cannot is not asked."""
        ...

    @property
    def deterministic(self) -> bool:
        """The same request always gives the same answer: one validation pass is exact, no spread to measure."""
        ...

    @property
    def throttle(self) -> ThrottleView | None:
        """A backend that slows down when rate-limited says so through `throttle.on_change` (agents/throttle.py)."""
        ...

    async def text(self, request: Request) -> CallResult: ...

    async def agent(self, request: Request, sandbox: Sandbox) -> CallResult: ...

    def preflight(self, models: dict[str, str]) -> list[str]: ...

    def for_role(self, role: str) -> Backend: ...

    def name_for(self, role: str) -> str: ...


class BackendBase:
    """The capabilities a backend has unless it says otherwise; every backend derives from it.

    Declared here, with their defaults, so the engine reads `backend.deterministic` directly
    instead of guessing with getattr what a backend it has never seen can do.
    """

    name: str
    model: str | None
    throttle: ThrottleView | None = None
    checks_models: bool = False

    @property
    def deterministic(self) -> bool:
        """No backend is deterministic unless it says so: a model may answer the same request differently."""
        return False

    def preflight(self, models: dict[str, str]) -> list[str]:
        """Problems with `models` found before the run (one line each); none unless `checks_models`."""
        return []

    def for_role(self, role: str) -> Backend:
        """The backend that serves calls of `role`: itself, unless it routes roles (routing.RoleRouter)."""
        return self  # type: ignore[return-value]

    def name_for(self, role: str) -> str:
        """Which backend served a call of `role`: its own name, unless it routes roles."""
        return self.for_role(role).name


def try_backend(make: Callable[[], Backend], argv: list[str]) -> int:
    """`python -m skilltui.agents.<backend> "prompt"`: one streamed text call, then its tokens and cost.

    How a person checks a backend, its key and its model on their own before training with
    it; a bad key or setting ends in one line (exit 2), a failed call in one line (exit 1).
    """
    import asyncio
    import sys

    from ..core.errors import UsageError

    def show(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    prompt = " ".join(argv) or "Say hello in five words."
    try:
        result = asyncio.run(make().text(Request(role="diffuse", prompt=prompt, on_delta=show)))
    except (UsageError, BackendError) as exc:
        print(f"\nerror: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, UsageError) else 1
    cost = f"${result.cost_usd:.6f}" if result.cost_usd is not None else "no price"
    print(f"\n[{result.model}: {result.usage.total} tokens, {cost}]")
    return 0
