"""The type hints, checked: mypy over the package, against the modules that fail today.

Nearly every parameter was annotated while nothing checked the annotations, so errors grew
unseen. tests/data/mypy_baseline.txt names the modules that still fail, with their error
counts; the check fails when a module not named there has an error or a named one gains one,
and when a named one is clean (so the list shrinks with the fixes instead of excusing new
errors), the way tests/test_code_shape.py treats the size rules. mypy runs once, in a
subprocess, with the settings in pyproject's [tool.mypy]; its cache (.mypy_cache) makes a
second run take seconds. `.ci/run` runs this file next to the linters.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "tests" / "data" / "mypy_baseline.txt"
ERROR = re.compile(r"^skilltui/(?P<module>\S+?\.py):\d+(?::\d+)?: error: ", re.MULTILINE)
CHECKED = re.compile(r"(?:checked|no issues found in) (?P<files>\d+) source files?")
# The baseline was counted with these extras installed (as .ci/run installs them): without
# them their backends' types are unknown and the counts differ.
EXTRAS = {"openai": "openai", "claude_agent_sdk": "claude-code"}


def error_counts(output: str) -> Counter[str]:
    """Errors per module (a path under skilltui/) in mypy's text output."""
    return Counter(match["module"] for match in ERROR.finditer(output))


def read_baseline(text: str) -> dict[str, int]:
    """`module count` lines; `#` starts a comment."""
    listed: dict[str, int] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            module, count = line.split()
            listed[module] = int(count)
    return listed


def ratchet(counts: Counter[str], listed: dict[str, int]) -> tuple[dict[str, int], list[str]]:
    """What fails the check: modules with more errors than listed (unlisted ones are allowed
    none), and listed modules that are now clean."""
    worse = {module: n for module, n in counts.items() if n > listed.get(module, 0)}
    clean = sorted(module for module in listed if counts.get(module, 0) == 0)
    return worse, clean


@pytest.fixture(scope="module")
def mypy_output() -> str:
    missing = [extra for module, extra in EXTRAS.items() if importlib.util.find_spec(module) is None]
    if missing:
        pytest.skip(f"the type baseline is counted with the {', '.join(missing)} extra(s) installed")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-color-output", "--no-pretty"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    # 0: no errors, 1: errors; anything else is mypy failing to run (a bad config, a crash).
    assert done.returncode in (0, 1), f"mypy did not run (exit {done.returncode}):\n{done.stdout}{done.stderr}"
    return done.stdout


@pytest.mark.slow
@pytest.mark.subprocess
# mypy over the package runs in a process of its own, for seconds warm and half a minute cold:
# the quick loop (-m "not slow and not subprocess") leaves these three to .ci/run.
@pytest.mark.slow
@pytest.mark.subprocess
def test_no_new_type_errors(mypy_output: str) -> None:
    worse, _ = ratchet(error_counts(mypy_output), read_baseline(BASELINE.read_text(encoding="utf-8")))
    lines = [line for line in mypy_output.splitlines() if (m := ERROR.match(line)) and m["module"] in worse]
    assert not worse, (
        f"new type errors (fix them; {BASELINE.relative_to(ROOT)} only lists what failed before): {worse}\n"
        + "\n".join(lines)
    )


@pytest.mark.slow
@pytest.mark.subprocess
def test_fixed_modules_leave_the_baseline(mypy_output: str) -> None:
    _, clean = ratchet(error_counts(mypy_output), read_baseline(BASELINE.read_text(encoding="utf-8")))
    assert not clean, f"no type errors left: remove them from {BASELINE.relative_to(ROOT)}: {clean}"


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_check_sees_the_package(mypy_output: str) -> None:
    """mypy read the whole package, so a configuration that checks nothing cannot pass."""
    checked = CHECKED.search(mypy_output)
    assert checked and int(checked["files"]) > 200, mypy_output[-2000:]


def test_the_ratchet_fails_on_a_new_error_and_on_a_fixed_module() -> None:
    output = (
        "skilltui/agents/offline.py:85: error: Cannot override writeable attribute  [override]\n"
        "skilltui/agents/offline.py:85: note: a note is not an error\n"
        "skilltui/engine/loop.py:10:4: error: Incompatible types in assignment  [assignment]\n"
        "skilltui/engine/loop.py:12: error: Item None has no attribute  [union-attr]\n"
        "Found 3 errors in 2 files (checked 246 source files)\n"
    )
    counts = error_counts(output)
    assert counts == {"agents/offline.py": 1, "engine/loop.py": 2}
    listed = read_baseline("# comment\nengine/loop.py 2  # two left\npool/repo.py 3\n")
    assert ratchet(counts, listed) == ({"agents/offline.py": 1}, ["pool/repo.py"])
    assert ratchet(counts, {"engine/loop.py": 1, "agents/offline.py": 1}) == ({"engine/loop.py": 2}, [])
