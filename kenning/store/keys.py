"""The identity keys a document that is not a folder's file is stored and linked under.

What an agent names a document by (a uri, a URL, a file's path) may hold a credential,
and a key is kept verbatim where redaction never reaches: a document's `path`, a
supersedes link's target, the indexes over them and the free pages they leave behind.
So a key is a hash of what was named: the same name finds the same document, and the
database never holds the name itself. The shown uri is stored beside it, redacted.
"""

from __future__ import annotations

import hashlib


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def agent_key(source_uri: str) -> str:
    """Agent text, by the uri it was added under."""
    return "uri:" + _digest(source_uri)


def page_key(url: str) -> str:
    """A fetched page, by the URL asked for (a redirect may move the one fetched)."""
    return "url:" + _digest(url)


def path_key(path: str) -> str:
    """A file named as a supersedes target, by its absolute path: a link names a file
    before the file may be in any folder, and the name may hold a token. A folder's file
    is matched to such a link by the same hash of its root and path (store/links.py)."""
    return "path:" + _digest(path)
