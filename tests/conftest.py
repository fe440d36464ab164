"""Shared test fixtures: works this project never saw, made up fresh for every test, and the
runs, sandboxes, fake API and config folder that several test files start from.

The works are generated, not bundled, so the suite proves the engine on data it was not
tuned on: names, places and lines vary with the work's name. Every test gets its own
config folder (XDG_CONFIG_HOME), so no test reads or writes the person's remembered theme.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.engine.data.diffuse import noise_work
from skilltui.engine.data.works import load_work
from skilltui.engine.session import OpenedRun, open_run
from skilltui.engine.settings import Settings
from skilltui.store.run import Run, write_atomic
from tests.fakeapi import FakeAnthropic

NAMES = ["ADA", "BRUNO", "CELIA", "DMITRI", "EDITH", "FARID", "GRETA", "HUGO", "IRIS", "JONAH"]
PLACES = ["BOATHOUSE", "TRAIN STATION", "GREENHOUSE", "ATTIC", "BUS DEPOT", "ROOFTOP", "LAUNDROMAT", "QUARRY"]
TIMES = ["DAY", "NIGHT", "DAWN", "DUSK"]
ACTIONS = [
    "{a} drags a crate across the floor.",
    "Rain needles the window.",
    "{a} counts coins into a jar.",
    "A radio hisses somewhere.",
    "{a} folds the map twice and pockets it.",
    "The lights flicker and hold.",
]
LINES = [
    "We are late again.",
    "Did you lock it?",
    "Nobody comes here after dark.",
    "Hand me the torch.",
    "I kept the receipt.",
    "That was never the plan.",
    "Say it slower.",
]


def make_episode(rng: random.Random, cast: list[str]) -> str:
    blocks: list[str] = []
    for scene in range(rng.randint(2, 3)):
        side = rng.choice(["INT.", "EXT."])
        blocks.append(f"{side} {rng.choice(PLACES)} - {rng.choice(TIMES)}")
        blocks.append(rng.choice(ACTIONS).format(a=rng.choice(cast).capitalize()))
        for _ in range(rng.randint(2, 3)):
            speaker = rng.choice(cast)
            if rng.random() < 0.3:
                blocks.append(f"{speaker}\n(quietly)\n{rng.choice(LINES)}")
            else:
                blocks.append(f"{speaker}\n{rng.choice(LINES)}")
        if scene == 0 and rng.random() < 0.5:
            blocks.append("CUT TO:")
    return "\n\n".join(blocks) + "\n"


def write_work(root: Path, name: str, episodes: int = 4, *, story: bool = True, seed: int = 0) -> Path:
    """A fresh work folder with `episodes` Fountain episodes and, by default, its story."""
    rng = random.Random(f"{name}:{seed}")
    cast = rng.sample(NAMES, 3)
    folder = root / name
    (folder / "human").mkdir(parents=True)
    for n in range(1, episodes + 1):
        (folder / "human" / f"{n:02d}.fountain").write_text(make_episode(rng, cast), encoding="utf-8")
    (folder / "work.toml").write_text(f'title = "{name.title()}"\nlogline = "A test work."\n', encoding="utf-8")
    if story:
        work = load_work(folder)
        write_atomic(work.story_path, noise_work(work, seed=seed, noise=0.3))
    return folder


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


def train_works(runs: Path, works: list[Path], *extra: str, run_id: str = "r") -> int:
    """`skilltui train --auto` of run `run_id` over `works`: 2 steps, one work per micro-step."""
    argv = ["train", "--auto", "--runs-dir", str(runs), "--run-id", run_id, "--steps", "2", "--group-size", "1"]
    argv.append("--no-consolidate")  # the steps' micro-steps alone; consolidation: test_consolidation
    for work in works:
        argv += ["--work", str(work)]
    return main(argv + list(extra))


@pytest.fixture
def works(make_work: Callable[..., Path]) -> list[Path]:
    """Two new works of four episodes each."""
    return [make_work("sable-quay", 4), make_work("tin-orchard", 4)]


@pytest.fixture
def done(works: list[Path], tmp_path: Path) -> Run:
    """Run `r` trained on `works` (train_works), as a kill leaves it: every stage done, no recorded end.

    What the resume and damage tests reopen. A run that recorded its end is only said to be
    finished (issue 21), so its run_finished lines are dropped.
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


