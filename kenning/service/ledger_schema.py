"""The facts ledger's sections: what identifies an entry in each, and how it reads.

Identity is required, never inferred: an entry names at least one complete identity of
its section, or the add is refused. Without that a host recorded with neither address
nor name could never merge with its own later enrichment, and services recorded without
their host would all collapse onto one port. Each complete identity gives a key; all of
them are the entry's aliases, and an add matching any alias merges into that entry.

| section | identities (any one complete set) | entity kind |
|---|---|---|
| credentials | account + host, or account + url | account |
| findings | title | finding |
| decisions | subject | decision |
| next_steps | text | task |
| hosts | ip, or hostname | host |
| services | host + port | service |
| paths | path | path |
| urls | url | url |

Sections are listed in render priority: conclusions before enumeration. Values are
normalised before they become keys: IP addresses canonical, host names lower case
without a trailing dot, ports as `22` or `53/udp`, URLs with scheme and host lower case
and without user or password, default port or dot segments (an entry keyed before that is
still met by its URL as it was keyed), paths without doubled or trailing slashes, free text with
case, runs of space and the sentence punctuation around it folded ("C#" stays apart from
"C"; text of punctuation alone is refused), a bracket or quote at an edge only when it
pairs with nothing inside or encloses the whole ("see [RFC 9110]" keeps its "]"; an entry
keyed when every edge bracket went is still met by its text, and keyed anew when stored
again). Keys stored before symbols were kept stay as they were: such an entry is met
again only by the form it was keyed under.
A `host` that names a known host entry also answers to that host's other names, so
`web01:22` and `10.0.0.5:22` are one service once the host entry links the two.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit, urlunsplit

from kenning.errors import InvalidRequest
from kenning.ingest.redact import redact
from kenning.store.records import Entity, Extraction, Relation
from kenning.text.controls import CONTROL
from kenning.text.likeness import title_key
from kenning.text.redacted import MARK


@dataclass(frozen=True)
class Section:
    name: str
    identities: tuple[tuple[str, ...], ...]
    entity_kind: str
    # A field naming a host, which becomes its own entity related to the entry's.
    host_relation: str | None = None


SECTIONS: dict[str, Section] = {
    section.name: section
    for section in (
        Section("credentials", (("account", "host"), ("account", "url")), "account", "valid_on"),
        Section("findings", (("title",),), "finding", "found_on"),
        Section("decisions", (("subject",),), "decision"),
        Section("next_steps", (("text",),), "task"),
        Section("hosts", (("ip",), ("hostname",)), "host"),
        Section("services", (("host", "port"),), "service", "runs_on"),
        Section("paths", (("path",),), "path", "on_host"),
        Section("urls", (("url",),), "url"),
    )
}
PRIORITY = tuple(SECTIONS)
MAX_FIELDS = 32
MAX_VALUE_CHARS = 2000
_PORT = re.compile(r"^(\d{1,5})(?:/(tcp|udp|sctp))?$", re.IGNORECASE)
_SLASHES = re.compile(r"/{2,}")
_SPACES = re.compile(r"\s+")
# What str.split() splits on, \s is too (every code point checked).
_WORD_RUN = re.compile(r"\S+")
# A URL's authority up to its last `@`: the userinfo, whatever characters it holds.
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")
# The port a scheme means when none is written: `http://x:80/` is `http://x/`.
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def section(name: str) -> Section:
    found = SECTIONS.get(name)
    if found is None:
        raise InvalidRequest(f"unknown ledger section {name!r}; sections: {', '.join(PRIORITY)}")
    return found


def _address(value: str) -> str:
    """An IP address in its canonical form; an IPv4 address written as IPv6 (::ffff:a.b.c.d,
    as dual-stack listings show an IPv4 peer) is that IPv4 address. ValueError if none."""
    address = ipaddress.ip_address(value.strip("[]"))
    mapped = getattr(address, "ipv4_mapped", None)
    return str(mapped or address)


def _host(value: str) -> str:
    try:
        return _address(value)
    except ValueError:
        return value.rstrip(".").casefold()


def refuse_hostless(fields: dict[str, str]) -> None:
    """Refuse a host named by dots alone: its key is "", which every other such name met,
    each merged into one entry. Only what an add brings: an entry an older kenning stored
    so is kept, and still read, prepared again and met by its other keys."""
    for name in ("host", "hostname"):
        if name in fields and not _host(fields[name]):
            raise InvalidRequest(f"{redact(fields[name])!r} is not a host name")


def _port(value: str) -> str:
    match = _PORT.match(value.replace(" ", ""))
    if match is None or not 1 <= int(match.group(1)) <= 65535:
        raise InvalidRequest(f"port {redact(value)!r} is not a port number (1-65535, optionally /tcp, /udp or /sctp)")
    protocol = (match.group(2) or "tcp").lower()
    return str(int(match.group(1))) + ("" if protocol == "tcp" else "/" + protocol)


def _ip(value: str) -> str:
    try:
        return _address(value)
    except ValueError:
        raise InvalidRequest(f"ip {redact(value)!r} is not an IP address") from None


def _url_parts(value: str) -> SplitResult:
    try:
        parts = urlsplit(_USERINFO.sub(r"\1", value))
    except ValueError as exc:
        raise InvalidRequest(redact(f"url {value!r} is not a valid URL: {exc}")) from None
    if not parts.scheme or not parts.hostname:
        raise InvalidRequest(f"url {redact(value)!r} needs a scheme and a host, like https://example.com/path")
    return parts


def _url(value: str) -> str:
    """The URL as the resource it names (RFC 3986, section 6.2.2): without its user and
    password, which say who reached it, not which one it is (and a redacted password,
    `user:[REDACTED]@`, would read as an IPv6 host); scheme and host in lower case; no
    default port; no `.` or `..` segments; `/` for an empty path. The query is kept as it
    is: a server may read its parameters in order."""
    parts = _url_parts(value)
    scheme = parts.scheme.lower()
    netloc = parts.netloc.lower()
    host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname
    try:
        port = parts.port
    except ValueError:
        # Not a port number: kept as written, so an entry stored with it keeps its key.
        port = -1
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        netloc = host or netloc
    return urlunsplit((scheme, netloc, _without_dot_segments(parts.path) or "/", parts.query, ""))


def _url_as_keyed_before(value: str) -> str:
    """The key an older kenning gave the URL (scheme and host lower case, nothing else
    normalised): entries stored then are still met by it until they are prepared again."""
    parts = _url_parts(value)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))


def _without_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4: `/a/./b/../c` is `/a/c`; `..` never climbs above the root."""
    output: list[str] = []
    segments = path.split("/")
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == ".":
            if last:
                output.append("")
        elif segment == "..":
            if len(output) > 1 or (output and output[0]):
                output.pop()
            if last:
                output.append("")
        else:
            output.append(segment)
    return "/".join(output)


