"""Themes as data files, and the app's one remembered preference (the theme).

Shipped themes live in the top-level `themes/` folder (in the wheel: `skilltui/_themes`);
a user adds their own as `$XDG_CONFIG_HOME/skilltui/themes/*.toml`. Each file holds the
fields of `textual.theme.Theme` plus an optional `[variables]` table. A broken user theme
costs that theme, with a one-line reason, never the app.

The chosen theme is remembered in `$XDG_CONFIG_HOME/skilltui/tui.json`, written
atomically so a crash never leaves a half-written settings file behind.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

import platformdirs
from rich.theme import Theme as RichTheme
from textual.app import App
from textual.color import Color, ColorParseError
from textual.theme import Theme

from ...core.durable import write_atomic
from ...core.json_read import read_json

DEFAULT_THEME = "skilltui-dark"
LIGHT_THEME = "skilltui-light"
SETTINGS_FILE = "tui.json"
_COLOR_FIELDS: tuple[str, ...] = ("primary", "secondary", "warning", "error", "success", "accent")
_COLOR_FIELDS += ("foreground", "background", "surface", "panel", "boost")
_THEME_FIELDS = {f.name for f in fields(Theme)}


class ThemeFileError(ValueError):
    """A theme file that cannot become a Theme; the message says which file and why."""


def shipped_dir() -> Path:
    """The themes that come with skilltui, whether installed as a wheel or run from the source tree."""
    here = Path(__file__).resolve().parents[2]  # the skilltui package
    for candidate in (here / "_themes", here.parent / "themes"):
        if candidate.is_dir():
            return candidate
    raise RuntimeError("the shipped themes are missing from this installation; reinstall skilltui")


def config_dir() -> Path:
    """Where skilltui keeps a user's preferences: the platform's user config folder (platformdirs);
    on Linux `$XDG_CONFIG_HOME/skilltui`, else ~/.config/skilltui."""
    return Path(platformdirs.user_config_dir("skilltui", appauthor=False))


def user_themes_dir() -> Path:
    return config_dir() / "themes"


def load_theme_file(path: Path) -> Theme:
    """One theme file as a Theme, with every colour checked now rather than when it is applied."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ThemeFileError(f"{path}: not a readable TOML file ({exc})") from None
    unknown = sorted(set(data) - _THEME_FIELDS)
    if unknown:
        keys = "key" if len(unknown) == 1 else "keys"
        raise ThemeFileError(f"{path}: unknown {keys} {', '.join(unknown)}; use the fields of textual.theme.Theme")
    if not isinstance(data.get("name"), str) or not data["name"].strip():
        raise ThemeFileError(f"{path}: needs a name")
    if not isinstance(data.get("primary"), str):
        raise ThemeFileError(f"{path}: needs a primary colour")
    for key in _COLOR_FIELDS:
        if key in data:
            try:
                Color.parse(data[key])
            except (ColorParseError, TypeError):
                raise ThemeFileError(f"{path}: {key} = {data[key]!r} is not a colour") from None
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ThemeFileError(f"{path}: [variables] must map names to strings")
    try:
        return Theme(**data)
    except TypeError as exc:
        raise ThemeFileError(f"{path}: {exc}") from None


@dataclass
class LoadedThemes:
    themes: list[Theme] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def load_themes(folders: list[Path] | None = None) -> LoadedThemes:
    """Every theme in the shipped folder, then the user's; a later file of the same name wins."""
    folders = [shipped_dir(), user_themes_dir()] if folders is None else folders
    loaded = LoadedThemes()
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                loaded.themes.append(load_theme_file(path))
            except ThemeFileError as exc:
                loaded.problems.append(str(exc))
    return loaded


def remembered_theme() -> str | None:
    path = config_dir() / SETTINGS_FILE
    try:
        value = read_json(path).get("theme")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def remember_theme(name: str) -> None:
    """Keep the theme for the next start; a read-only config folder only costs the memory."""
    folder = config_dir()
    path = folder / SETTINGS_FILE
    try:
        folder.mkdir(parents=True, exist_ok=True)
        try:
            settings = read_json(path)
            if not isinstance(settings, dict):
                settings = {}
        except (OSError, ValueError):
            settings = {}
        settings["theme"] = name
        write_atomic(path, json.dumps(settings, indent=2) + "\n")
    except OSError:
        pass


# Rich's markdown styles are ANSI colours (a magenta heading, cyan code on black) that the
# terminal's palette decides, unreadable on some backgrounds; the reports are drawn in the
# theme's own text colours instead.
_MARKDOWN_STYLES = {
    "markdown.h1": "bold underline {text-primary}",
    "markdown.h2": "bold underline {text-primary}",
    "markdown.h3": "bold {text-accent}",
    "markdown.h4": "italic {text-accent}",
    "markdown.h5": "italic {foreground}",
    "markdown.h6": "{foreground-muted}",
    "markdown.h7": "italic {foreground-muted}",
    "markdown.code": "bold {text-accent}",
    "markdown.code_block": "{text-accent}",
    "markdown.block_quote": "{foreground-muted}",
    "markdown.list": "{text-primary}",
    "markdown.item.bullet": "bold {text-primary}",
    "markdown.item.number": "{text-primary}",
    "markdown.hr": "{foreground-muted}",
    "markdown.link": "underline {text-primary}",
    "markdown.link_url": "underline {text-primary}",
    "markdown.table.border": "{foreground-muted}",
    "markdown.table.header": "bold {foreground}",
    "markdown.kbd": "bold {text-accent}",
}
_MARKDOWN_COLOURS = ("text-primary", "text-accent", "foreground", "foreground-muted")


def use_markdown_colours(app: App) -> None:
    """Point Rich's markdown styles at the app's current theme (again after every theme change)."""
    variables = app.theme_variables
    background = Color.parse(variables["background"])
    # A colour with alpha (`#DDE3EA99`) is what it looks like on the background; Rich wants it solid.
    solid = {name: (background + Color.parse(variables[name])).hex for name in _MARKDOWN_COLOURS}
    styles = {name: style.format_map(solid) for name, style in _MARKDOWN_STYLES.items()}
    console = app.console
    if getattr(console, "_skilltui_markdown", False):
        console.pop_theme()
    console.push_theme(RichTheme(styles, inherit=True))
    console._skilltui_markdown = True  # type: ignore[attr-defined]
