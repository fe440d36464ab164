"""The `anthropic` backend: every stage of training run by Claude through the Messages API.

`text(request)` answers diffuse, loss and reduce with one streamed answer; `agent(request,
sandbox)` runs forward (the writer) and backward (the pool editor) as a tool-use loop over
the project's file tools, so the model touches disk only through the `Sandbox` and its
roots. Select it with `--backend anthropic` (the default when `ANTHROPIC_API_KEY` is set).

What it owns, and why:

- Streaming: text deltas go to `request.on_delta` as they arrive, so the app shows the
  writer and the judge live. Tool calls go to `request.on_tool`.
- Tools: Anthropic's text editor tool (`text_editor_20250728`, called
  `str_replace_based_edit_tool`: view / create / str_replace / insert), declared as the
  schema-less tool the API defines. Claude models are trained on exactly that tool, its
  command names and its argument names (including `insert_text`), so they use it with
  fewer malformed calls than any look-alike JSON-schema tool; the API adds no server-side
  behaviour to it, the calls still come back to us as ordinary `tool_use` blocks and run in
  our sandbox. A `delete_file` tool covers what the editor lacks, `commit` (backward
  only) records the micro-step, and `pool_log` / `pool_show` (backward only) read the
  pool's history. A refused call goes back as an `is_error` tool result the
  model can act on; it never ends the call.
- Caching: marks go only where a later request reads them (`cache_policy.py`): the
  system prompt and tools, a re-read `lead` (a work's story, a judge's human episodes),
  the pool listing shared by a step's works, and an agent's latest turn; never a
  one-shot prompt or the tail of an agent whose task is done, never a prefix under the
  model's minimum cacheable length; the 1-hour life only where the re-read is later.
- Accounting (`anthropic_call.py`): each API request's usage (input, output, cache writes, cache reads) is
  priced on its own by `pricing.cost_usd` and summed into the call's `CallResult`. An
  unknown model has `cost_usd=None`: tokens, never an invented price.
- Failures (`anthropic_requests.py`): the SDK's own retries are off (`max_retries=0`) so the policy is one place:
  429, 529, 5xx, overloaded/api errors inside a stream and dropped connections are
  retried with capped exponential backoff that honours `retry-after`; 401/403 (the key)
  402 (billing) and 404 (the model) raise `FatalBackendError` with one clear line, because
  no other work could succeed either; anything else raises `BackendError`, which costs
  only that work. The per-call timeout and the turn bound also raise `BackendError`.
  Every raised error carries `.partial`, a `CallResult` with the usage, cost and
  transcript up to the failure, because a failed call was still paid for; a stream cut
  off mid-answer counts the usage its `message_start` had reported. Retries stop after
  `max_retries`, or when the time one request lost to failures (its waits, and the failed
  attempts that brought nothing back) would pass `max_retry_wait` seconds.
- Records: `CallResult.transcript` is the whole conversation as JSON-able dicts (request,
  each response's content blocks, each tool call and result, retries, usage and cost),
  passed through `redact` so neither the key nor anything shaped like one is in it. The
  backend never writes files; the engine stores the transcript in the run.

Assistant turns are echoed back exactly as received, thinking blocks and signatures
included: newer models put thinking blocks between tool calls and the API rejects a
conversation whose thinking was altered.

Try it on its own (needs a key or the fake server from the test suite):
`python -m skilltui.agents.anthropic_backend "Say hello"`.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import anthropic

from ..core.errors import UsageError
from . import cache_policy
from .anthropic_call import Call, block_dict, loggable, text_of
from .anthropic_requests import RetryPolicy, StreamedRequests
from .base import BackendBase, CallResult, Connection, Request, try_backend
from .cache_policy import Marks, opening
from .pool_history import LOG_DESCRIPTION, LOG_SCHEMA, SHOW_DESCRIPTION, SHOW_SCHEMA
from .redact import redact
from .throttle import Throttle
from .tool_calls import ToolContext, run_tool
from .tools import MAX_VIEW_CHARS, Sandbox

DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_MAX_TOKENS = 32_000
KEY_HELP = (
    "--backend anthropic needs an API key: export ANTHROPIC_API_KEY=sk-ant-... "
    "(create one at https://console.anthropic.com/settings/keys), or use --backend offline"
)

EDITOR_TOOL_NAME = "str_replace_based_edit_tool"
EDITOR_TOOL: dict[str, Any] = {
    "type": "text_editor_20250728",
    "name": EDITOR_TOOL_NAME,
    "max_characters": MAX_VIEW_CHARS,
}
DELETE_TOOL: dict[str, Any] = {
    "name": "delete_file",
    "description": (
        "Delete one file you are allowed to write, for example a note that should no longer "
        "exist. Folders cannot be deleted. The text editor tool cannot delete; use this."
    ),
    "input_schema": {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "The file to delete."}},
        "required": ["path"],
    },
}
COMMIT_TOOL: dict[str, Any] = {
    "name": "commit",
    "description": (
        "Record all your edits as exactly one git commit with this message. Call it once, "
        "after your last edit; the message says what changed and why. With no edits it "
        "records an empty commit, which means nothing was worth changing."
    ),
    "input_schema": {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "The commit message."}},
        "required": ["message"],
    },
}
HISTORY_TOOLS: list[dict[str, Any]] = [
    {"name": "pool_log", "description": LOG_DESCRIPTION, "input_schema": LOG_SCHEMA},
    {"name": "pool_show", "description": SHOW_DESCRIPTION, "input_schema": SHOW_SCHEMA},
]
# Tool name -> sandbox command; None means "the command is in the input".
_COMMANDS: dict[str, str | None] = {
    EDITOR_TOOL_NAME: None,
    "delete_file": "delete",
    "commit": "commit",
    "pool_log": "pool_log",
    "pool_show": "pool_show",
}


class AnthropicBackend(BackendBase, StreamedRequests):
    """Claude through the Messages API. One instance serves every role and every work.

    `model` is the default for calls whose `request.model` is None; `connection` says how to
    reach the API (key, endpoint, retries, request timeout). `backoff_base` and
    `backoff_cap` (seconds) shape the retry waits: attempt n waits about
    `min(cap, base * 2**n)`, with jitter so concurrent works do not retry in lockstep.
    Retries stop after `max_retries`, or sooner when the time one request lost to failures
    (its waits, and the failed attempts that brought nothing back) would pass `max_retry_wait`
    seconds.
    """

    name = "anthropic"
    model: str  # the default model when a request names none
    throttle: Throttle  # StreamedRequests holds its calls by it, so never None here

    def __init__(
        self,
        model: str | None = None,
        connection: Connection | None = None,
        *,
        backoff_base: float = 1.0,
        backoff_cap: float = 60.0,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        max_retry_wait: float = 300.0,
    ) -> None:
        connection = connection or Connection()
        key = (connection.api_key or os.environ.get("ANTHROPIC_API_KEY") or "").strip()
        if not key:
            raise UsageError(KEY_HELP)
        self.model = model or DEFAULT_MODEL
        self.retry = RetryPolicy(connection.max_retries, backoff_base, backoff_cap, max_retry_wait)
        self.timeout = connection.timeout
        self.max_tokens = max_tokens
        self._api_key = key
        self._base_url = connection.base_url
        self.throttle = Throttle()

    @property
    def _secrets(self) -> list[str]:
        return [self._api_key]

    def _client(self) -> anthropic.AsyncAnthropic:
        """A client for one call. Made per call, inside the running loop, because an async
        HTTP pool belongs to the event loop that opened it and the engine may run several."""
        return anthropic.AsyncAnthropic(
            api_key=self._api_key, base_url=self._base_url, max_retries=0, timeout=self.timeout
        )

    # -- the two entry points -------------------------------------------------------------------

    async def text(self, request: Request) -> CallResult:
        """One streamed answer, no tools (diffuse, loss, reduce)."""
        call = Call(model=request.model or self.model, secrets=self._secrets)
        params = self.text_params(request, call.model)
        call.record({"event": "request", "role": request.role, **loggable(params)})
        try:
            async with asyncio.timeout(request.timeout), self._client() as client:
                message = await self._turn(client, params, call, request)
        except TimeoutError:
            raise call.fail(f"the {request.role} call took longer than {request.timeout:g}s") from None
        content = [block_dict(b) for b in message.content]
        if message.stop_reason == "max_tokens":
            raise call.fail(
                f"the {request.role} answer was cut off at max_tokens={self.max_tokens}; "
                "raise max_tokens or shorten the task"
            ) from None
        if message.stop_reason == "refusal":
            raise call.fail(f"the model declined the {request.role} task (stop_reason=refusal)") from None
        return call.result(text_of(content))

    async def agent(self, request: Request, sandbox: Sandbox) -> CallResult:
        """A tool-use loop over the sandbox's file tools until the model ends its turn."""
        call = Call(model=request.model or self.model, secrets=self._secrets)
        tools = [dict(EDITOR_TOOL), dict(DELETE_TOOL)]
        if sandbox.on_commit is not None:
            tools.append(dict(COMMIT_TOOL))
        if sandbox.history is not None:
            tools += [dict(t) for t in HISTORY_TOOLS]
        marks = Marks(call.model)
        if request.system:  # the system mark covers the tools, which come before it
            marks.grow(cache_policy.tokens(tools))
        else:
            marks.offer(tools[-1], cache_policy.tokens(tools), "5m")
        params = self._params(call.model, request, tools=tools, marks=marks)
        messages: list[dict[str, Any]] = [{"role": "user", "content": opening(request, marks, agent=True)}]
        params["messages"] = messages
        call.record({"event": "request", "role": request.role, **loggable(params)})
        try:
            async with asyncio.timeout(request.timeout), self._client() as client:
                return await self._loop(client, params, call, request, sandbox, marks)
        except TimeoutError:
            raise call.fail(
                f"the {request.role} agent took longer than {request.timeout:g}s ({call.turns} turns)"
            ) from None

    def text_params(self, request: Request, model: str) -> dict[str, Any]:
        """The Messages parameters of a text call (also what `--batch` sends for it)."""
        marks = Marks(model)
        params = self._params(model, request, tools=None, marks=marks)
        # A one-shot answer: only what other requests re-read is marked, never the prompt itself.
        params["messages"] = [{"role": "user", "content": opening(request, marks, agent=False)}]
        return params

    # -- the agent loop -------------------------------------------------------------------------

    async def _loop(
        self,
        client: anthropic.AsyncAnthropic,
        params: dict[str, Any],
        call: Call,
        request: Request,
        sandbox: Sandbox,
        marks: Marks,
    ) -> CallResult:
        """The agent's turns until it ends; `params["messages"]` is the conversation, grown in place turn by turn."""
        messages: list[dict[str, Any]] = params["messages"]
        for _ in range(request.max_turns):
            message = await self._turn(client, params, call, request)
            content = [block_dict(b) for b in message.content]
            messages.append({"role": "assistant", "content": content})
            stop = message.stop_reason
            uses = [b for b in content if b.get("type") == "tool_use"]
            if stop == "refusal":
                raise call.fail(f"the model declined the {request.role} task (stop_reason=refusal)")
            if stop == "model_context_window_exceeded":
                raise call.fail(
                    f"the {request.role} conversation outgrew the model's context window after {call.turns} turns"
                )
            if stop == "pause_turn":
                continue  # the API paused a long turn; sending it back as is resumes it
            if uses:
                cut = uses[-1] if stop == "max_tokens" and content[-1] is uses[-1] else None
                results = [await self._run_tool(b, sandbox, call, request, cut=b is cut) for b in uses]
            elif stop == "max_tokens":
                results = [
                    {
                        "type": "text",
                        "text": (
                            "Your answer was cut off at the output limit. Continue with tool calls, "
                            "and keep each call small enough to fit."
                        ),
                    }
                ]
            else:
                return call.result(text_of(content))
            # The latest turn is marked so the next one reads it, unless the task is done:
            # then the next answer is the last request and this tail is never re-read.
            done = request.finished is not None and request.finished()
            marks.rolling(None if done else results[-1], cache_policy.tokens(content) + cache_policy.tokens(results))
            messages.append({"role": "user", "content": results})
        raise call.fail(f"the {request.role} agent did not finish within {request.max_turns} turns")

    async def _run_tool(
        self, block: dict[str, Any], sandbox: Sandbox, call: Call, request: Request, *, cut: bool
    ) -> dict[str, Any]:
        given = block.get("input")
        args = given if isinstance(given, dict) else {}
        where = ToolContext(sandbox, request, cut=cut)
        output, error = await run_tool(block.get("id"), block.get("name", ""), args, _COMMANDS, call, where)
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": block.get("id"),
            "content": redact(output, call.secrets),
        }
        if error is not None:
            result["is_error"] = True
        return result

    # -- request parameters ---------------------------------------------------------------------

    def _params(self, model: str, request: Request, tools: list[dict[str, Any]] | None, marks: Marks) -> dict[str, Any]:
        params: dict[str, Any] = {"model": model, "max_tokens": self.max_tokens}
        if request.system:  # every call of the role sends it again: worth a mark once long enough
            block = {"type": "text", "text": request.system}
            marks.offer(block, cache_policy.tokens(request.system), "5m")
            params["system"] = [block]
        if tools:
            params["tools"] = tools
        return params


if __name__ == "__main__":
    endpoint = Connection(base_url=os.environ.get("ANTHROPIC_BASE_URL"))
    raise SystemExit(try_backend(lambda: AnthropicBackend(connection=endpoint), sys.argv[1:]))
