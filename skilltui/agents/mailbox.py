"""The `mailbox:DIR` backend: every training call is a request file that a person or another agent answers.

Forward, loss, reduce and backward are asked of whoever answers the folder DIR (its layout:
mailbox_files.py). A call writes `requests/ID.json` (its role, system text, task, context,
the roots it may read and write, the tools it may use) and waits for `answers/ID.json`.

Edits never bypass the sandbox: the answerer does not write into the run. It asks the run
to make each file-tool call for it (`calls/ID.NAME.json`, answered in `results/`), or lists
its edits in the answer (`edits`), and this process makes every one of them through the
call's own `Sandbox`: the same roots, the same refusals (a writer asking for a human
episode is refused here, whoever it is), the same read trace, the same `commit` with its
checks, the same history tools. So a mailbox run is confined exactly as an API run is,
and the events are the same: each tool call is reported as the engine's other backends
report theirs.

- The id is the role and a hash of what is asked, plus the attempt number: a run killed
  while it waits and started again finds its request still in `requests/` and waits on
  it (the file is not written again), and a call already answered is asked afresh.
- An answer whose request is not waiting (an old one, or a wrong id) and an answer that is
  not JSON are moved to `discarded/` with one line (on stderr and beside the file); the
  request keeps waiting.
- A request deleted while its call waits is written again at the next look, said in one
  line: only the run moves a request away (to `done/`, once answered).
- A call waits at most its role's timeout (`--forward-timeout` and the rest); then it
  fails like any call, and its request stays in `requests/` for a later answer to be taken
  when the run resumes.
- The run counts the answerer as deterministic (one validation pass is exact) only while
  every live `mailbox serve` of the folder says its backend is (`serving/`).
- Usage and cost are what the answer says (`skilltui mailbox serve` reports its backend's);
  a person's answer has no price.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .base import BackendBase, BackendError, CallResult, FatalBackendError, Request, Usage
from .mailbox_files import VERSION, Mailbox, NotJson, answer_text, read, request_base, write
from .tools import Sandbox, ToolCode, ToolError

POLL = 0.01  # seconds between looks at the folder while the answerer is busy
MAX_POLL = 0.5  # the look-again interval once nothing has moved for a while (a person answering)
USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens", "cache_write_1h_tokens")


def tool_names(sandbox: Sandbox) -> list[str]:
    """The file tools a call may use, as the other backends offer them."""
    names = ["view", "create", "str_replace", "insert", "delete"]
    if sandbox.on_commit is not None:
        names.append("commit")
    if sandbox.history is not None:
        names += ["pool_log", "pool_show"]
    return names


def _stderr(line: str) -> None:
    print(f"mailbox: {line}", file=sys.stderr, flush=True)


class MailboxBackend(BackendBase):
    """Calls answered through a folder. One instance serves every role and every work."""

    name = "mailbox"

    def __init__(self, spec: str, model: str | None = None, *, say: Callable[[str], None] | None = None) -> None:
        self.box = Mailbox.open(spec)
        self.box.make_folders()
        self.model = model or "mailbox"
        self.say = say or _stderr

    @property
    def deterministic(self) -> bool:
        """True while a `mailbox serve` answers this folder and every one that does says its backend is.

        The gate reads it to know whether one validation pass is exact, so a run served by the
        offline backend validates as the offline run does (same passes, same figures in its
        commits). Nobody serving (a person answers) is not deterministic."""
        servers = self.box.servers()
        return bool(servers) and all(s.get("deterministic") is True for s in servers)

    async def text(self, request: Request) -> CallResult:
        return await self._call(request, None)

    async def agent(self, request: Request, sandbox: Sandbox) -> CallResult:
        return await self._call(request, sandbox)

    # -- one call -----------------------------------------------------------------------------

    def _fields(self, request: Request, sandbox: Sandbox | None) -> dict[str, Any]:
        """What the call asks: the part of the request the id is a hash of."""
        files = None
        if sandbox is not None:
            files = {
                "read": [str(p) for p in sandbox.read_roots],
                "write": [str(p) for p in sandbox.write_roots],
                "denied": [str(p) for p in sandbox.denied],
                "base": str(sandbox.folder),
                "traced": str(sandbox.traced) if sandbox.traced else None,
            }
        return {
            "mailbox": VERSION,
            "role": request.role,
            "kind": "text" if sandbox is None else "agent",
            "model": request.model,
            "system": request.system,
            "lead": request.lead,
            "prefix": request.prefix,
            "prompt": request.prompt,
            "context": request.context,
            "files": files,
            "tools": tool_names(sandbox) if sandbox is not None else [],
            "max_turns": request.max_turns,
        }

    async def _call(self, request: Request, sandbox: Sandbox | None) -> CallResult:
        fields = self._fields(request, sandbox)
        base = request_base(fields)
        waiting = self.box.names("requests", base + "-")
        rid = waiting[0] if waiting else f"{base}-{self.box.done_count(base) + 1}"
        path = self.box.path("requests", rid)
        asked = {"id": rid, **fields, "timeout": request.timeout}
        if not waiting:
            write(path, {**asked, "written_at": _now()})
        else:
            self.say(f"waiting again on request {rid} (asked before: the run was resumed, or the call is retried)")
        transcript: list[dict[str, Any]] = [
            {"event": "request", "id": rid, "file": str(path), "resumed": bool(waiting)}
        ]
        deadline = time.monotonic() + request.timeout
        delay = POLL
        while True:
            # Before answers are sorted: an answer to a request deleted a moment ago is this call's, not unknown.
            self._ask_again_if_deleted(path, asked, transcript)
            self._discard_unknown()
            moved = await self._run_calls(rid, fields["tools"], sandbox, request, transcript)
            answer = self._answer(rid)
            if answer is not None:
                break
            if time.monotonic() > deadline:
                where = (
                    f"it stays in {self.box.root}/requests: answer it"
                    if path.exists()
                    else f"its request was deleted from {self.box.root}/requests:"
                )
                error = BackendError(
                    f"no answer to mailbox request {rid} in {request.timeout:g}s; {where} "
                    "run the same command to resume"
                )
                error.partial = CallResult(text="", model=self.model, transcript=transcript, turns=0)
                raise error
            await asyncio.sleep(delay)
            delay = POLL if moved else min(MAX_POLL, delay * 1.5)
        for edit in answer.get("edits", []):
            await self._tool(edit, fields["tools"], sandbox, request, transcript)
        self._finish(rid)
        result = self._result(request, answer, transcript)
        if answer.get("error"):
            # The answerer's backend failed (`mailbox serve` passes its error on): the call fails the same way.
            failed = (FatalBackendError if answer.get("fatal") is True else BackendError)(
                f"the mailbox answerer failed: {answer['error']}"
            )
            failed.partial = result
            raise failed
        return result

    def _result(self, request: Request, answer: dict[str, Any], transcript: list[dict[str, Any]]) -> CallResult:
        text = answer.get("text") or ""
        request.on_delta(text)
        given = answer.get("usage")
        spent = given if isinstance(given, dict) else {}
        usage = Usage(**{k: int(spent.get(k) or 0) for k in USAGE_FIELDS})
        cost = answer.get("cost_usd")
        cost = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0 else None
        transcript.append({"event": "answer", **{k: v for k, v in answer.items() if k != "edits"}})
        model = answer.get("model") if isinstance(answer.get("model"), str) else None
        turns = answer.get("turns")
        return CallResult(
            text=text,
            usage=usage,
            cost_usd=cost,
            model=model or request.model or self.model,
            transcript=transcript,
            turns=turns if isinstance(turns, int) and turns > 0 else 1,
        )

    # -- the folder ---------------------------------------------------------------------------

    def _ask_again_if_deleted(self, path: Path, asked: dict[str, Any], transcript: list[dict[str, Any]]) -> None:
        """A request deleted while its call waits (by hand, or by a tool that cleans folders) is written again.

        Only the run moves a request away (to done/, with its answer), so a missing one while
        the call waits was deleted from outside: without it no answerer can see the call, and
        the run would wait out the whole timeout for an answer nobody can give."""
        if path.exists():
            return
        write(path, {**asked, "written_at": _now(), "written_again": True})
        transcript.append({"event": "request_written_again", "id": asked["id"]})
        self.say(
            f"request {asked['id']} was deleted from {self.box.root}/requests while the run waited for it; "
            "written again (the run moves a request away itself once it is answered)"
        )

    def _discard_unknown(self) -> None:
        """Answers to no waiting request (an old one, a mistyped id) go to discarded/, each said in one line."""
        for name in self.box.names("answers"):
            if not self.box.path("requests", name).exists():
                why = f"answer {name} discarded: no request {name} waits in {self.box.root}/requests (old or unknown)"
                if self.box.set_aside("answers", name, why):
                    self.say(why)

    def _answer(self, rid: str) -> dict[str, Any] | None:
        path = self.box.path("answers", rid)
        try:
            data = read(path)
        except FileNotFoundError:
            return None
        except NotJson as exc:
            why = f"answer {rid} discarded: {exc}; the request still waits for an answer"
        else:
            problem = answer_text(data, rid)
            if problem is None:
                return data
            why = f"answer {rid} discarded: {problem}; the request still waits for an answer"
        if self.box.set_aside("answers", rid, why):
            self.say(why)
        return None

    async def _run_calls(
        self, rid: str, tools: list[str], sandbox: Sandbox | None, request: Request, transcript: list[dict[str, Any]]
    ) -> bool:
        """Make the tool calls the answerer asked for and has no result for yet; True when there were any."""
        moved = False
        for name in self.box.names("calls", rid + "."):
            result = self.box.path("results", name)
            if result.exists():
                continue  # made before (by this process, or by the run before it was killed)
            moved = True
            try:
                data = read(self.box.path("calls", name))
            except FileNotFoundError:
                continue
            except NotJson as exc:
                outcome: dict[str, Any] = {"error": str(exc)}
            else:
                outcome = await self._tool(data.get("call"), tools, sandbox, request, transcript)
            write(result, {"id": rid, "name": name, **outcome})
        return moved

    async def _tool(
        self,
        call: Any,
        tools: list[str],
        sandbox: Sandbox | None,
        request: Request,
        transcript: list[dict[str, Any]],
    ) -> dict[str, Any]:
        """One file-tool call made through the sandbox; reported to the engine as every backend reports one."""
        if not isinstance(call, dict) or not isinstance(call.get("command"), str):
            return {
                "error": 'a call is {"command": ..., ...} with the tool\'s arguments',
                "code": ToolCode.BAD_ARGUMENT.value,
            }
        command = call["command"]
        path = str(call.get("path", ""))
        error: str | None = None
        code = ToolCode.NO_TOOL
        output = ""
        if sandbox is None:
            error = "this call has no file tools"
        elif command not in (*tools, "read_text"):
            error = f"{command} is not one of this call's tools ({', '.join(tools)})"
        else:
            try:
                if command == "read_text":  # a file whole, without line numbers: what an offline agent reads
                    output = await asyncio.to_thread(sandbox.read_text, path)
                else:
                    output = await asyncio.to_thread(sandbox.run, command, dict(call))
            except (ToolError, ValueError, TypeError, OSError) as exc:
                error = str(exc) or type(exc).__name__
                code = exc.code if isinstance(exc, ToolError) else ToolCode.FAILED
        request.on_tool("view" if command == "read_text" else command, path, error)
        args = {k: v for k, v in call.items() if k != "command"}
        if error is not None:
            transcript.append({"tool": command, "input": args, "error": error})
            # The refusal's kind goes back with its words: an agent that acts on the code (the
            # offline optimizer retries a leak with other examples) must act as it does in process.
            return {"error": error, "code": code.value}
        transcript.append({"tool": command, "input": args, "result": output[:2000]})
        return {"output": output}

    def _finish(self, rid: str) -> None:
        """The answered call's files go to done/ (answer first, so no one sees an answer without its request)."""
        done = self.box.root / "done"
        os.replace(self.box.path("answers", rid), done / f"{rid}.answer.json")
        with contextlib.suppress(FileNotFoundError):  # deleted from outside while the edits were made
            os.replace(self.box.path("requests", rid), done / f"{rid}.request.json")
        for folder in ("calls", "results"):
            for name in self.box.names(folder, rid + "."):
                with contextlib.suppress(FileNotFoundError):
                    self.box.path(folder, name).unlink()
        with contextlib.suppress(FileNotFoundError):
            (self.box.root / "claims" / f"{rid}.pid").unlink()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
