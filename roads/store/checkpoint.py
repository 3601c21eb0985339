"""Signed checkpoints of the journal's head, kept outside the database.

The hash chain shows that no event *inside* the journal was altered, but whoever can write
the database could cut its tail, or edit an event and re-chain every later hash. So at every
seal, ingest run, compaction, purge and export the store appends the head (sequence and
hash) to ``checkpoints/checkpoints.jsonl``, signed with the store's Ed25519 key, and every
export bundle carries a copy. A journal that no longer holds a checkpointed (sequence, hash)
was truncated or re-chained before that point. What this cannot stop — an attacker with write
access to the whole store re-signing forged checkpoints with the key beside it — is closed by
shipping the checkpoints (or the public key's fingerprint and the latest line) off the
machine: ``docs/compliance.md``.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roads.errors import JournalRewritten, SigningKeyMismatch
from roads.files import fsync_dir, publish
from roads.store.journal import GENESIS, Journal, now_utc, verify_events

DIRECTORY = "checkpoints"
FILE = "checkpoints.jsonl"
PRIVATE = "keys/store-ed25519.pem"
PUBLIC = "keys/store-ed25519.pub"
MARKER = "store.json"


@dataclass(frozen=True, slots=True)
class Checkpoint:
    seq: int
    hash: str
    at: str
    key: str  # SHA-256 fingerprint of the signing public key (PEM bytes)
    signature: str
    #: SHA-256 of ``store.json`` (what the directory is), signed with the head, so an edit
    #: of that file is named; None in checkpoints signed before it was.
    store: str | None = None

    def message(self) -> bytes:
        return signed_message(self.seq, self.hash, self.at, self.store)

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "hash": self.hash, "at": self.at, "key": self.key,
                "signature": self.signature, **({"store": self.store} if self.store else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Checkpoint:
        """A checkpoint line's fields (KeyError, TypeError or ValueError if it is none)."""
        store = data.get("store")
        return cls(int(data["seq"]), str(data["hash"]), str(data["at"]), str(data["key"]),
                   str(data["signature"]), None if store is None else str(store))


def signed_message(seq: int, head: str, at: str, store: str | None = None) -> bytes:
    """What a checkpoint signs (the first form, without ``store.json``'s digest, is that of
    checkpoints signed before it was bound)."""
    if store is None:
        return f"roads-checkpoint-1\n{seq}\n{head}\n{at}\n".encode()
    return f"roads-checkpoint-2\n{seq}\n{head}\n{at}\n{store}\n".encode()


def marker_digest(root: Path) -> str | None:
    """SHA-256 of the store's ``store.json`` (None when there is none)."""
    try:
        return hashlib.sha256((root / MARKER).read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def fingerprint(public_pem: bytes) -> str:
    return hashlib.sha256(public_pem).hexdigest()


def create_keys(root: Path) -> None:
    """The store's signing key pair (the private key readable by its owner only), made
    only where the store has neither half: a store whose private key is gone but whose
    public key is recorded keeps that public key, and its writes are refused naming the
    missing file (:func:`signing_key`), never signed by a new pair that overwrote it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private, public = root / PRIVATE, root / PUBLIC
    if private.exists() or public.exists():
        return
    private.parent.mkdir(parents=True, exist_ok=True)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    def write_private(tmp: Path) -> None:
        tmp.write_bytes(pem)
        tmp.chmod(0o600)

    publish(private, write_private)
    publish(public, lambda tmp: tmp.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)))


def signing_key(root: Path) -> tuple[Any, str]:
    """The store's signing key and the fingerprint its checkpoints name, once the key is
    found to be the private half of the store's recorded public key; else
    :class:`~roads.errors.SigningKeyMismatch` naming the key file, before anything is
    signed (a replaced key's checkpoints were named only later, by ``store verify``, as
    invalid signatures). Read and checked once per pair of key files (every seal signs:
    parsing the PEM each time was a tenth of a seal's work)."""
    private, public = root / PRIVATE, root / PUBLIC
    try:
        mine, recorded = private.stat(), public.stat()
    except OSError as exc:  # (a key pair cut short, or a store older than its keys)
        name = PRIVATE if exc.filename == str(private) else PUBLIC
        raise SigningKeyMismatch(f"refusing to sign: the store's key file {name} cannot be "
                                 f"read ({exc.strerror})", name) from None
    return _checked_key(private, mine.st_mtime_ns, mine.st_size, mine.st_ino,
                        public, recorded.st_mtime_ns, recorded.st_size, recorded.st_ino)


@functools.lru_cache(maxsize=8)
def _checked_key(private: Path, mtime_ns: int, size: int, inode: int, public: Path,
                 public_mtime_ns: int, public_size: int, public_inode: int
                 ) -> tuple[Any, str]:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        PublicFormat,
        load_pem_private_key,
        load_pem_public_key,
    )

    public_pem = public.read_bytes()
    names = f"{PRIVATE} ({private})"
    try:
        key = load_pem_private_key(private.read_bytes(), password=None)
        recorded = load_pem_public_key(public_pem)
    except (ValueError, TypeError) as exc:
        raise SigningKeyMismatch(f"refusing to sign with the store's key {names}: it or "
                                 f"the public key {PUBLIC} does not read ({exc})",
                                 PRIVATE) from None
    if not isinstance(key, Ed25519PrivateKey) or not isinstance(recorded, Ed25519PublicKey) \
            or key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw) \
            != recorded.public_bytes(Encoding.Raw, PublicFormat.Raw):
        raise SigningKeyMismatch(
            f"refusing to sign with the store's key {names}: it is not the private half of "
            f"the store's recorded public key {PUBLIC} (fingerprint "
            f"{fingerprint(public_pem)[:16]}), so its checkpoints would not verify; put "
            "back the key that belongs to the store", PRIVATE)
    return key, fingerprint(public_pem)


