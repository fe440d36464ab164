"""The judge's rubric: four craft scores a model can see and the engine's number cannot.

The loss judge reads both scripts and ends its report with a small JSON rubric in a fenced
```json block: scene purpose, voice, visual action and structure, each a score in [0, 1]
with a one-line reason. The engine checks it here. With `train --judge-weight W` the
rubric's loss (1 - the mean of its scores) is blended into the engine's loss:

    loss = (1 - W) * engine loss + W * rubric loss

A missing or malformed rubric never stops a run: the engine's number stands and the
reason is recorded beside it (`rubric_error` in the loss event and the scores json), so
a judge that drifts from the format shows up in the record instead of in the curve.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ...core.json_read import BadJSON, loads

FIELDS = ("scene_purpose", "voice", "visual_action", "structure")
MAX_REASON = 200
_BLOCK = re.compile(r"```json[ \t]*\n(.*?)\n[ \t]*```[ \t]*", re.DOTALL | re.IGNORECASE)


class RubricError(ValueError):
    """The judge's rubric is missing or does not have the agreed shape."""


def split(answer: str) -> tuple[str, str | None]:
    """The judge's answer without its last ```json block, and that block's text (None if there is none)."""
    blocks = list(_BLOCK.finditer(answer))
    if not blocks:
        return answer, None
    last = blocks[-1]
    return (answer[: last.start()] + answer[last.end() :]).rstrip() + "\n", last.group(1)


def validate(raw: str | None) -> dict[str, dict[str, Any]]:
    """The rubric as {field: {"score": float, "reason": str}}; RubricError says what is wrong."""
    if raw is None:
        raise RubricError("the judge returned no rubric (no fenced json block at the end)")
    try:
        data = loads(raw)
    except BadJSON as exc:
        raise RubricError(f"the rubric is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise RubricError("the rubric is not a JSON object")
    missing = [f for f in FIELDS if f not in data]
    extra = sorted(set(data) - set(FIELDS))
    if missing or extra:
        wrong = [*(f"missing {f}" for f in missing), *(f"unknown {f}" for f in extra)]
        raise RubricError(f"the rubric's fields are wrong: {', '.join(wrong)}")
    rubric: dict[str, dict[str, Any]] = {}
    for name in FIELDS:
        item = data[name]
        if not isinstance(item, dict):
            raise RubricError(f"rubric {name} is not an object with a score and a reason")
        score, reason = item.get("score"), item.get("reason")
        if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
            raise RubricError(f"rubric {name}: score is not a number")
        if not 0.0 <= score <= 1.0:
            raise RubricError(f"rubric {name}: score {score} is outside 0..1")
        if not isinstance(reason, str) or not reason.strip() or "\n" in reason.strip():
            raise RubricError(f"rubric {name}: reason must be one line of text")
        if len(reason.strip()) > MAX_REASON:
            raise RubricError(f"rubric {name}: reason is longer than {MAX_REASON} characters")
        rubric[name] = {"score": float(score), "reason": reason.strip()}
    return rubric


def rubric_loss(rubric: dict[str, dict[str, Any]]) -> float:
    """1 - the mean of the rubric's scores: 0 when the judge finds nothing wrong."""
    return round(1.0 - sum(rubric[f]["score"] for f in FIELDS) / len(FIELDS), 4)


def blend(engine_loss: float, rubric: dict[str, dict[str, Any]] | None, weight: float) -> float:
    """The loss training keeps: the engine's, moved toward the rubric's by `weight` when there is one."""
    if rubric is None or weight <= 0:
        return engine_loss
    return round((1.0 - weight) * engine_loss + weight * rubric_loss(rubric), 4)


def judged(answer: str, scores: Mapping[str, Any], weight: float) -> tuple[str, dict[str, Any]]:
    """The report text and the scores with the rubric, its error and the blended loss filled in."""
    report, raw = split(answer)
    try:
        rubric, error = validate(raw), None
    except RubricError as exc:
        rubric, error = None, str(exc)
    engine = scores["loss"]
    return report, {
        **scores,
        "loss": blend(engine, rubric, weight),
        "engine_loss": engine,
        "judge_weight": weight,
        "rubric": rubric,
        "rubric_loss": rubric_loss(rubric) if rubric else None,
        "rubric_error": error,
    }


def render(scores: dict[str, Any]) -> str:
    """The rubric as a markdown section for the loss report, or why there is none."""
    rubric = scores.get("rubric")
    if not rubric:
        return f"## Judge rubric\n\nNone used: {scores.get('rubric_error') or 'not given'}.\n"
    rows = "\n".join(f"| {f.replace('_', ' ')} | {rubric[f]['score']:.2f} | {rubric[f]['reason']} |" for f in FIELDS)
    weight = scores.get("judge_weight", 0.0)
    blended = (
        f"Blended into the loss with weight {weight:g}: {scores['engine_loss']:.3f} -> {scores['loss']:.3f}."
        if weight
        else "Not blended into the loss (--judge-weight 0)."
    )
    return f"## Judge rubric\n\n| craft | score | reason |\n|---|---|---|\n{rows}\n\n{blended}\n"
