"""Shared test fixtures: works this project never saw, made up fresh for every test, and the
runs, sandboxes, fake API and config folder that several test files start from.

The works come from tests/support/works.py, which test modules and benches import directly;
this file holds only fixtures, so no module imports it. Every test gets its own config
folder (XDG_CONFIG_HOME), so no test reads or writes the person's remembered theme.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.engine.opening import OpenedRun, open_run
from skilltui.engine.settings import Settings
from skilltui.store.run_folder import Run
from tests.support.fakeapi import FakeAnthropic
from tests.support.works import train_works, write_work


@pytest.fixture
def make_work(tmp_path: Path) -> Callable[..., Path]:
    """make_work(name, episodes=4, story=True): a new work under tmp_path/works."""

    def make(name: str, episodes: int = 4, *, story: bool = True, seed: int = 0) -> Path:
        return write_work(tmp_path / "works", name, episodes, story=story, seed=seed)

    return make


@pytest.fixture
def trained_run(make_work: Callable[..., Path], tmp_path: Path) -> Callable[..., Run]:
    """trained_run(*work_names): run `r` trained offline, headless, 2 steps on new works of those names."""

    def train(*names: str) -> Run:
        args = ["train", "--auto", "--steps", "2", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r"]
        args.append("--no-consolidate")  # the steps' micro-steps alone; consolidation: test_consolidation
        for name in names:
            args += ["--work", str(make_work(name))]
        assert main(args) == 0
        return Run(tmp_path / "runs" / "r")

    return train


@pytest.fixture
def works(make_work: Callable[..., Path]) -> list[Path]:
    """Two new works of four episodes each."""
    return [make_work("sable-quay", 4), make_work("tin-orchard", 4)]


@pytest.fixture
def done(works: list[Path], tmp_path: Path) -> Run:
    """Run `r` trained on `works` (train_works), as a kill leaves it: every stage done, no recorded end.

    What the resume and damage tests reopen. A run that recorded its end is only said to be
    finished, so its run_finished lines are dropped.
    """
    assert train_works(tmp_path / "runs", works) == 0
    path = tmp_path / "runs" / "r" / "events.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(line for line in lines if '"kind": "run_finished"' not in line), encoding="utf-8")
    return Run(tmp_path / "runs" / "r")


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config folder of this test's own, so no test touches the person's real preferences."""
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    # Printing commands take their width from COLUMNS (skilltui/core/piped.py), and pytest-xdist's
    # workers inherit COLUMNS=80: a test sees a pipe's width unless it sets one itself.
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    return home


@pytest.fixture
def open_training(make_work: Callable[..., Path], tmp_path: Path) -> Iterator[Callable[..., OpenedRun]]:
    """open_training(names, **settings): open a run on new works; every lock is released after the test."""
    opened_runs: list[OpenedRun] = []
    made: dict[str, Path] = {}

    def open_(names: tuple[str, ...] = ("alpha", "beta"), episodes: int = 4, **settings) -> OpenedRun:
        works = []
        for name in names:
            if name not in made:
                made[name] = make_work(name, episodes)
            works.append(made[name])
        values = {"steps": 1, "episodes_per_step": 2, "group_size": 0, "runs_dir": tmp_path / "runs", "run_id": "t"}
        values["consolidate"] = False  # one review per step; the consolidation's own: test_tui_consolidation
        values.update(settings)
        opened = open_run(Settings(works=works, backend="offline", **values))
        opened_runs.append(opened)
        return opened

    yield open_
    for opened in opened_runs:
        opened.lock.release()


@pytest.fixture
def server() -> Iterator[FakeAnthropic]:
    """The fake Messages API on localhost; the test fails if it saw a request it could not serve."""
    with FakeAnthropic() as fake:
        yield fake
    assert fake.failures == [], fake.failures


@pytest.fixture
def roots(tmp_path: Path) -> dict[str, Path]:
    """An agent's sandbox roots: a pool with one note, a scripts folder, a work with a secret target."""
    pool = tmp_path / "memory"
    (pool / "dialogue").mkdir(parents=True)
    (pool / "dialogue" / "subtext.md").write_text("---\ndescription: subtext\n---\n# Note\nSay less.\n")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    work = tmp_path / "work"
    (work / "human").mkdir(parents=True)
    (work / "human" / "01.fountain").write_text("SECRET TARGET\n")
    (work / "story.md").write_text("A story.\n")
    return {"pool": pool, "scripts": scripts, "work": work}
