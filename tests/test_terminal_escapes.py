"""No control character from agent-written text reaches the terminal: the app, review, the console, blame.

Each command runs in a pseudo-terminal (python's `pty`), the way a person runs it, over a
run whose agent text carries escape sequences: an OSC 0 (the window's title), an OSC 52
(a clipboard write), a CSI (a style), BEL, NUL and a C1 CSI. The bytes the terminal
received must hold none of them; the app's own escapes (its styles, its cursor moves)
are not what is looked for, only the payload's own sequences.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from skilltui.pool.notes import Pool
from tests.support.works import train_works

pytestmark = pytest.mark.subprocess

PAYLOAD = "\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[9;7;4mREDX\x9b31m"
FORBIDDEN = [b"\x1b]0;pwned", b"\x1b]52;", b"\x1b[9;7;4m", b"\x00", b"pwned\x07", b"=\x07", "\x9b".encode()]
# (BEL alone is no sign: Textual ends its own OSC 22, the pointer shape, with one.)
NOTE = "dialogue/escapes.md"
# The offline agent streams the payload with its words and puts it in its commit's subject.
PATCH = f"""
from skilltui.agents import offline, tools
payload = {PAYLOAD!r}
stream = offline.OfflineBackend._stream
async def _stream(self, request, text):
    await stream(self, request, payload + text + payload)
offline.OfflineBackend._stream = _stream
commit = tools.Sandbox.commit
def _commit(self, message):  # in the subject, which the console prints
    first, _, rest = message.partition("\\n")
    return commit(self, first + payload + "\\n" + rest)
tools.Sandbox.commit = _commit
"""


def in_pty(argv: list[str], done: Callable[[bytes], bool], keys: bytes = b"", timeout: float = 90) -> bytes:
    """What `skilltui argv` writes to a terminal 100x30 until `done(output)`; then `keys`, then its end."""
    # The patch as a `sitecustomize` first on the path: the app's trainer is a process of its
    # own, started with the app's `sys.path`, and must stream the payload too.
    patch = Path(tempfile.mkdtemp(prefix="escapes-patch-"))
    (patch / "sitecustomize.py").write_text(PATCH, encoding="utf-8")
    pid, fd = pty.fork()
    if pid == 0:  # the child: the patched agent, then the command
        os.environ["COLUMNS"], os.environ["LINES"] = "100", "30"
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(patch), os.environ.get("PYTHONPATH")]))
        code = "import sys\nfrom skilltui.cli import main\nsys.exit(main(sys.argv[1:]))\n"
        os.execv(sys.executable, [sys.executable, "-c", code, *argv])
    out, sent, deadline = b"", False, time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    break  # the command ended and closed the terminal
                if not data:
                    break
                out += data
            if not sent and done(out):
                sent = True
                if not keys:
                    break
                os.write(fd, keys)
        assert sent, f"never saw what the test waited for; the terminal got {out[-2000:]!r}"
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)
    return out


def clean(out: bytes) -> None:
    found = [f for f in FORBIDDEN if f in out]
    where = [out[max(0, out.find(f) - 60) : out.find(f) + 20] for f in found]
    assert not found, f"{found} reached the terminal: {where}"


def hand_run(works: list[Path], runs: Path) -> Path:
    """A trained run whose pool then got a note and a subject full of escapes, committed past the checks."""
    assert train_works(runs, works) == 0
    pool = Pool(runs / "r" / "memory")
    body = f"---\ndescription: escapes {PAYLOAD}\n---\n## Guidance\n\nSay less.{PAYLOAD}\x00\n"
    (pool.root / NOTE).write_bytes(body.encode())
    pool.commit_all(f"hand: escapes {PAYLOAD}")
    return runs / "r"


def test_blame_prints_no_control_character_of_a_note(works, tmp_path: Path) -> None:
    run = hand_run(works, tmp_path / "runs")
    out = in_pty(["blame", str(run), NOTE], lambda o: b"Say less" in o and b"\n" in o.split(b"Say less")[-1])
    assert b"REDX" in out
    clean(out)


def test_review_app_shows_agent_text_without_its_escapes(works, tmp_path: Path) -> None:
    run = hand_run(works, tmp_path / "runs")
    out = in_pty(["review", str(run)], lambda o: b"REDX" in o, keys=b"q")
    clean(out)


def test_the_auto_console_prints_no_control_character_of_agent_text(make_work, tmp_path: Path) -> None:
    argv = ["train", "--auto", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r", "--steps", "1"]
    argv += ["--no-consolidate", "--work", str(make_work("kiln-yard", 2))]
    out = in_pty(argv, lambda o: b"finished" in o and (tmp_path / "runs" / "r" / "epoch0").exists(), timeout=120)
    clean(out)


def test_the_training_app_shows_streamed_agent_text_without_its_escapes(make_work, tmp_path: Path) -> None:
    argv = ["train", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r", "--steps", "1", "--no-consolidate"]
    argv += ["--offline-latency", "0.2", "--work", str(make_work("kiln-yard", 2))]
    events = tmp_path / "runs" / "r" / "events.jsonl"

    def reviewing(out: bytes) -> bool:  # the review screen is up, after the agent's streamed words were shown
        return b"REDX" in out and events.exists() and b'"kind": "review_requested"' in events.read_bytes()

    out = in_pty(argv, reviewing, timeout=120)
    clean(out)
