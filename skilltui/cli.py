"""`skilltui ...`: the command line.

    skilltui demo                         train the bundled works offline, in the app
    skilltui diffuse --work DIR           write DIR/story.md, the writer's input
    skilltui train --work DIR [--auto]    train a pool on one or more works
    skilltui lint POOL                    check a pool's notes

Bad input ends with one line on stderr that says what to do and exit code 2; a run that
stops early resumes when the same command is run again.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
from importlib import resources
from pathlib import Path

from . import __version__
from .agents import BACKENDS, default_backend, make_backend
from .agents.base import BackendError
from .agents.redact import env_secrets
from .errors import UsageError

DEMO_SETTINGS = {"steps": 3, "episodes_per_step": 2, "epochs": 1, "group_size": 2, "workers": 3}


def _add_model_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default=None,
        help="who plays the agents: offline (no network; the default without ANTHROPIC_API_KEY), "
        "anthropic (the default with a key), claude-code (optional extra)",
    )
    p.add_argument("--model", default=None, help="model for every role (e.g. claude-sonnet-5-5)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skilltui",
        description="Train a pool of markdown craft notes for a screenwriting agent the way a network is "
        "trained: forward, loss, backward, one git commit per update.",
    )
    parser.add_argument("--version", action="version", version=f"skilltui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "diffuse",
        help="write a work's story.md: a noised prose retelling of its episodes",
        description="Write WORK/story.md, the writer's only input: every episode retold as prose "
        "with noise (reported speech, dissolved scene headings, dropped detail).",
    )
    p.add_argument("--work", required=True, type=Path, help="the work folder (holds human/NN.fountain)")
    _add_model_flags(p)
    p.add_argument("--seed", type=int, default=0, help="offline noise seed (default 0)")
    p.add_argument("--noise", type=float, default=0.3, help="noise level from 0 to 1 (default 0.3)")

    p = sub.add_parser(
        "train",
        help="train a pool on one or more works",
        description="Train a pool of craft notes on the works. Run the same command again to "
        "resume. Without --auto the terminal app opens and you review every update.",
    )
    _add_train_flags(p)

    p = sub.add_parser(
        "demo",
        help="train the bundled example works with the offline backend",
        description="Copy the bundled example works to ./runs/demo-works, write their stories "
        "and train them with the offline backend into ./runs/demo.",
    )
    p.add_argument("--auto", action="store_true", help="headless: approve every update automatically")
    p.add_argument(
        "--offline-latency",
        type=float,
        default=0.3,
        metavar="S",
        help="seconds each offline call takes, so the run looks live (default 0.3)",
    )
    p.add_argument("--runs-dir", type=Path, default=Path("runs"), help="where runs go (default ./runs)")

    p = sub.add_parser(
        "lint",
        help="check a pool's notes; exit 1 if any problem",
        description="Check every note of POOL against the note rules and print each problem.",
    )
    p.add_argument("pool", type=Path, help="the pool folder (a run's memory/)")

    for extra in _extra_commands():
        extra.register(sub)
    return parser


def _add_train_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--work",
        action="append",
        required=True,
        type=Path,
        dest="works",
        metavar="DIR",
        help="a work folder; repeat for several works",
    )
    p.add_argument("--steps", type=int, default=3, help="steps per epoch (default 3)")
    p.add_argument("--episodes-per-step", type=int, default=2, help="episodes each step covers (default 2)")
    p.add_argument("--epochs", type=int, default=1, help="passes over the works (default 1)")
    p.add_argument("--workers", type=int, default=4, help="works running forward+loss at once (default 4)")
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
    _add_model_flags(p)
    p.add_argument(
        "--role-model",
        action="append",
        default=[],
        metavar="ROLE=MODEL",
        help="a model for one role (forward, loss, reduce, backward), e.g. loss=claude-haiku-5-5",
    )
    p.add_argument("--runs-dir", type=Path, default=Path("runs"), help="where runs go (default ./runs)")
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
    p.add_argument(
        "--val-work",
        action="append",
        default=[],
        type=Path,
        dest="val_works",
        metavar="DIR",
        help="a held-out work (repeatable): after every step the pool runs forward and loss on its first "
        "--episodes-per-step episodes (always the same ones), never backward; its material stays in the run's "
        "val/ folder, out of the backward pass's reach",
    )
    p.add_argument(
        "--gate",
        action="store_true",
        help="validate right after each micro-step; the automatic reviewer rolls back one that raised the mean "
        "validation loss by more than --gate-tolerance (in the app you see the numbers and decide); needs --val-work",
    )
    p.add_argument(
        "--gate-tolerance",
        type=float,
        default=0.005,
        metavar="X",
        help="the rise in mean validation loss the gate still keeps (default 0.005)",
    )
    p.add_argument(
        "--auto",
        action="store_true",
        help="headless: approve every update automatically (with --gate: roll back what the gate rejects)",
    )


def _extra_commands() -> list:
    """Subcommands that live beside the engine (history review, runs, export, compare; report), when installed."""
    try:
        from .history import cli as history_cli
        from .report import cli as report_cli
    except ImportError:
        return []
    return [history_cli, report_cli]


# -- commands ------------------------------------------------------------------------------


def cmd_lint(args: argparse.Namespace) -> int:
    from .engine.pool import Pool

    if not args.pool.is_dir():
        raise UsageError(f"{args.pool} is not a folder; pass a pool (a run's memory/ folder)")
    problems = Pool(args.pool).lint()
    for problem in problems:
        print(problem)
    count = len(Pool(args.pool).note_paths())
    print(
        f"{len(problems)} problem(s) in {count} note(s)" if problems else f"ok: {count} note(s), no problems",
        file=sys.stderr,
    )
    return 1 if problems else 0


def cmd_diffuse(args: argparse.Namespace) -> int:
    from .engine.diffuse import diffuse_with_model, noise_work
    from .engine.prompts import Prompts
    from .engine.run import write_atomic
    from .engine.works import load_work

    if not 0.0 <= args.noise <= 1.0:
        raise UsageError("--noise must be between 0 and 1")
    work = load_work(args.work)
    backend_name = args.backend or default_backend()
    if backend_name == "offline":
        story = noise_work(work, seed=args.seed, noise=args.noise)
    else:
        backend = make_backend(backend_name, args.model)
        last = [0]

        def show(number: int, text: str) -> None:
            if number != last[0]:
                print(f"\n--- episode {number} ---", file=sys.stderr)
                last[0] = number
            print(text, end="", file=sys.stderr, flush=True)

        try:
            story = asyncio.run(diffuse_with_model(work, backend, Prompts(), noise=args.noise, on_delta=show))
        except BackendError as exc:
            print(f"\nskilltui: diffuse failed: {exc}; {work.story_path} is unchanged", file=sys.stderr)
            return 1
        print(file=sys.stderr)
    write_atomic(work.story_path, story)
    print(f"wrote {work.story_path} ({len(work.episodes)} episodes)")
    return 0


def _settings(args: argparse.Namespace):
    from .engine.session import Settings

    role_models = {}
    for item in args.role_model:
        role, _, model = item.partition("=")
        if role not in ("forward", "loss", "reduce", "backward") or not model:
            raise UsageError(f"--role-model {item!r}: use ROLE=MODEL with ROLE one of forward, loss, reduce, backward")
        role_models[role] = model
    return Settings(
        works=args.works,
        steps=args.steps,
        episodes_per_step=args.episodes_per_step,
        epochs=args.epochs,
        workers=args.workers,
        group_size=args.group_size,
        no_backward=args.no_backward,
        init_pool=args.init_pool,
        backend=args.backend or default_backend(),
        model=args.model,
        role_models=role_models,
        runs_dir=args.runs_dir,
        run_id=args.run_id,
        prompts=args.prompts,
        offline_latency=args.offline_latency,
        auto=args.auto,
        max_cost=args.max_cost,
        val_works=args.val_works,
        gate=args.gate,
        gate_tolerance=args.gate_tolerance,
    )


def cmd_train(args: argparse.Namespace) -> int:
    settings = _settings(args)
    settings.check()
    backend = make_backend(settings.backend, settings.model, offline_latency=settings.offline_latency)
    return train(settings, backend)


def train(settings, backend) -> int:
    """Open the run and train it, headless (--auto, or no terminal) or in the app."""
    from .engine.session import open_run

    opened = open_run(settings)
    try:
        if not settings.auto and sys.stdout.isatty() and sys.stdin.isatty() and _has_app():
            from .tui.app import run_app

            return run_app(opened, backend, secrets=env_secrets())
        return _train_headless(opened, backend)
    finally:
        opened.lock.release()


def _has_app() -> bool:
    try:
        from .tui import app  # noqa: F401
    except ImportError:
        return False
    return True


def _train_headless(opened, backend) -> int:
    from .engine.console import ConsoleSink
    from .engine.events import EventBus, JsonlSink
    from .engine.loop import Trainer
    from .engine.review import AutoReviewer

    bus = EventBus()
    jsonl = JsonlSink(opened.run.events_path)
    console = ConsoleSink()
    bus.subscribe(jsonl)
    bus.subscribe(console)
    trainer = Trainer(opened, backend, AutoReviewer(), bus, secrets=env_secrets())
    try:
        outcome = asyncio.run(trainer.train())
    finally:
        console.close()
        jsonl.close()
    if outcome.status == "failed":
        print(f"skilltui: run failed: {outcome.reason}", file=sys.stderr)
        return 1
    if outcome.status == "stopped":
        print(f"skilltui: run stopped: {outcome.reason}; run the same command to resume", file=sys.stderr)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .engine.diffuse import noise_work
    from .engine.run import write_atomic
    from .engine.session import Settings
    from .engine.works import load_work

    target = args.runs_dir / "demo-works"
    examples = resources.files("skilltui") / "examples"
    works = []
    for source in sorted(Path(str(examples)).iterdir()):
        if not (source / "human").is_dir():
            continue
        copy = target / source.name
        if not copy.exists():
            shutil.copytree(source, copy)
        work = load_work(copy)
        if not work.story_path.exists():
            write_atomic(work.story_path, noise_work(work, seed=0, noise=0.3))
        works.append(copy)
    settings = Settings(
        works=works,
        backend="offline",
        runs_dir=args.runs_dir,
        run_id="demo",
        offline_latency=args.offline_latency,
        auto=args.auto,
        **DEMO_SETTINGS,
    )
    settings.check()
    print(f"demo: {len(works)} works from {target}", file=sys.stderr)
    return train(settings, make_backend("offline", offline_latency=settings.offline_latency))


COMMANDS = {"lint": cmd_lint, "diffuse": cmd_diffuse, "train": cmd_train, "demo": cmd_demo}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = COMMANDS.get(args.command) or getattr(args, "handler", None)
    try:
        return handler(args)
    except UsageError as exc:
        print(f"skilltui: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nskilltui: interrupted; run the same command to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
