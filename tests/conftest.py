"""Shared test fixtures: works this project never saw, made up fresh for every test, and the
runs, sandboxes, fake API and config folder that several test files start from.

The works come from tests/support/works.py, which test modules and benches import directly;
this file holds only fixtures, so no module imports it. Every test gets its own config
folder (XDG_CONFIG_HOME), so no test reads or writes the person's remembered theme.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from skilltui.drivers import engine_process
from skilltui.engine.loss import score_pool
from skilltui.engine.opening import OpenedRun, open_run
from skilltui.engine.settings import Settings
from skilltui.store.run_folder import Run
from tests.support.fakeapi import FakeAnthropic
from tests.support.runs import copy_tree_into, train_in, unfinish
from tests.support.works import train_works, write_work

Templates = Callable[[str, Callable[[Path], object]], Path]


@pytest.fixture
def make_work(tmp_path: Path) -> Callable[..., Path]:
    """make_work(name, episodes=4, story=True): a new work under tmp_path/works."""

    def make(name: str, episodes: int = 4, *, story: bool = True, seed: int = 0) -> Path:
        return write_work(tmp_path / "works", name, episodes, story=story, seed=seed)

    return make


@pytest.fixture
def trained_run(tmp_path: Path) -> Callable[..., Run]:
    """trained_run(*work_names): run `r` trained offline, headless, 2 steps on new works of those names.

    Trained afresh, so what the test patched before it trains as patched; `copied_run` otherwise.
    """

    def train(*names: str) -> Run:
        return train_in(tmp_path, names)

    return train


@pytest.fixture(scope="session")
def run_templates(tmp_path_factory: pytest.TempPathFactory) -> Templates:
    """run_templates(key, make): the folder `make(folder)` filled, once a session (an xdist worker's) a key."""
    made: dict[str, Path] = {}

    def template(key: str, make: Callable[[Path], object]) -> Path:
        if key not in made:
            root = tmp_path_factory.mktemp("template")
            make(root)
            made[key] = root
        return made[key]

    return template


@pytest.fixture
def made_once(run_templates: Templates, tmp_path: Path, request: pytest.FixtureRequest) -> Callable[..., None]:
    """made_once(key, make): tmp_path as `make(tmp_path)` would leave it, copied from the session's one making.

    For what several tests start from and none patches before it is made (trained runs);
    with `--no-shortcuts`, `make(tmp_path)` itself.
    """

    def made(key: str, make: Callable[[Path], object]) -> None:
        if shortcuts(request.config):
            copy_tree_into(run_templates(key, make), tmp_path)
        else:
            make(tmp_path)

    return made


@pytest.fixture
def copied_run(made_once: Callable[..., None], tmp_path: Path) -> Callable[..., Run]:
    """copied_run(*work_names): what trained_run gives, copied from the session's one training of those works.

    Each test gets a copy of its own to change; a test that patches how a run trains before
    it trains uses `trained_run`, whose run is trained under the patch.
    """

    def copy(*names: str) -> Run:
        made_once(f"trained {names}", lambda root: train_in(root, names))
        return Run(tmp_path / "runs" / "r")

    return copy


WORKS = ("sable-quay", "tin-orchard")


@pytest.fixture
def works(make_work: Callable[..., Path]) -> list[Path]:
    """Two new works of four episodes each."""
    return [make_work(name, 4) for name in WORKS]


def _done_in(root: Path) -> None:
    assert train_works(root / "runs", [write_work(root / "works", name, 4) for name in WORKS]) == 0
    unfinish(root / "runs")


@pytest.fixture
def done(works: list[Path], run_templates: Templates, tmp_path: Path, request: pytest.FixtureRequest) -> Run:
    """Run `r` trained on `works` (train_works), as a kill leaves it: every stage done, no recorded end.

    What the resume and damage tests reopen, each its own copy of one training a session. A
    run that recorded its end is only said to be finished, so its run_finished lines are dropped.
    """
    if shortcuts(request.config):
        copy_tree_into(run_templates("done", _done_in), tmp_path)
    else:
        assert train_works(tmp_path / "runs", works) == 0
        unfinish(tmp_path / "runs")
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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--no-shortcuts",
        action="store_true",
        help="score in the worker pool, train every app in a process of its own and every trained run "
        "afresh, as the product does and the suite once did (bench/bench_suite.py times both ways)",
    )


def shortcuts(config: pytest.Config) -> bool:
    """The suite's shortcuts are on (inline scoring, the app's trainer in its loop, copied runs)."""
    return not config.getoption("--no-shortcuts")


@pytest.fixture(scope="session", autouse=True)
def session_scoring(request: pytest.FixtureRequest) -> Iterator[None]:
    """The scoring mode from the session's start, so a module's fixture, made before any test's own, has it too."""
    with pytest.MonkeyPatch.context() as patch:
        if shortcuts(request.config):
            patch.setenv(score_pool.MODE_VARIABLE, "inline")
        else:
            patch.delenv(score_pool.MODE_VARIABLE, raising=False)
        yield


@pytest.fixture(autouse=True)
def quick_engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scoring inline and the app's trainer in the app's loop, unless `--no-shortcuts`.

    Both give the same records as the product's pool and process (test_score_pool_modes.py,
    test_wire.py) at a fraction of the processes started. The variable reaches the trainers
    and commands a test starts, so they score inline too. A test that proves the pool or
    the trainer process asks for `pooled_scoring` or `process_driver`.
    """
    if not shortcuts(request.config):
        monkeypatch.delenv(score_pool.MODE_VARIABLE, raising=False)
        monkeypatch.setattr(engine_process, "IN_APP_LOOP", os.name != "posix")
        return
    monkeypatch.setenv(score_pool.MODE_VARIABLE, "inline")
    monkeypatch.setattr(engine_process, "IN_APP_LOOP", True)


@pytest.fixture
def pooled_scoring(quick_engine: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Score in the worker pool, as the product does (for the tests of the pool itself)."""
    monkeypatch.delenv(score_pool.MODE_VARIABLE, raising=False)


@pytest.fixture
def process_driver(quick_engine: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The app trains in a trainer process of its own (POSIX) that scores in its pool, as the product does."""
    monkeypatch.delenv(score_pool.MODE_VARIABLE, raising=False)
    monkeypatch.setattr(engine_process, "IN_APP_LOOP", os.name != "posix")


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
