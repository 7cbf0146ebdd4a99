"""The facts ledger: structured findings an agent keeps in front of itself.

An entry lives in a section (kenning/service/ledger_schema.py) and is identified by its
identity fields. Adding an entry that answers to a key of an existing one merges into it:
the oldest matching entry survives, keeps its owner (the first contributor) and absorbs
any other entries the add shows to be the same thing; fields are enriched (a later value
replaces an earlier one, except an identity value, whose new value becomes an alias);
evidence references accumulate. Correcting a fact is remove then add.

Values are redacted as they arrive, like any stored text, each mark with its secret's
fingerprint (`[REDACTED:3f9a]`, service/redaction_key.py): an identity is matched on the
redacted text, and "token ghp_A… found" and "token ghp_B… found" must stay two entries,
and the one removed be the one named. A password or token can look
like any word, though, and only its field's name gives it away, so a field the redactor
would take for a secret in an assignment (`password: "..."`) keeps none of its value,
and neither does a credentials entry's `pw`, `key`, `hash` or `ntlm` (an NTLM hash logs
in as well as the password), nor one whose name has such a word (`root_pw`, `ssh_key`).
Those are a bare `[REDACTED]`: such a field is never an identity, and a fingerprint
there would show which entries share a password. A field name is one line, and given
once.

`render` writes the ledger as one deterministic text block under a byte budget: sections
in priority order, entries in the order they were first recorded, each kept if it still
fits (a large entry is skipped, not a stopping point), and a closing note counting what
was left out. The same ledger and budget always give the same bytes.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import time

from kenning.api import LedgerAdded, LedgerEntry, LedgerList, LedgerRemoved, LedgerRender
from kenning.config import Settings
from kenning.errors import InvalidRequest, NotFound
from kenning.ingest.redact import about_a_secret, redact
from kenning.ingest.text_prep import Labels, prepare_text
from kenning.service import ledger_schema as schema
from kenning.service.handles import random_handle
from kenning.store import graph, ledger, sources
from kenning.store.database import Database
from kenning.store.ledger import EntryDocument, EntryRow
from kenning.store.records import Extraction
from kenning.text.names import normalize_name
from kenning.text.redacted import MARK
from kenning.text.unicode import normalized

URI_PREFIX = "kenning://ledger/"
MAX_EVIDENCE = 50
MAX_REF_CHARS = 300
# A literal the redactor hides under a secret name, to ask it whether a name is one.
_PROBE = "hunter2"
# A word of a credentials entry's field name that makes its value the credential: `pw`,
# and `root_pw`, `ssh_key`, `nt_hash`, `creds`, `pw2` as well (unless the name is only
# about one, `key_file`, `password_hint`).
_CREDENTIAL_WORDS = frozenset(
    """pw pwd pin key hash ntlm nthash lmhash otp totp seed cookie session cred creds credential credentials
    pass passwd password passphrase passcode secret token ticket jwt bearer""".split()
)
# Credentials only as the whole name: `nt_domain` is a Windows domain.
_WHOLE_CREDENTIAL_NAMES = frozenset({"nt", "lm"})
_NAME_WORD = re.compile(r"[a-z]+")


def view(row: EntryRow) -> LedgerEntry:
    assert row.document_id is not None
    return LedgerEntry(
        row.id, row.section, row.identity, row.fields, row.keys, row.owner, row.evidence, row.created_at,
        row.updated_at, row.document_id,
    )  # fmt: skip


def entry_text(row: EntryRow) -> str:
    """The entry's document: its line, and the aliases it answers to, so search finds either."""
    spec = schema.section(row.section)
    text = f"{row.section}: {schema.line(spec, row.identity, row.fields, row.evidence)[2:]}"
    aliases = [key for key in row.keys if key != schema.keys(spec, row.fields)[0]]
    return text + (f"\naliases: {', '.join(aliases)}" if aliases else "") + "\n"


