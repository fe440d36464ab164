"""The `claude-code` backend: training run by Claude Code, for people who use it instead of an API key.

An optional extra (`pip install 'skilltui[claude-code]'`) on the `claude-agent-sdk`
package, which drives the Claude Code CLI (bundled in its wheel) as a subprocess. It
serves the same two entry points as every backend: `text(request)` for diffuse, loss and
reduce, `agent(request, sandbox)` for forward and backward. Select it with
`--backend claude-code`; it uses `ANTHROPIC_API_KEY` when set, otherwise the login Claude
Code already has, and it reads `ANTHROPIC_BASE_URL`, which is how the test suite points
it at the fake Messages API.

Confinement, which is the point of the design (the writer must never see the human
episodes; the tool specs, permission rules and quiet environment are in
claude_code_confine.py):

- Claude Code's own tools (Bash, Read, Write, Edit, web access...) are switched off
  (`tools=[]`). The agent gets the project's file tools instead, as an in-process MCP
  server whose every call goes through the role's `Sandbox`: the same roots, the same
  refusals, the same read trace, the same `commit` and the same history tools
  (`pool_log`, `pool_show`) as the `anthropic` backend.
- Only those tools are pre-approved (`allowed_tools`), and `permission_mode="dontAsk"`
  denies anything else instead of prompting.
- Settings from disk are not loaded (`setting_sources=[]`): no user or project hooks,
  no CLAUDE.md, no stray permission rules.
- As a second line, should a future CLI bring a built-in tool back, the session carries
  permission rules scoped to the role's roots, never an unscoped Write or Edit:
  `Read(//<root>/**)` for read roots, `Edit(//<root>/**)` and `Write(//<root>/**)` for
  write roots, and explicit denies for Bash, the web, and every denied path.
- The working directory is the folder the sandbox takes relative paths from (the pool,
  where prompts list the notes), and a text call runs in an empty temporary folder.

Only the agent's own requests leave the CLI (`QUIET_ENV`: no title generation, telemetry,
error reports or update checks). Cost comes from Claude Code's result message
(`total_cost_usd`), except when the CLI says it does not recognise the model: then it is
guessing, and the call reports tokens only. Tokens come from its per-model counts, and
`turns` counts model requests. Text calls run with prompt caching off (a one-shot prompt
has no later reader); agents keep the CLI's own marks, which this backend cannot place.
Retries and per-request timeouts are Claude Code's own (`CLAUDE_CODE_MAX_RETRIES`,
`API_TIMEOUT_MS` are set from this backend's arguments), except that a refused key (401,
403) stops the call at the first refusal; a bad key or an unknown model raises
`FatalBackendError`, anything else `BackendError` with `.partial` attached.

Try it: `python -m skilltui.agents.claude_code "Say hello"`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import shutil
import sys
import tempfile
from typing import Any

from ..core.errors import UsageError
from .base import BackendBase, BackendError, CallResult, Connection, FatalBackendError, Request, Usage, try_backend
from .claude_code_confine import QUIET_ENV, TOOL_SPECS, find_cli, permissions
from .redact import env_secrets, redact
from .throttle import Throttle
from .tools import Sandbox, ToolError

DEFAULT_MODEL = "claude-sonnet-5-5"
INSTALL_HELP = (
    "--backend claude-code needs the optional extra: pip install 'skilltui[claude-code]' "
    "(or use --backend anthropic with ANTHROPIC_API_KEY)"
)
SERVER = "files"

# Statuses after which no retry can succeed: the key or the login was refused.
AUTH_STATUSES = (401, 403)


def _sdk() -> Any:
    """The claude_agent_sdk module, imported only when this backend is used."""
    try:
        import claude_agent_sdk
    except ImportError:
        raise UsageError(INSTALL_HELP) from None
    return claude_agent_sdk


@dataclasses.dataclass(frozen=True)
class _Tools:
    """The file tools an agent call gets: the SDK's in-process MCP server and the names it serves."""

    server: Any
    names: tuple[str, ...]


