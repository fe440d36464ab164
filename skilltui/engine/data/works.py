"""Works: the data set. Each work is a folder of human episodes (the targets) and a story.

```
<work>/human/01.fountain ...   target episodes; the number comes from the file name
<work>/story.md                written by `skilltui diffuse`: the writer's only input
<work>/work.toml               optional: title, logline, genre
```

Loading validates everything a run depends on and explains what to do when something is
wrong, because a mistake found here costs nothing and the same mistake found at step 3
costs a run.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import UsageError
from ...core.words import counted

EPISODE_NAME = re.compile(r"^0*(\d+)\.fountain$")
# A feature film is ~120 KB of Fountain; a script sixteen times that is not an episode but a
# mistake (a dump, a concatenation) that would cost minutes of scoring every step.
DEFAULT_MAX_SCRIPT_KB = 2048
STORY_EPISODE = re.compile(r"^## Episode \d+\s*$", re.MULTILINE)  # the headings diffuse writes


@dataclass(frozen=True)
class Work:
    name: str
    root: Path
    episodes: dict[int, Path]
    meta: dict[str, str] = field(default_factory=dict)
    # `.fountain` files in human/ whose name is no episode number (`notanumber.fountain`): left
    # out of training, and said when a run opens so nobody believes they were trained on.
    ignored: tuple[str, ...] = ()

    @property
    def human_dir(self) -> Path:
        return self.root / "human"

    @property
    def story_path(self) -> Path:
        return self.root / "story.md"

    def episode_text(self, number: int) -> str:
        return self.episodes[number].read_text(encoding="utf-8")


def load_work(path: Path, *, max_script_kb: int = DEFAULT_MAX_SCRIPT_KB) -> Work:
    """Read and validate one work folder; raise UsageError with advice on any problem."""
    root = Path(path).expanduser()
    if root.is_file():
        raise UsageError(f"work folder {path} is a file, not a folder; pass the folder that holds human/NN.fountain")
    if not root.is_dir():
        raise UsageError(f"work folder {path} does not exist; pass a folder that holds human/NN.fountain")
    root = root.resolve()
    human = root / "human"
    if not human.is_dir():
        raise UsageError(f"{root} has no human/ folder; put the target episodes in {human}/01.fountain, ...")
    episodes: dict[int, Path] = {}
    ignored: list[str] = []
    for file in sorted(human.iterdir()):
        match = EPISODE_NAME.match(file.name)
        if not match and file.suffix.lower() == ".fountain":
            ignored.append(f"human/{file.name}")
        if not match or not file.is_file():
            continue
        number = int(match.group(1))
        if number == 0:
            raise UsageError(f"{file} is numbered 0; episodes start at 1 (rename it to 01.fountain)")
        if number in episodes:
            raise UsageError(
                f"{episodes[number].name} and {file.name} in {human} are both episode {number}; "
                "keep one file per episode number"
            )
        size = file.stat().st_size
        if size > max_script_kb * 1024:
            raise UsageError(
                f"{file} is {size // 1024} KB, over --max-script-kb {max_script_kb}; "
                "split it into episodes or raise --max-script-kb"
            )
        try:
            content = file.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"{file} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
        if not content.strip():
            raise UsageError(f"{file} is empty; write the episode in it or remove the file")
        episodes[number] = file
    if not episodes:
        raise UsageError(f"{human} has no episodes; add files named like 01.fountain, 02.fountain")
    meta = _read_meta(root)
    return Work(name=root.name, root=root, episodes=dict(sorted(episodes.items())), meta=meta, ignored=tuple(ignored))


def ignored_notice(work: Work) -> str | None:
    """One line naming the `.fountain` files of `work` that training leaves out, or None."""
    if not work.ignored:
        return None
    names = ", ".join(work.ignored)
    why = "an episode's file is named by its number (01.fountain); rename to train on it"
    return f"{work.name}: {names} left out: {why}"


def _read_meta(root: Path) -> dict[str, str]:
    path = root / "work.toml"
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not valid TOML ({exc}); fix it or remove it") from None
    return {k: str(v) for k, v in data.items() if k in ("title", "logline", "genre")}


def load_works(paths: list[Path], *, need_story: bool = True, max_script_kb: int = DEFAULT_MAX_SCRIPT_KB) -> list[Work]:
    """Load several works; their folder names must differ, since runs key everything by name."""
    works = [load_work(p, max_script_kb=max_script_kb) for p in paths]
    seen: dict[str, Path] = {}
    for work in works:
        if work.name in seen:
            if seen[work.name] == work.root:
                raise UsageError(f"--work {work.root} is given twice; pass each work once")
            raise UsageError(
                f"two works are named {work.name!r} ({seen[work.name]} and {work.root}); "
                "a run keys works by folder name, so rename one folder"
            )
        seen[work.name] = work.root
        if need_story:
            _check_story(work)
    return works


def _check_story(work: Work) -> None:
    """The writer's only input must be there, readable and not blank, or every step fails late."""
    again = f"run `skilltui diffuse --work {work.root}`"
    if not work.story_path.is_file():
        raise UsageError(f"{work.story_path} is missing; {again} first")
    try:
        text = work.story_path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{work.story_path} is not UTF-8 text (byte {exc.start}); {again} to write it again") from None
    if not text.strip():
        raise UsageError(f"{work.story_path} is empty; {again} to write it again")
    if not STORY_EPISODE.search(text):
        raise UsageError(f"{work.story_path} has no '## Episode N' sections for the writer to find; {again}")
    from .work_check import train_problems  # the check `skilltui check` makes, before a run is made

    if problems := train_problems(work):
        raise UsageError("\n".join(problems))