class Ledger:
    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.settings = settings
        self._lock = asyncio.Lock()
        # The fingerprints' key (service/redaction_key.py); the library sets it at open.
        self.redaction_key: bytes | None = None

    def _redacted(self, section: str, fields: dict[str, str]) -> dict[str, str]:
        assert self.redaction_key is not None, "the ledger is used before the library opened"
        return _redacted(section, fields, self.redaction_key)

    async def add(
        self, section: str, fields: dict[str, str], owner: str = "agent", evidence: tuple[str, ...] = ()
    ) -> LedgerAdded:
        spec = schema.section(section)
        incoming = self._redacted(spec.name, fields)
        schema.refuse_hostless(incoming)
        wanted = schema.keys(spec, incoming)
        # One line each, as field values are: the rendered block writes them inside an
        # entry's line, where a newline would start a forged section or entry.
        refs = [redact(" ".join(ref.split()))[:MAX_REF_CHARS] for ref in evidence if ref.strip()]
        owner = " ".join(owner.split()) or "agent"
        async with self._lock:
            host_names = await self._host_names(incoming)
            if host_names:
                wanted += schema.host_keys(spec, incoming, host_names)
            former = schema.former_keys(spec, incoming)
            found = await ledger.matching(self.db, spec.name, list(dict.fromkeys(wanted + former)))
            now = time.time()
            if not found:
                row = EntryRow(
                    await self._fresh_id(), None, spec.name, "", incoming, redact(owner.strip()) or "agent",
                    list(dict.fromkeys(refs))[:MAX_EVIDENCE], now, now, [],
                )  # fmt: skip
                folded: list[EntryRow] = []
            else:
                row, folded = self._merge(spec, found, incoming, refs, now)
            keys = schema.keys(spec, row.fields) + [key for entry in found for key in entry.keys] + wanted
            row = EntryRow(
                row.id, None, row.section, schema.label(spec, row.fields), row.fields, row.owner, row.evidence,
                row.created_at, now, _current(spec, row.fields, keys),
            )  # fmt: skip
            document = await self._document(row)
            extraction = await self._extraction(spec, row, host_names)
            await ledger.save(self.db, row, document, extraction, [entry.id for entry in folded])
            saved = await ledger.get(self.db, row.id)
        assert saved is not None
        return LedgerAdded("merged" if found else "created", view(saved), [entry.id for entry in folded])

    async def prepare_again(self, document_id: int) -> bool:
        """Store an entry again as this code prepares text (rereading.py): its fields,
        owner and evidence redacted and folded by the newest rules, and the aliases it
        answers to that they would change dropped. Whether it was stored."""
        async with self._lock:
            row = await ledger.by_document(self.db, document_id)
            if row is None:
                return False
            spec = schema.section(row.section)
            fields = self._redacted(spec.name, _credential_names_replaced(row.fields))
            keys = _current(spec, fields, schema.keys(spec, fields) + [key for key in row.keys if redact(key) == key])
            # Two entries an older redactor kept apart by the secrets in them may answer to
            # the same key now: the key stays with the entry holding it, and this one keeps
            # its id and its other keys, rather than one of them losing every key to the other.
            taken = {
                key for entry in await ledger.matching(self.db, spec.name, keys) if entry.id != row.id
                for key in entry.keys
            }  # fmt: skip
            keys = [key for key in keys if key not in taken]
            again = EntryRow(
                row.id, row.document_id, row.section, schema.label(spec, fields), fields,
                redact(row.owner) or "agent", [redact(ref) for ref in row.evidence], row.created_at, row.updated_at,
                list(dict.fromkeys(keys)),
            )  # fmt: skip
            extraction = await self._extraction(spec, again, await self._host_names(fields))
            await ledger.save(self.db, again, await self._document(again, added=row.updated_at), extraction, [])
            return True

    async def _host_names(self, fields: dict[str, str]) -> list[str]:
        """The names an entry's host answers to: its own, and those its hosts entry knows."""
        if "host" not in fields:
            return []
        names = [schema.NORMALIZERS["host"](fields["host"])]
        for host in await ledger.matching(self.db, "hosts", names):
            # Not the key "" of a host an older kenning stored as dots alone.
            names += [key for key in host.keys if key]
        return list(dict.fromkeys(names))

    async def _extraction(self, spec: schema.Section, row: EntryRow, host_names: list[str]) -> Extraction:
        host = (await _entity_name(self.db, host_names), host_names) if host_names else None
        own = await _entity_name(self.db, [row.identity, *row.keys])
        return schema.extraction(spec, own, [row.identity, *row.keys], row.fields, host)

    @staticmethod
    def _merge(
        spec: schema.Section, found: list[EntryRow], incoming: dict[str, str], refs: list[str], now: float
    ) -> tuple[EntryRow, list[EntryRow]]:
        """The oldest entry absorbs the others and the incoming fields, in that order."""
        target, folded = found[0], found[1:]
        identity_fields = {name for identity in spec.identities for name in identity}
        fields = dict(target.fields)
        evidence = list(target.evidence)
        for fresh in [*(entry.fields for entry in folded), incoming]:
            for name, value in fresh.items():
                # An identity value already set stays; the other one lives on as an alias key.
                if name not in identity_fields or name not in fields:
                    fields[name] = value
        for entry in folded:
            evidence += entry.evidence
        evidence = list(dict.fromkeys(evidence + refs))[:MAX_EVIDENCE]
        merged = EntryRow(
            target.id, target.document_id, spec.name, target.identity, fields, target.owner, evidence,
            target.created_at, now, target.keys,
        )  # fmt: skip
        return merged, folded

    async def _fresh_id(self) -> str:
        while True:
            entry_id = random_handle("l")
            if await ledger.get(self.db, entry_id) is None:
                return entry_id

    async def _document(self, row: EntryRow, added: float | None = None) -> EntryDocument:
        # Not "section: identity": "credentials: svc@db1" reads as an assignment to a
        # secret name, and the redactor hid every credentials entry's identity.
        labels = Labels(f"{row.section} — {row.identity}", URI_PREFIX + row.id, (row.section,))
        prepared = await asyncio.to_thread(
            prepare_text, labels, entry_text(row), "prose", self.settings.chunking, format="ledger", added=added
        )
        source_id = await sources.aggregate_source(self.db, "ledger")
        return EntryDocument(source_id, prepared.labels.uri, prepared.meta, prepared.items)

    async def remove(
        self, entry_id: str | None = None, section: str | None = None, fields: dict[str, str] | None = None
    ) -> LedgerRemoved:
        """By id, or by a section and identity fields (any alias matches)."""
        async with self._lock:
            if entry_id is None:
                if section is None or not fields:
                    raise InvalidRequest("give an entry id, or a section and the entry's identity fields")
                spec = schema.section(section)
                incoming = self._redacted(spec.name, fields)
                lookup = schema.keys(spec, incoming) + schema.former_keys(spec, incoming)
                found = await ledger.matching(self.db, spec.name, lookup)
                if not found:
                    raise NotFound(
                        f"no {spec.name} entry answers to {', '.join(schema.keys(spec, incoming))};"
                        f" `ken ledger list --section {spec.name}` shows them"
                    )
                entry_id = found[0].id
            row = await ledger.remove(self.db, entry_id)
        if row is None:
            raise NotFound(f"no ledger entry {entry_id}; `ken ledger list` shows them")
        return LedgerRemoved(row.id, row.section, row.identity)

    async def listing(self, section: str | None = None) -> LedgerList:
        if section is not None:
            schema.section(section)
        return LedgerList([view(row) for row in await ledger.listing(self.db, section)])

    async def render(self, budget: int | None = None, sections: tuple[str, ...] = ()) -> LedgerRender:
        budget = budget or self.settings.ledger.render_budget
        for name in sections:
            schema.section(name)
        rows = await ledger.listing(self.db)
        chosen = [name for name in schema.PRIORITY if not sections or name in sections]
        # Off the event loop: a line for every entry, 5,000 of them, is tens of milliseconds.
        return await asyncio.to_thread(_render_rows, rows, chosen, budget)


