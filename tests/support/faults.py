"""Fault injection at named points: a trainer in a subprocess that SIGKILLs its own process group.

`run_killed(point, n, argv)` starts `skilltui <argv>` in a new session, with the function
named by `point` ("package.module:Name.attr", looked up where its caller finds it)
replaced by one that kills the whole process group on its `n`th call, before the call
("before") or once it returned ("after"). The kill is the process's own, at an exact
point, so no test waits on a timing; a point never reached lets the run finish, which
the caller sees as a return code of 0 instead of -9.

The run that follows a kill (`run_again`) is a new session, as a person's next command is:
it runs in this process, since it reads all it resumes from the run folder and no process
state of the killed one can reach it; a subprocess would add only its start-up (seconds).
The twelve-kills test (test_kill_resume.py) still resumes in subprocesses of its own.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

LAUNCHER = r"""
import functools, importlib, inspect, os, signal, sys

point, nth, when, only = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
module_name, _, path = point.partition(":")
owner = importlib.import_module(module_name)
*parents, name = path.split(".")
for part in parents:
    owner = getattr(owner, part)
original = inspect.getattr_static(owner, name)
function = original.__func__ if isinstance(original, (staticmethod, classmethod)) else original
calls = [0]


def kill():
    sys.stderr.flush()
    os.killpg(os.getpgid(0), signal.SIGKILL)


def due(args):
    if only and not eval(only, {"args": args}):
        return False
    calls[0] += 1
    return calls[0] == nth


if inspect.iscoroutinefunction(function):
    @functools.wraps(function)
    async def patched(*args, **kwargs):
        hit = due(args)
        if hit and when == "before":
            kill()
        result = await function(*args, **kwargs)
        if hit:
            kill()
        return result
else:
    @functools.wraps(function)
    def patched(*args, **kwargs):
        hit = due(args)
        if hit and when == "before":
            kill()
        result = function(*args, **kwargs)
        if hit:
            kill()
        return result

if isinstance(original, staticmethod):
    patched = staticmethod(patched)
elif isinstance(original, classmethod):
    patched = classmethod(patched)
setattr(owner, name, patched)

from skilltui.cli import main

sys.exit(main(sys.argv[5:]))
"""


def run_killed(
    point: str, n: int, argv: list[str], *, when: str = "after", only: str = "", timeout: float = 300
) -> int:
    """Run `skilltui argv`, killed at the `n`th call of `point`; its return code (-9 when the kill came).

    `only`, a Python expression over the call's `args`, counts just the calls it holds for
    (`"'g0' in str(args[0].out)"`: a consolidation's records).
    """
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCHER, point, str(n), when, only, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        timeout=timeout,
        env=env,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")
    return proc.returncode


def run_plain(argv: list[str], *, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`skilltui argv` in a subprocess of its own, run to its end."""
    return subprocess.run(
        [sys.executable, "-m", "skilltui", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        start_new_session=True,
    )


def run_again(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`skilltui argv` run to its end in this process; its exit code and what it printed, as `run_plain` gives them."""
    from skilltui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())
