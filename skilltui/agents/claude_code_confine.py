"""What keeps the `claude-code` backend inside the sandbox: its tools, its permission rules, its quiet.

Claude Code's own tools are switched off and the agent gets the project's file tools
(`TOOL_SPECS`) as an in-process MCP server; as a second line, the session carries
permission rules scoped to the role's roots (`permissions`), and the CLI process sends
nothing but the agent's own requests (`QUIET_ENV`). The backend (claude_code.py) runs the
calls; this module is the confinement it relies on, apart so it can be read and reviewed
on its own: it is the part that keeps the writer from the human episodes.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from .pool_history import LOG_DESCRIPTION, LOG_SCHEMA, SHOW_DESCRIPTION, SHOW_SCHEMA

# Only the agent's own requests leave the CLI: no title-generation request that resends
# the whole task (loss prompts hold the human episodes), no telemetry, error reports,
# update checks or surveys, and a training run never updates the CLI under itself or keeps
# a prompt history.
QUIET_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    "CLAUDE_CODE_SKIP_PROMPT_HISTORY": "1",
}

# The file tools as MCP tools: one per command, each with its JSON schema.
_PATH = {"type": "string", "description": "An absolute path, or one relative to your working folder."}
TOOL_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "view": (
        "Show a file with line numbers, or list a folder.",
        {
            "type": "object",
            "properties": {
                "path": _PATH,
                "view_range": {
                    "type": "array",
                    "items": {"type": "integer"},
                    "minItems": 2,
                    "maxItems": 2,
                    "description": "Optional [first_line, last_line]; -1 as last means the end.",
                },
            },
            "required": ["path"],
        },
    ),
    "create": (
        "Create or overwrite a file with the given text.",
        {
            "type": "object",
            "properties": {"path": _PATH, "file_text": {"type": "string"}},
            "required": ["path", "file_text"],
        },
    ),
    "str_replace": (
        "Replace one exact, unique occurrence of old_str in a file with new_str.",
        {
            "type": "object",
            "properties": {"path": _PATH, "old_str": {"type": "string"}, "new_str": {"type": "string"}},
            "required": ["path", "old_str"],
        },
    ),
    "insert": (
        "Insert text after line insert_line of a file (0 inserts at the top).",
        {
            "type": "object",
            "properties": {"path": _PATH, "insert_line": {"type": "integer"}, "insert_text": {"type": "string"}},
            "required": ["path", "insert_line", "insert_text"],
        },
    ),
    "delete": (
        "Delete one file you may write.",
        {"type": "object", "properties": {"path": _PATH}, "required": ["path"]},
    ),
    "commit": (
        "Record all your edits as exactly one git commit with this message. Call it once, "
        "after your last edit; with no edits it records an empty commit.",
        {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    ),
    "pool_log": (LOG_DESCRIPTION, LOG_SCHEMA),
    "pool_show": (SHOW_DESCRIPTION, SHOW_SCHEMA),
}


def permissions(read_roots: list[Path], write_roots: list[Path], denied: list[Path]) -> dict[str, Any]:
    """Permission rules scoped to the role's roots; `//` marks an absolute path in Claude Code rules."""

    def rule(tool: str, root: Path) -> str:
        return f"{tool}(/{root.as_posix()}/**)" if root.is_dir() or not root.exists() else f"{tool}(/{root.as_posix()})"

    allow = [rule("Read", r) for r in read_roots + write_roots]
    allow += [rule(t, r) for r in write_roots for t in ("Edit", "Write")]
    deny = ["Bash", "WebFetch", "WebSearch", "NotebookEdit"]
    deny += [rule(t, d) for d in denied for t in ("Read", "Edit", "Write")]
    # The pool's git folder (its config, its hooks) is read-only to every agent: a config can make git run a program.
    deny += [f"{t}(/{(r / '.git').as_posix()}/**)" for r in write_roots for t in ("Edit", "Write")]
    return {"permissions": {"allow": allow, "deny": deny, "defaultMode": "dontAsk"}}


def find_cli(sdk: Any) -> str:
    bundled = Path(sdk.__file__).parent / "_bundled" / "claude"
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return str(bundled)
    found = shutil.which("claude")
    if found:
        return found
    raise UsageError(
        "--backend claude-code found no Claude Code executable: reinstall "
        "'skilltui[claude-code]' or put `claude` on PATH"
    )