def _redacted(section: str, fields: dict[str, str], key: bytes) -> dict[str, str]:
    """The fields cleaned, with the secrets the module docstring describes hidden: in the
    credentials section, also the fields named for what a credential is (`pw`, `ssh_key`,
    `nt_hash`), which no assignment's name gives away."""
    return {
        name: MARK if _secret_field(section, name) else redact(value, key)
        for name, value in schema.clean_fields(fields).items()
    }


def _secret_field(section: str, name: str) -> bool:
    """A name is lower case here; its words are its runs of letters (`pw2` is `pw`)."""
    if section == "credentials" and not about_a_secret(name):
        words = _NAME_WORD.findall(name)
        if name in _WHOLE_CREDENTIAL_NAMES or any(word in _CREDENTIAL_WORDS for word in words):
            return True
    return _secret_name(name)


def _current(spec: schema.Section, fields: dict[str, str], keys: list[str]) -> list[str]:
    """The keys without those an older kenning gave these fields: the current form
    replaces each ("see [rfc 9110" was "see [RFC 9110]" cut short), and the entry is still
    met by the value as an older kenning keyed it (`former_keys` looks both up)."""
    former = set(schema.former_keys(spec, fields))
    return [key for key in dict.fromkeys(keys) if key not in former]


def _credential_names_replaced(fields: dict[str, str]) -> dict[str, str]:
    """Stored fields with each name an older kenning let hold a credential (`add` refuses
    one now) replaced by one that holds none, so the entry can be stored again."""
    renamed: dict[str, str] = {}
    for name, value in fields.items():
        if schema.credential_name(name):
            name = next(f"redacted_field_{n}" for n in itertools.count(1) if f"redacted_field_{n}" not in fields)
            fields = {**fields, name: value}
        renamed[name] = value
    return renamed


