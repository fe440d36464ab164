"""One reader of micro-step records: nothing outside `skilltui/store/` reads a micro-step's records or
parses a commit's provenance trailers; everything asks `store.micro_steps` or `store.micro_records`.

What the scan calls a reader, in the code of every module of `skilltui/` outside `store/`
(docstrings and comments may still name the files; code may not):

- a string that names `checked.json`, `review.json` or `commit.txt` (a path, a glob, an f-string part);
- a string holding `Skilltui-`, the trailers' prefix (a trailer regex written by hand);
- `parse` or `TRAILER` taken from `model.trailers`, by `from ...model.trailers import parse`
  or as an attribute of the module (`tr.parse(...)`, `trailers.TRAILER`);
- a call of `.notes_of(...)`, the git notes that carry decisions made after a commit.

`model/trailers.py` is where the parser lives (below the store, which uses it); writing
trailers (`trailers.block`, `trailers.decision_value`) is the engine's and is not a read.
"""

from __future__ import annotations

import ast
from pathlib import Path

import skilltui

PACKAGE = Path(skilltui.__file__).parent
NAMES = ("checked.json", "review.json", "commit.txt", "Skilltui-")
PARSER = {"parse", "TRAILER"}


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def readers_in(source: str) -> list[str]:
    """What in one module's code reads micro-step records or trailers, as 'line N: why'."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    trailer_modules: set[str] = set()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if node.module.endswith("model.trailers") and alias.name in PARSER:
                    found.append(f"line {node.lineno}: imports the trailer parser's {alias.name}")
                if node.module.endswith("model") and alias.name == "trailers":
                    trailer_modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            trailer_modules |= {a.asname for a in node.names if a.name.endswith("model.trailers") and a.asname}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            for name in NAMES:
                if name in node.value:
                    found.append(f"line {node.lineno}: names {name}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in trailer_modules and node.attr in PARSER:
                found.append(f"line {node.lineno}: uses the trailer parser ({node.value.id}.{node.attr})")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "notes_of":
            found.append(f"line {node.lineno}: reads a commit's git notes (notes_of)")
    return found


def readers_outside_store(package: Path) -> dict[str, list[str]]:
    """Every module of the package outside store/ (and the parser's own module) that reads the records."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel.startswith("store/") or rel == "model/trailers.py":
            continue
        if hits := readers_in(path.read_text(encoding="utf-8")):
            found[rel] = hits
    return found


def test_no_module_outside_the_store_reads_micro_step_records_or_parses_trailers():
    assert readers_outside_store(PACKAGE) == {}


def test_the_scan_finds_each_kind_of_second_reader():
    # Each shape a second reader of the records could take.
    assert readers_in('p = adir / "checked.json"\n') == ["line 1: names checked.json"]
    assert readers_in('for r in gdir.glob("attempt*/review.json"): pass\n') == ["line 1: names review.json"]
    assert readers_in('name = f"{adir}/review.json"\n') == ["line 1: names review.json"]
    assert readers_in('done = (out / "commit.txt").exists()\n') == ["line 1: names commit.txt"]
    assert readers_in('for r in run.root.glob(f"epoch{e}/step*/backward/g*/commit.txt"): pass\n') == [
        "line 1: names commit.txt"
    ]
    assert readers_in('import re\nTRAILER = re.compile(r"^Skilltui-(\\w+): (.*)$")\n') == ["line 2: names Skilltui-"]
    assert readers_in("from ..model import trailers as tr\nsaid = tr.parse(message, notes)\n") == [
        "line 2: uses the trailer parser (tr.parse)"
    ]
    assert readers_in("from ...model.trailers import parse\n") == ["line 1: imports the trailer parser's parse"]
    assert readers_in("import skilltui.model.trailers as t\nt.TRAILER.match(line)\n") == [
        "line 2: uses the trailer parser (t.TRAILER)"
    ]
    assert readers_in('later = pool.notes_of(sha, "refs/notes/skilltui")\n') == [
        "line 1: reads a commit's git notes (notes_of)"
    ]
    # Naming the files in a docstring, or writing trailers, reads nothing.
    assert readers_in('"""Each attempt keeps checked.json and review.json."""\n') == []
    assert readers_in("from ..model import trailers\nline = trailers.block(pairs)\n") == []
