"""The base of every error caused by bad input (as opposed to a bug).

The CLI turns these — and only these — into one line on stderr and exit code 2; anything
else is a bug and keeps its traceback.
"""


import re

#: One innermost parenthesised detail of a message, with the space before it.
_DETAIL = re.compile(r"\s*\([^()]*\)")


class InputError(ValueError):
    """Input that cannot be accepted; the message names the value and where it came from."""


#: When a write turned away as busy may be tried again, seconds (HTTP's Retry-After).
RETRY_AFTER_SECONDS = 1


class JournalBusy(Exception):
    """The journal's writers' queue stayed taken past the bounded wait: a writer ahead of
    this one has hung. Not the input's fault and not a bug: the same write can be tried
    again after ``retry_after`` seconds (HTTP 503 with Retry-After; the CLI exits 75)."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    @property
    def public(self) -> str:
        """The message without its parenthesised details (the lock's path on the server,
        the holding process and its command line): what an HTTP client is told, where the
        CLI's operator and the server's log get the whole message."""
        text, cut = str(self), 1
        while cut:
            text, cut = _DETAIL.subn("", text)
        return text


class UnsignedCommit(Exception):
    """A write the journal committed whose checkpoint could not then be written (the
    checkpoint file unwritable, a full disk). The work is stored (trying it again finds it
    there), but unsigned until the store's next write signs it: the CLI says so and exits 1
    (done, with a problem), never 2 (which would read as "nothing was stored")."""


class SigningRefused(Exception):
    """The store will not sign its journal's head: what it signed would vouch for something
    ``store verify`` names as wrong. Not the input's fault (the CLI refuses with exit 2;
    HTTP 500 naming why)."""


class JournalRewritten(SigningRefused):
    """The journal no longer holds the head its newest checkpoint signed (an event altered
    and every later hash re-chained, or the journal cut back), or its events since do not
    chain from it. Signing its head would vouch for the rewritten history: with the older
    checkpoints trimmed, nothing in the store would show it any more."""


class SigningKeyMismatch(SigningRefused):
    """The store's private key is not the one its recorded public key is the public half
    of (replaced, or restored from another store): whatever it signed would fail ``store
    verify`` later as an invalid signature, so nothing is signed with it. The store's
    configuration is at fault, not the input, and trying again does not help (the CLI
    refuses with exit 2; HTTP 500 naming the key file)."""

    def __init__(self, message: str, key_file: str) -> None:
        super().__init__(message)
        #: The private key file, relative to the store (``keys/store-ed25519.pem``).
        self.key_file = key_file
