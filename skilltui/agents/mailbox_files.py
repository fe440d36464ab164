"""The mailbox folder: where a training call waits for an answer from outside the process.

`--backend mailbox:DIR` (mailbox.py) hands each call to whoever answers DIR: a person with
`skilltui mailbox answer`, another agent that writes the files, or `skilltui mailbox serve`
(mailbox_serve.py). This module is the folder's layout and its file rules, shared by both
sides so they cannot disagree about them:

- `requests/ID.json`: one call, written once by the run (`request` below);
- `calls/ID.NAME.json`: one file-tool call the answerer asks the run to make for it;
  `results/ID.NAME.json`: the run's result of that call (its output, or why it was refused
  and the refusal's kind, a `ToolCode`);
- `answers/ID.json`: the final answer (the agent's text, optional `edits`, its usage);
- `claims/ID.pid`: the answering server that took a request (so two never answer one);
- `serving/PID.json`: a running `mailbox serve`, its backend and whether that backend is
  deterministic (the run asks, to know whether one validation pass is exact);
- `done/`: a finished call's files, moved there by the run; `discarded/`: answers the run
  would not take (an unknown or old request, not JSON), each with a line saying why.

Every file is written whole (`write_atomic`: a temporary name, then a rename), and only
names ending in `.json` are read, so neither side ever reads half a file.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.durable import pid_alive, write_atomic
from ..core.errors import UsageError

VERSION = 1
FOLDERS = ("requests", "calls", "results", "answers", "done", "discarded", "claims", "serving")


class NotJson(ValueError):
    """A mailbox file that is not a JSON object."""


@dataclass(frozen=True)
class Mailbox:
    root: Path

    @classmethod
    def open(cls, spec: str) -> Mailbox:
        """The mailbox of `mailbox:DIR` (or a bare DIR), checked to be an existing folder this process can write."""
        where = spec.removeprefix("mailbox:")
        if not where:
            raise UsageError("--backend mailbox:DIR needs a folder, e.g. --backend mailbox:./inbox")
        root = Path(where).expanduser().absolute()
        if not root.is_dir():
            raise UsageError(f"mailbox folder {root} does not exist (or is not a folder): create it first")
        probe = root / f".skilltui-probe-{os.getpid()}"
        try:
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise UsageError(
                f"mailbox folder {root} cannot be written ({exc.strerror}): pick a folder you can write"
            ) from None
        return cls(root)

    def make_folders(self) -> None:
        for name in FOLDERS:
            (self.root / name).mkdir(exist_ok=True)

    def path(self, folder: str, name: str) -> Path:
        return self.root / folder / f"{name}.json"

    def names(self, folder: str, prefix: str = "") -> list[str]:
        """The `.json` names in a folder (without the suffix), oldest name first."""
        try:
            entries = os.listdir(self.root / folder)
        except FileNotFoundError:
            return []
        return sorted(e[:-5] for e in entries if e.endswith(".json") and not e.startswith(".") and e.startswith(prefix))

    def servers(self) -> list[dict[str, Any]]:
        """What each live `mailbox serve` of this folder said of itself at its start (a dead one's is skipped)."""
        live: list[dict[str, Any]] = []
        for name in self.names("serving"):
            try:
                data = read(self.path("serving", name))
            except (FileNotFoundError, NotJson):
                continue
            pid = data.get("pid")
            if isinstance(pid, int) and not isinstance(pid, bool) and pid_alive(pid):
                live.append(data)
        return live

    def done_count(self, base: str) -> int:
        """How many requests with this stable part were answered already (each leaves ID.request in done/)."""
        return sum(1 for n in self.names("done", base + "-") if n.endswith(".request"))

    def set_aside(self, folder: str, name: str, why: str) -> bool:
        """Move an answer the run will not take to `discarded/`, with the line saying why beside it.

        Never over another: each set-aside answer gets a name of its own (the time to the
        nanosecond and a counter, reserved with O_EXCL), so a person's second try at an
        answer, refused as the first was, keeps both. False when another waiting call of
        the run moved it first (so the line is said once)."""
        source = self.path(folder, name)
        if not source.exists():
            return False
        target = _reserve(self.root / "discarded", name)
        try:
            os.replace(source, target)  # over the empty file reserved above: this call's own
        except FileNotFoundError:
            target.unlink()
            return False
        write_atomic(target.with_suffix(".why"), why + "\n")
        return True


_SET_ASIDE = itertools.count(1)


def _reserve(folder: Path, name: str) -> Path:
    """A new, empty `discarded/NAME.<UTC time to the ns>-<n>.json`: made with O_EXCL, so no other set-aside has it."""
    while True:
        ns = time.time_ns()
        stamp = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime(ns // 10**9))}.{ns % 10**9:09d}-{next(_SET_ASIDE)}"
        target = folder / f"{name}.{stamp}.json"
        try:
            os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except FileExistsError:
            continue  # another process took this instant and count: the next count is free
        return target  # its `.why` shares the reserved stem, so it is unique too


def _plain(value: Any) -> Any:
    """What JSON cannot hold as is: a set as a sorted list (the same in every process), the rest as text."""
    return sorted(value, key=str) if isinstance(value, set | frozenset) else str(value)


def write(path: Path, data: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(data, indent=1, ensure_ascii=False, default=_plain) + "\n")


def read(path: Path) -> dict[str, Any]:
    """A mailbox file as a dict; `NotJson` when it is not a JSON object (FileNotFoundError when gone)."""
    raw = path.read_bytes()
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise NotJson(f"{path.name} is not JSON ({str(exc).splitlines()[0][:80]})") from None
    if not isinstance(data, dict):
        raise NotJson(f"{path.name} is not a JSON object")
    return data


def request_base(fields: dict[str, Any]) -> str:
    """The stable part of a request id: the role and a hash of everything the call is asked.

    The same call made again after a kill hashes the same, so a resumed run finds the
    request it left and waits on it instead of asking again.
    """
    blob = json.dumps(fields, sort_keys=True, ensure_ascii=False, default=_plain).encode("utf-8")
    return f"{fields['role']}-{hashlib.sha256(blob).hexdigest()[:16]}"


def answer_text(data: dict[str, Any], name: str) -> str | None:
    """Why an answer cannot be taken, or None when it is well formed for request `name`."""
    if data.get("id") != name:
        return f"its id {data.get('id')!r} is not {name!r}"
    if not isinstance(data.get("text", ""), str) or not isinstance(data.get("error", ""), str):
        return "its text (or error) is not a string"
    edits = data.get("edits", [])
    if not isinstance(edits, list) or not all(isinstance(e, dict) and isinstance(e.get("command"), str) for e in edits):
        return 'its edits are not a list of {"command": ..., ...} objects'
    return None
