"""`skilltui train` and `skilltui demo`: open a run and train it, headless or in the app;
`skilltui repair`: put a run's damaged pool back on an intact commit so training can go on.

`train` turns its flags into `Settings`, checks them and hands the run to the app when it
runs on a terminal, or trains headless with `--auto` (without a terminal it refuses:
`unattended`). `demo` is `train` on the bundled example works with the offline backend.
Headless, SIGINT, SIGTERM and SIGHUP stop the run before the next stage (a second one at
once) and the same command resumes it.
"""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

from ..agents import default_backend
from ..core.errors import UsageError
from ..engine.data.works import DEFAULT_MAX_SCRIPT_KB
from . import add_folders_flag, add_model_flags, add_runs_dir, command, gate_flags
from .evaluation import add_test_flags
from .run_backends import backend_for_run, preflight, role_settings
from .tracking import add_tracking_flags, spec_from
from .train_session import train
from .unattended import refuse_offline_models


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "train", cmd_train)
    add_train_flags(p)


def add_train_flags(p: argparse.ArgumentParser) -> None:
    add_folders_flag(p, "--work", "works", "a work folder; repeat for several works", required=True)
    p.add_argument("--steps", type=int, default=3, help="steps per epoch (default 3)")
    p.add_argument("--episodes-per-step", type=int, default=2, help="episodes each step covers (default 2)")
    p.add_argument("--epochs", type=int, default=1, help="passes over the works (default 1)")
    p.add_argument("--workers", type=int, default=4, help="works running forward+loss at once (default 4)")
    p.add_argument(
        "--max-script-kb",
        type=int,
        default=DEFAULT_MAX_SCRIPT_KB,
        metavar="KB",
        help=f"refuse a human episode bigger than this when the work is opened (default {DEFAULT_MAX_SCRIPT_KB}; "
        "a feature film is ~120)",
    )
    p.add_argument(
        "--group-size",
        type=int,
        default=4,
        help="works per backward micro-step (default 4); 0 puts every work in one group",
    )
    p.add_argument("--no-backward", action="store_true", help="freeze the pool: no backward pass, no updates")
    p.add_argument(
        "--init-pool",
        type=Path,
        default=None,
        metavar="DIR",
        help="start from a copy of a trained pool; with --no-backward this is the control arm",
    )
    add_model_flags(p)
    p.add_argument(
        "--role-model",
        action="append",
        default=[],
        metavar="ROLE=[BACKEND:]MODEL",
        help="a model for one role (forward or writer, loss or judge, reduce, backward, consolidate), on the run's "
        "backend or another: loss=claude-haiku-5-5, writer=openai:llama3 (repeatable)",
    )
    add_runs_dir(p)
    p.add_argument("--run-id", default=None, help="the run folder's name (default: derived from the settings)")
    p.add_argument("--prompts", type=Path, default=None, metavar="DIR", help="a folder of your own prompt templates")
    p.add_argument(
        "--offline-latency",
        type=float,
        default=0.0,
        metavar="S",
        help="seconds each offline call takes, streamed gradually (default 0)",
    )
    p.add_argument(
        "--max-cost",
        type=float,
        default=None,
        metavar="USD",
        help="stop before the next stage once the run has spent this much; resumable",
    )
    add_folders_flag(
        p,
        "--val-work",
        "val_works",
        "a held-out work (repeatable): after every step the pool runs forward and loss on its first "
        "--episodes-per-step episodes (always the same ones), never backward; its material stays in the run's "
        "val/ folder, out of the backward pass's reach",
    )
    add_gate_flags(p)
    add_test_flags(p)
    p.add_argument(
        "--judge-weight",
        type=float,
        default=0.0,
        metavar="W",
        help="blend the judge's rubric (scene purpose, voice, visual action, structure) into the loss: "
        "(1-W) * engine loss + W * rubric loss; default 0, the engine's loss alone. A missing or "
        "malformed rubric falls back to the engine's loss and is recorded",
    )
    p.add_argument(
        "--batch",
        action="store_true",
        help="send each step's loss-judge calls, and its reduce calls, as one Message Batch at half price "
        "(--backend anthropic; slower: for runs nobody watches). A killed run resumes polling the same batch",
    )
    p.add_argument(
        "--forward-timeout",
        type=float,
        default=2400,
        metavar="S",
        help="seconds one writer call may take (default 2400)",
    )
    p.add_argument(
        "--loss-timeout",
        type=float,
        default=1800,
        metavar="S",
        help="seconds one judge or reduce call may take (default 1800)",
    )
    p.add_argument(
        "--backward-timeout",
        type=float,
        default=5400,
        metavar="S",
        help="seconds one backward call may take (default 5400)",
    )
    p.add_argument(
        "--backward-retries",
        type=int,
        default=2,
        metavar="N",
        help="new attempts, each from the reset pool and told what went wrong, after a backward attempt "
        "fails its checks (default 2); then the group's update is skipped",
    )
    p.add_argument(
        "--candidates",
        type=candidates_count,
        default=1,
        metavar="K",
        help="backward attempts per micro-step, all from the same parent, run at once (default 1); with --gate "
        "each is validated and the automatic reviewer keeps the best the gate would keep, or none",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="stop the run when a micro-step fails every attempt, instead of skipping its update",
    )
    p.add_argument(
        "--max-edit-lines",
        type=int,
        default=80,
        metavar="N",
        help="the learning rate: lines one micro-step may add plus remove in the notes (default 80); "
        "the commit tool refuses a bigger change",
    )
    p.add_argument(
        "--pool-budget",
        type=float,
        default=4000,
        metavar="TOKENS",
        help="the most tokens the notes may come to (characters / 3.5, as prompts are sized; default 4000); "
        "the commit tool refuses a backward commit that takes the pool over it",
    )
    p.add_argument(
        "--consolidate",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="end every epoch that kept an update with a consolidation micro-step that merges, prunes and "
        "shortens notes (default on; --no-consolidate skips it)",
    )
    p.add_argument("--consolidate-edit-lines", type=int, metavar="N", help="a consolidation's edit budget (4x max)")
    p.add_argument(
        "--estimate",
        action="store_true",
        help="print what the run would cost (calls and tokens per role, dollars, wall time) and stop: "
        "no model is called and no run folder is made",
    )
    p.add_argument(
        "--auto",
        action="store_true",
        help="headless: approve every update automatically (with --gate: roll back what the gate rejects)",
    )
    add_tracking_flags(p)


