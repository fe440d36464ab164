"""The keys that mean the same in both apps: `q` quits, `?` opens the app's help, `t` switches theme.

A person who knows the live app should not have to learn `skilltui review` again, so these
three are declared once and both apps bind the same objects; each app implements the
actions (`help` shows its own key table, `toggle_theme` its themes).
"""

from __future__ import annotations

from textual.binding import Binding

QUIT = Binding("q", "quit", "Quit")
HELP = Binding("question_mark", "help", "Help")
THEME = Binding("t", "toggle_theme", "Theme", show=False)
