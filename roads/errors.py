"""The base of every error caused by bad input (as opposed to a bug).

The CLI turns these — and only these — into one line on stderr and exit code 2; anything
else is a bug and keeps its traceback.
"""


class InputError(ValueError):
    """Input that cannot be accepted; the message names the value and where it came from."""


#: When a write turned away as busy may be tried again, seconds (HTTP's Retry-After).
RETRY_AFTER_SECONDS = 1


class JournalBusy(Exception):
    """The journal's writers' queue stayed taken past the bounded wait: a writer ahead of
    this one has hung. Not the input's fault and not a bug: the same write can be tried
    again after ``retry_after`` seconds (HTTP 503 with Retry-After; the CLI exits 1)."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
