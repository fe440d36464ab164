"""The `openai` backend: training run by any model behind the OpenAI chat-completions protocol.

OpenAI's own models, OpenRouter, and models on one's own GPUs behind vLLM, Ollama or LM
Studio all speak it, with tool calls; craft notes trained for the model that will use
them have to be trained against that model. Select it with `--backend openai`; reach a
server other than OpenAI's with `--base-url` or `OPENAI_BASE_URL`. Needs the `openai`
extra (`pip install 'skilltui[openai]'`).

The same two entry points as every backend (`base.py`):

- `text(request)`: one streamed answer, no tools (diffuse, loss, reduce);
- `agent(request, sandbox)`: a tool loop over the project's file tools, offered as one
  JSON-schema function per command (`view`, `create`, `str_replace`, `insert`,
  `delete_file`, and for backward `commit`, `pool_log`, `pool_show`), run in the sandbox
  by `tool_calls.run_tool` exactly as the `anthropic` backend runs them. A refused call goes
  back as the tool's result; it never ends the call.

What is shared, and what is its own: the books (`anthropic_call.Call`: usage, price,
transcript, redaction), the retry policy (`retries.py`), the 429 throttle (`throttle.py`)
and the tool runner are the `anthropic` backend's; the request, its stream and what its
failures mean are `openai_requests.py`. Prompt caching is the provider's (automatic on
OpenAI for prompts over 1,024 tokens): the system prompt, the lead, the shared prefix and
the prompt are sent in that order so that what other requests repeat comes first, and the
cached tokens a provider reports are billed at the cached rate.

A model that cannot call tools would let the writer write nothing: `preflight` asks each
agent model for one tool call before the run is opened (`skilltui train` calls it), and a
400 saying tools are unsupported, or an answer that ignores the tool it was told to call,
refuses the model there, in one line, with nothing written.

Try it on its own: `python -m skilltui.agents.openai_backend "Say hello"`.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import openai

from ..core.errors import UsageError
from .anthropic_call import Call, loggable
from .base import BackendBase, BackendError, CallResult, Connection, Request, try_backend
from .openai_requests import Answer, ChatRequests
from .openai_tools import COMMANDS, CUT_NOTE, function, tools_for
from .redact import redact
from .retries import RetryPolicy
from .throttle import Throttle
from .tool_calls import ToolContext, run_tool
from .tools import Sandbox

DEFAULT_MODEL = "gpt-5.4"
DEFAULT_MAX_TOKENS = 32_000
KEY_ENV = "OPENAI_API_KEY"
KEY_HELP = (
    "--backend openai needs OPENAI_API_KEY (export OPENAI_API_KEY=sk-...), or --base-url / OPENAI_BASE_URL "
    "for a server that needs no key (vLLM, Ollama, LM Studio)"
)
# What a server without its own keys is sent, since the SDK will not send a request without one.
NO_KEY = "no-key"
# The preflight's retries: a server that is down or refuses is bad input, said at once.
PROBE_RETRY = RetryPolicy(max_retries=2, backoff_base=0.2, backoff_cap=1.0, max_retry_wait=5.0)
PROBE_TOOL = "ready"
AGENT_ROLES = ("forward", "backward", "consolidate")


class OpenAIBackend(BackendBase, ChatRequests):
    """Any chat-completions server. One instance serves every role and every work.

    `connection` says where (base URL: None is OpenAI's, else `OPENAI_BASE_URL`), with
    which key (None reads `OPENAI_API_KEY`; a server of one's own may need none), how many
    retries and how long one HTTP request may take. The backoff arguments are the
    `anthropic` backend's.
    """

    name = "openai"
    model: str  # the default model when a request names none
    throttle: Throttle  # ChatRequests holds its calls by it, so never None here
    key_env = KEY_ENV
    checks_models = True  # asks the server whether each model answers, and calls tools (preflight)

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
        base_url = (connection.base_url or os.environ.get("OPENAI_BASE_URL") or "").strip() or None
        key = (connection.api_key or os.environ.get(KEY_ENV) or "").strip()
        if not key and base_url is None:
            raise UsageError(KEY_HELP)
        self.model = model or DEFAULT_MODEL
        self.base_url = base_url
        self.retry = RetryPolicy(connection.max_retries, backoff_base, backoff_cap, max_retry_wait)
        self.timeout = connection.timeout
        self.max_tokens = max_tokens
        self._api_key = key or NO_KEY
        self.throttle = Throttle()

    @property
    def _secrets(self) -> list[str]:
        return [self._api_key] if self._api_key != NO_KEY else []

    @property
    def where(self) -> str:
        return self.base_url or "https://api.openai.com/v1"

    def _client(self) -> openai.AsyncOpenAI:
        """A client for one call, made inside the running loop (an HTTP pool belongs to its loop)."""
        return openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout)

    # -- the two entry points -------------------------------------------------------------------

    async def text(self, request: Request) -> CallResult:
        """One streamed answer, no tools (diffuse, loss, reduce)."""
        call = Call(model=request.model or self.model, secrets=self._secrets)
        params = self._params(call.model, request, tools=None)
        call.record({"event": "request", "role": request.role, **loggable(params)})
        try:
            async with asyncio.timeout(request.timeout), self._client() as client:
                answer = await self._turn(client, params, call, request)
        except TimeoutError:
            raise call.fail(f"the {request.role} call took longer than {request.timeout:g}s") from None
        self._check_stop(answer, call, request)
        if answer.finish_reason == "length":
            raise call.fail(
                f"the {request.role} answer was cut off at max_tokens={self.max_tokens}; shorten the task"
            ) from None
        return call.result(answer.text)

    async def agent(self, request: Request, sandbox: Sandbox) -> CallResult:
        """A tool loop over the sandbox's file tools until the model answers without a tool call."""
        call = Call(model=request.model or self.model, secrets=self._secrets)
        params = self._params(call.model, request, tools=tools_for(sandbox))
        call.record({"event": "request", "role": request.role, **loggable(params)})
        try:
            async with asyncio.timeout(request.timeout), self._client() as client:
                return await self._loop(client, params, call, request, sandbox)
        except TimeoutError:
            raise call.fail(
                f"the {request.role} agent took longer than {request.timeout:g}s ({call.turns} turns)"
            ) from None

    async def _loop(
        self, client: openai.AsyncOpenAI, params: dict[str, Any], call: Call, request: Request, sandbox: Sandbox
    ) -> CallResult:
        messages: list[dict[str, Any]] = params["messages"]
        for _ in range(request.max_turns):
            answer = await self._turn(client, params, call, request)
            self._check_stop(answer, call, request)
            messages.append(answer.message())
            if not answer.tool_calls:
                if answer.finish_reason == "length":
                    messages.append({"role": "user", "content": CUT_NOTE})
                    continue
                return call.result(answer.text)
            last = answer.tool_calls[-1] if answer.finish_reason == "length" else None
            for tool_call in answer.tool_calls:
                messages.append(await self._run_tool(tool_call, sandbox, call, request, cut=tool_call is last))
        raise call.fail(f"the {request.role} agent did not finish within {request.max_turns} turns")

    async def _run_tool(
        self, tool_call: dict[str, Any], sandbox: Sandbox, call: Call, request: Request, *, cut: bool
    ) -> dict[str, Any]:
        function = tool_call.get("function") or {}
        name = str(function.get("name", ""))
        raw = function.get("arguments") or "{}"
        try:
            args = json.loads(raw)
        except ValueError:
            args = None
        where = ToolContext(sandbox, request, cut=cut)
        if isinstance(args, dict):
            output, _ = await run_tool(tool_call.get("id"), name, args, COMMANDS, call, where)
        else:  # the model's arguments are not a JSON object: it is told so, and can send them again
            output = f"the arguments of {name} are not a JSON object: {raw[:200]}"
            request.on_tool(name, "", output)
            call.record({"event": "tool", "turn": call.turns, "id": tool_call.get("id"), "name": name, "ok": False})
        return {"role": "tool", "tool_call_id": tool_call.get("id"), "content": redact(output, call.secrets)}

    def _check_stop(self, answer: Answer, call: Call, request: Request) -> None:
        if answer.finish_reason == "content_filter":
            raise call.fail(f"the provider's content filter stopped the {request.role} answer")

    # -- request parameters ---------------------------------------------------------------------

    def _params(self, model: str, request: Request, tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        # What other requests repeat word for word comes first, so a provider's prefix cache reads it.
        opening = "\n\n".join(part for part in (request.lead, request.prefix, request.prompt) if part)
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.append({"role": "user", "content": opening})
        params: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        # OpenAI's reasoning models refuse `max_tokens`; servers of one's own may not know its successor.
        params["max_completion_tokens" if self.base_url is None else "max_tokens"] = self.max_tokens
        if tools:
            params["tools"] = tools
        return params

    # -- the preflight ----------------------------------------------------------------------------

    def preflight(self, models: dict[str, str]) -> list[str]:
        """Check every model this run calls before anything is written; raise UsageError when one cannot serve.

        `models` maps each role to its model. An agent role's model is asked for one call of a
        tool it is told to call; a text role's model for a word. Returns one line per model.
        """
        agents = {m for role, m in models.items() if role in AGENT_ROLES}
        return [asyncio.run(self._probe(model, tools=model in agents)) for model in sorted(set(models.values()))]

    async def _probe(self, model: str, *, tools: bool) -> str:
        call = Call(model=model, secrets=self._secrets)
        ask = f"Call the tool {PROBE_TOOL} now." if tools else "Answer with one word: ready."
        request = Request(role="preflight", prompt=ask, model=model, timeout=min(self.timeout, 120.0))
        params = self._params(model, request, tools=None)
        params["max_completion_tokens" if self.base_url is None else "max_tokens"] = 64
        if tools:
            params["tools"] = [function(PROBE_TOOL, "Say that you are ready.", {}, [])]
        try:
            async with asyncio.timeout(request.timeout), self._client() as client:
                answer = await self._turn(client, params, call, request, retry=PROBE_RETRY)
        except TimeoutError:
            raise UsageError(f"--backend openai: {self.where} did not answer within {request.timeout:g}s") from None
        except BackendError as exc:
            if getattr(exc, "no_tools", False):
                raise UsageError(f"--backend openai: {exc}; choose a model with tool support") from None
            raise UsageError(f"--backend openai at {self.where}: {exc}") from None
        if tools and not answer.tool_calls:
            raise UsageError(
                f"--backend openai: model {model!r} answered without calling the tool it was told to call, "
                "so it cannot use the file tools; choose a model with tool support"
            )
        cost = "price unknown" if call.cost_usd is None else f"${call.cost_usd:.6f}"
        return f"openai: {model} at {self.where} answers{' with tool calls' if tools else ''} ({cost})"


if __name__ == "__main__":
    raise SystemExit(try_backend(lambda: OpenAIBackend(), sys.argv[1:]))
