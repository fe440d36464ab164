"""`skilltui eval`: any two pools compared on any works, the test split's measurement on its own.

A pool is named the ways a person has one: a run folder (its final pool), `RUN@COMMIT` (the
pool at one commit of a run), an exported skill folder, or a folder of notes; no pool at all
is the empty pool. Each is read into its notes (never a working tree that may be moving) and
keyed by their content, so two names of the same notes share their samples.

Samples live under the eval folder, per writer setup (backend, model, noise, episodes):

```
<eval-dir>/<setup>/config.json                   what the setup is (and the offline noise's seed root)
<eval-dir>/<setup>/pools/<key>/notes/            the notes, written once
<eval-dir>/<setup>/pools/<key>/pass<k>/...       the writer's scripts and the engine's scores
<eval-dir>/<setup>/stories/<work>-<hash>.md      the story the writer read
```

A work is tagged with a hash of its story and the episodes scored, so a re-noised work is
measured afresh and an unchanged one is never paid for twice; a repeat of the same command
reads every sample back and makes no model call, and a stopped eval resumes.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from ...agents.base import Backend
from ...core.durable import write_atomic
from ...core.errors import UsageError
from ...core.formats import FOLDERS
from ...model import events as ev
from ...model.at import At
from ...model.bus import EventBus
from ...store.run_folder import Run, read_json, write_json
from ..data.works import Work
from ..prompts import Prompts
from ..settings import Settings
from ..stages.calls import Calls
from ..stages.context import Context, TrainingWorks
from .test_split import Sampler, Side, TestFigure, paired_test_delta

EMPTY = "empty pool"


@dataclass(frozen=True)
class PoolSource:
    """A pool a person named, read into its notes: relative path -> bytes."""

    label: str
    notes: dict[str, bytes]

    @property
    def key(self) -> str:
        digest = hashlib.sha256()
        for rel in sorted(self.notes):
            digest.update(rel.encode() + b"\0" + self.notes[rel] + b"\0")
        return digest.hexdigest()[:16]

    def write(self, folder: Path) -> Path:
        """The notes under `folder` (blocking); written once, then reused."""
        done = folder / ".complete"
        if not done.exists():
            for rel, data in self.notes.items():
                write_atomic(folder / rel, data)
            folder.mkdir(parents=True, exist_ok=True)
            write_atomic(done, b"")
        return folder


def resolve_pool(spec: str | None, runs_dir: Path) -> PoolSource:
    """The notes `spec` names; a UsageError in one line when it names none."""
    if not spec:
        return PoolSource(EMPTY, {})
    run_part, _, commit = spec.rpartition("@") if "@" in spec else (spec, "", "")
    run = _run_folder(run_part, runs_dir)
    if run is not None:
        return PoolSource(spec, _git_notes(run / "memory", commit or "HEAD", spec))
    if commit:
        raise UsageError(f"--pool {spec}: {run_part} is not a run folder (no memory/ pool in it); name a run")
    folder = Path(spec).expanduser()
    if not folder.is_dir():
        raise UsageError(
            f"--pool {spec} does not exist; name a run folder, RUN@COMMIT, an exported skill folder "
            "or a folder of notes"
        )
    notes = {
        f.relative_to(folder).as_posix(): f.read_bytes()
        for name in FOLDERS
        for f in sorted((folder / name).rglob("*.md"))
        if f.is_file()
    }
    if not notes:
        raise UsageError(
            f"--pool {spec} has no notes (markdown files under {', '.join(FOLDERS)}/); "
            "leave --pool B out to compare with the empty pool"
        )
    return PoolSource(spec, notes)


def trained_on(spec: str | None, runs_dir: Path) -> dict[str, str]:
    """The works the run behind `spec` learned from or selected with: name -> "training" or "selection".

    A delta measured on such a work is no held-out evidence (DESIGN §7): the notes were made
    from its loss reports, or kept because they scored well on it. A run folder (or RUN@COMMIT)
    says so in its settings; an exported skill names its run in SKILL.md's metadata, looked
    for under `runs_dir`; a plain folder of notes says nothing.
    """
    if not spec:
        return {}
    run_part = spec.rpartition("@")[0] if "@" in spec else spec
    run = _run_folder(run_part, runs_dir)
    if run is None:
        named = _skill_run(Path(spec).expanduser())
        run = _run_folder(named, runs_dir) if named else None
    if run is None:
        return {}
    try:
        config = read_json(run / "config.json")
    except (OSError, ValueError):
        return {}
    if not isinstance(config, dict):
        return {}
    roles = {name: "selection" for name in config.get("val_works") or [] if isinstance(name, str)}
    roles.update({name: "training" for name in config.get("works") or [] if isinstance(name, str)})
    return roles


def _skill_run(folder: Path) -> str | None:
    """The run an exported skill folder names in its front matter (`metadata: run:`), if any."""
    try:
        text = (folder / "SKILL.md").read_text(encoding="utf-8")
        front = yaml.safe_load(text.removeprefix("---\n").partition("\n---\n")[0]) if text.startswith("---\n") else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    meta = front.get("metadata") if isinstance(front, dict) else None
    run = meta.get("run") if isinstance(meta, dict) else None
    return run if isinstance(run, str) and run else None


def _run_folder(spec: str, runs_dir: Path) -> Path | None:
    for candidate in (Path(spec).expanduser(), runs_dir / spec):
        if (candidate / "memory" / ".git").exists() and (candidate / "config.json").is_file():
            return candidate
    return None


def _git_notes(pool: Path, commit: str, spec: str) -> dict[str, bytes]:
    found = subprocess.run(
        ["git", "-C", str(pool), "rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}"],
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        raise UsageError(
            f"--pool {spec}: the run's pool has no commit {commit!r}; see `skilltui review` for its commits"
        )
    archive = subprocess.run(
        ["git", "-C", str(pool), "archive", "--format=tar", found.stdout.strip()], capture_output=True, check=True
    ).stdout
    notes: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            top = member.name.split("/", 1)[0]
            extracted = tar.extractfile(member) if member.isfile() else None
            if top in FOLDERS and member.name.endswith(".md") and extracted is not None:
                notes[member.name] = extracted.read()
    return notes


def setup_key(setup: dict) -> str:
    return hashlib.sha256(json.dumps(setup, sort_keys=True).encode()).hexdigest()[:12]


def work_tag(name: str, story: bytes, episodes: list[bytes]) -> str:
    digest = hashlib.sha256(story)
    for text in episodes:
        digest.update(b"\0" + text)
    return f"{name}-{digest.hexdigest()[:10]}"


@dataclass(frozen=True)
class EvalPlan:
    """What one `skilltui eval` compares: pool A against pool B on the works, and how."""

    a: PoolSource
    b: PoolSource
    works: list[Work]
    episodes: int
    repeats: int
    confidence: float
    root: Path  # the eval folder


@dataclass
class EvalResult:
    per_work: dict[str, TestFigure | None]
    overall: TestFigure | None
    calls: int
    cost: float
    folder: Path
    stopped: str = ""  # why it stopped short (the cost cap), or ""

    def to_dict(self, plan: EvalPlan) -> dict:
        def fig(f: TestFigure | None) -> dict | None:
            return None if f is None else {**f.to_dict(), "excludes_zero": f.excludes_zero}

        return {
            "pool_a": plan.a.label,
            "pool_b": plan.b.label,
            "works": {name: fig(f) for name, f in self.per_work.items()},
            "overall": fig(self.overall),
            "calls": self.calls,
            "cost_usd": round(self.cost, 6),
            "folder": str(self.folder),
            "stopped": self.stopped,
        }


class EvalStopped(Exception):
    """The eval reached its --max-cost; what it measured is kept and the same command resumes."""


def eval_text(figure: TestFigure) -> str:
    """`A 0.371 vs B 0.412, Δ(A-B) -0.041 [-0.060, -0.022] at 90%, episodes 4, passes 2`."""
    interval = (
        "[spread not measured: use 2 or more repeats]"
        if figure.low is None or figure.high is None
        else f"[{figure.low:+.3f}, {figure.high:+.3f}] at {figure.confidence:.0%}"
    )
    return (
        f"A {figure.trained:.3f} vs B {figure.start:.3f}, Δ(A-B) {figure.delta:+.3f} {interval}, "
        f"episodes {figure.episodes}, passes {figure.passes}"
    )


async def run_eval(plan: EvalPlan, settings: Settings, backend: Backend) -> EvalResult:
    """Write every work's episodes 1..N with both pools, pass by pass, score them and pair them."""
    setup = {
        "backend": settings.backend,
        "model": settings.models_by_role(backend.model)["forward"],
        "offline_noise": settings.offline_noise,
        "episodes": plan.episodes,
    }
    folder = plan.root.expanduser().resolve() / setup_key(setup)
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "config.json").exists():
        write_atomic(folder / "config.json", json.dumps(setup, indent=1))
    spent_path = folder / "spent.json"
    earlier = float(read_json(spent_path)["cost_usd"]) if spent_path.exists() else 0.0
    bus = EventBus()
    prompts = Prompts(settings.prompts)
    books = Calls(backend, settings, prompts, bus, spent=earlier)
    ctx = Context(Run(folder), settings, prompts, bus, books, TrainingWorks([]))
    calls: list[float] = []

    def count(event: ev.Event) -> None:
        if isinstance(event, ev.Call):
            calls.append(event.cost_usd or 0.0)
            write_json(spent_path, {"cost_usd": round(books.spent, 6)})

    bus.subscribe(count)
    tags, stories = {}, {}
    for work in plan.works:
        story = work.story_path.read_bytes()
        tag = work_tag(work.name, story, [work.episodes[n].read_bytes() for n in range(1, plan.episodes + 1)])
        tags[work.name], stories[work.name] = tag, folder / "stories" / f"{tag}.md"
        if not stories[work.name].exists():
            write_atomic(stories[work.name], story)
    sides = [
        Side(await asyncio.to_thread(p.write, folder / "pools" / p.key / "notes"), folder / "pools" / p.key)
        for p in (plan.b, plan.a)
    ]

    async def wait() -> None:
        cap = settings.max_cost
        if cap is not None and books.spent >= cap:
            raise EvalStopped(f"spend ${books.spent:.2f} reached --max-cost ${cap:.2f}")

    sampler = Sampler(
        ctx, plan.works, stories, 1, plan.episodes, asyncio.Semaphore(settings.workers), wait, _quiet, tags
    )
    stopped = ""
    try:
        await sampler.compare(sides, plan.repeats, At(0, 0))
    except EvalStopped as exc:
        stopped = str(exc)
    deterministic = backend.deterministic
    b, a = (sampler.samples(side, plan.repeats) for side in sides)
    per_work = {
        w.name: paired_test_delta(
            {u: v for u, v in b.items() if u[0] == w.name},
            {u: v for u, v in a.items() if u[0] == w.name},
            plan.confidence,
            deterministic=deterministic,
        )
        for w in plan.works
    }
    overall = paired_test_delta(b, a, plan.confidence, deterministic=deterministic)
    return EvalResult(per_work, overall, len(calls), sum(calls), folder, stopped)


def _quiet(*_args: object) -> None:
    """Eval has no watchers but its own lines: a pass starting or ending is not said."""