def _secret_name(name: str) -> bool:
    assignment = normalized(f'{name}: "{_PROBE}"')
    return redact(assignment) != assignment


async def _entity_name(db: Database, names: list[str]) -> str:
    """The name the graph already knows one of these by, else the first: an entity keeps
    its first name as an entry's identity firms up (a host known by name, then by address),
    so the entries that named it earlier stay linked to it."""
    known = await graph.resolve_names(db, [normalize_name(name) for name in names])
    for name in names:
        match = known.get(normalize_name(name))
        if match is not None:
            return match.name
    return names[0]


def _render_rows(rows: list[EntryRow], chosen: list[str], budget: int) -> LedgerRender:
    by_section: dict[str, list[EntryRow]] = {name: [] for name in chosen}
    for row in rows:
        if row.section in by_section:
            by_section[row.section].append(row)
    return render(by_section, budget)


def render(by_section: dict[str, list[EntryRow]], budget: int) -> LedgerRender:
    """The greedy, per-entry fit described in the module docstring."""
    lines = {
        name: [schema.line(schema.section(name), row.identity, row.fields, row.evidence) + "\n" for row in rows]
        for name, rows in by_section.items()
        if rows
    }
    total = sum(len(entries) for entries in lines.values())
    whole = "".join(f"## {name}\n" + "".join(entries) for name, entries in lines.items())
    if len(whole.encode()) <= budget:
        return LedgerRender(whole, len(whole.encode()), budget, total, {})
    everything = {name: len(entries) for name, entries in lines.items()}
    reserve = len(_note(everything).encode())
    room = budget - reserve
    kept: list[str] = []
    omitted: dict[str, int] = {}
    shown = 0
    for name, entries in lines.items():
        header = f"## {name}\n"
        started = False
        for text in entries:
            cost = len(text.encode()) + (0 if started else len(header.encode()))
            if cost <= room:
                if not started:
                    kept.append(header)
                    started = True
                kept.append(text)
                room -= cost
                shown += 1
            else:
                omitted[name] = omitted.get(name, 0) + 1
    note = _note(omitted)
    if reserve > budget:
        # Not even the note fits: say only how many entries are out, if that fits.
        note = f"[ledger: {total} entries not shown]\n"
        note = note if len(note.encode()) <= budget else ""
    text = "".join(kept) + note
    return LedgerRender(text, len(text.encode()), budget, shown, omitted)


def _note(omitted: dict[str, int]) -> str:
    counts = ", ".join(f"{name} {count}" for name, count in omitted.items())
    total = sum(omitted.values())
    return f"[ledger: {total} entries left out ({counts}); a larger budget or `ledger list` shows them]\n"
