"""Works this project never saw, made up fresh for every test: names, places and lines vary with the work's name.

The works are generated, not bundled, so the suite proves the engine on data it was not
tuned on. conftest.py's fixtures and the benches build theirs from these.
"""

from __future__ import annotations

import random
from pathlib import Path

from skilltui.cli import main
from skilltui.engine.data.diffuse import noise_work
from skilltui.engine.data.works import load_work
from skilltui.store.run_folder import write_atomic

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


def train_works(runs: Path, works: list[Path], *extra: str, run_id: str = "r") -> int:
    """`skilltui train --auto` of run `run_id` over `works`: 2 steps, one work per micro-step."""
    argv = ["train", "--auto", "--runs-dir", str(runs), "--run-id", run_id, "--steps", "2", "--group-size", "1"]
    argv.append("--no-consolidate")  # the steps' micro-steps alone; consolidation: test_consolidation
    for work in works:
        argv += ["--work", str(work)]
    return main(argv + list(extra))


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


def long_script(words: int) -> str:
    """Varied episodes one after another until the script has `words` words: a long script to score."""
    rng, text = random.Random(5), ""
    while len(text.split()) < words:
        text += make_varied_episode(rng, NAMES[:6]) + "\n"
    return text