def covers(work: Work, first: int, last: int) -> bool:
    """Whether the work has every episode `first..last`: a step trains a work only on a whole stretch.

    Checking only `last` would let a work with episodes 1, 2, 5 into a step of 1-5, whose loss
    would then have no human episode 3 to compare with.
    """
    return all(n in work.episodes for n in range(first, last + 1))


def unbroken(work: Work) -> int:
    """How many episodes the work has from 1 on before its first gap."""
    return next(n for n in range(1, len(work.episodes) + 2) if n not in work.episodes) - 1


def fewer_steps(works: list[Work], steps: int, per_step: int) -> str | None:
    """What to say when the works hold fewer steps than `--steps` asks for, or None when they hold them all."""
    planned = planned_steps(works, steps, per_step)
    if planned >= steps:
        return None
    longest = max((max(w.episodes) for w in works if w.episodes), default=0)
    return (
        f"--steps {steps}: the works have episodes for {counted(planned, 'step')} of {counted(per_step, 'episode')} "
        f"(the longest has {longest}), so an epoch runs {planned}"
    )


def untrained(works: list[Work], steps: int, per_step: int) -> list[str]:
    """Each work's episodes that a step of `--steps` reaches but never trains, named, one line a work.

    A step trains a work only on a whole stretch of `per_step` episodes, so a work whose
    episodes stop inside a stretch (3 episodes at 2 a step) sits out the step its last ones
    fall in: without a word, episode 3 would simply never be written. Episodes after a gap
    in the numbering are `check`'s to name, and those past `--steps` were asked for.
    """
    said = []
    for work in works:
        have = unbroken(work)
        left = [
            n
            for n in range(1, have + 1)
            if (n - 1) // per_step < steps
            and not covers(work, (n - 1) // per_step * per_step + 1, ((n - 1) // per_step + 1) * per_step)
        ]
        if left:
            first = (left[0] - 1) // per_step * per_step + 1
            stretch = f"{first}-{first + per_step - 1}"
            said.append(
                f"{work.name}: {'episodes' if len(left) > 1 else 'episode'} {', '.join(map(str, left))} never "
                f"trained: a step takes whole stretches of {counted(per_step, 'episode')} ({stretch}) and "
                f"{work.name} has {counted(have, 'episode')}; add the rest of the stretch, or choose an "
                f"--episodes-per-step that divides {have}"
            )
    return said


def planned_steps(works: list[Work], steps: int, per_step: int) -> int:
    """Steps an epoch runs: up to the first one no work covers whole (the loop ends it there)."""
    return next(
        (n for n in range(steps) if not any(covers(w, n * per_step + 1, (n + 1) * per_step) for w in works)), steps
    )
