"""The library's key for the fingerprints in redaction marks.

A ledger entry is found again by its identity fields, a capsule by its title, and both
are stored redacted. With a bare `[REDACTED]`, "token ghp_A… found" and "token ghp_B…
found" were one title: the second add merged into (or updated) the first, and removing
one removed the other. So where redacted text is an identity, each mark carries a
fingerprint of the secret it hides, `[REDACTED:3f9a]` (ingest/redact.py), and the two
stay two; the same secret gives the same mark, at every start, so an entry is met again
by the text it was added with.

The fingerprint is an HMAC-SHA256 under this key, cut to four hex digits:
- keyed, because a plain hash of a password is a lookup away from the password: a word
  like `letmein` would be found by hashing a dictionary. Without the key, which lives in
  its own file beside the database (`redaction.key`, mode 0600) and never in it, the
  database, a copy or a backup of it, says nothing of the secret;
- four digits, because they only need to tell apart secrets whose text around them is
  the same, where two collide once in 65,536, and a shorter digest tells whoever holds
  the key too a little less.
The key is made once, from the system's random source, written whole before it is put
in place (a link, which fails if another process made one first), and read at every
start. Losing the file loses no entry: the ones stored keep their keys, and an add of a
secret fingerprinted under the lost key makes a new entry rather than meeting the old.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from kenning.config.paths import REDACTION_KEY_NAME
from kenning.errors import ConfigError, KenningError

KEY_BYTES = 32


def load(data_dir: Path) -> bytes:
    """The key in `data_dir`, made there first if there is none."""
    path = data_dir / REDACTION_KEY_NAME
    try:
        try:
            key = path.read_bytes()
        except FileNotFoundError:
            key = _make(path)
    except OSError as exc:
        # The first start after an upgrade makes the key before the database opens: a data
        # directory that cannot be written is said here, in one line, as the database says it.
        raise KenningError(
            f"cannot read or make the redaction key {path} ({exc.strerror or exc}): check that {data_dir} is"
            " readable and writable by this user, not read-only, immutable or full, and start again;"
            " nothing indexed is lost"
        ) from None
    if len(key) != KEY_BYTES:
        raise ConfigError(
            f"{path} holds {len(key)} bytes, not a {KEY_BYTES}-byte key; move it away and kenning makes a new one"
            " (fingerprints in redaction marks change: a ledger entry or capsule title holding a secret is then"
            " met again only by its id)"
        )
    return key


def _make(path: Path) -> bytes:
    key = secrets.token_bytes(KEY_BYTES)
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f"{path.name}.{os.getpid()}.new")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(draft, path)
    except FileExistsError:
        # Another process made it between the read and here: its key is the one.
        return path.read_bytes()
    finally:
        draft.unlink()
    # The link itself must outlive a crash: a key lost with it would give every secret
    # stored under it a new fingerprint at the next start.
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return key
