"""Shared test fixtures: works this project never saw, made up fresh for every test.

The works are generated, not bundled, so the suite proves the engine on data it was not
tuned on: names, places and lines vary with the work's name.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from skilltui.engine.diffuse import noise_work
from skilltui.engine.run import write_atomic
from skilltui.engine.works import load_work

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