def _path(value: str) -> str:
    path = _SPACES.sub(" ", value) if "\n" in value else value
    path = _SLASHES.sub("/", path)
    return path.rstrip("/") or "/"


# What may stand around free text without changing what it names: quotes, brackets and
# sentence punctuation. Not "#", "+" or "*": "C#" is not "C".
_TEXT_EDGES = " \t\n\"'`.,;:!?()[]{}<>"
_SENTENCE_EDGES = " \t\n.,;:!?"
_OPENERS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_QUOTES = "\"'`"


def _text(value: str) -> str:
    """Free text as a key: a capsule title's key (case and spacing folded, symbols kept),
    without the sentence punctuation at its edges ("Rotate the keys." is "rotate the keys")."""
    folded = title_key(value)
    if not folded.strip(_TEXT_EDGES):
        raise InvalidRequest(f"{redact(value)[:40]!r} names nothing: give a word or a symbol, not only punctuation")
    return _without_edges(folded)


def _text_as_keyed_before(value: str) -> str:
    """The key an older kenning gave free text, every bracket and quote at its edges
    dropped ("see [RFC 9110]" was "see [rfc 9110"): to find entries stored then."""
    return title_key(value).strip(_TEXT_EDGES)


def _without_edges(key: str) -> str:
    """The key without sentence punctuation at its edges, nor a bracket or quote there
    that pairs with nothing inside it or encloses all of it: "(Rotate the keys.)" is
    "rotate the keys", but "see [RFC 9110]" and "[WIP] build" keep their brackets,
    since the one at the edge closes or opens one within."""
    partners = _partners(key)
    start, end = 0, len(key) - 1
    while start <= end:
        if key[start] in _SENTENCE_EDGES:
            start += 1
        elif key[end] in _SENTENCE_EDGES:
            end -= 1
        elif partners.get(start) == end:
            start, end = start + 1, end - 1
        elif key[end] in _TEXT_EDGES and not start <= partners.get(end, -1) < end:
            end -= 1
        elif key[start] in _TEXT_EDGES and not start < partners.get(start, -1) <= end:
            start += 1
        else:
            break
    return key[start : end + 1]


