"""No import cycle between the top-level folders and modules of skilltui/.

The layers contract in pyproject.toml orders the folders it names; this test holds for every
top-level unit, named there or not, and for every import, at module level or inside a
function or `TYPE_CHECKING`: a cycle between two folders means neither can be read, tested
or changed without the other.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "skilltui"


def _module(path: Path, root: Path) -> list[str]:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _imported(path: Path, root: Path) -> set[str]:
    """The top-level units of skilltui (`engine`, `cli`, ...) that `path` imports from."""
    here = _module(path, root)
    package = here if path.name == "__init__.py" else here[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name.split(".") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            targets = [module + [alias.name] for alias in node.names]
        else:
            continue
        for target in targets:
            if target[0] == "skilltui" and len(target) > 1 and target[1] != "*":
                found.add(target[1])
    return found


def folder_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """For each top-level unit, the top-level units its modules import from."""
    graph: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if len(parts) < 2 or parts == ["skilltui", "__init__"]:
            continue  # skilltui.py: the package itself, not one of its folders
        source = parts[1]
        targets = graph.setdefault(source, set())
        for target in _imported(path, root) - {source}:
            if (root / target).is_dir() or (root / f"{target}.py").is_file():
                targets.add(target)
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of the graph (its units, the first repeated at the end), or [] if none."""
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        return list(exc.args[1])
    return []


def test_no_cycle_between_top_level_folders():
    found = cycle(folder_graph())
    assert not found, "an import cycle between skilltui's folders: " + " -> ".join(found)


def test_graph_sees_the_layers():
    """The graph is the real one: the engine imports the model, and the model imports no engine."""
    graph = folder_graph()
    assert "model" in graph["engine"] and "engine" in graph["commands"]
    assert "engine" not in graph["model"] and graph["core"] == set()


@pytest.mark.parametrize("where", ["top", "in_function"])
def test_a_cyclic_import_is_caught(tmp_path, where):
    """A model module that imports the engine (back up the stack) makes a cycle the test names."""
    fake = tmp_path / "skilltui"
    for unit in ("model", "engine"):
        (fake / unit).mkdir(parents=True)
        (fake / unit / "__init__.py").write_text("")
    (fake / "engine" / "loop.py").write_text("from ..model.events import Loss\n")
    line = "from ..engine.loop import run\n"
    if where == "in_function":
        line = "def f():\n    from skilltui.engine import loop\n"
    (fake / "model" / "view.py").write_text(line)
    assert sorted(set(cycle(folder_graph(fake)))) == ["engine", "model"]
