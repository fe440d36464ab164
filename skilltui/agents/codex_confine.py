"""What keeps the `codex` backend inside the sandbox: the CLI's flags, its home, and the bridge to the file tools.

The Codex CLI (`codex exec`) is an agent with a shell, a patch tool, web search, images,
goals, sub-agents, plugins and more. For training it gets none of them:

- its shell, image viewer, goals, apps, plugins, sub-agents, skills, memories, hooks and
  the rest are switched off (`DISABLED`), web search is off, and its own sandbox is
  `read-only` with approvals `never`, so any tool a newer CLI brings back can neither
  write nor ask to;
- its file tools are the project's, given as its only MCP server (`codex_mcp.py`, a stdio
  process it starts), whose every call comes back over a Unix socket to `ToolBridge`
  here, in the training process, and runs in the call's `Sandbox`;
- it runs in an empty working folder of its own per call, with `CODEX_HOME` and `HOME` in
  that folder (its config, state databases, logs and skills land there, never in the pool
  or the run, and the folder is removed after the call), `--ephemeral` (no session files)
  and `--ignore-user-config`, `--ignore-rules`;
- the model is reached through one provider, `skilltui`, defined on the command line:
  the Responses API at `OPENAI_BASE_URL` (default OpenAI's), keyed by `OPENAI_API_KEY`.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from .base import Request
from .tools import Sandbox, ToolError

SERVER = "files"
INSTALL_HELP = (
    "--backend codex needs the Codex CLI: npm install -g @openai/codex (or put `codex` on PATH, "
    "or set SKILLTUI_CODEX to its path)"
)
# Every CLI feature that could reach past the project's file tools, or keep state of its own.
DISABLED = (
    "shell_tool",
    "shell_snapshot",
    "view_image",
    "goals",
    "apps",
    "plugins",
    "multi_agent",
    "skill_search",
    "memories",
    "image_generation",
    "browser_use",
    "in_app_browser",
    "computer_use",
    "hooks",
    "sleep_tool",
    "tool_suggest",
    "enable_request_compression",
)


def find_cli() -> str:
    found = os.environ.get("SKILLTUI_CODEX") or shutil.which("codex")
    if not found or not os.access(found, os.X_OK):
        raise UsageError(INSTALL_HELP)
    return found


def toml(value: Any) -> str:
    """A value as TOML for `-c key=value` (JSON strings, numbers and lists are valid TOML)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


@dataclass(frozen=True)
class Provider:
    """The model endpoint a call goes to: its model, base URL, and whether a key is sent."""

    model: str
    base_url: str
    keyed: bool


def exec_args(endpoint: Provider, *, folder: Path, tools: list[str], socket: str | None, timeout: float) -> list[str]:
    """`codex exec` arguments for one call; `socket` None means a text call (no MCP server, no tools)."""
    model = endpoint.model
    provider: dict[str, Any] = {"name": "skilltui", "base_url": endpoint.base_url, "wire_api": "responses"}
    if endpoint.keyed:
        provider["env_key"] = "OPENAI_API_KEY"
    config: dict[str, Any] = {
        "model_provider": "skilltui",
        "model_providers.skilltui": provider,
        "model_instructions_file": str(folder / "instructions.md"),
        "web_search": "disabled",
        "approval_policy": "never",
        # No skills (SKILL.md files it would read with a shell) and no question tool: nobody answers one.
        "skills.include_instructions": False,
        "tools.experimental_request_user_input.enabled": False,
        "tools.update_plan.enabled": False,
    }
    if socket is not None:
        token = (folder / "token").read_text()
        config["mcp_servers." + SERVER] = {
            "command": sys.executable,
            "args": ["-m", "skilltui.agents.codex_mcp", socket, token, ",".join(tools)],
            "default_tools_approval_mode": "approve",
            # Wait for it before the first model request: a slow start would otherwise leave the first
            # request without the file tools (seen under load).
            "required": True,
            "startup_timeout_sec": 60,
            "tool_timeout_sec": max(60, int(timeout)),
        }
    args = ["exec", "--json", "--ephemeral", "--skip-git-repo-check", "--ignore-user-config", "--ignore-rules"]
    args += ["--sandbox", "read-only", "--color", "never", "--cd", str(folder / "work"), "--model", model]
    for name in DISABLED:
        args += ["--disable", name]
    for key, value in config.items():
        args += ["-c", f"{key}={toml(value)}"]
    return [*args, "-"]  # the prompt comes on stdin: a story is longer than one argument may be


def environment(folder: Path, api_key: str | None) -> dict[str, str]:
    """The CLI's whole environment: its home in the call's folder, the key, and nothing else of ours."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder / "home"),
        "CODEX_HOME": str(folder / "home"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "NO_COLOR": "1",
    }
    if api_key:
        env["OPENAI_API_KEY"] = api_key
    return env


class ToolBridge:
    """The training side of the MCP server: runs each tool call the CLI makes in the call's sandbox."""

    def __init__(self, sandbox: Sandbox, request: Request, tools: list[str], path: str, token: str) -> None:
        self.sandbox, self.request, self.tools, self.path, self.token = sandbox, request, tools, path, token
        self.calls = 0
        self._server: asyncio.AbstractServer | None = None

    async def __aenter__(self) -> ToolBridge:
        self._server = await asyncio.start_unix_server(self._handle, path=self.path, limit=64 * 1024 * 1024)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            data = json.loads(await reader.readline() or b"{}")
            reply = await self._run(data if isinstance(data, dict) else {})
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()
        except (ValueError, OSError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def _run(self, data: dict[str, Any]) -> dict[str, Any]:
        if data.get("token") != self.token:
            return {"text": "refused: not this call's tool server", "error": True}
        name, args = data.get("tool"), data.get("arguments")
        if name not in self.tools or not isinstance(args, dict):
            return {"text": f"unknown tool {name!r}", "error": True}
        self.calls += 1
        path = str(args.get("path", ""))
        try:
            output = await asyncio.to_thread(self.sandbox.run, name, {**args, "command": name})
        except (ToolError, ValueError, TypeError, OSError) as exc:
            message = str(exc) or type(exc).__name__
            self.request.on_tool(name, path, message)
            return {"text": message, "error": True}
        self.request.on_tool(name, path, None)
        return {"text": output, "error": False}
