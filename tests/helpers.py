"""Small shared helpers for tests that run retrieval without a daemon."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

from kenning.config import RetrievalSettings
from kenning.api import Hit, Stored
from kenning.retrieval.search import Retriever
from kenning.store import documents
from kenning.store.database import Database
from kenning.store.documents import DocumentMeta, NewItem
from kenning.store.texthash import text_hash
from kenning.text import cjk


async def search(
    db: Database, query: str, limit: int = 10, source: str | None = None, namespace: str | None = None
) -> list[Hit]:
    """The keyword leg through the real retriever, as the daemon runs it before vectors exist."""
    result = await Retriever(db, RetrievalSettings()).search(
        query, limit, source=source, namespace=namespace, legs=("keyword",)
    )
    return result.hits


async def store_document(
    db: Database, source_id: int, path: str, *texts: str, title: str = "Title", mtime: float = 1.0
) -> tuple[int, Stored]:
    """Index a document's chunks as the ingest pipeline does; returns its id and what became of it."""
    document_id = await documents.mark_scanning(db, source_id, path)
    items = [
        NewItem(title, "Section", text, n + 1, n + 1, cjk=cjk.index_text(title, "Section", text))
        for n, text in enumerate(texts)
    ]
    meta = DocumentMeta(title, "markdown", mtime, 1, f"bytes:{path}:{texts}", text_hash(texts))
    stored, _ = await documents.replace_items(db, document_id, meta, items)
    return document_id, stored


def make_pdf(path: Path, pages: list[list[str]]) -> Path:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for lines in pages:
        pdf.add_page()
        for line in lines:
            pdf.cell(text=line)
            pdf.ln()
    pdf.output(str(path))
    return path