# Varied episodes: two to six scenes of different length, sentences put together from word
# pools, so no two episodes of a work share their lines the way make_episode's do. The loss
# table is checked on these, episodes nobody tuned its weights on.
SUBJECTS = (
    "the kettle|a gull|the ferry|her brother|the landlord|a stray dog|the night bus|the old radio|"
    "a letter|the rent|the harbour lights|his mother|the ice|the drummer"
).split("|")
VERBS = ["waits by", "circles", "ruins", "remembers", "ignores", "belongs to"]
VERBS += ["follows", "frightens", "outlives", "pays for", "wakes", "blocks"]
OBJECTS = (
    "the back door|the whole street|everyone in this town|my one good coat|the last train|the spare key|"
    "a bucket of paint|the winter|the wedding|the borrowed car|the tide"
).split("|")
OPENERS = "Listen,|Honestly,|Look,|Fine.|No.|Wait.|You know what?|".split("|")
DOINGS = "wipes down|stares at|pockets|kicks|unlocks|photographs|drops|straightens|sniffs".split("|")
THINGS = (
    "a chipped mug|the fuse box|a parking ticket|the guest book|a cold pie|a bent spoon|the ledger|"
    "a wet umbrella|the shop bell|a roll of tape|the calendar|a tin of biscuits"
).split("|")


def _sentence(rng: random.Random) -> str:
    opener, subject = rng.choice(OPENERS), rng.choice(SUBJECTS)
    if not opener or opener[-1] in ".?":
        subject = subject[0].upper() + subject[1:]
    return f"{opener} {subject} {rng.choice(VERBS)} {rng.choice(OBJECTS)}".strip() + rng.choice([".", ".", "?", "!"])


def make_varied_episode(rng: random.Random, cast: list[str]) -> str:
    blocks: list[str] = []
    for _ in range(rng.randint(2, 6)):
        blocks.append(f"{rng.choice(['INT.', 'EXT.'])} {rng.choice(PLACES)} - {rng.choice(TIMES)}")
        for _ in range(rng.randint(1, 3)):
            actions = [f"{rng.choice(cast).capitalize()} {rng.choice(DOINGS)} {rng.choice(THINGS)}."]
            actions += [_sentence(rng) for _ in range(rng.randint(0, 2))]
            blocks.append(" ".join(actions))
            for _ in range(rng.randint(1, 4)):
                speaker = rng.choice(cast)
                line = " ".join(_sentence(rng) for _ in range(rng.randint(1, 3)))
                manner = f"\n({rng.choice(['quietly', 'to herself', 'beat', 'flat'])})" if rng.random() < 0.2 else ""
                blocks.append(f"{speaker}{manner}\n{line}")
        if rng.random() < 0.3:
            blocks.append("CUT TO:")
    return "\n\n".join(blocks) + "\n"


def write_varied_work(root: Path, name: str, episodes: int = 4, *, seed: int = 0) -> Path:
    """A fresh work of varied episodes (see make_varied_episode), with its story."""
    rng = random.Random(f"varied:{name}:{seed}")
    cast = rng.sample(NAMES, rng.randint(2, 5))
    folder = root / name
    (folder / "human").mkdir(parents=True)
    for n in range(1, episodes + 1):
        (folder / "human" / f"{n:02d}.fountain").write_text(make_varied_episode(rng, cast), encoding="utf-8")
    (folder / "work.toml").write_text(f'title = "{name.title()}"\nlogline = "A varied test work."\n', encoding="utf-8")
    work = load_work(folder)
    write_atomic(work.story_path, noise_work(work, seed=seed, noise=0.3))
    return folder
