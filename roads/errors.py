"""The base of every error caused by bad input (as opposed to a bug).

The CLI turns these — and only these — into one line on stderr and exit code 2; anything
else is a bug and keeps its traceback.
"""


class InputError(ValueError):
    """Input that cannot be accepted; the message names the value and where it came from."""
