"""Domain errors, and how any error reads where a person or an agent sees it.

The CLI and the socket server turn these into one-line messages. An error's text may
quote what it choked on, and what it choked on may be huge: a megabyte-long name in the
config, a part a DOCX names, an agent's document, a path nested as deep as the OS allows.
That text reaches `ken`'s terminal, an agent's context, the daemon's log and every
`ken status`, so each of those edges cuts it with `error_text` or `error_line`.
"""


class KenningError(Exception):
    """Base for errors a user can act on; the message is shown as it is."""


class ConfigError(KenningError):
    """The config file is missing a value, has a typo, or names something impossible."""


class NotFound(KenningError):
    """A request named a source, item or document that does not exist."""


class InvalidRequest(KenningError):
    """A well-formed request that cannot be done as asked (an unknown ledger section, a
    capsule already superseded); nothing was changed."""


class IgnoreFileUnusable(KenningError):
    """A folder's .kiroignore is there but cannot be used (too large, too many rules, not a
    file, unreadable): what it keeps out of the index is unknown until it is fixed."""


class ReaderError(KenningError):
    """A file could not be turned into text; the message is the reason stored for it."""


class TextCapReached(ReaderError):
    """A file's extracted text passed `[limits] max_text_chars`: raised as it grows, so a
    small file that extracts to a flood stops there."""

    def __init__(self, max_chars: int) -> None:
        super().__init__(f"extracted text passes the {max_chars}-character limit")
        self.max_chars = max_chars

    def __reduce__(self) -> tuple[type, tuple[int]]:
        # It comes back from a parse worker pickled, and unpickling calls the class with
        # `args`, which hold the message, not the limit: the reason read twice over.
        return type(self), (self.max_chars,)


class AccessDenied(ReaderError):
    """The file's mode or owner keeps this user out: nothing says its text is bad or gone,
    so what was read from it before is kept."""


class BackendUnavailable(KenningError):
    """A backend (an embedder, an LLM) cannot serve at all right now; retry later."""


class EmbedderUnavailable(BackendUnavailable):
    """The embedding backend cannot embed right now (server down, model missing)."""


class IndexUnwritable(BackendUnavailable):
    """The database cannot be written right now (its disk is full, it was made read-only):
    a sweep stops there and retries with backoff instead of failing every file in turn."""


class WorkerFailed(KenningError):
    """Work sent to a worker process failed there: it crashed, ran out of memory or time."""


class WorkerStopped(KenningError):
    """The worker processes were stopped from outside (a signal to the whole group) or
    all died at once; the pool starts new ones, so the work is tried again."""


class ShutDown(KenningError):
    """What the work was sent to was stopped on purpose (the library is closing) and takes
    no more: no retry can help, and the work is asked for again at the next start."""


class DaemonNotRunning(KenningError):
    """The CLI found no daemon on the configured socket."""


class AnswerLost(DaemonNotRunning):
    """The daemon took a request and closed the connection without answering it: it was
    stopped or died mid-request. `method`: what was asked; `writes`: whether that method
    changes the library, in which case it may have been done all the same, and each
    client says how to check in its own terms."""

    def __init__(self, message: str, method: str, writes: bool) -> None:
        super().__init__(message)
        self.method = method
        self.writes = writes


class DaemonUnreachable(KenningError):
    """The socket is there but cannot be used: permission denied (another user's daemon),
    or the daemon kept refusing new connections (its queue full) through the retries."""


class SocketNotYours(DaemonUnreachable):
    """Permission denied on the socket: a daemon of another user's, or a socket or folder
    this user may not open."""


class DaemonTimeout(KenningError):
    """The daemon accepted a request but did not answer it in time. `stage`: the last
    progress it reported for the request (docs/protocol.md), None if none; `waited`:
    the seconds since then (or since the request was sent) that were given up on;
    `writes`: whether the request (`method`) changes the library, which the daemon goes on
    doing after its client gave up (each client says how to check, as for AnswerLost)."""

    def __init__(
        self,
        message: str,
        stage: str | None = None,
        waited: float | None = None,
        writes: bool = False,
        method: str | None = None,
    ) -> None:
        super().__init__(message)
        self.stage = stage
        self.waited = waited
        self.writes = writes
        self.method = method


class DaemonAlreadyRunning(KenningError):
    """Another daemon holds the data directory or answers on the socket."""


class RpcError(KenningError):
    """The daemon answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


# An error as shown: long enough for any message kenning writes itself (the longest, a
# list of methods or of ten parameter errors, is under 1,500 characters), short of what a
# quoted value can make it.
MAX_ERROR_CHARS = 2000
# An error's message kept as a file's reason, stored and shown with each failed file:
# enough to tell what a parser choked on.
MAX_DETAIL_CHARS = 300


def error_text(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """`text` in at most `limit` characters: its start, which says what went wrong, and
    how long it was, so the rest reads as cut rather than lost on the way. A text cut
    once comes back as it is, so the daemon's cut survives `ken` cutting it again."""
    if len(text) <= limit:
        return text
    mark = f"… [cut from {len(text):,} characters]"
    return text[: max(limit - len(mark), 0)].rstrip() + mark


def error_detail(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    """What another program said (a parser, Ollama, a proxy's error page), as quoted in a
    message of kenning's: one line, cut to `limit` characters. Over many lines it would
    break the line it is put in."""
    return error_text(" ".join(text.split()), limit)


def error_line(exc: BaseException, limit: int = MAX_DETAIL_CHARS) -> str:
    """`exc` as one line, "Type: message", its message cut to `limit` characters."""
    detail = error_detail(str(exc), limit)
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
