"""`skilltui import`: a person's own scripts made into a work, the data set training reads.

Every file is read, converted and checked before anything is written: a bad file among
five (a scan, an encrypted PDF, an FDX with entities, an episode that exists already)
stops the import with one line and leaves no work folder, no half of the episodes. Only
then are human/NN.fountain and work.toml written, each atomically.

An episode's number comes from its file name (`03.pdf`, `Show 1x03.fdx`, `S01E03 Pilot.pdf`,
`ep3.txt`) or, with `--first N`, from the order the files are given.
"""

from __future__ import annotations

import codecs
import json
import re
import tomllib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.durable import write_atomic
from ..core.errors import UsageError
from ..engine.data.works import EPISODE_NAME
from .fountain import Script, to_fountain, without_controls
from .report import FileReport, counts

FORMATS = {".fdx": "fdx", ".pdf": "pdf", ".fountain": "fountain", ".spmd": "fountain", ".txt": "text", ".text": "text"}
_HEAD = 8192  # bytes read to tell a file's kind before it is read in full
_NUMBERED = (
    re.compile(r"s\d+\s*e(\d+)", re.IGNORECASE),
    re.compile(r"\d+x(\d+)", re.IGNORECASE),
    re.compile(r"ep(?:isode)?[\s._-]*(\d+)", re.IGNORECASE),
    re.compile(r"(\d+)(?!.*\d)"),
)


@dataclass
class Imported:
    """One file, read and converted, not yet written."""

    report: FileReport
    fountain: str
    destination: Path


def plan(files: list[Path], work: Path, *, first: int | None, force: bool, max_script_kb: int) -> list[Imported]:
    """Read every file and decide where it goes; raise UsageError, having written nothing, on any problem."""
    if not files:
        raise UsageError("import needs at least one FILE (.fdx, .pdf, .fountain or .txt)")
    if first is not None and first < 1:
        raise UsageError(f"--first {first}: episodes start at 1")
    if max_script_kb < 1:
        raise UsageError(f"--max-script-kb {max_script_kb}: pass a size of at least 1 (KB)")
    if work.exists() and not work.is_dir():
        raise UsageError(f"--work {work} is a file; pass a folder (it is made when it does not exist)")
    # Each file's own fault (missing, a folder, empty, binary) is the first thing to say of it:
    # a missing file's name lacking an episode number is not why it cannot be imported.
    for path in files:
        _check_file(path, max_script_kb)
    numbers = _numbers(files, first)
    existing = _existing(work / "human")
    planned = []
    for path, number in zip(files, numbers, strict=True):
        if number in existing and not force:
            raise UsageError(
                f"{existing[number]} exists (episode {number}, from {path.name}); pass --force to replace it"
            )
        planned.append(_convert(path, number, work / "human" / f"{number:02d}.fountain", max_script_kb))
    return planned


def write(planned: list[Imported], work: Path) -> Path | None:
    """Write the episodes and work.toml; return work.toml's path when it was written."""
    human = work / "human"
    human.mkdir(parents=True, exist_ok=True)
    existing = _existing(human)
    for item in planned:
        write_atomic(item.destination, item.fountain)
        old = existing.get(item.report.episode)
        if old is not None and old != item.destination:
            # 1.fountain beside the new 01.fountain would both be episode 1, which a work refuses;
            # removed only once the new one is written, so a failed write loses no episode.
            old.unlink()
    return _write_meta(work, next((i.report.title for i in planned if i.report.title), None))


def as_json(planned: list[Imported], work: Path) -> str:
    return json.dumps({"work": str(work), "files": [item.report.as_json() for item in planned]}, indent=1)


def _numbers(files: list[Path], first: int | None) -> list[int]:
    if first is not None:
        return list(range(first, first + len(files)))
    numbers = []
    for path in files:
        number = next((int(m.group(1)) for p in _NUMBERED if (m := p.search(path.stem))), None)
        if number is None or number == 0:
            raise UsageError(
                f"{path.name} has no episode number in its name; pass --first N to number the files in the order given"
            )
        numbers.append(number)
    repeated = [n for n, k in Counter(numbers).items() if k > 1]
    if repeated:
        same = [p.name for p, n in zip(files, numbers, strict=True) if n == repeated[0]]
        raise UsageError(
            f"{' and '.join(same)} are both episode {repeated[0]} by their names; "
            "pass --first N to number the files in the order given"
        )
    return numbers


def _existing(human: Path) -> dict[int, Path]:
    if not human.is_dir():
        return {}
    found = {}
    for file in sorted(human.iterdir()):
        if (match := EPISODE_NAME.match(file.name)) and file.is_file():
            found[int(match.group(1))] = file
    return found


