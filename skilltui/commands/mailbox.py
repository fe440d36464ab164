"""`skilltui mailbox list|answer|serve DIR`: the other side of `train --backend mailbox:DIR`.

A run with `--backend mailbox:DIR` leaves every call as a request in DIR and waits for its
answer (skilltui/agents/mailbox.py). `list` shows what waits, `answer` is how a person
answers one, `serve` answers them all with another backend (the offline one, Claude...).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import UsageError
from . import command
from .settings_flags import add_setting_flags

if TYPE_CHECKING:
    from ..agents.mailbox_files import Mailbox

SERVE_SETTINGS = ("offline_noise", "offline_noise_call")
SERVE_MEANS = {
    "offline_noise": "with --backend offline: the share P of paragraphs its writer garbles, as `train "
    "--offline-noise P` (default {default:g}: deterministic)",
    "offline_noise_call": "with --backend offline: the chance P that a writing call ignores its notes, as "
    "`train --offline-noise-call P` (default {default:g})",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "mailbox", cmd_mailbox)
    box = p.add_subparsers(dest="mailbox_command", metavar="ACTION", required=True)
    listing = command(box, "list", cmd_list)
    listing.add_argument("dir", type=Path, metavar="DIR", help="the mailbox folder")
    answer = command(box, "answer", cmd_answer)
    answer.add_argument("dir", type=Path, metavar="DIR", help="the mailbox folder")
    answer.add_argument("id", metavar="ID", help="the request's id (see `skilltui mailbox list DIR`)")
    given = answer.add_mutually_exclusive_group(required=True)
    given.add_argument("--text", default=None, help="the agent's final answer, as text")
    given.add_argument(
        "--file",
        type=Path,
        default=None,
        metavar="F",
        help='a JSON answer: {"text": "...", "edits": [{"command": "create", "path": "...", "file_text": "..."}]}',
    )
    serve = command(box, "serve", cmd_serve)
    serve.add_argument("dir", type=Path, metavar="DIR", help="the mailbox folder")
    from ..agents import backend_arg

    serve.add_argument(
        "--backend", type=backend_arg, required=True, metavar="BACKEND", help="who answers (not a mailbox)"
    )
    serve.add_argument("--model", default=None, help="the model the answering backend calls")
    serve.add_argument("--count", type=int, default=None, metavar="N", help="stop after N answers (default: never)")
    # The offline writer's noise, declared once with train's: a noisy offline run is served as it runs.
    add_setting_flags(serve, SERVE_SETTINGS, about=SERVE_MEANS)
    # Stopping the server stops no run: the run waits, and its requests with it.
    serve.set_defaults(stop_hint="the requests not yet answered wait in DIR; serve them with the same command")


def cmd_mailbox(args: argparse.Namespace) -> int:
    """Answer a mailbox run's calls: list them, answer one by hand, or serve them with a backend.

    A run trained with --backend mailbox:DIR writes each call as DIR/requests/ID.json and
    waits for DIR/answers/ID.json.
    """
    return 0  # argparse requires an ACTION; each has its own handler


def _open(folder: Path) -> Mailbox:
    from ..agents.mailbox_files import Mailbox

    return Mailbox.open(str(folder))


def cmd_list(args: argparse.Namespace) -> int:
    """List the requests that wait in a mailbox, oldest first."""
    from ..agents.mailbox_files import NotJson, read

    box = _open(args.dir)
    names = box.names("requests")
    for rid in names:
        try:
            data = read(box.path("requests", rid))
        except (OSError, NotJson):
            continue
        if box.path("answers", rid).exists():
            state = "answered, not yet taken by the run"
        elif (box.root / "claims" / f"{rid}.pid").exists():
            state = "being answered by `mailbox serve`"
        else:
            state = "waiting"
        print(f"{rid}  {data.get('kind', '?'):5}  written {data.get('written_at', '?')}  {state}")
    done, discarded = len(box.names("done")) // 2, len(box.names("discarded"))
    print(f"{len(names)} waiting in {box.root}/requests; {done} answered; {discarded} answers discarded")
    return 0


def cmd_answer(args: argparse.Namespace) -> int:
    """Answer one request of a mailbox, as the agent would: its final text, optionally with file edits.

    Edits are made by the run through the call's sandbox, so an edit outside the roots the
    request names is refused there, as a model's would be.
    """
    from ..agents.mailbox_files import NotJson, answer_text, read, write

    box = _open(args.dir)
    if not box.path("requests", args.id).exists():
        raise UsageError(
            f"no request {args.id} waits in {box.root}/requests: `skilltui mailbox list {args.dir}` shows those that do"
        )
    target = box.path("answers", args.id)
    if target.exists():
        raise UsageError(f"request {args.id} has an answer already ({target}); the run takes it at its next look")
    if args.file is not None:
        try:
            data = read(args.file)
        except FileNotFoundError:
            raise UsageError(f"answer file {args.file} does not exist") from None
        except NotJson as exc:
            raise UsageError(f'answer file {exc}: write a JSON object such as {{"text": "..."}}') from None
        except OSError as exc:
            raise UsageError(f"answer file {args.file} cannot be read ({exc.strerror})") from None
        data.setdefault("id", args.id)
    else:
        data = {"id": args.id, "text": args.text}
    problem = answer_text(data, args.id)
    if problem is not None:
        raise UsageError(f"the answer cannot be taken: {problem}")
    data.setdefault("answered_by", "person")
    data.setdefault("answered_at", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    write(target, data)
    print(f"answered {args.id}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Answer every request of a mailbox with another backend, as they come, several at once.

    Each agent call's file-tool calls are made by the run through its own sandbox. Stop it
    with Ctrl-C, or give --count.
    """
    from ..agents import make_backend
    from ..agents.mailbox_serve import serve

    if args.backend.partition(":")[0] == "mailbox":
        raise UsageError("mailbox serve answers with another backend: --backend offline, anthropic or claude-code")
    if args.count is not None and args.count < 1:
        raise UsageError("--count must be 1 or more")
    noise = {name: getattr(args, name) for name in SERVE_SETTINGS}
    _check_noise(noise, args.backend)
    box = _open(args.dir)
    backend = make_backend(args.backend, args.model, **noise)

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    return asyncio.run(serve(box, backend, count=args.count, say=say))


def _check_noise(noise: dict[str, float], backend: str) -> None:
    """The noise flags within their declared bounds, and given only to the backend that has them."""
    from dataclasses import fields

    from ..core.flags import flag_name, flag_of
    from ..engine.settings_fields import Fields

    for f in fields(Fields):
        if f.name not in noise:
            continue
        spec = flag_of(f)
        if spec.bound is not None and not spec.bound(noise[f.name]):
            raise UsageError(f"{flag_name(f)} {spec.problem}")
        if noise[f.name] and backend != "offline":
            raise UsageError(f"{flag_name(f)} is the offline writer's: give it with --backend offline, or drop it")