def whole(flag: str):
    """An argparse type for a count: a bad value is one line naming the flag, not argparse's usage dump."""

    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise UsageError(f"{flag} takes a whole number, not {text!r}") from None

    return parse


def add_gate_flags(p: argparse.ArgumentParser) -> None:
    """Validation passes and the gate (docs/validation.md: "The gate")."""
    p.add_argument(
        "--val-repeats",
        type=whole("--val-repeats"),
        default=1,
        metavar="R",
        help="passes over the validation works per measurement (default 1); each pass is a new sample "
        "of the same notes, and a tree's figure is their mean",
    )
    p.add_argument(
        "--val-episodes",
        type=whole("--val-episodes"),
        default=None,
        metavar="N",
        help="validate on episodes 1..N of every validation work (default: --episodes-per-step); more "
        "episodes give the gate more paired samples per pass",
    )
    p.add_argument(
        "--gate",
        action="store_true",
        help="validate right after each micro-step and compare it with its parent, episode by episode; the "
        "automatic reviewer keeps it only when the interval on the mean change in validation loss is below "
        "zero (in the app you see the figures and decide); needs --val-work",
    )
    p.add_argument(
        "--gate-confidence",
        type=float,
        default=0.9,
        metavar="C",
        help="the confidence of the gate's interval (default 0.9: a 90%% interval); higher keeps fewer updates",
    )
    p.add_argument(
        "--gate-max-repeats",
        type=whole("--gate-max-repeats"),
        default=3,
        metavar="N",
        help="while the interval straddles zero the gate adds a pass on both sides, up to N passes each "
        "(default 3); each pass costs a validation forward and loss per validation work",
    )
    p.add_argument(
        "--gate-tolerance",
        type=float,
        default=None,
        metavar="X",
        help="removed: the gate now keeps an update only when its interval is below zero (see --gate-confidence)",
    )
    p.add_argument(
        "--offline-noise",
        type=float,
        default=0.0,
        metavar="P",
        help="the offline writer garbles a share P of its paragraphs (dropped, cut short, cue lost), drawn "
        "per call from a generator seeded by the run and the call, so passes differ (default 0: deterministic)",
    )
    gate_flags.add_statistics_flags(p)


def candidates_count(text: str) -> int:
    """--candidates K: a whole number from 1 to 16. A UsageError (not argparse's two lines) says so in one."""
    from ..engine.settings import CANDIDATES_BOUND, MAX_CANDIDATES

    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_CANDIDATES:
        raise UsageError(f"--candidates {text!r}: " + CANDIDATES_BOUND.removeprefix("--candidates "))
    return value


def settings_from(args: argparse.Namespace):
    """The run's Settings from the parsed `train` flags."""
    from ..engine.settings import Settings

    backend = args.backend or default_backend()
    # Every flag of `train` fills the Settings field of the same name; only these three are worked out.
    given = {f.name: getattr(args, f.name) for f in fields(Settings) if hasattr(args, f.name)}
    return Settings(**{**given, "backend": backend, **role_settings(args.role_model, backend)})


def cmd_train(args: argparse.Namespace) -> int:
    """Train a pool on one or more works.

    Train a pool of craft notes on the works. Run the same command again to resume. Without
    --auto the terminal app opens and you review every update.
    """
    settings = settings_from(args)
    settings.check()
    tracking = spec_from(args)
    if settings.batch and {settings.backend_for("loss"), settings.backend_for("reduce")} != {"anthropic"}:
        raise UsageError("--batch needs --backend anthropic (the Message Batches API); drop --batch or switch backend")
    if args.estimate:
        from .estimate import estimate_run
        from .estimate_text import estimate_lines

        print("\n".join(estimate_lines(estimate_run(settings, _default_model(settings.backend)))))
        return 0
    refuse_offline_models(settings)
    backend = backend_for_run(settings)
    preflight(settings, backend)
    return train(settings, backend, tracking)


def _default_model(backend: str) -> str:
    """The model a backend calls without --model, known without making the backend (which needs a key)."""
    if backend == "anthropic":
        from ..agents.anthropic_backend import DEFAULT_MODEL
    elif backend == "openai":
        DEFAULT_MODEL = "gpt-5.4"  # noqa: N806 - openai_backend's, known without the openai extra
    elif backend == "claude-code":
        from ..agents.claude_code import DEFAULT_MODEL
    elif backend == "codex":
        from ..agents.codex import DEFAULT_MODEL
    elif backend.startswith("mailbox:"):
        DEFAULT_MODEL = "mailbox"  # noqa: N806 - whoever answers picks the model
    else:
        DEFAULT_MODEL = "offline"  # noqa: N806 - the same name as the backends' constant
    return DEFAULT_MODEL