def _check_file(path: Path, max_script_kb: int) -> None:
    """Refuse a file import cannot read, for the first reason that holds, before anything is read in full."""
    if path.is_dir():
        raise UsageError(f"{path} is a folder; pass the script files themselves (such as {path / '*.pdf'})")
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(
            f"{path}: {suffix or 'no extension'} is not a format import reads; "
            "save the script as .fdx, .pdf, .fountain or .txt"
        )
    size = path.stat().st_size
    if size == 0:
        raise UsageError(f"{path} is empty (0 bytes); export the script again")
    if size > max_script_kb * 1024:
        raise UsageError(
            f"{path} is {size // 1024} KB, over --max-script-kb {max_script_kb}; "
            "import one episode a file, or raise --max-script-kb"
        )
    try:
        with path.open("rb") as file:
            head = file.read(_HEAD)
    except OSError as exc:
        raise UsageError(f"{path} cannot be read ({exc.strerror}); check its permissions") from None
    _sniff(path, FORMATS[suffix], head)


def _sniff(path: Path, kind: str, head: bytes) -> None:
    """What the first bytes say the file is: a PDF starts with its header, a text format is text.

    A stray control character in a script is cleaned (and counted) at import; a file that is
    mostly control bytes, or has NULs and is not UTF-8, is some other program's binary file.
    """
    if kind == "pdf":
        if b"%PDF-" not in head[:1024]:
            raise UsageError(f"{path} is not a PDF (it has no %PDF- header); export the script as PDF again")
        return
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise UsageError(f"{path} is UTF-16 text; save it as UTF-8 and import that")
    binary = f"{path} is a binary file, not a script saved as text; export it as .fdx, .pdf or .fountain"
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError as exc:
        if b"\x00" in head:
            raise UsageError(binary) from None
        raise UsageError(f"{path} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    _, controls = without_controls(text, keep="\f\r")
    if controls > max(8, len(text) // 4):
        raise UsageError(binary)


def _convert(path: Path, number: int, destination: Path, max_script_kb: int) -> Imported:
    kind = FORMATS[path.suffix.lower()]
    removed: Counter[str] = Counter()
    found: Sequence[tuple[int | None, str]] = []  # (page, line) a reader could not classify
    title: str | None = None
    pages = 1
    if kind == "fdx":
        from .fdx import read_fdx

        script, removed, found = read_fdx(path)
        text, title, pages = to_fountain(script.elements), script.title, script.pages
    elif kind == "pdf":
        from .pdf import read_pdf

        script, removed, found = read_pdf(path)
        text, title, pages = to_fountain(script.elements), script.title, script.pages
    else:
        text, title, pages, removed, found = _convert_text(path, kind)
    text, controls = without_controls(text)
    title, in_title = without_controls(title or "")
    unclassified = [(page, without_controls(line)[0]) for page, line in found]
    if controls + in_title:
        removed["control character"] += controls + in_title
    scenes, characters, dialogue = counts(text)
    if not text.strip() or (scenes == 0 and dialogue == 0 and len(text.split()) < 3):
        raise UsageError(f"{path} holds no script that import can read (no scene, no dialogue)")
    if len(text.encode()) > max_script_kb * 1024:
        raise UsageError(f"{path} converts to over --max-script-kb {max_script_kb}; raise --max-script-kb")
    report = FileReport(
        source=str(path),
        episode=number,
        written=str(destination),
        format=kind,
        pages=pages,
        scenes=scenes,
        characters=characters,
        dialogue_lines=dialogue,
        removed=dict(sorted(removed.items())),
        unclassified=unclassified,
        title=title or None,
    )
    return Imported(report, text, destination)


def _convert_text(path: Path, kind: str) -> tuple[str, str | None, int, Counter[str], list[tuple[int, str]]]:
    from .text import is_laid_out, read_fountain, read_laid_out

    try:
        raw = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    laid_out = kind == "text" and is_laid_out(raw)
    # Controls go before the layout is read (an ESC is no column of the page); a carriage
    # return ends a line, and in a text laid out as pages a form feed starts one: those are read.
    raw, controls = without_controls(raw, keep="\f\r" if laid_out else "\r")
    if laid_out:
        script: Script
        script, removed, unclassified = read_laid_out(raw)
        text, title, pages = to_fountain(script.elements), script.title, script.pages
    else:
        text, title = read_fountain(raw)
        pages, removed, unclassified = max(1, -(-len(text.splitlines()) // 55)), Counter(), []
    if controls:
        removed["control character"] += controls
    return text, title, pages, removed, unclassified


def _write_meta(work: Path, title: str | None) -> Path | None:
    """work.toml with the title, unless the work has one already (a person's own title wins)."""
    path = work / "work.toml"
    title = title or work.resolve().name.replace("-", " ").replace("_", " ").title()
    if path.exists():
        try:
            meta = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            return None  # a person's file, broken or not, is theirs to mend; `check` will say so
        if "title" in meta:
            return None
        write_atomic(path, f"title = {json.dumps(title)}\n" + path.read_text(encoding="utf-8"))
        return path
    write_atomic(path, f"title = {json.dumps(title)}\n")
    return path
