"""skilltui: train a pool of markdown craft notes for a screenwriting agent, the way a network is trained."""

__version__ = "0.1.0"