def write(root: Path, journal: Journal, store: str | None = None) -> Checkpoint:
    """Sign the journal's current head and append it (durably) to the checkpoint file.

    The head is read and appended under an exclusive lock on the file, so checkpoints
    signed side by side (seals of two tables, two processes) are appended in head order:
    a later line never names an earlier head. ``store``: the digest of the ``store.json``
    about to be written (:meth:`~roads.store.store.Store.create`); by default the newest
    checkpoint's is signed again (never the file's as it is now, which would sign an edit
    of it), or the file's when no checkpoint carries one yet (a store from before)."""
    key, key_print = signing_key(root)  # (refused before the file is touched)
    path = root / DIRECTORY / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = not path.exists()
    with path.open("a", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # released when the file closes
        if store is None:
            store = None if fresh else signed_marker(path)
            store = store or marker_digest(root)
        seq, head = journal.head()
        if not fresh:
            _refuse_rewritten(path, journal, seq)
        at = now_utc()
        signature = key.sign(signed_message(seq, head, at, store)).hex()
        point = Checkpoint(seq, head, at, key_print, signature, store)
        fh.write(line_of(point.to_json()))
        fh.flush()
        os.fsync(fh.fileno())
    if fresh:
        fsync_dir(path.parent)
    return point


def _refuse_rewritten(path: Path, journal: Journal, head: int) -> None:
    """Raise :class:`~roads.errors.JournalRewritten` unless the journal still holds the
    newest checkpoint's head and every event since chains from it: a write signed the head
    of a journal re-chained behind its checkpoints, and with the older checkpoint lines
    trimmed that one signature made the rewrite look whole. (The events after the newest
    checkpoint are read: every write of a file signs, so they are few.)"""
    last = newest(path)
    if last is None:  # (an unreadable last line: `store verify` names it)
        return
    tail = [e for e in journal.events(since=last.seq - 1) if e.seq <= head] if last.seq else []
    held = (last.hash == GENESIS) if not last.seq else \
        bool(tail) and tail[0].seq == last.seq and tail[0].hash == last.hash
    if not held:
        raise JournalRewritten(
            f"refusing to sign: the journal no longer holds event {last.seq} as the newest "
            "checkpoint signed it (an event before it was altered and the chain re-made, or "
            "the journal was cut back); `roads store verify` names it")
    since = [e for e in journal.events() if e.seq <= head] if not last.seq else tail[1:]
    chain = verify_events(since, start_prev=last.hash, start_seq=last.seq + 1)
    if not chain.ok:
        raise JournalRewritten(f"refusing to sign: since the newest checkpoint (event "
                               f"{last.seq}), {chain.reason}; `roads store verify` names it")


def signed_marker(path: Path) -> str | None:
    """The ``store.json`` digest the newest checkpoint carrying one signed, or None (no
    checkpoint carries one: a store from before). The last line usually carries it; only
    when it does not (or does not parse) are the earlier lines read, so an unreadable last
    line never lets the file as it is now be taken for the signed one."""
    last = newest(path)
    if last is not None and last.store:
        return last.store
    found = None
    with contextlib.suppress(OSError):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError):
                found = Checkpoint.from_json(json.loads(line)).store or found
    return found