def _partners(key: str) -> dict[int, int]:
    """Each bracket's and quote's partner, both ways: brackets nest, quotes pair in turn,
    and a quote between two letters or digits is an apostrophe ("don't"), not a quote."""
    partners: dict[int, int] = {}
    open_at: dict[str, list[int]] = {closer: [] for closer in _OPENERS.values()}
    quoted: dict[str, int] = {}
    for index, char in enumerate(key):
        if char in _OPENERS:
            open_at[_OPENERS[char]].append(index)
        elif char in open_at and open_at[char]:
            partners[index] = open_at[char].pop()
        elif char in _QUOTES and not (key[index - 1 : index].isalnum() and key[index + 1 : index + 2].isalnum()):
            if char in quoted:
                partners[index] = quoted.pop(char)
            else:
                quoted[char] = index
    partners.update({other: index for index, other in list(partners.items())})
    return partners


NORMALIZERS = {
    "ip": _ip,
    "hostname": _host,
    "host": _host,
    "port": _port,
    "url": _url,
    "path": _path,
    "account": str.strip,
    "title": _text,
    "subject": _text,
    "text": _text,
}
_KEYED_BEFORE = {
    **NORMALIZERS,
    "url": _url_as_keyed_before,
    "title": _text_as_keyed_before,
    "subject": _text_as_keyed_before,
    "text": _text_as_keyed_before,
}
_JOINERS = {("account", "host"): "@", ("account", "url"): " @ ", ("host", "port"): ":"}


def credential_name(name: str) -> bool:
    """Whether a field's name holds what the redactor takes for a credential. A name is
    stored and shown as it is (only values are redacted), and lower case would hide a
    token's shape from the redactor ("AKIA..." -> "akia...")."""
    return MARK in redact(name) or MARK in redact(name.strip().lower().replace(" ", "_"))


def clean_fields(fields: dict[str, str]) -> dict[str, str]:
    """Field names lower case, values stripped and whitespace-collapsed; empty ones dropped."""
    if len(fields) > MAX_FIELDS:
        raise InvalidRequest(f"an entry has at most {MAX_FIELDS} fields")
    cleaned: dict[str, str] = {}
    for name, value in fields.items():
        key = name.strip().lower().replace(" ", "_")
        if not key:
            raise InvalidRequest("a field name cannot be blank")
        if credential_name(name):
            raise InvalidRequest(
                "a field name holds what looks like a credential; name the field and put the value in it"
            )
        if found := CONTROL.search(key):
            # A newline in a name would write lines of its own into the rendered block: a
            # forged section or entry in an agent's prompt.
            shown = f"{key[:40]!r} holds U+{ord(found[0]):04X}"
            raise InvalidRequest(f"a field name is one line without control characters; {shown}")
        if key in cleaned:
            raise InvalidRequest(f"field {key!r} is given twice (names are compared in lower case)")
        text = _collapsed(str(value), key)
        if text:
            cleaned[key] = text
    return cleaned


