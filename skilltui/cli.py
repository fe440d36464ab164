"""`skilltui ...`: the command line.

    skilltui demo                         train the bundled works offline, in the app
    skilltui diffuse --work DIR           write DIR/story.md, the writer's input
    skilltui train --work DIR [--auto]    train a pool on one or more works
    skilltui lint POOL [--work DIR ...]   check a pool's notes (and for leaks of the works)
    skilltui score --human F --written F  the loss of one script against another

Bad input ends with one line on stderr that says what to do and exit code 2; a run that
stops early resumes when the same command is run again.
"""

from __future__ import annotations

import signal
import sys
import threading

from . import _before_start, _stopped_while_starting

# A Ctrl-C (or SIGTERM, SIGHUP) while this module's imports load ends in one line, not a
# traceback (launched as the command, the package did this already, before this module
# loaded); main() takes over from here, and importing this module elsewhere (tests) keeps
# its own handlers once the imports are done.
_before = (
    {sig: signal.signal(sig, _stopped_while_starting) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    if threading.current_thread() is threading.main_thread()
    else {}
)
_before.update(_before_start)

import argparse  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
from importlib import resources  # noqa: E402
from pathlib import Path  # noqa: E402

from . import __version__  # noqa: E402
from .agents import BACKENDS, default_backend, make_backend  # noqa: E402
from .errors import UsageError  # noqa: E402
from .signals import Terminated, exit_code, install_stop_signals, name_of, signal_of  # noqa: E402

for _sig, _handler in _before.items():
    signal.signal(_sig, _handler)

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
        description="Check every note of POOL against the note rules and print each problem; with --work, "
        "also check that no note leaks what those training works contain.",
    )
    p.add_argument("pool", type=Path, help="the pool folder (a run's memory/)")
    p.add_argument(
        "--work",
        action="append",
        default=[],
        type=Path,
        dest="works",
        metavar="DIR",
        help="a training work: also reject notes that leak its character names, scene-heading places, "
        "title or 8-word runs of its lines; repeat for several works",
    )

    p = sub.add_parser(
        "score",
        help="the engine's loss of one written script against a human one, and its parts",
        description="Score a written Fountain script against the human one with the loss training "
        "uses: scenes aligned in order, dialogue with its speaker, length, format. Prints the loss "
        "(0 = the human script, 1 = nothing alike) and each part's similarity.",
    )
    p.add_argument("--human", required=True, type=Path, metavar="FILE", help="the human episode (Fountain)")
    p.add_argument("--written", required=True, type=Path, metavar="FILE", help="the written episode (Fountain)")
    p.add_argument("--json", action="store_true", help="print the loss, parts and counts as JSON")

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
    from .engine.leakage import Lexicon
    from .engine.note_checks import lint_pool
    from .engine.pool import Pool
    from .engine.works import load_works

    if not args.pool.is_dir():
        raise UsageError(f"{args.pool} is not a folder; pass a pool (a run's memory/ folder)")
    lexicon = Lexicon.from_works(load_works(args.works, need_story=False)) if args.works else None
    problems = lint_pool(Pool(args.pool), lexicon)
    for problem in problems:
        print(problem)
    count = len(Pool(args.pool).note_paths())
    print(
        f"{len(problems)} problem(s) in {count} note(s)" if problems else f"ok: {count} note(s), no problems",
        file=sys.stderr,
    )
    return 1 if problems else 0


def cmd_diffuse(args: argparse.Namespace) -> int:
    from .engine.diffuse import noise_work
    from .engine.run import write_atomic
    from .engine.works import load_work

    if not (0.0 <= args.noise <= 1.0):  # written so that nan fails too
        raise UsageError("--noise must be between 0 and 1")
    work = load_work(args.work)
    backend_name = args.backend or default_backend()
    if backend_name == "offline":
        story = noise_work(work, seed=args.seed, noise=args.noise)
    else:
        from .engine.diffuse_calls import diffuse_and_record

        backend = make_backend(backend_name, args.model)
        print(
            f"diffuse: model {backend.model} ({backend_name}{'' if args.model else ', its default'})", file=sys.stderr
        )

        story = diffuse_and_record(work, backend, args.noise)
        if story is None:
            return 1
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
        judge_weight=args.judge_weight,
        batch=args.batch,
        forward_timeout=args.forward_timeout,
        loss_timeout=args.loss_timeout,
        backward_timeout=args.backward_timeout,
        backward_retries=args.backward_retries,
        strict=args.strict,
        max_edit_lines=args.max_edit_lines,
    )


