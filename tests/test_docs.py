"""The README and the docs site say what the code does: sizes, commands, every flag and key, every page.

The command reference and the key tables are generated (docs/gen_reference.py) from the
argparse parser and the key map; these tests fail when the committed pages are stale or a
flag or key is missing from them, when a page is left out of mkdocs.yml's nav, and when the
README grows back into a manual or loses the two commands a fresh clone starts with.
`mkdocs build --strict` (in .ci/run) checks the links and anchors.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import tomllib
from pathlib import Path

import yaml

from skilltui.apps.shared import keymap
from skilltui.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"


def generator():
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def code_blocks(text: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.DOTALL)]


def test_the_readme_fits_on_a_few_screens_and_starts_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= 12 * 1024
    demo, tests = code_blocks(text)[:2]
    assert demo == "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && skilltui demo"
    assert tests.endswith("pip install -e '.[test]' && python -m pytest -q -n auto")
    # CI runs the README's test command.
    assert "python -m pytest -q -n auto" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_a_newcomer_finds_the_key_the_data_layout_and_the_commands_in_the_first_100_lines():
    first = "\n".join(README.read_text(encoding="utf-8").splitlines()[:100])
    for needed in ("export ANTHROPIC_API_KEY=", "human/01.fountain", "--estimate", "skilltui train --work",
                   "skilltui review", "skilltui export", "skilltui diffuse"):  # fmt: skip
        assert needed in first, needed


def test_every_readme_link_to_the_docs_resolves():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#]+)", text)
    assert len(links) >= 10
    for link in links:
        assert (ROOT / link).is_file(), link


def test_the_reference_pages_are_what_the_code_makes():
    # Stale after a flag or key changed: run `python docs/gen_reference.py`.
    assert generator().main(["--check"]) == 0


def test_every_flag_of_every_subcommand_is_in_the_command_reference():
    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    sections = dict(re.findall(r"^## skilltui (\S+)\n(.*?)(?=^## skilltui |\Z)", page, re.DOTALL | re.MULTILINE))
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sections) == set(sub.choices)
    for name, parser in sub.choices.items():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
                continue
            for flag in action.option_strings or [action.metavar or action.dest]:
                assert f"`{flag}`" in sections[name], (name, flag)


def test_every_train_flag_is_in_one_task_group_of_its_help_and_its_reference():
    train = build_parser()._subparsers._group_actions[0].choices["train"]  # type: ignore[union-attr]
    flags = {a.option_strings[0] for a in train._actions if a.option_strings and a.dest != "help"}
    tasks = [g for g in train._action_groups if g.description]
    grouped = [a.option_strings[0] for g in tasks for a in g._group_actions]
    assert sorted(grouped) == sorted(flags)
    # The reference reads by the same tasks, in the order --help lists them.
    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    section = page.split("## skilltui train\n")[1].split("\n## skilltui ")[0]
    headings = re.findall(r"^### (.*)$", section, re.MULTILINE)
    assert headings == [f"{g.title.capitalize()}: {g.description}" for g in tasks]
    assert [h.split(":")[0] for h in headings] == ["Data", "Model", "Training", "Validation", "Test", "Review",
                                                   "Cost", "Tracking"]  # fmt: skip


def test_every_key_is_in_the_key_reference():
    page = (DOCS / "reference" / "keys.md").read_text(encoding="utf-8")
    for row in keymap.KEYMAP:
        assert f"| `{row.keys}` | {row.what} |" in page, row


def nav_pages(nav: list) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = nav_pages(config["nav"])
    on_disk = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(listed) == on_disk
    assert len(listed) == len(set(listed))


def test_the_architecture_page_names_every_layer_of_every_layers_contract():
    # The top-level stack and the engine's rooms: a layer added to pyproject.toml is drawn too.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    assert len(contracts) >= 1
    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    for contract in contracts:
        for layer in contract["layers"]:
            for name in (part.strip() for part in layer.split("|")):
                if name == "__main__":
                    continue
                assert re.search(rf"\b{re.escape(name)}(/|\.py)", page), (contract["name"], name)


def test_the_docs_extra_is_mkdocs_and_material_pinned_in_the_lock():
    # The site is built with exactly what the lock pins (pyproject gives ranges: tests/test_dependencies.py).
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert {re.split(r"[<>=!~; ]", spec, maxsplit=1)[0] for spec in extras["docs"]} == {"mkdocs", "mkdocs-material"}
    lock = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    assert re.search(r"^mkdocs==\S+$", lock, re.M) and re.search(r"^mkdocs-material==\S+$", lock, re.M)


def test_the_readmes_sample_summary_uses_the_summarys_own_words():
    """Each line of the README's sample end summary starts as the summary's own line does (its label)."""
    from skilltui.model.figures import Mean
    from skilltui.model.summary import RunSummary

    mean = Mean(0.5, 1, 1, frozenset({"w"}))
    made = RunSummary(
        "0", Path("runs/0"), "finished", "", (mean, mean), None, (mean, mean), 2, 0, 0, 2, 0.0, True,
        val_from_baseline=True, pool_size=(0, 195), kept_empty=1,
    ).lines()  # fmt: skip
    sample = next(b for b in code_blocks(README.read_text(encoding="utf-8")) if b.startswith("run "))
    labels = [re.split(r"[\d$]|runs/", line, maxsplit=1)[0] for line in made]  # up to its first figure
    for line, label in zip(sample.splitlines(), labels, strict=True):
        assert line.startswith(label), (line, label)
