"""The one exception type that means "the user's input is wrong": exit code 2, one line, no traceback."""


class UsageError(Exception):
    """Bad input. The message is one line that says what to do."""
