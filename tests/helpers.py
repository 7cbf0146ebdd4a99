"""Small shared helpers for tests that run retrieval without a daemon."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

from kenning.config import RetrievalSettings
from kenning.retrieval.hits import Hit
from kenning.retrieval.search import Retriever
from kenning.store.database import Database


async def search(
    db: Database, query: str, limit: int = 10, source: str | None = None, namespace: str | None = None
) -> list[Hit]:
    """The keyword leg through the real retriever, as the daemon runs it before vectors exist."""
    result = await Retriever(db, RetrievalSettings()).search(
        query, limit, source=source, namespace=namespace, legs=("keyword",)
    )
    return result.hits


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
