"""One tool call of an agent, run in its sandbox: the step every backend's tool loop shares.

The `anthropic` and `openai` backends offer the project's file tools in their own dialect
(Anthropic's text editor tool, or one JSON-schema function per command), but a call is run
the same way whatever named it: the tool's name is mapped to a `Sandbox` command, the
command runs off the event loop (the commit tool runs git, and the app must not stall), a
refusal becomes the text the model is told (it can act on it; it never ends the call), the
engine hears of it through `request.on_tool`, and the transcript keeps it. A call cut off
by the output limit is not run at all: half a file written is worse than none.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .anthropic_call import Call
from .base import Request
from .tools import Sandbox, ToolError

CUT_OFF = (
    "This call was cut off at the output limit before it was complete, so it was not "
    "run. Write in smaller pieces: create the file with a first part, then insert the rest."
)


async def run_tool(
    call_id: Any, name: str, args: dict[str, Any], commands: dict[str, str | None], call: Call, ctx: ToolContext
) -> tuple[str, str | None]:
    """Run tool `name` with `args`; (what the model is told, why it was refused or None).

    `commands` maps each offered tool name to its sandbox command; None means the command
    is named in the input (the text editor tool's `command`).
    """
    known = name in commands
    command = (commands[name] or str(args.get("command", ""))) if known else ""
    label = command or name
    path = str(args.get("path", ""))
    error: str | None = None
    output = ""
    if ctx.cut:
        error = CUT_OFF
    elif not known:
        error = f"unknown tool {name!r}; use {', '.join(commands)}"
    else:
        try:
            output = await asyncio.to_thread(ctx.sandbox.run, command, args)
        except (ToolError, ValueError, TypeError, OSError) as exc:
            error = str(exc) or type(exc).__name__
    if error is not None:
        output = error
    ctx.request.on_tool(label, path, error)
    call.record(
        {
            "event": "tool",
            "turn": call.turns,
            "id": call_id,
            "name": name,
            "input": args,
            "ok": error is None,
            "result": output,
        }
    )
    return output, error


class ToolContext:
    """Where a tool call runs and for whom: the sandbox, the request, and whether it was cut off."""

    def __init__(self, sandbox: Sandbox, request: Request, *, cut: bool = False) -> None:
        self.sandbox = sandbox
        self.request = request
        self.cut = cut