_LOWER_HEX = re.compile(r"[0-9a-f]+")  # as written: a signature read as upper case still checks


def line_of(point: dict[str, Any]) -> str:
    """A checkpoint's line (its :meth:`Checkpoint.to_json`) exactly as it is written, by
    the store and by a bundle that copies it."""
    return json.dumps(point, sort_keys=True) + "\n"


def parse(data: bytes, name: str) -> list[Checkpoint]:
    """The checkpoints of a file's bytes, every byte accounted for: each line must be the
    exact line of a checkpoint (:func:`line_of`), ending in a newline. A signature checks
    the parsed values only, so a tab for a space, a trailing space or an upper-case hex
    digit would otherwise pass unseen. ValueError names the file and line."""
    out = []
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    for number, line in enumerate(lines, start=1):
        try:
            point = Checkpoint.from_json(json.loads(line))
        except (ValueError, KeyError, TypeError, AttributeError):
            raise ValueError(f"{name} line {number} is not a checkpoint") from None
        hexes = (point.hash, point.key, point.signature, *([point.store] if point.store else []))
        if line != line_of(point.to_json()) or not all(_LOWER_HEX.fullmatch(h) for h in hexes):
            raise ValueError(f"{name} line {number} is not a checkpoint as written (its "
                             "bytes differ from the line its values make)")
        out.append(point)
    return out


def read(path: Path) -> list[Checkpoint]:
    """Checkpoints of a file (:func:`parse`); ValueError names a line that is not one."""
    if not path.exists():
        return []
    return parse(path.read_bytes(), path.name)


def newest(path: Path) -> Checkpoint | None:
    """The file's last checkpoint, read from its tail (a year of seals makes the file long;
    a write's start-up asks only for the last line)."""
    if not path.exists():
        return None
    with path.open("rb") as fh:
        end = fh.seek(0, os.SEEK_END)
        fh.seek(max(0, end - 4096))
        lines = [ln for ln in fh.read().splitlines() if ln.strip()]
    if not lines:
        return None
    try:
        return Checkpoint.from_json(json.loads(lines[-1]))
    except (ValueError, KeyError, TypeError):
        return None  # verify names the line


def check(points: list[Checkpoint], public_pem: bytes, head_of: Any,
          last_seq: int) -> str | None:
    """The first problem with ``points`` against a journal, else None.

    ``head_of(seq)`` returns the journal's hash at ``seq`` (None when it has no such event);
    ``last_seq`` is the journal's newest sequence number.
    """
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        key = load_pem_public_key(public_pem)
    except (ValueError, TypeError):  # a damaged key file: named, never a traceback
        return "the checkpoint key does not read as a PEM public key"
    if not isinstance(key, Ed25519PublicKey):
        return "the checkpoint key is not an Ed25519 public key"
    mine = fingerprint(public_pem)
    previous = 0
    for n, point in enumerate(points, start=1):
        if point.key != mine:
            return f"checkpoint {n} (event {point.seq}) was signed with another key"
        try:
            key.verify(bytes.fromhex(point.signature), point.message())
        except (InvalidSignature, ValueError, TypeError):  # TypeError: not text (a bundle's)
            return f"checkpoint {n} (event {point.seq}) has an invalid signature"
        if point.seq < previous:
            return f"checkpoint {n} goes back to event {point.seq} after event {previous}"
        previous = point.seq
        if point.seq > last_seq:
            return (f"the journal ends at event {last_seq}, but checkpoint {n} was signed at "
                    f"event {point.seq}: the journal's tail was cut")
        if point.seq and head_of(point.seq) != point.hash:
            return (f"event {point.seq} is not the event checkpoint {n} signed: the journal "
                    "was altered and re-chained")
    return None