def cmd_train(args: argparse.Namespace) -> int:
    settings = _settings(args)
    settings.check()
    if settings.batch and settings.backend != "anthropic":
        raise UsageError("--batch needs --backend anthropic (the Message Batches API); drop --batch or switch backend")
    backend = make_backend(settings.backend, settings.model, offline_latency=settings.offline_latency)
    return train(settings, backend)


def train(settings, backend) -> int:
    """Open the run and train it, headless (--auto, or no terminal) or in the app."""
    from .agents.redact import env_secrets
    from .engine.session import open_run

    opened = open_run(settings)
    try:
        if not settings.auto and sys.stdout.isatty() and sys.stdin.isatty() and _has_app():
            from .signals import deferred_signals
            from .tui.app import run_app

            # The app acts on stop signals itself once it runs (one that comes earlier waits for
            # it): ending at once would leave the terminal in the app's full-screen mode.
            with deferred_signals():
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
    from .agents.redact import env_secrets
    from .run_model.headless import train_headless

    return train_headless(opened, backend, secrets=env_secrets())


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


def _read_script(path: Path, flag: str) -> str:
    if path.is_dir():
        raise UsageError(f"{flag} {path} is a folder; pass one Fountain script")
    if not path.is_file():
        raise UsageError(f"{flag} {path}: no such file; pass a Fountain script")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{flag} {path} is not UTF-8 text; save it as UTF-8 and try again") from None
    except OSError as exc:
        raise UsageError(f"{flag} {path} cannot be read ({exc.strerror}); check its permissions") from None


def cmd_score(args: argparse.Namespace) -> int:
    import json

    from .engine.scores import WEIGHTS, score_step

    human = _read_script(args.human, "--human")
    written = _read_script(args.written, "--written")
    if not human.strip():
        raise UsageError(f"--human {args.human} is empty; pass the human episode")
    scores = score_step({1: written}, {1: human})
    if args.json:
        print(
            json.dumps(
                {
                    "loss": scores["loss"],
                    "scores": scores["scores"],
                    "weights": WEIGHTS,
                    "counts": scores["counts"]["1"],
                },
                indent=1,
            )
        )
        return 0
    print(f"loss {scores['loss']:.3f}  (0 = the human script, 1 = nothing alike)")
    for name, value in scores["scores"].items():
        print(f"  {name:<9} {value:.3f}  weight {WEIGHTS[name]:.2f}  costs {WEIGHTS[name] * (1 - value):.3f}")
    counts = scores["counts"]["1"]
    print(
        f"  scenes {counts['written_scenes']} written / {counts['human_scenes']} human, "
        f"pairs in order {counts['scene_pairs_in_order']}; words {counts['written_words']} / {counts['human_words']}"
    )
    return 0


COMMANDS = {"score": cmd_score, "lint": cmd_lint, "diffuse": cmd_diffuse, "train": cmd_train, "demo": cmd_demo}


def main(argv: list[str] | None = None) -> int:
    restore = install_stop_signals()
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        handler = COMMANDS.get(args.command) or getattr(args, "handler", None)
        return handler(args)
    except UsageError as exc:
        print(f"skilltui: error: {exc}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, Terminated) as exc:
        signum = signal_of(exc)
        print(f"\nskilltui: stopped by {name_of(signum)}; a run resumes with the same command", file=sys.stderr)
        return exit_code(signum)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:  # noqa: BLE001 - no traceback reaches the user; it goes to a file
        print(f"skilltui: error: {_problem(exc)}", file=sys.stderr)
        return 1
    finally:
        restore()


def _problem(exc: Exception) -> str:
    """One line for a failure outside a training loop (which reports its own).

    A full disk or a folder that cannot be written says so; anything else is a bug, whose
    traceback is kept in a file the line names. Every record is written whole, so the
    command can be run again once the cause is fixed.
    """
    from .durable import no_room

    again = "run the same command again"
    if no_room(exc):
        return f"the disk is full ({_first_line(exc)}); free some space and {again}"
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        return f"{exc.strerror or exc}{where}; fix that and {again}"
    import tempfile
    import traceback

    with tempfile.NamedTemporaryFile("w", prefix="skilltui-error-", suffix=".txt", delete=False) as f:
        traceback.print_exception(exc, file=f)
    return f"{type(exc).__name__}: {_first_line(exc)} (a bug; the details are in {f.name})"


def _first_line(exc: BaseException) -> str:
    """The line of an error that says the most (for a git command, its stderr's last line)."""
    lines = [line.strip().removeprefix("stderr: ").strip("'") for line in str(exc).splitlines() if line.strip()]
    return next((line for line in reversed(lines) if "space" in line.lower()), lines[0] if lines else "")
