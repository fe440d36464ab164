"""The pool and its git repository: the notes and their commits (`notes.py`), reading the
history (`repo.py`), and telling a damaged repository from an empty one (`damage.py`).
No Textual here: the engine, the agents, the store and the apps all use it."""
