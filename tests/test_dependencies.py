"""`pip install -e .` pulls what skilltui imports and nothing else, in ranges; the lock pins what was tested.

The imports of every module in skilltui/ (an ast walk, so a lazy import inside a function
counts too) are compared with `[project] dependencies`: a distribution nobody imports is
weight every install pays for, and a module imported but not declared works only while some
other package happens to pull it in. An extra's distribution counts for the modules that
import it (`mlflow`, `claude_agent_sdk`), whether or not it is installed.

skilltui is pip-installed beside other tools, so pyproject gives each dependency a range (a
floor and a ceiling), never one version; the exact versions the suite was run with are
`requirements.lock` (`uv pip compile pyproject.toml --all-extras -o requirements.lock`),
which `.ci/run` installs. Every direct dependency is pinned there, inside its range.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
# How requirements.lock is made (and made again after pyproject's ranges change; it keeps the
# versions it already pins where they still fit, so only what must move moves).
COMPILE = "uv pip compile pyproject.toml --all-extras -o requirements.lock"


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


def specs() -> list[str]:
    """Every requirement pyproject declares: the core list, then each extra's."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [*project["dependencies"], *(spec for extra in project["optional-dependencies"].values() for spec in extra)]


def declared() -> tuple[set[str], dict[str, set[str]]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {requirement_name(spec) for spec in project["dependencies"]}
    optional = project["optional-dependencies"]
    extras = {extra: {requirement_name(spec) for spec in specs} for extra, specs in optional.items()}
    return core, extras


def range_problems(spec: str) -> list[str]:
    """What keeps `spec` from being a range: a floor (>=) and a ceiling (<), and no exact pin."""
    operators = {s.operator for s in Requirement(spec).specifier}
    problems = []
    if operators & {"==", "===", "~="}:
        problems.append("an exact pin (the lock pins; pyproject gives a range)")
    if ">=" not in operators:
        problems.append("no floor (>=)")
    if "<" not in operators:
        problems.append("no ceiling (<)")
    return problems


def pins(text: str) -> dict[str, Version]:
    """A pip requirements file's `name==version` lines (comments, markers and hashes aside)."""
    found: dict[str, Version] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        requirement = Requirement(line.split(";", 1)[0].split(" \\", 1)[0])
        exact = [s.version for s in requirement.specifier if s.operator == "=="]
        assert len(exact) == 1 and len(requirement.specifier) == 1, f"not one exact pin in the lock: {line}"
        found[canonical(requirement.name)] = Version(exact[0])
    return found


def locked() -> dict[str, Version]:
    return pins((ROOT / "requirements.lock").read_text(encoding="utf-8"))


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


def test_pyproject_gives_ranges_not_pins():
    problems = {spec: range_problems(spec) for spec in specs()}
    problems = {spec: found for spec, found in problems.items() if found}
    assert not problems, f"each dependency needs a range such as 'name>=1.2.3,<2': {problems}"


def test_every_direct_dependency_is_pinned_in_the_lock_inside_its_range():
    lock = locked()
    missing = sorted(requirement_name(spec) for spec in specs() if requirement_name(spec) not in lock)
    assert not missing, f"not in requirements.lock (compile it: {COMPILE}): {missing}"
    outside = {
        spec: str(lock[requirement_name(spec)])
        for spec in specs()
        if not Requirement(spec).specifier.contains(lock[requirement_name(spec)], prereleases=True)
    }
    assert not outside, f"the lock pins a version outside pyproject's range (compile the lock again): {outside}"


def test_the_lock_comes_from_the_registry_alone():
    # An index, a find-links folder or a path in the lock would make CI install from somewhere else.
    text = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    options = [line for line in text.splitlines() if line.strip().startswith("-")]
    assert not options, options
    assert COMPILE in text


def test_range_and_pin_readers_on_known_lines():
    # The two readers mean something only if they tell a range from a pin and read a lock's lines.
    assert range_problems("textual>=8.2.8,<8.3") == []
    assert range_problems("textual==8.2.8") == [
        "an exact pin (the lock pins; pyproject gives a range)",
        "no floor (>=)",
        "no ceiling (<)",
    ]
    assert range_problems("rich>=15") == ["no ceiling (<)"]
    lock = "# a header\nTextual==8.2.8\n    # via skilltui (pyproject.toml)\npywin32==312 ; sys_platform == 'win32'\n"
    assert pins(lock) == {"textual": Version("8.2.8"), "pywin32": Version("312")}
