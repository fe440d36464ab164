"""`skilltui diffuse`, `lint` and `score`: one-shot commands on what training uses and makes.

- diffuse writes a work's story, the writer's only input (offline noise, or a model);
- lint checks a pool's notes against the note rules and, with `--work`, for leaks of the
  training works; it exits 1 when a note has a problem, so scripts can gate on it;
- score prints the engine's loss of one written script against a human one, and its parts.

None of them opens a run; each reads its inputs, writes at most one file, and says what it did.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..agents import default_backend, make_backend
from ..core.errors import UsageError
from ..core.safe_text import visible_line
from ..core.words import counted
from . import add_folders_flag, add_model_flags, command


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "diffuse", cmd_diffuse)
    p.add_argument("--work", required=True, type=Path, help="the work folder (holds human/NN.fountain)")
    add_model_flags(p)
    p.add_argument("--seed", type=int, default=0, help="offline noise seed (default 0)")
    p.add_argument("--noise", type=float, default=0.3, help="noise level from 0 to 1 (default 0.3)")

    p = command(sub, "lint", cmd_lint)
    p.add_argument("pool", type=Path, nargs="?", help="the pool folder (a run's memory/)")
    add_folders_flag(
        p,
        "--work",
        "works",
        "a training work: also reject notes that leak its character names, scene-heading places, "
        "title or 8-word runs of its lines; repeat for several works",
    )
    p.add_argument(
        "--show-terms",
        action="store_true",
        help="list what the leakage guard would flag for the --work works (work, kind, term), one a line; "
        "no pool needed",
    )

    p = command(sub, "score", cmd_score)
    p.add_argument("--human", required=True, type=Path, metavar="FILE", help="the human episode (Fountain)")
    p.add_argument("--written", required=True, type=Path, metavar="FILE", help="the written episode (Fountain)")
    p.add_argument("--json", action="store_true", help="print the loss, parts and counts as JSON")


def cmd_lint(args: argparse.Namespace) -> int:
    """Check a pool's notes; exit 1 if any problem.

    Check every note of POOL against the note rules and print each problem; with --work,
    also check that no note leaks what those training works contain. With --show-terms,
    list the names, places and titles the guard looks for instead.
    """
    from ..engine.data.works import load_works
    from ..engine.notes.leakage import Lexicon
    from ..engine.notes.note_checks import lint_pool
    from ..pool.notes import FOLDERS, Pool

    if args.show_terms:
        if not args.works:
            raise UsageError("--show-terms needs --work DIR: the works whose names it lists")
        listed = Lexicon.from_works(load_works(args.works, need_story=False))
        for term, (what, work) in sorted(listed.terms.items(), key=lambda t: (t[1][1], t[1][0], t[0])):
            print(f"{work}  {what.removeprefix('the ')}  {term}")
        return 0
    if args.pool is None:
        raise UsageError("lint needs a POOL folder (a run's memory/), or --work DIR --show-terms")
    if not args.pool.is_dir():
        raise UsageError(f"{visible_line(str(args.pool))} is not a folder; pass a pool (a run's memory/ folder)")
    _refuse_non_pool(args.pool, FOLDERS)
    lexicon = Lexicon.from_works(load_works(args.works, need_story=False)) if args.works else None
    pool = Pool(args.pool)
    problems = lint_pool(pool, lexicon)
    for problem in problems:
        print(problem)
    notes = len(pool.note_paths())
    # A problem names its file first ("rel: what"); a stray file outside the note folders is
    # a problem of its own, so the files are counted, not the notes.
    files = {problem.split(": ", 1)[0] for problem in problems}
    print(
        f"{counted(len(problems), 'problem')} in {counted(len(files), 'file')} ({counted(notes, 'note')} in the pool)"
        if problems
        else f"ok: {counted(notes, 'note')}, no problems",
        file=sys.stderr,
    )
    return 1 if problems else 0


def _refuse_non_pool(folder: Path, folders: dict[str, str]) -> None:
    """A folder that holds no pool (a work, a run, a typo) is refused instead of linted as one.

    Linted as a pool, every file of a work folder is "outside the note folders", and the
    count of problems says nothing useful.
    """
    if (folder / "human").is_dir():
        raise UsageError(f"{folder} is a work folder, not a pool; pass a pool and name the work with --work {folder}")
    if (folder / "memory").is_dir() and (folder / "config.json").is_file():
        raise UsageError(f"{folder} is a run folder; its pool is {folder / 'memory'}")
    has_files = any(folder.iterdir())
    if has_files and not (folder / ".git").exists() and not any((folder / name).is_dir() for name in folders):
        raise UsageError(f"{folder} is not a pool: it has no .git and none of the note folders {', '.join(folders)}")


def cmd_diffuse(args: argparse.Namespace) -> int:
    """Write a work's story.md: a noised prose retelling of its episodes.

    Write WORK/story.md, the writer's only input: every episode retold as prose with noise
    (reported speech, dissolved scene headings, dropped detail).
    """
    from ..engine.data.diffuse import noise_work
    from ..engine.data.work_check import write_story
    from ..engine.data.works import load_work

    if not (0.0 <= args.noise <= 1.0):  # written so that nan fails too
        raise UsageError("--noise must be between 0 and 1")
    work = load_work(args.work)
    backend_name = args.backend or default_backend()
    if backend_name == "offline":
        story = noise_work(work, seed=args.seed, noise=args.noise)
    else:
        from ..engine.data.diffuse_calls import diffuse_and_record

        backend = make_backend(backend_name, args.model, base_url=args.base_url)
        print(
            f"diffuse: model {backend.model} ({backend_name}{'' if args.model else ', its default'})", file=sys.stderr
        )

        told = diffuse_and_record(work, backend, args.noise)
        if told is None:
            return 1
        story = told
    write_story(work, story)  # with the record of the episodes it was made from, for `check`
    print(f"wrote {work.story_path} ({counted(len(work.episodes), 'episode')})")
    return 0


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
    """The engine's loss of one written script against a human one, and its parts.

    Score a written Fountain script against the human one with the loss training uses:
    scenes aligned in order, dialogue with its speaker, length, format. Prints the loss (0 =
    the human script, 1 = nothing alike) and each part's similarity.
    """
    import json

    from ..engine.loss.scores import WEIGHTS, score_step

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