def _collapsed(value: str, key: str) -> str:
    """The value's words joined by single spaces, refused once past MAX_VALUE_CHARS.
    Words are taken one at a time up to the limit: splitting the whole value first made
    a list of every word of it on the event loop, and a request's value may run to the
    socket's 48 MB (39 MB of "ab " took 3.3 s and 1 GB before it was refused)."""
    words: list[str] = []
    length = -1
    for word in _WORD_RUN.finditer(value):
        length += len(word[0]) + 1
        if length > MAX_VALUE_CHARS:
            raise InvalidRequest(f"field {key!r} is longer than {MAX_VALUE_CHARS} characters")
        words.append(word[0])
    return " ".join(words)


def canonical(spec: Section, fields: dict[str, str]) -> tuple[str, ...]:
    """The first complete identity: the one an entry is shown and named by."""
    for identity in spec.identities:
        if all(name in fields for name in identity):
            return identity
    needed = " or ".join(" + ".join(identity) for identity in spec.identities)
    raise InvalidRequest(f"a {spec.name} entry needs {needed}; it has {', '.join(fields) or 'no fields'}")


def keys(
    spec: Section, fields: dict[str, str], normalizers: dict[str, Callable[[str], str]] = NORMALIZERS
) -> list[str]:
    """Every complete identity's key, canonical first; refuses an entry without one."""
    canonical(spec, fields)
    found = []
    for identity in spec.identities:
        if all(name in fields for name in identity):
            values = [normalizers.get(name, _text)(fields[name]) for name in identity]
            found.append(_JOINERS.get(identity, " ").join(values))
    return list(dict.fromkeys(found))


def former_keys(spec: Section, fields: dict[str, str]) -> list[str]:
    """Keys an older kenning gave these fields that `keys` no longer gives (a URL with its
    default port or dot segments): to find entries stored then, never to store."""
    current = keys(spec, fields)
    return [key for key in keys(spec, fields, _KEYED_BEFORE) if key not in current]


def label(spec: Section, fields: dict[str, str]) -> str:
    """The canonical identity as written (free text keeps its case), addresses normalised."""
    identity = canonical(spec, fields)
    values = [
        fields[name] if NORMALIZERS.get(name, _text) is _text else NORMALIZERS[name](fields[name]) for name in identity
    ]
    return _JOINERS.get(identity, " ").join(values)


def host_keys(spec: Section, fields: dict[str, str], host_aliases: list[str]) -> list[str]:
    """The keys an entry would have under each other name of its host."""
    if "host" not in fields:
        return []
    found = []
    for alias in host_aliases:
        found.extend(keys(spec, {**fields, "host": alias}))
    return found


def line(spec: Section, identity: str, fields: dict[str, str], evidence: list[str]) -> str:
    """One entry as the ledger block shows it: its identity, then its other fields.

    Identity values are written as given, so a text field keeps its case."""
    shown = set(canonical(spec, fields))
    rest = "; ".join(f"{name}={value}" for name, value in fields.items() if name not in shown)
    text = f"- {identity}" + (f" — {rest}" if rest else "")
    if evidence:
        # Evidence stored before it was kept to one line must not break the block either.
        text += f" (evidence: {', '.join(' '.join(ref.split()) for ref in evidence)})"
    return text


def extraction(
    spec: Section, name: str, aliases: list[str], fields: dict[str, str], host: tuple[str, list[str]] | None
) -> Extraction:
    """The entry's part of the knowledge graph: itself under `name` (answering to its
    aliases), and for a field naming a host, that host (`host`: its name and aliases)."""
    if spec.name == "next_steps":
        return Extraction()
    others = [alias for alias in aliases if alias != name]
    if spec.name == "hosts":
        others += [value for key, value in fields.items() if key in ("ip", "hostname")]
    own = Entity(name[:200], spec.entity_kind, tuple(dict.fromkeys(a[:200] for a in others if a != name)))
    if host is None or spec.host_relation is None or spec.name == "hosts":
        return Extraction((own,))
    host_name, host_aliases = host
    return Extraction(
        (own, Entity(host_name, "host", tuple(a for a in host_aliases if a != host_name))),
        (Relation(own.name, host_name, spec.host_relation),),
    )
