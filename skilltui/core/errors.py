"""The exceptions that end a command with one line and exit code 2, no traceback: bad input, and a
pool whose repository is damaged (which only the user can decide how to mend)."""


class UsageError(Exception):
    """Bad input. The message is one line that says what to do."""


class PoolDamaged(UsageError):
    """The pool's repository cannot be read (a ref, HEAD or an object is damaged).

    A usage error in how it ends (one line, exit code 2) because the way on is the user's:
    nothing is deleted or re-created, and the line names `git fsck` and `skilltui repair`.
    """
