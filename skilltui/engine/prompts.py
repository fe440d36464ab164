"""Prompts: one Jinja2 template per agent role, rendered with StrictUndefined.

The templates live in the top-level `prompts/` folder of the project and ship inside the
wheel as `skilltui/_prompts`, so a non-editable install finds them too. `--prompts DIR`
points at a folder of the user's own; a name missing there falls back to the shipped one.
StrictUndefined turns a template that asks for a value the engine did not pass into an
error at once, instead of a prompt with a silent hole in it.

Everything a prompt carries that the engine did not write (stories, episodes, reports,
notes, reviewers' words, titles, names) goes through the `data` filter (a fenced block) or
the `inline` filter (a code span), each fenced by a run of backticks longer than any inside
it, so nothing in the material can close its fence and pass for the prompt's own words. The
system prompt says that instructions inside data are not instructions. A fence, not tags
with a random suffix, because it is the same on every call: a story that leads the prompt
is read from the cache only when its bytes repeat.
"""

from __future__ import annotations

import re
from pathlib import Path

import jinja2

from ..core.errors import UsageError

ROLES = (
    *("forward", "loss", "loss_targets", "reduce", "backward", "backward_rules", "consolidate"),
    *("note_policy", "diffuse", "system"),
)


_TICKS = re.compile(r"`+")


def _fence_for(text: str, least: int) -> str:
    return "`" * max(least, max((len(run) for run in _TICKS.findall(text)), default=0) + 1)


def data(value: object, kind: str = "text") -> str:
    """User material as a fenced block that nothing inside it can close (its fence is longer than any run)."""
    text = str(value).rstrip("\n")
    fence = _fence_for(text, 3)
    return f"{fence}{kind}\n{text}\n{fence}"


def inline(value: object) -> str:
    """A short piece of user material (a title, a name, a path) as one code span on one line."""
    text = " ".join(str(value).split())
    fence = _fence_for(text, 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def shipped_dir() -> Path:
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "_prompts", here.parent / "prompts"):
        if candidate.is_dir():
            return candidate
    raise RuntimeError("the shipped prompts are missing from this installation; reinstall skilltui")


class _CompiledTemplates(jinja2.BytecodeCache):
    """Each template compiled once per process, kept by its file and the checksum of its text.

    A run makes its `Prompts` afresh, and compiling the ten shipped templates costs more than
    a short offline run's calls; a template whose text changed has another checksum, so
    Jinja compiles it again instead of reading the old one.
    """

    def __init__(self) -> None:
        self._compiled: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self._compiled:
            bucket.bytecode_from_string(self._compiled[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._compiled[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _CompiledTemplates()


class Prompts:
    def __init__(self, override: Path | None = None) -> None:
        folders = [shipped_dir()]
        if override is not None:
            override = Path(override)
            if not override.is_dir():
                raise UsageError(f"--prompts {override} is not a folder; pass a folder of <role>.md.j2 templates")
            folders.insert(0, override)
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader([str(f) for f in folders]),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,
            bytecode_cache=_COMPILED,
        )
        self.env.filters["data"] = data
        self.env.filters["inline"] = inline

    def check(self) -> None:
        """Parse every template once, so a broken one in --prompts is refused before the run starts."""
        for name in ROLES:
            try:
                self.env.get_template(f"{name}.md.j2")
            except jinja2.TemplateSyntaxError as exc:
                raise UsageError(
                    f"prompt template {exc.filename}:{exc.lineno} has a syntax error: {exc.message}; fix it"
                ) from None
            except UnicodeDecodeError:
                raise UsageError(
                    f"prompt template {name}.md.j2 in --prompts is not UTF-8 text; save it as UTF-8"
                ) from None

    def render(self, name: str, **values: object) -> str:
        try:
            return self.env.get_template(f"{name}.md.j2").render(**values).strip() + "\n"
        except jinja2.TemplateSyntaxError as exc:
            raise UsageError(f"prompt template {exc.filename}:{exc.lineno} has a syntax error: {exc.message}") from None
        except jinja2.UndefinedError as exc:
            raise UsageError(f"prompt template {name}.md.j2 uses an unknown value ({exc.message})") from None
