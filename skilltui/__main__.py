"""`python -m skilltui` is the same as the `skilltui` command."""

from .cli import main

# Guarded: the loss's worker processes may start by spawn, which imports the main module again
# (as __mp_main__); unguarded, each worker would run the command line too.
if __name__ == "__main__":
    raise SystemExit(main())
