"""skilltui: train a pool of markdown craft notes for a screenwriting agent, the way a network is trained."""

import _signal  # the C module: instant, where `signal` would first build its enums
import os as _os
import sys as _sys

__version__ = "0.1.0"

STARTING_SIGNALS = {_signal.SIGINT: "SIGINT", _signal.SIGTERM: "SIGTERM", _signal.SIGHUP: "SIGHUP"}


def stopped_while_starting(signum: int, frame: object) -> None:
    # Straight out: an exception raised here could land in an import's cleanup callback and be
    # swallowed there. Nothing has been written yet, so there is nothing to finish.
    name = STARTING_SIGNALS.get(signum, str(signum))
    _os.write(2, f"\nskilltui: stopped by {name} while starting; nothing was written\n".encode())
    _os._exit(128 + signum)


def _launched_as_command() -> bool:
    """`skilltui ...` or `python -m skilltui ...` (argv[0] is "-m" while runpy imports the package)."""
    first = _sys.argv[0] if getattr(_sys, "argv", None) else ""
    return first == "-m" or first.rsplit("/", 1)[-1] == "skilltui"


# Launched as the command, a Ctrl-C (or SIGTERM, SIGHUP) while the modules load ends in one
# line, not a KeyboardInterrupt traceback; `cli` puts these handlers back once it is loaded,
# and main() installs its own. Imported as a library, nothing is changed.
handlers_before_start = (
    {sig: _signal.signal(sig, stopped_while_starting) for sig in STARTING_SIGNALS} if _launched_as_command() else {}
)
