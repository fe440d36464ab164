"""The `codex` backend: training run by the Codex CLI (`codex exec`), on OpenAI models or any Responses API.

For people who build their screenwriting agent on Codex: notes are trained against the
agent that will read them. It needs the CLI (`npm install -g @openai/codex`; a `codex` on
PATH, or `SKILLTUI_CODEX`), `OPENAI_API_KEY`, and optionally `OPENAI_BASE_URL` for another
endpoint that speaks the Responses API (which is how the tests point it at a fake one).

Each call is one `codex exec` in a folder of its own (codex_confine.py says how the CLI is
confined: no shell or other tools of its own, the project's file tools as its only MCP
server, its home and state inside that folder, removed after the call). The prompt goes
on stdin; `--json` events come on stdout and are the call's transcript, which the engine
keeps under the run like every backend's. The final text is the last agent message;
tokens come from the `turn.completed` usage (its cached input counted as cache reads),
and the cost from the price table, `None` ("price unknown") for a model not in it.
`turns` is one plus the tool calls made (the CLI does not report its model requests).
A refused key or an unknown model raises `FatalBackendError`, anything else
`BackendError` with `.partial` attached; a call that outlasts its role's timeout is
killed with its process group.

Try it: `python -m skilltui.agents.codex "Say hello"`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from . import pricing
from .base import BackendBase, BackendError, CallResult, FatalBackendError, Request, Usage, try_backend
from .codex_confine import SERVER, Provider, ToolBridge, environment, exec_args, find_cli
from .mailbox import tool_names
from .redact import env_secrets, redact
from .tools import Sandbox

DEFAULT_MODEL = "gpt-5.5-codex"
OPENAI_URL = "https://api.openai.com/v1"
FATAL_WORDS = ("401", "403", "unauthorized", "invalid api key", "incorrect api key", "model_not_found", "404")


class CodexBackend(BackendBase):
    """The Codex CLI as a backend. One instance serves every role and every work."""

    name = "codex"
    model: str  # the default model when a request names none

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        cli: str | None = None,
    ) -> None:
        from ..core.errors import UsageError

        self.model = model or DEFAULT_MODEL
        self._cli = cli or find_cli()
        self._key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self._base_url = base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL
        if not self._key and self._base_url == OPENAI_URL:
            raise UsageError(
                "--backend codex needs an API key: export OPENAI_API_KEY=sk-... "
                "(or OPENAI_BASE_URL for a server that needs none)"
            )

    async def text(self, request: Request) -> CallResult:
        return await self._call(request, None)

    async def agent(self, request: Request, sandbox: Sandbox) -> CallResult:
        return await self._call(request, sandbox)

    async def _call(self, request: Request, sandbox: Sandbox | None) -> CallResult:
        folder = Path(tempfile.mkdtemp(prefix="skilltui-codex-"))
        try:
            (folder / "work").mkdir()
            (folder / "home").mkdir()
            tools = tool_names(sandbox) if sandbox is not None else []
            system = request.system
            if sandbox is not None:
                system += (
                    f"\n\nYour only tools are the `{SERVER}` tools: {', '.join(tools)}. Relative paths are taken "
                    f"from {sandbox.folder}."
                )
            (folder / "instructions.md").write_text(system or "You are a careful assistant.", encoding="utf-8")
            (folder / "token").write_text(secrets.token_hex(16))
            socket = str(folder / "tools.sock") if sandbox is not None else None
            model = request.model or self.model
            args = exec_args(
                Provider(model, self._base_url, bool(self._key)),
                folder=folder,
                tools=tools,
                socket=socket,
                timeout=request.timeout,
            )
            prompt = "\n".join(part for part in (request.lead, request.prefix, request.prompt) if part)
            run = _Run(request, model, self._secrets)
            run.transcript.append(
                redact({"event": "request", "role": request.role, "model": model, "system": system, "prompt": prompt,
                        "tools": tools, "args": args}, self._secrets)
            )  # fmt: skip
            if sandbox is None:
                await run.execute([self._cli, *args], prompt, environment(folder, self._key))
            else:
                token = (folder / "token").read_text()
                async with ToolBridge(sandbox, request, tools, socket or "", token) as bridge:
                    await run.execute([self._cli, *args], prompt, environment(folder, self._key))
                run.tool_calls = bridge.calls
            return run.result()
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    @property
    def _secrets(self) -> list[str]:
        return [s for s in (self._key, *env_secrets()) if s]


class _Run:
    """One `codex exec`: its events read as they come, then its result or its error."""

    def __init__(self, request: Request, model: str, secrets_: list[str]) -> None:
        self.request, self.model, self.secrets = request, model, secrets_
        self.transcript: list[dict[str, Any]] = []
        self.usage = Usage()
        self.text = ""
        self.errors: list[str] = []
        self.stderr: list[str] = []
        self.tool_calls = 0
        self.failure: str | None = None

    async def execute(self, argv: list[str], prompt: str, env: dict[str, str]) -> None:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                start_new_session=True,  # its MCP server and any child go with it when it is killed
                limit=64 * 1024 * 1024,
            )
        except OSError as exc:
            self.failure = f"the Codex CLI could not start ({exc.strerror})"
            return
        try:
            async with asyncio.timeout(self.request.timeout):
                assert process.stdin and process.stdout and process.stderr
                process.stdin.write(prompt.encode("utf-8"))
                await process.stdin.drain()
                process.stdin.close()
                await asyncio.gather(self._events(process.stdout), self._stderr(process.stderr))
                code = await process.wait()
            if code != 0 and self.failure is None:
                self.failure = next(iter(self.errors), None) or f"the Codex CLI exited with code {code}"
        except TimeoutError:
            self.failure = f"the {self.request.role} call took longer than {self.request.timeout:g}s"
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()

    async def _events(self, stream: asyncio.StreamReader) -> None:
        import json

        async for raw in stream:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            self.transcript.append(redact(event, self.secrets))
            kind = event.get("type")
            given = event.get("item")
            item = given if isinstance(given, dict) else {}
            if kind == "item.completed" and item.get("type") == "agent_message":
                self.text = str(item.get("text") or "")
                self.request.on_delta(self.text)
            elif kind == "turn.completed":
                self.usage.add(_usage(event.get("usage") or {}))
            elif kind == "turn.failed":
                self.failure = str((event.get("error") or {}).get("message") or "the turn failed")
            elif kind == "error":
                self.errors.append(str(event.get("message") or "error"))

    async def _stderr(self, stream: asyncio.StreamReader) -> None:
        async for raw in stream:
            self.stderr = [*self.stderr[-19:], raw.decode("utf-8", "replace").rstrip()]

    def result(self) -> CallResult:
        cost = pricing.cost_usd(self.model, self.usage)
        turns = 1 + self.tool_calls
        if self.failure is not None:
            message = redact(_first_line(self.failure), self.secrets)
            fatal = any(word in message.lower() for word in FATAL_WORDS)
            self.transcript.append({"event": "error", "message": message, "fatal": fatal, "stderr": self.stderr})
            error = (FatalBackendError if fatal else BackendError)(f"Codex failed: {message}")
            error.partial = CallResult(
                text=self.text,
                usage=self.usage,
                cost_usd=cost,
                model=self.model,
                transcript=self.transcript,
                turns=turns,
            )
            raise error
        text = redact(self.text, self.secrets)
        self.transcript.append({"event": "result", "text": text, "turns": turns, "cost_usd": cost})
        return CallResult(
            text=text, usage=self.usage, cost_usd=cost, model=self.model, transcript=self.transcript, turns=turns
        )


def _usage(u: dict[str, Any]) -> Usage:
    """The CLI's counts as this project's: its input includes the cached part, which is billed as a cache read."""
    cached = int(u.get("cached_input_tokens") or 0)
    return Usage(
        input_tokens=max(0, int(u.get("input_tokens") or 0) - cached),
        output_tokens=int(u.get("output_tokens") or 0),
        cache_write_tokens=int(u.get("cache_write_input_tokens") or 0),
        cache_read_tokens=cached,
    )


def _first_line(text: str) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else "unknown error"


if __name__ == "__main__":
    raise SystemExit(try_backend(CodexBackend, sys.argv[1:]))
