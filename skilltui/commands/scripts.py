"""`skilltui import` and `check`: a person's own scripts made into a work, and a work checked before training.

- import reads Final Draft (.fdx), PDF, plain text and Fountain files into WORK/human/NN.fountain
  and WORK/work.toml, and says for each file what it found and what it removed or could not
  place; any bad file stops it before anything is written;
- check says what `train` would refuse in a work (episodes that do not parse, a story with
  no section for an episode or made from episodes since changed) and what it would pass over
  (gaps in the numbering, files in human/ that are not episodes); before diffuse it checks the
  episodes and says that diffuse comes next, the order import's `next:` line gives.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.errors import UsageError
from ..core.safe_text import visible_line
from ..core.words import counted
from . import add_folders_flag, command


def register(sub: argparse._SubParsersAction) -> None:
    from ..engine.data.works import DEFAULT_MAX_SCRIPT_KB

    p = command(sub, "import", cmd_import)
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="scripts: .fdx, .pdf, .fountain or .txt")
    p.add_argument("--work", required=True, type=Path, metavar="DIR", help="the work folder to write (made if needed)")
    p.add_argument(
        "--first",
        type=int,
        default=None,
        metavar="N",
        help="number the files N, N+1, ... in the order given (default: the number in each file's name)",
    )
    p.add_argument("--force", action="store_true", help="replace episodes that exist already")
    p.add_argument("--json", action="store_true", help="print what each file held as JSON")
    p.add_argument(
        "--max-script-kb",
        type=int,
        default=DEFAULT_MAX_SCRIPT_KB,
        metavar="K",
        help=f"refuse a file over K kilobytes (default {DEFAULT_MAX_SCRIPT_KB})",
    )

    p = command(sub, "check", cmd_check)
    add_folders_flag(p, "--work", "works", "a work folder to check; repeat for several", required=True)


def cmd_import(args: argparse.Namespace) -> int:
    """Import Final Draft, PDF, text or Fountain scripts into a work's episodes.

    Read each FILE (.fdx, .pdf, .fountain, .txt) and write it as WORK/human/NN.fountain, the
    number from the file's name or, with --first, from the order given; write WORK/work.toml
    with the title page's title. Page numbers, running headers and a revised page's header,
    (MORE), (CONTINUED), CONTINUED: and (CONT'D), scene numbers and revision asterisks are
    removed, and so are control characters (NUL, ESC, ...). Prints, for each file, its
    scenes, characters, lines of dialogue and pages, what was removed, and every line it
    could not classify. Nothing is written when any file cannot be imported.
    """
    from ..importing.importer import as_json, plan, write

    work = args.work.expanduser()
    try:
        planned = plan(args.files, work, first=args.first, force=args.force, max_script_kb=args.max_script_kb)
    except UsageError as exc:
        raise UsageError(_names_on_one_line(str(exc), args.files)) from None
    meta = write(planned, work)
    if args.json:
        print(as_json(planned, work))
        return 0
    for item in planned:
        for line in item.report.lines():
            print(line)
    written = f"wrote {counted(len(planned), 'episode')} to {work / 'human'}"
    print(written + (f" and {meta}" if meta else ""), file=sys.stderr)
    print(f"next: skilltui check --work {work}  (then skilltui diffuse --work {work})", file=sys.stderr)
    return 0


def _names_on_one_line(message: str, files: list[Path]) -> str:
    """`message` with each file's name and path spelled out on one line (a newline as `\\n`).

    A file's name may hold a newline or another control character, and every import error
    names its file: printed as it is, the one-line error would break in two, or a terminal
    would act on the byte. Longer texts first, so a path is spelled out before its name.
    """
    texts = sorted({t for f in files for t in (str(f), f.name)}, key=len, reverse=True)
    for text in texts:
        if visible_line(text) != text:
            message = message.replace(text, visible_line(text))
    return message


def cmd_check(args: argparse.Namespace) -> int:
    """Check works before training: episodes, their numbers, the story; exit 2 on a problem.

    For each --work: every episode parses as Fountain, gaps in the numbering and files in
    human/ that are not episodes are named, and story.md has a section for every episode and
    was made from the episodes as they are now (else: run `skilltui diffuse` again). Before
    diffuse has made story.md the episodes are checked and `skilltui diffuse` is named as
    the next step. Problems are printed one a line and end in exit code 2; notes are printed
    and do not.
    """
    from ..engine.data.work_check import check_work
    from ..engine.data.works import load_work

    problems: list[str] = []
    for path in args.works:
        try:
            work = load_work(path)
        except UsageError as exc:
            problems.append(str(exc))
            continue
        checked = check_work(work)
        for note in checked.notes:
            print(f"note: {note}", file=sys.stderr)
        problems += checked.problems
        if checked.problems:
            continue
        episodes = f"{counted(len(work.episodes), 'episode')} read as Fountain"
        story = {
            "current": f"{work.story_path.name} has a section for each, made from it as it is now",
            "unknown": f"{work.story_path.name} has a section for each",
            "missing": f"no {work.story_path.name} yet",
        }[checked.story]
        print(f"ok: {work.root} ({episodes}; {story})")
        if checked.story == "missing":
            print(
                f"next: skilltui diffuse --work {work.root}  (it writes the story; check then checks it too)",
                file=sys.stderr,
            )
    if problems:
        raise UsageError("\n".join(problems))
    return 0
