"""`pip install -e .` pulls what skilltui imports and nothing else.

The imports of every module in skilltui/ (an ast walk, so a lazy import inside a function
counts too) are compared with `[project] dependencies`: a distribution nobody imports is
weight every install pays for (sacrebleu was one), and a module imported but not declared
works only while some other package happens to pull it in. An extra's distribution counts
for the modules that import it (`mlflow`, `claude_agent_sdk`), whether or not it is installed.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(spec: str) -> str:
    return canonical(re.split(r"[=<>!~\[; ]", spec, maxsplit=1)[0])


def third_party_imports() -> dict[str, set[str]]:
    """Each top-level module skilltui imports from outside itself and the standard library, with who imports it."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "skilltui").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != "skilltui" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def declared() -> tuple[set[str], dict[str, set[str]]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {requirement_name(spec) for spec in project["dependencies"]}
    optional = project["optional-dependencies"]
    extras = {extra: {requirement_name(spec) for spec in specs} for extra, specs in optional.items()}
    return core, extras


@cache
def installed() -> dict[str, list[str]]:
    # Reads every installed distribution's file list: seconds, so once per test session.
    return packages_distributions()


def distributions_of(module: str) -> set[str]:
    """The installed distributions that provide `module`; for one not installed (an extra), its own name."""
    found = {canonical(dist) for dist in installed().get(module, [])}
    return found or {canonical(module)}


def test_every_dependency_is_imported_and_every_import_is_declared():
    core, extras = declared()
    optional = set().union(*extras.values())
    imports = third_party_imports()
    providers = {module: distributions_of(module) for module in imports}
    missing = {m: sorted(who) for m, who in imports.items() if not providers[m] & (core | optional)}
    assert not missing, f"imported but not in [project] dependencies or an extra: {missing}"
    used = set().union(*providers.values())
    unused = core - used
    assert not unused, f"in [project] dependencies but imported by no module of skilltui/: {sorted(unused)}"


def test_the_optional_modules_are_not_core_dependencies():
    # An extra's distribution in the core list would make every install pull it.
    core, extras = declared()
    for extra in ("claude-code", "mlflow"):
        assert extras[extra] and not extras[extra] & core, extra


def test_the_walk_finds_what_is_known_to_be_imported():
    # The comparison means something only if the walk sees lazy imports and `from` imports.
    imports = third_party_imports()
    assert {"textual", "git", "yaml", "mlflow", "claude_agent_sdk", "httpx2"} <= set(imports)
    assert "sacrebleu" not in imports


def test_packages_distributions_maps_the_renamed_ones():
    # A distribution whose import name differs from its own is matched through its files.
    assert "gitpython" in distributions_of("git")
    assert "pyyaml" in distributions_of("yaml")
    assert "markdown-it-py" in distributions_of("markdown_it")
