"""What tests and benches may import: shared code comes from `tests.support`, never from a test file.

A test module that imports another (`from test_validation import train_with`) or conftest.py
ties the two together: renaming a test, or running one file alone, breaks the other, and
pytest may import the same file twice under two names. A bench that puts `tests/` on
`sys.path` depends on whatever happens to sit there. So the shared fakes and helpers live in
the package `tests/support/`, fixtures stay in conftest.py, and these checks keep it so,
including code a test hands to a subprocess as a string.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A module name that is a test file or conftest, bare (`test_x`) or in the package (`tests.test_x`).
TEST_MODULE = re.compile(r"^(tests\.)?(test_\w+|conftest)(\.|$)")
# The same in source code a test passes to `python -c` or writes to a script.
NAMED = r"(?:tests\.)?(?:test_\w+|conftest)"
IMPORT_IN_TEXT = re.compile(rf"\bfrom\s+{NAMED}\s+import\b|\bimport\s+{NAMED}\b")


def imported(tree: ast.AST) -> list[str]:
    """Every module an `import` or `from ... import` names, at any depth (imports inside functions too)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            # `from tests import test_x` names the test module in the alias, not the module
            names += [f"{node.module}.{alias.name}" for alias in node.names if node.module == "tests"]
    return names


def imports_of_test_modules(root: Path) -> list[str]:
    """Places under tests/ that import a test module or conftest, as "file: module"."""
    found = []
    for path in sorted((root / "tests").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(root)
        found += [f"{where}: {name}" for name in imported(tree) if TEST_MODULE.match(name)]
        if path.name != Path(__file__).name:  # this file spells the forbidden imports out as examples
            strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
            found += [f"{where}: {m.group(0)!r} in a string" for s in strings for m in IMPORT_IN_TEXT.finditer(s)]
    return found


def bench_reaches_into_tests(root: Path) -> list[str]:
    """Places in bench/ that import from tests/ other than through `tests.support`, or edit sys.path."""
    found = []
    for path in sorted((root / "bench").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(root)
        for name in imported(tree):
            if name == "tests" or TEST_MODULE.match(name) or (name.startswith("tests.") and not _support(name)):
                found.append(f"{where}: {name}")
            elif name.split(".")[0] in _bare_support_modules(root):
                found.append(f"{where}: {name} (bare; import it as tests.support.{name})")
        found += [f"{where}: line {node.lineno} edits sys.path" for node in ast.walk(tree) if _edits_sys_path(node)]
    return found


def _support(name: str) -> bool:
    return name == "tests.support" or name.startswith("tests.support.")


def _bare_support_modules(root: Path) -> set[str]:
    return {p.stem for p in (root / "tests" / "support").glob("*.py")} - {"__init__"}


def _edits_sys_path(node: ast.AST) -> bool:
    """`sys.path.insert(...)`, `.append`, `.extend`, or `sys.path = ...`/`+=`."""

    def is_sys_path(target: ast.AST) -> bool:
        return (
            isinstance(target, ast.Attribute)
            and target.attr == "path"
            and isinstance(target.value, ast.Name)
            and target.value.id == "sys"
        )

    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ("insert", "append", "extend") and is_sys_path(node.func.value)
    if isinstance(node, ast.Assign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(is_sys_path(t) for t in targets)
    return False


def test_no_test_module_imports_another_test_module_or_conftest() -> None:
    assert imports_of_test_modules(ROOT) == []


def test_benches_import_the_tests_only_through_the_support_package() -> None:
    assert bench_reaches_into_tests(ROOT) == []


def test_the_checks_see_what_they_forbid(tmp_path: Path) -> None:
    """Each kind of reach the rule forbids, in a tree made up here, is reported."""
    (tmp_path / "tests" / "support").mkdir(parents=True)
    (tmp_path / "tests" / "support" / "fakeapi.py").write_text("")
    (tmp_path / "bench").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(
        "from test_b import helper\nimport tests.test_c\nfrom tests import conftest\n"
        "def f():\n    from conftest import write_work\n"
        "CODE = 'import sys; from test_d import x'\n"
        "from tests.support.fakeapi import FakeAnthropic\n"
    )
    (tmp_path / "bench" / "bench_x.py").write_text(
        "import sys\nsys.path.insert(0, 'tests')\nfrom fakeapi import FakeAnthropic\n"
        "from tests.test_a import helper\nfrom tests.support.fakeapi import FakeAnthropic\n"
    )
    assert imports_of_test_modules(tmp_path) == [
        "tests/test_a.py: test_b",
        "tests/test_a.py: tests.test_c",
        "tests/test_a.py: tests.conftest",
        "tests/test_a.py: conftest",
        "tests/test_a.py: 'from test_d import' in a string",
    ]
    assert bench_reaches_into_tests(tmp_path) == [
        "bench/bench_x.py: fakeapi (bare; import it as tests.support.fakeapi)",
        "bench/bench_x.py: tests.test_a",
        "bench/bench_x.py: line 2 edits sys.path",
    ]
