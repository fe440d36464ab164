"""The project's file tools as the `openai` backend offers them: one JSON-schema function per command.

Models behind the chat-completions protocol know no text editor tool of their own, so each
sandbox command is a function with plain argument names (`view`, `create`, `str_replace`,
`insert`, `delete_file`, and for the backward agent `commit`, `pool_log`, `pool_show`).
Kept apart from the backend so `--estimate` can size them without the `openai` extra.
"""

from __future__ import annotations

from typing import Any

from .pool_history import LOG_DESCRIPTION, LOG_SCHEMA, SHOW_DESCRIPTION, SHOW_SCHEMA
from .tools import Sandbox


def function(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}


_PATH = {"type": "string", "description": "The file or folder, relative to the notes folder or absolute."}
FILE_TOOLS: list[dict[str, Any]] = [
    function(
        "view",
        "Show a file with numbered lines, or list a folder. view_range [first, last] shows part of a long file "
        "(last -1: to the end).",
        {"path": _PATH, "view_range": {"type": "array", "items": {"type": "integer"}}},
        ["path"],
    ),
    function(
        "create",
        "Write a whole file (made, or replaced if it exists).",
        {"path": _PATH, "file_text": {"type": "string", "description": "The file's whole text."}},
        ["path", "file_text"],
    ),
    function(
        "str_replace",
        "Replace one exact, unique piece of a file's text with another.",
        {"path": _PATH, "old_str": {"type": "string"}, "new_str": {"type": "string"}},
        ["path", "old_str", "new_str"],
    ),
    function(
        "insert",
        "Insert text after line insert_line of a file (0: at the top).",
        {"path": _PATH, "insert_line": {"type": "integer"}, "insert_text": {"type": "string"}},
        ["path", "insert_line", "insert_text"],
    ),
    function(
        "delete_file",
        "Delete one file you are allowed to write, for example a note that should no longer exist.",
        {"path": _PATH},
        ["path"],
    ),
]
COMMIT_TOOL = function(
    "commit",
    "Record all your edits as exactly one git commit with this message. Call it once, after your last edit; "
    "with no edits it records an empty commit, which means nothing was worth changing.",
    {"message": {"type": "string", "description": "The commit message."}},
    ["message"],
)
HISTORY_TOOLS = [
    {"type": "function", "function": {"name": "pool_log", "description": LOG_DESCRIPTION, "parameters": LOG_SCHEMA}},
    {"type": "function", "function": {"name": "pool_show", "description": SHOW_DESCRIPTION, "parameters": SHOW_SCHEMA}},
]
# Tool name -> sandbox command.
COMMANDS: dict[str, str | None] = {
    "view": "view",
    "create": "create",
    "str_replace": "str_replace",
    "insert": "insert",
    "delete_file": "delete",
    "commit": "commit",
    "pool_log": "pool_log",
    "pool_show": "pool_show",
}
CUT_NOTE = "Your answer was cut off at the output limit. Continue with tool calls, and keep each call small."


def tools_for(sandbox: Sandbox) -> list[dict[str, Any]]:
    tools = [dict(t) for t in FILE_TOOLS]
    if sandbox.on_commit is not None:
        tools.append(dict(COMMIT_TOOL))
    if sandbox.history is not None:
        tools += [dict(t) for t in HISTORY_TOOLS]
    return tools
