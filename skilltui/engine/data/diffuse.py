"""diffuse: make the writer's input by adding noise to the target.

A work's human episodes are the targets; the writer is given a prose retelling of them,
the *story*, and must find its way back to a screenplay. Noise is what makes that a
learning problem: dialogue turns into reported speech, scene headings dissolve into
prose, a seeded share of detail is dropped. Each episode's retelling sits under its own
`## Episode N` heading so the writer can find episode N.

Offline, the retelling is a deterministic function of the episodes, the seed and the
noise level; with a model backend, each episode goes through the `diffuse` prompt.

    skilltui diffuse --work path/to/work --seed 7 --noise 0.3
"""

from __future__ import annotations

import functools
import io
import random
import re
from collections.abc import Callable

from screenplain.parsers import fountain
from screenplain.types import Action, Dialog, DualDialog, Slug, Transition

from ...agents.base import Backend, BackendError, CallResult, Request
from ...core.formats import EPISODE_HEADING, story_episodes  # noqa: F401 - story_episodes is the story format
from ..prompts import Prompts
from .works import Work

SLUG = re.compile(r"^(INT|EXT|INT\./EXT|I/E)\.?\s+(.+?)(?:\s+-\s+(.+))?$", re.IGNORECASE)
SENTENCE = re.compile(r"(?<=[.!?])\s+")
FILLERS = ("Then, ", "Meanwhile, ", "After a moment, ")
PLACES = {"INT": "inside", "EXT": "outside", "INT./EXT": "inside and out", "I/E": "inside and out"}


def noise_episode(text: str, rng: random.Random, noise: float) -> str:
    """One episode as noised prose, paragraph by paragraph."""
    paragraphs: list[str] = []
    for element in fountain.parse(io.StringIO(text)):
        if isinstance(element, Slug):
            paragraphs.append(_slug_prose(str(element.line), rng, noise))
        elif isinstance(element, Action):
            prose = _action_prose(" ".join(str(line) for line in element.lines), rng, noise)
            if prose:
                paragraphs.append(prose)
        elif isinstance(element, DualDialog):
            paragraphs.extend(_dialog_prose(d, rng, noise) for d in (element.left, element.right))
        elif isinstance(element, Dialog):
            paragraphs.append(_dialog_prose(element, rng, noise))
        elif isinstance(element, Transition):
            paragraphs.append("The picture cuts away.")
    return "\n\n".join(p for p in paragraphs if p)


def _slug_prose(line: str, rng: random.Random, noise: float) -> str:
    match = SLUG.match(line.strip())
    if not match:
        return f"The scene is at {line.strip().lower()}."
    where = PLACES.get(match.group(1).upper(), "inside")
    place = match.group(2).strip().lower()
    time = (match.group(3) or "").strip().lower()
    if not time or rng.random() < noise * 0.3:
        return f"The scene is {where}, at {place}."
    return f"The scene is {where}, at {place}, by {time}."


def _action_prose(text: str, rng: random.Random, noise: float) -> str:
    kept = []
    for sentence in SENTENCE.split(text.strip()):
        if not sentence:
            continue
        if rng.random() < noise * 0.5:
            continue  # detail lost in the retelling
        if rng.random() < noise:
            sentence = rng.choice(FILLERS) + sentence[:1].lower() + sentence[1:]
        kept.append(sentence)
    return " ".join(kept)


def _dialog_prose(dialog: Dialog, rng: random.Random, noise: float) -> str:
    name = " ".join(part.capitalize() for part in str(dialog.character).split("(")[0].split())
    manner = ""
    lines: list[str] = []
    for parenthetical, line in dialog.blocks:
        text = str(line).strip()
        if parenthetical:
            if not lines and rng.random() >= noise * 0.5:
                manner = text.strip("()").strip()
        else:
            lines.append(text)
    speech = " ".join(lines).replace('"', "'")
    if manner:
        return f'{name} says, {manner}, "{speech}"'
    return f'{name} says, "{speech}"'


def noise_work(work: Work, *, seed: int, noise: float) -> str:
    """The whole story of a work: every episode under its own heading, deterministic in (seed, noise)."""
    parts = [f"# {work.meta.get('title', work.name)}\n"]
    if work.meta.get("logline"):
        parts.append(work.meta["logline"] + "\n")
    for number in work.episodes:
        rng = random.Random(f"{seed}:{noise}:{work.name}:{number}")
        parts.append(f"## Episode {number}\n\n{noise_episode(work.episode_text(number), rng, noise)}\n")
    return "\n".join(parts)


async def diffuse_with_model(
    work: Work,
    backend: Backend,
    prompts: Prompts,
    *,
    noise: float,
    on_delta: Callable[[int, str], None] = lambda n, t: None,
    on_call: Callable[[int, CallResult], None] = lambda n, r: None,
) -> str:
    """The story retold by a model, one call per episode, under headings the engine writes itself.

    One call per episode keeps every retelling findable by its number whatever the model
    replies, and lets a long work stream episode by episode. `on_call` hears each call's
    result (usage, cost), failed calls' partial results included.
    """
    parts = [f"# {work.meta.get('title', work.name)}\n"]
    for number in work.episodes:
        prompt = prompts.render(
            "diffuse",
            number=number,
            title=work.meta.get("title", work.name),
            noise=noise,
            episode=work.episode_text(number),
        )
        request = Request(
            role="diffuse",
            prompt=prompt,
            system=prompts.render("system", role="diffuse"),
            model=backend.model,
            on_delta=functools.partial(on_delta, number),
        )
        try:
            result = await backend.text(request)
        except BackendError as exc:
            # A failed call was still paid for: its partial usage counts.
            partial = getattr(exc, "partial", None)
            if isinstance(partial, CallResult):
                on_call(number, partial)
            raise
        on_call(number, result)
        prose = EPISODE_HEADING.sub("", result.text).strip()
        if not prose:
            raise BackendError(f"the model returned no retelling of episode {number}")
        parts.append(f"## Episode {number}\n\n{prose}\n")
    return "\n".join(parts)
