"""Written next to human: one episode the writer wrote beside the human one, scene by scene as the loss matched them.

A loss is a number; what a note changed is seen in the scenes. This pairs the written
episode of a work-step with its human episode through the loss's own code, `scores.parse`
and `scores.compare` (which calls `scene_match.match`), so the pairs a person reads are the
groups the `scenes`, `order`, `dialogue` and `speakers` parts were computed from, and the
view and the number cannot disagree. Nothing here scores on its own.

The rows come in the written script's order, as the loss's groups are sorted; a human
scene the script lacks is placed after the row holding the human scene before it, so the
human side reads in its own order wherever the script kept it. A group off the heaviest
chain in the human order (`scene_match.in_order`) is marked: the `scenes` part gave it
nothing, however alike it is.

It reads the run folder and the work folder (named in the run's `config.json`) and
nothing else; it never writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.errors import UsageError
from ..core.json_read import read_json
from ..engine.data.works import load_work
from ..engine.loss.scene_match import Group, in_order
from ..engine.loss.scores import Scene, Script, combine, compare, parse
from ..store.run_folder import Run


@dataclass(frozen=True)
class Row:
    """One line of the view: human scenes beside the written scenes that play them (0-based indexes).

    An unmatched scene has an empty other side and no `sim`; `in_order` is False for a matched
    group the `scenes` part did not count because it plays out of the human order.
    """

    human: tuple[int, ...]
    written: tuple[int, ...]
    sim: float | None = None
    in_order: bool = True

    @property
    def matched(self) -> bool:
        return self.sim is not None


@dataclass(frozen=True)
class EpisodePair:
    """A written episode and its human one, paired by the loss."""

    work: str
    epoch: int
    step: int
    episode: int
    human: Script
    written: Script
    groups: tuple[Group, ...]  # exactly what `scores.compare` matched
    rows: tuple[Row, ...]
    parts: dict[str, float]
    written_path: Path
    human_path: Path
    edited: bool = False  # the written side is a person's edited copy, not the run's episode

    @property
    def loss(self) -> float:
        """This episode's engine loss (a step's loss is the mean of its episodes' parts)."""
        return combine(self.parts)

    def scene(self, side: str, index: int) -> Scene:
        return (self.human if side == "human" else self.written).scenes[index]


def rows_of(groups: list[Group], humans: int, writtens: int) -> list[Row]:
    """Every scene of both sides once: the groups and the written scenes without a partner in the
    written order, each unmatched human scene after the row that holds the human scene before it."""
    chain = {id(g) for g in in_order(groups)}
    keyed: list[tuple[tuple[int, int, int], Row]] = []
    matched_h = {i for g in groups for i in g.human}
    matched_w = {j for g in groups for j in g.written}
    for g in groups:
        keyed.append(((g.written[0], 0, 0), Row(g.human, g.written, g.sim, id(g) in chain)))
    for j in range(writtens):
        if j not in matched_w:
            keyed.append(((j, 0, 0), Row((), (j,))))
    # Where each human scene sits in the written order: the last written scene of its group.
    place = {i: g.written[-1] for g in groups for i in g.human}
    for i in range(humans):
        if i in matched_h:
            continue
        before = [place[h] for h in range(i) if h in place]
        keyed.append(((before[-1] if before else -1, 1, i), Row((i,), ())))
    keyed.sort(key=lambda item: item[0])
    return [row for _, row in keyed]


def pair_texts(written: str, human: str) -> tuple[Script, Script, list[Group], dict[str, float]]:
    """Both scripts parsed, the loss's groups and its six parts, as `scores.score_step` computes them."""
    w, h = parse(written), parse(human)
    parts, groups = compare(w, h)
    return w, h, groups, parts


def written_path(run_dir: Path, work: str, epoch: int, step: int, episode: int) -> Path:
    return Run(run_dir).work_dir(epoch, step, work) / "scripts" / f"{episode:02d}.fountain"


def human_path(run_dir: Path, work: str, episode: int) -> Path:
    """The human episode the loss compared with: the work folder the run's settings name.

    Raises LookupError with the line to show when the run does not name the work or the
    folder no longer holds the episode.
    """
    try:
        config = read_json(Run(run_dir).config_path)
    except (OSError, ValueError):
        config = {}
    paths = {**config.get("work_paths", {}), **config.get("val_work_paths", {})} if isinstance(config, dict) else {}
    folder = paths.get(work)
    if folder is None:
        raise LookupError(f"the run's config.json names no folder for {work}; its human episodes cannot be found")
    try:
        found = load_work(Path(folder))
    except UsageError as exc:
        raise LookupError(f"the human episodes of {work} cannot be read: {exc}") from None
    if episode not in found.episodes:
        raise LookupError(f"{folder} has no human episode {episode} any more")
    return found.episodes[episode]


def episode_pair(
    run_dir: Path, work: str, epoch: int, step: int, episode: int, *, written_text: str | None = None
) -> EpisodePair:
    """Episode `episode` of `work` as the writer wrote it in epoch `epoch` step `step`, paired with the human one.

    `written_text` replaces the run's episode (a person's edited copy); the run is not touched.
    Raises LookupError with the line to show when either episode cannot be read.
    """
    human_file = human_path(run_dir, work, episode)
    written_file = written_path(run_dir, work, epoch, step, episode)
    text = written_text
    if text is None:
        try:
            text = written_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            raise LookupError(f"{work} has no episode {episode} written in epoch {epoch} step {step} (yet)") from None
    if not text.strip():
        raise LookupError(f"episode {episode} of {work} in epoch {epoch} step {step} is empty; the loss scored it 1")
    w, h, groups, parts = pair_texts(text, human_file.read_text(encoding="utf-8"))
    return EpisodePair(
        work,
        epoch,
        step,
        episode,
        h,
        w,
        tuple(groups),
        tuple(rows_of(groups, len(h.scenes), len(w.scenes))),
        parts,
        written_file,
        human_file,
        edited=written_text is not None,
    )


def scored_episodes(run_dir: Path, work: str, epoch: int, step: int) -> list[int]:
    """The episodes the loss of `work` scored in epoch `epoch` step `step`, from its scores file; [] before it."""
    try:
        scores = read_json(Run(run_dir).loss_scores(epoch, step, work))
        return sorted(int(n) for n in scores["episodes"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
