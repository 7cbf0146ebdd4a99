"""What the memory, archive, ledger and context tools answer: their output schemas.

As in models.py, validating the daemon's answer into these keeps the fields an agent
needs and drops the rest.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class Remembered(BaseModel):
    status: str = Field(
        description="created, updated (same title in this scope), superseded (created, replacing `superseded`),"
        " or refused (a near-identical capsule is kept already: `id`; nothing was written)"
    )
    id: str = Field(description="the capsule stored, or (refused) the one already kept")
    title: str
    message: str = Field(description="what happened, and when refused, how to supersede or force")
    similarity: float | None = Field(default=None, description="refused: how alike the kept capsule is (0-1)")
    superseded: str | None = None


class Capsule(BaseModel):
    id: str
    kind: str
    scope: str
    title: str
    body: str
    tags: list[str]
    confidence: float
    source: str | None = Field(description="where the knowledge came from, as its writer gave it")
    updated_at: float = Field(description="unix time of its last write")
    supersedes: str | None
    uri: str = Field(description="how search hits cite it")


class CapsuleHit(BaseModel):
    capsule: Capsule
    score: float = Field(description="relevance x freshness x confidence weight; higher is better")


class Recalled(BaseModel):
    capsules: list[CapsuleHit] = Field(description="best first; empty when no capsule matches")
    warnings: list[str] = []


class Forgotten(BaseModel):
    id: str
    title: str


class Archived(BaseModel):
    handle: str = Field(description="pass it to recall to read the text back")
    title: str
    chars: int = Field(description="characters stored (recall's offsets count these)")
    bytes: int
    existing: bool = Field(description="the same text was archived before: this is its handle")
    pruned: list[str] = Field(description="older archives the retention setting removed to make room")
    note: str | None = Field(
        None, description="when existing: when and as what it was archived, and what of this call was not recorded"
    )


class ArchivePage(BaseModel):
    handle: str
    title: str
    offset: int
    text: str = Field(description="characters offset .. offset+len(text) of the stored text, exactly")
    total_chars: int
    next_offset: int | None = Field(description="offset of the next page; null at the end")
    version: str = Field(description="the stored text's version: pass it with the next page")


class LedgerEntry(BaseModel):
    id: str
    section: str
    identity: str
    fields: dict[str, str]
    aliases: list[str] = Field(description="every identity key the entry answers to")
    owner: str = Field(description="who recorded it first")
    evidence: list[str]


class LedgerAdded(BaseModel):
    status: str = Field(description="created, or merged into an entry with the same identity or an alias of it")
    entry: LedgerEntry
    folded: list[str] = Field(description="other entries this add showed to be the same one, merged into it")


class LedgerRemoved(BaseModel):
    id: str
    section: str
    identity: str


class LedgerRender(BaseModel):
    text: str = Field(description="the ledger as a text block, at most `budget` bytes")
    bytes: int
    budget: int
    entries: int = Field(description="entries shown")
    omitted: dict[str, int] = Field(description="entries left out by the budget, per section")


class PackedDocument(BaseModel):
    document_id: int
    title: str
    path: str
    source: str
    score: float
    bytes: int = Field(description="size of its text (estimated from its chunks when it was not read)")
    item_id: int = Field(description="its best hit, as `superseded_by` and `retracted_by` name one")
    line_start: int = Field(description="its best hit's first line")
    line_end: int
    superseded_by: int | None = Field(None, description="item id of newer text replacing its best hit's lines")
    retracted_by: int | None = Field(None, description="item id of a notice withdrawing its best hit's lines")


class ContextPack(BaseModel):
    text: str = Field(description="the pack: whole documents, then one line per document not inlined")
    bytes: int
    budget: int
    inlined: list[PackedDocument] = Field(description="in the pack whole, most relevant first")
    listed: list[PackedDocument] = Field(description="relevant but not inlined: read with get(document_id=...)")
    warnings: list[str] = []
