"""Paths kenning must never read, whatever folder a user points it at.

A source root is chosen by the user and may be their whole home directory, so the
guard works on path text alone: every rule is a run of path components or a file name,
matched case-insensitively because macOS and Windows home directories are. Directory
rules match wherever the run appears, not only under the current home: a copied
``.ssh`` directory, a second user's home or a backup of one holds the same secrets.
That makes anchoring at ``Path.home()`` redundant, so the function reads no environment
and no disk.
"""

import re
from pathlib import PurePath

# Runs of components (lower case) below which everything is secret. One-element runs
# match a directory of that name at any depth.
_SECRET_DIRS: tuple[tuple[str, ...], ...] = (
    (".ssh",),
    (".gnupg",),
    (".aws",),
    (".azure",),
    (".kube",),
    (".password-store",),
    (".config", "gcloud"),
    (".docker", "config.json"),
    # The same files without the leading dot: copies and backups of a home directory,
    # Windows profiles, a container's mounted config.
    ("docker", "config.json"),
    ("kube", "config"),
    ("aws", "config"),
    ("library", "keychains"),
    # Browser profiles hold cookies, saved passwords and session tokens.
    (".mozilla",),
    (".config", "google-chrome"),
    (".config", "chromium"),
    (".config", "bravesoftware"),
    ("library", "application support", "google", "chrome"),
    ("library", "application support", "firefox"),
    ("library", "application support", "bravesoftware"),
)

# Walks call this twice per file, so runs are looked up by their first component.
_RUNS_BY_HEAD: dict[str, tuple[tuple[str, ...], ...]] = {
    head: tuple(run for run in _SECRET_DIRS if run[0] == head) for head in {run[0] for run in _SECRET_DIRS}
}

_SECRET_NAMES = frozenset(
    {
        ".netrc",
        "_netrc",
        "netrc",
        ".pgpass",
        "pgpass",
        "pgpass.conf",
        ".git-credentials",
        "git-credentials",
        ".env",
        ".npmrc",
        "npmrc",
        ".pypirc",
        "pypirc",
        "credentials",
        "credentials.json",
        "credentials.db",
        "access_tokens.db",
        "application_default_credentials.json",
        "accesstokens.json",
        "kubeconfig",
        "kubeconfig.yaml",
        "kubeconfig.yml",
        "secrets.yaml",
        "secrets.yml",
        "secrets.json",
    }
)

_SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".kdbx", ".keychain", ".keychain-db")

# Templates are committed on purpose and hold placeholders, not values.
_ENV_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template"})

# Prefix match: private keys are often renamed (id_rsa_work, id_ed25519-old), and
# refusing a public key or a note that happens to share the prefix costs nothing.
_SSH_KEY = re.compile(r"id_(?:rsa|dsa|ecdsa|ed25519)")


def is_sensitive_path(path: PurePath) -> bool:
    """True when ``path`` is, or lies under, something that holds credentials."""
    parts = [part.lower() for part in path.parts]
    if not parts:
        return False
    name = parts[-1]
    if _is_secret_name(name):
        return True
    for i, part in enumerate(parts):
        for run in _RUNS_BY_HEAD.get(part, ()):
            if tuple(parts[i : i + len(run)]) == run:
                return True
    return False


def _is_secret_name(name: str) -> bool:
    if name in _SECRET_NAMES or name.endswith(_SECRET_SUFFIXES) or _SSH_KEY.match(name):
        return True
    return name.startswith(".env.") and name not in _ENV_TEMPLATES
