"""`skilltui mailbox serve DIR --backend X`: a mailbox's requests answered by another backend.

The answering side of `--backend mailbox:DIR` (mailbox.py). Each waiting request is claimed
(`claims/ID.pid`, made exclusively, so two servers never answer one request; the claim of a
server that died is taken over) and handed to the backend X as the same `Request` the run
made. An agent call gets a `RemoteSandbox`: the request's roots, but every file-tool call
is written to `calls/` and made by the run, through the run's own sandbox, whose result
comes back in `results/`. So the answering agent reads what the run's sandbox lets it read
and writes nothing the run's sandbox would refuse, and a commit is checked by the run as
always. This is also how the tests drive a mailbox run with a second process.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import os
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.durable import pid_alive
from .base import Backend, BackendError, CallResult, FatalBackendError, Request
from .mailbox import MAX_POLL, POLL
from .mailbox_files import Mailbox, NotJson, read, write
from .tools import Sandbox, ToolCode, ToolError


class RemoteSandbox(Sandbox):
    """A sandbox whose every tool call is made by the run that asked, in its own sandbox."""

    def __init__(self, box: Mailbox, rid: str, files: dict[str, Any], tools: list[str]) -> None:
        super().__init__(
            read_roots=[Path(p) for p in files["read"]],
            write_roots=[Path(p) for p in files["write"]],
            denied=[Path(p) for p in files["denied"]],
            traced=Path(files["traced"]) if files.get("traced") else None,
            base=Path(files["base"]),
        )
        self.box, self.rid = box, rid
        self._names = (f"{rid}.{secrets.token_hex(3)}-{n:04d}" for n in itertools.count(1))
        self._lock = threading.Lock()
        self.on_commit = self._commit if "commit" in tools else None
        self.history = _RemoteHistory(self) if "pool_log" in tools else None

    def _commit(self, message: str) -> str:
        return self.ask({"command": "commit", "message": message})

    def ask(self, call: dict[str, Any]) -> str:
        """One call written to calls/, its result waited for in results/ (or a ToolError saying why not)."""
        with self._lock:
            name = next(self._names)
        write(self.box.path("calls", name), {"id": self.rid, "call": call})
        result = self.box.path("results", name)
        delay = POLL
        while True:
            try:
                data = read(result)
                break
            except FileNotFoundError:
                pass
            except NotJson as exc:
                raise ToolError(str(exc)) from None
            if not self.box.path("requests", self.rid).exists():
                raise ToolError(f"the run no longer waits for request {self.rid}")
            time.sleep(delay)  # an agent's tool calls run in a worker thread, never on the event loop
            delay = min(MAX_POLL, delay * 1.5)
        if "error" in data:
            raise ToolError(str(data["error"]), _code(data.get("code")))
        return str(data.get("output", ""))

    def run(self, name: str, args: dict) -> str:
        return self.ask({**args, "command": args.get("command", name)})

    def view(self, path: str, view_range: list[int] | None = None) -> str:
        return self.ask({"command": "view", "path": path, **({"view_range": view_range} if view_range else {})})

    def read_text(self, path: str) -> str:
        return self.ask({"command": "read_text", "path": path})

    def create(self, path: str, file_text: str) -> str:
        return self.ask({"command": "create", "path": path, "file_text": file_text})

    def str_replace(self, path: str, old_str: str, new_str: str = "") -> str:
        return self.ask({"command": "str_replace", "path": path, "old_str": old_str, "new_str": new_str})

    def insert(self, path: str, insert_line: int, insert_text: str) -> str:
        return self.ask({"command": "insert", "path": path, "insert_line": insert_line, "insert_text": insert_text})

    def delete(self, path: str) -> str:
        return self.ask({"command": "delete", "path": path})

    def commit(self, message: str) -> str:
        if self.on_commit is None:
            raise ToolError("this agent has no commit tool", ToolCode.NO_TOOL)
        return self.on_commit(message)

    def pool_log(self, limit: int = 20) -> str:
        return self.ask({"command": "pool_log", "limit": limit})

    def pool_show(self, rev: str, path: str | None = None) -> str:
        return self.ask({"command": "pool_show", "rev": rev, **({"path": path} if path else {})})


def _code(value: object) -> ToolCode:
    """The refusal's kind as the run's sandbox said it; FAILED for a result that names none (or none known)."""
    try:
        return ToolCode(value) if isinstance(value, str) else ToolCode.FAILED
    except ValueError:
        return ToolCode.FAILED


@dataclasses.dataclass
class _RemoteHistory:
    sandbox: RemoteSandbox

    def log(self, limit: int = 20) -> str:
        return self.sandbox.pool_log(limit)

    def show(self, rev: str, path: str | None = None) -> str:
        return self.sandbox.pool_show(rev, path)


def claim(box: Mailbox, rid: str) -> bool:
    """Take request `rid` for this process; False when a live server has it."""
    path = box.root / "claims" / f"{rid}.pid"
    path.parent.mkdir(exist_ok=True)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        try:
            holder = int(path.read_text().strip() or 0)
        except (OSError, ValueError):
            holder = 0
        if holder == os.getpid() or pid_alive(holder):
            return False
        path.write_text(str(os.getpid()))  # its server died; this one answers instead
        return True
    with os.fdopen(fd, "w") as f:
        f.write(str(os.getpid()))
    return True


async def answer_one(box: Mailbox, rid: str, backend: Backend) -> dict[str, Any] | None:
    """Ask `backend` what request `rid` asks and write its answer; the answer is returned (None: not written)."""
    data = read(box.path("requests", rid))
    request = Request(
        role=data["role"],
        prompt=data.get("prompt", ""),
        system=data.get("system", ""),
        prefix=data.get("prefix", ""),
        lead=data.get("lead", ""),
        model=data.get("model"),
        context=data.get("context") or {},
        max_turns=int(data.get("max_turns") or 40),
        timeout=float(data.get("timeout") or 1800.0),
    )
    answer: dict[str, Any] = {"id": rid, "answered_by": backend.name}
    result: CallResult | None
    try:
        if data.get("kind") == "text":
            result = await backend.text(request)
        else:
            sandbox = RemoteSandbox(box, rid, data["files"], list(data.get("tools") or []))
            result = await backend.agent(request, sandbox)
    except BackendError as exc:
        answer.update(error=str(exc) or type(exc).__name__, fatal=isinstance(exc, FatalBackendError))
        result = exc.partial
    if result is not None:
        answer.update(
            text=result.text,
            usage=dataclasses.asdict(result.usage),
            cost_usd=result.cost_usd,
            model=result.model,
            turns=result.turns,
            transcript=result.transcript,
        )
    if box.path("requests", rid).exists():  # a run that gave the request up takes no answer to it
        write(box.path("answers", rid), answer)
        return answer
    # Its request was deleted while this server answered: the claim goes, so that the request
    # the run writes again (mailbox.py) is taken afresh, by this server or another.
    with contextlib.suppress(FileNotFoundError):
        (box.root / "claims" / f"{rid}.pid").unlink()
    return None


async def serve(box: Mailbox, backend: Backend, *, count: int | None, say: Callable[[str], None]) -> int:
    """Answer requests as they come, several at once, until `count` are answered (forever without it)."""
    box.make_folders()
    # Said while it serves: a run asks whether its answers are deterministic (mailbox.py).
    me = box.path("serving", str(os.getpid()))
    write(me, {"pid": os.getpid(), "backend": backend.name, "deterministic": backend.deterministic is True})
    try:
        return await _serve(box, backend, count=count, say=say)
    finally:
        with contextlib.suppress(FileNotFoundError):
            me.unlink()


async def _serve(box: Mailbox, backend: Backend, *, count: int | None, say: Callable[[str], None]) -> int:
    taken: set[str] = set()
    running: dict[asyncio.Task[dict[str, Any] | None], str] = {}
    answered = 0
    delay = POLL
    while count is None or answered < count:
        moved = False
        for rid in box.names("requests"):
            if rid in taken or box.path("answers", rid).exists() or not claim(box, rid):
                continue
            taken.add(rid)
            running[asyncio.create_task(answer_one(box, rid, backend))] = rid
            moved = True
        for task in [t for t in running if t.done()]:
            rid = running.pop(task)
            moved = True
            try:
                answer = task.result()
            except Exception as exc:  # noqa: BLE001 - one request that cannot be answered never stops the server
                say(f"request {rid} was not answered: {type(exc).__name__}: {exc}")
                continue
            if answer is None:
                taken.discard(rid)  # written again by the run, it is answered again
                say(f"request {rid} was deleted while it was being answered; its answer was not written")
                continue
            answered += 1
            what = f"error: {answer['error']}" if "error" in answer else f"{len(answer.get('text', ''))} characters"
            say(f"answered {rid} with {backend.name} ({what})")
        await asyncio.sleep(POLL if moved else delay)
        delay = POLL if moved else min(MAX_POLL, delay * 1.5)
    return 0
