"""Running `python -m skilltui` as a person would, and checking a refusal: exit 2, one line, nothing new."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def snapshot(runs: Path) -> list[str]:
    return sorted(str(p.relative_to(runs)) for p in runs.rglob("*")) if runs.exists() else []


def run_cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skilltui", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)},
    )


def assert_refused(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0], lines[0]