class ClaudeCodeBackend(BackendBase):
    """Claude Code as a backend. One instance serves every role and every work.

    `connection` is the same as the API backend's (key, endpoint, retries, request timeout),
    handed to the CLI as its environment. `cli_path` picks a `claude` executable; by default
    the one bundled with the SDK, then one on PATH. `env` adds variables for the CLI process
    (tests use it to isolate Claude Code's config folder).
    """

    name = "claude-code"
    throttle: Throttle  # always one: its calls are held and counted by it (BackendBase allows None)

    def __init__(
        self,
        model: str | None = None,
        connection: Connection | None = None,
        *,
        cli_path: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        sdk = _sdk()
        connection = connection or Connection()
        api_key, base_url = connection.api_key, connection.base_url
        self.model = model or DEFAULT_MODEL
        self._sdk = sdk
        self._cli_path = cli_path or find_cli(sdk)
        self._api_key = api_key
        # Calls of this backend in flight at once, lowered for a while when the CLI reports a 429.
        self.throttle = Throttle()
        self._env = {
            "CLAUDE_CODE_MAX_RETRIES": str(connection.max_retries),
            "API_TIMEOUT_MS": str(int(connection.timeout * 1000)),
            **QUIET_ENV,
            **({"ANTHROPIC_API_KEY": api_key} if api_key else {}),
            **({"ANTHROPIC_BASE_URL": base_url} if base_url else {}),
            **(env or {}),
        }

    @property
    def _secrets(self) -> list[str]:
        return [s for s in (self._api_key, *env_secrets()) if s]

    # -- the two entry points -------------------------------------------------------------------

    async def text(self, request: Request) -> CallResult:
        """One answer with no tools at all, in an empty temporary folder."""
        folder = tempfile.mkdtemp(prefix="skilltui-cc-")
        try:
            options = self._options(request, cwd=folder, tools=None, settings=permissions([], [], []))
            options.max_turns = 1
            # A one-shot answer has no later request to read a cache entry: the CLI would mark
            # the whole prompt and pay 1.25x to write it, so caching is off for text calls.
            options.env["DISABLE_PROMPT_CACHING"] = "1"
            return await self._run(request, options)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    async def agent(self, request: Request, sandbox: Sandbox) -> CallResult:
        """The agent with the sandbox's file tools (and commit, when the sandbox has one)."""
        names = ["view", "create", "str_replace", "insert", "delete"]
        if sandbox.on_commit is not None:
            names.append("commit")
        if sandbox.history is not None:
            names += ["pool_log", "pool_show"]
        tools = [self._tool(name, sandbox, request) for name in names]
        server = self._sdk.create_sdk_mcp_server(SERVER, tools=tools)
        cwd = sandbox.folder  # where the sandbox takes relative paths from
        if cwd.is_file():
            cwd = cwd.parent
        settings = permissions(sandbox.read_roots, sandbox.write_roots, sandbox.denied)
        options = self._options(request, cwd=str(cwd), tools=_Tools(server, tuple(names)), settings=settings)
        options.max_turns = request.max_turns
        return await self._run(request, options)

    # -- plumbing -------------------------------------------------------------------------------

    def _options(self, request: Request, *, cwd: str, tools: _Tools | None, settings: dict[str, Any]) -> Any:
        sdk = self._sdk
        allowed = [f"mcp__{SERVER}__{n}" for n in tools.names] if tools else []
        system = request.system
        if tools:
            system += "\n\nYour file tools: " + ", ".join(tools.names) + f". Your working folder is {cwd}."
        return sdk.ClaudeAgentOptions(
            model=request.model or self.model,
            system_prompt=system,
            cwd=cwd,
            tools=[],
            mcp_servers={SERVER: tools.server} if tools else {},
            strict_mcp_config=True,
            allowed_tools=allowed,
            permission_mode="dontAsk",
            setting_sources=[],
            settings=json.dumps(settings),
            include_partial_messages=True,
            # No session transcript under ~/.claude/projects: a loss prompt holds the human episodes,
            # and the run folder keeps every transcript already.
            extra_args={"no-session-persistence": None},
            cli_path=self._cli_path,
            env=dict(self._env),
        )

    def _tool(self, name: str, sandbox: Sandbox, request: Request) -> Any:
        description, schema = TOOL_SPECS[name]

        async def handler(args: dict[str, Any]) -> dict[str, Any]:
            path = str(args.get("path", ""))
            try:
                output = await asyncio.to_thread(sandbox.run, name, dict(args, command=name))
            except (ToolError, ValueError, TypeError, OSError) as exc:
                message = str(exc) or type(exc).__name__
                request.on_tool(name, path, message)
                return {"content": [{"type": "text", "text": message}], "is_error": True}
            request.on_tool(name, path, None)
            return {"content": [{"type": "text", "text": output}]}

        return self._sdk.tool(name, description, schema)(handler)

    async def _run(self, request: Request, options: Any) -> CallResult:
        sdk = self._sdk
        secrets = self._secrets
        model = options.model
        stderr: list[str] = []
        options.stderr = stderr.append
        # Claude Code places its own cache marks; the lead and the shared prefix simply open the prompt.
        prompt = "\n".join(part for part in (request.lead, request.prefix, request.prompt) if part)
        transcript: list[dict[str, Any]] = [
            redact(
                {
                    "event": "request",
                    "role": request.role,
                    "model": model,
                    "system": options.system_prompt,
                    "prompt": prompt,
                    "cwd": str(options.cwd),
                    "allowed_tools": options.allowed_tools,
                    "settings": json.loads(options.settings),
                    "max_turns": options.max_turns,
                },
                secrets,
            )
        ]
        texts: list[str] = []
        result: Any = None
        auth_error: str | None = None  # the CLI's label for why a turn failed, if one did
        failure: str | None = None
        requests = 0  # model requests the agent made, whatever the CLI calls a turn
        refused: int | None = None
        try:
            async with (
                self.throttle.slot(),
                asyncio.timeout(request.timeout),
                contextlib.aclosing(sdk.query(prompt=prompt, options=options)) as messages,
            ):
                async for message in messages:
                    if isinstance(message, sdk.StreamEvent):
                        kind = message.event.get("type")
                        if kind == "message_start" and message.parent_tool_use_id is None:
                            requests += 1
                        delta = message.event.get("delta", {}) if kind == "content_block_delta" else {}
                        if delta.get("type") == "text_delta" and message.parent_tool_use_id is None:
                            request.on_delta(delta.get("text", ""))
                        continue
                    transcript.append(redact({"event": type(message).__name__, **_jsonable(message)}, secrets))
                    if isinstance(message, sdk.SystemMessage) and message.subtype == "api_retry":
                        status = message.data.get("error_status")
                        if status in AUTH_STATUSES:
                            # The CLI retries a refused key with backoff for half a minute;
                            # no retry can fix it, so the call stops at the first refusal.
                            refused, auth_error = status, "authentication_failed"
                            break
                        if status == 429:  # this CLI retries on its own; fewer others start meanwhile
                            delay = float(message.data.get("retry_delay_ms") or 0) / 1000
                            self.throttle.rate_limited({"retry-after": f"{delay:g}"}, in_flight=True)
                    if isinstance(message, sdk.AssistantMessage) and message.parent_tool_use_id is None:
                        if message.error:
                            auth_error = message.error
                        texts = [b.text for b in message.content if isinstance(b, sdk.TextBlock)] or texts
                    elif isinstance(message, sdk.ResultMessage):
                        result = message
                        if not message.is_error:
                            self.throttle.succeeded()
        except TimeoutError:
            failure = f"the {request.role} call took longer than {request.timeout:g}s"
        except sdk.CLINotFoundError:
            raise UsageError(
                f"--backend claude-code could not start Claude Code at {self._cli_path}; "
                "reinstall 'skilltui[claude-code]'"
            ) from None
        except sdk.ClaudeSDKError as exc:
            failure = _first_line(getattr(exc, "result", None) or str(exc))
        call = _outcome(result, model, requests, unrecognized=any("unrecognized_model" in line for line in stderr))
        if refused is not None:
            failure = f"the API refused the key ({refused})"
        elif failure is None and result is None:
            failure = "Claude Code ended without a result"
        elif failure is None and result.is_error:
            failure = _first_line(result.result or result.subtype)
        if failure is not None:
            status = refused or getattr(result, "api_error_status", None)
            fatal, message = _classify(auth_error, status, failure, model)
            message = redact(message, secrets)
            transcript.append(
                {"event": "error", "message": message, "fatal": fatal, "stderr": redact(stderr[-20:], secrets)}
            )
            error = (FatalBackendError if fatal else BackendError)(message)
            error.partial = CallResult(
                text="",
                usage=call.usage,
                cost_usd=call.cost_usd,
                model=model,
                transcript=transcript,
                turns=call.turns,
            )
            raise error
        final = redact(result.result if result and result.result is not None else "".join(texts), secrets)
        transcript.append(
            {
                "event": "result",
                "text": final,
                "turns": call.turns,
                "usage": dataclasses.asdict(call.usage),
                "cost_usd": call.cost_usd,
            }
        )
        return CallResult(
            text=final, usage=call.usage, cost_usd=call.cost_usd, model=model, transcript=transcript, turns=call.turns
        )


@dataclasses.dataclass
class _Outcome:
    usage: Usage
    cost_usd: float | None
    turns: int


def _outcome(result: Any, model: str, requests: int, *, unrecognized: bool) -> _Outcome:
    """Usage, cost and turns of a call (zeros when the CLI sent no result).

    Tokens come from `model_usage`, summed over every model the CLI called: `usage` leaves
    out requests the CLI makes on its own, while `total_cost_usd` includes them, so only
    the per-model counts agree with the cost. `turns` is the number of model requests, as
    in every backend (the CLI's `num_turns` counts tool calls).
    """
    if result is None:
        return _Outcome(Usage(), None, requests)
    usage = Usage()
    per_model = result.model_usage or {}
    for counts in per_model.values():
        usage.add(
            Usage(
                input_tokens=int(counts.get("inputTokens") or 0),
                output_tokens=int(counts.get("outputTokens") or 0),
                cache_write_tokens=int(counts.get("cacheCreationInputTokens") or 0),
                cache_read_tokens=int(counts.get("cacheReadInputTokens") or 0),
            )
        )
    if not per_model:  # an older CLI without per-model counts
        u = result.usage or {}
        usage = Usage(
            input_tokens=int(u.get("input_tokens") or 0),
            output_tokens=int(u.get("output_tokens") or 0),
            cache_write_tokens=int(u.get("cache_creation_input_tokens") or 0),
            cache_read_tokens=int(u.get("cache_read_input_tokens") or 0),
        )
    # The CLI prices a model it does not know at a guessed rate; a guess is not a cost.
    cost = None if unrecognized else result.total_cost_usd
    return _Outcome(usage, cost, requests)


def _classify(assistant_error: str | None, status: int | None, detail: str, model: str) -> tuple[bool, str]:
    """(fatal, one-line message) for a failed Claude Code call."""
    if assistant_error == "authentication_failed" or status in AUTH_STATUSES:
        return True, (
            f"Claude Code's API key or login was rejected ({status or 401}): check "
            "ANTHROPIC_API_KEY or run `claude /login`"
        )
    if assistant_error == "billing_error" or status == 402:
        return True, f"the API refused for billing reasons: {detail}"
    if assistant_error == "model_not_found" or status == 404:
        return True, f"the API does not know model {model!r} (404): check --model and the per-role models"
    return False, f"Claude Code failed: {detail}"


def _jsonable(message: Any) -> dict[str, Any]:
    """A message as plain JSON data (the SDK's messages are dataclasses)."""
    is_record = dataclasses.is_dataclass(message) and not isinstance(message, type)
    data = dataclasses.asdict(message) if is_record else {"value": str(message)}
    return json.loads(json.dumps(data, default=str))


def _first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else "unknown error"


if __name__ == "__main__":
    raise SystemExit(try_backend(ClaudeCodeBackend, sys.argv[1:]))
