"""The MCP server the Codex CLI is given: the project's file tools, made by the training process.

`--backend codex` switches the CLI's own tools off (codex_confine.py) and names this module
as its only MCP server, over stdio. The CLI starts it as `python -m skilltui.agents.codex_mcp
SOCKET TOKEN TOOLS`; it lists the tools (the same specs the `claude-code` backend gives its
CLI) and passes every call, as one JSON line, to the training process over the Unix socket
SOCKET, where the call's `Sandbox` makes it: the same roots, refusals, read trace and
`commit`. This process never touches a file itself, so whatever the CLI asks, the sandbox
decides.

It speaks just what the CLI needs of MCP (JSON-RPC 2.0, one message per line on stdin and
stdout): `initialize`, `tools/list`, `tools/call`, `ping`; notifications are read and dropped.
"""

from __future__ import annotations

import json
import socket
import sys
from typing import Any, TextIO

from .claude_code_confine import TOOL_SPECS

SERVER_INFO = {"name": "skilltui-files", "version": "1"}


def tool_list(names: list[str]) -> list[dict[str, Any]]:
    return [{"name": n, "description": TOOL_SPECS[n][0], "inputSchema": TOOL_SPECS[n][1]} for n in names]


def relay(path: str, token: str, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    """One tool call made by the training process: (its text, whether it is an error)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        conn.sendall(json.dumps({"token": token, "tool": name, "arguments": arguments}).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
    reply = json.loads(data or b'{"text": "the training process did not answer", "error": true}')
    return str(reply.get("text", "")), bool(reply.get("error"))


def handle(message: dict[str, Any], names: list[str], path: str, token: str) -> dict[str, Any] | None:
    """The reply to one JSON-RPC message (None for a notification)."""
    if "id" not in message:
        return None
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": SERVER_INFO,
        }
    elif method == "tools/list":
        result = {"tools": tool_list(names)}
    elif method == "tools/call":
        name = params.get("name")
        if name not in names:
            result = {"content": [{"type": "text", "text": f"unknown tool {name!r}"}], "isError": True}
        else:
            try:
                text, error = relay(path, token, name, params.get("arguments") or {})
            except OSError as exc:
                text, error = f"the training process cannot be reached ({exc})", True
            result = {"content": [{"type": "text", "text": text}], "isError": error}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def serve(stdin: TextIO, stdout: TextIO, names: list[str], path: str, token: str) -> None:
    for line in stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        reply = handle(message, names, path, token) if isinstance(message, dict) else None
        if reply is not None:
            stdout.write(json.dumps(reply) + "\n")
            stdout.flush()


if __name__ == "__main__":
    sock, secret, tools = sys.argv[1], sys.argv[2], [t for t in sys.argv[3].split(",") if t]
    serve(sys.stdin, sys.stdout, tools, sock, secret)
