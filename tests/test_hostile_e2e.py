"""The daemon on a folder of hostile files: each fails alone with its reason, the rest is
indexed, the daemon answers throughout, and a stop never waits for a parse."""

from __future__ import annotations

import gzip
import os
import random
import signal
import subprocess
import sys
import time

from tests.daemon_harness import wait_for
from tests.hostile_files import (
    docx_many_paragraphs,
    docx_missing_part,
    docx_whitespace_bomb,
    gzip_bomb,
    nested_html,
    pdf_odd_link,
    pdf_stream_bomb,
    write_pdf,
)

# The time limit is generous: the tests share a busy machine, and the memory limit and
# the caps are what these files meet first.
LIMITS = """
[limits]
parse_memory_mb = 300
parse_timeout = 60
max_text_chars = 100000
max_chunks_per_file = 500
"""


def test_hostile_files_fail_alone_with_their_reasons(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    for index in range(30):
        (notes / f"good{index}.md").write_text(f"# Note {index}\n\nA healthy note about tapirs, number {index}.\n")
    (notes / "packed.md.gz").write_bytes(gzip.compress(b"# Packed\n\ngzipped notes on tapirs\n"))
    pdf_stream_bomb(notes / "bomb.pdf", 400 * 1024 * 1024)
    docx_whitespace_bomb(notes / "spaces.docx", 128 * 1024 * 1024)
    docx_many_paragraphs(notes / "paragraphs.docx", 200_000)
    nested_html(notes / "nested.html", 1000)
    gzip_bomb(notes / "bomb.log.gz", 256 * 1024 * 1024)
    (notes / "noise.md").write_bytes(random.Random(1).randbytes(20_000))
    with open(os.path.join(os.fsencode(notes), b"odd\xff\xfe.md"), "w") as handle:
        handle.write("odd name\n")
    library.configure([{"name": "notes", "path": notes, "max_files": 100}], extra="max_file_mb = 64\n" + LIMITS)
    daemon = library.daemon()
    status = daemon.wait_idle("notes", timeout=90)
    reasons = {failure["path"]: failure["reason"] for failure in status["failures"]}
    assert status["done"] == 31, reasons
    assert "memory" in reasons["bomb.pdf"]
    assert "DOCX inflates to" in reasons["spaces.docx"]
    # Of 200,000 paragraphs, no more are read than the cap lets through.
    assert reasons["paragraphs.docx"] == "extracted text passes the 100000-character limit"
    assert "character limit" in reasons["nested.html"]
    assert "decompresses to more than" in reasons["bomb.log.gz"]
    assert "binary content" in reasons["noise.md"]
    assert len(daemon.search("tapirs", limit=50)) == 31
    assert daemon.proc.poll() is None


def test_sigterm_does_not_wait_for_a_parse_in_progress(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    docx_many_paragraphs(notes / "slow.docx", 1_000_000)
    library.configure(
        [{"name": "notes", "path": notes}], extra="[limits]\nparse_memory_mb = 4096\nparse_timeout = 600\n"
    )
    daemon = library.daemon()
    wait_for(lambda: daemon.source_status("notes")["in_progress"] == 1, timeout=30, what="the parse to start")
    # A `ken scan --wait` meanwhile hears how its sweep ended: the `status` that feeds its
    # bar failed first once the daemon stopped listening, and that failure was its answer
    # ("a daemon holds the library but does not answer: it is still starting").
    scanning = subprocess.Popen(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "scan", "notes", "--wait"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert scanning.stderr.readline().startswith("notes: ")  # its bar, once the sweep was asked for
    time.sleep(1)
    started = time.monotonic()
    assert daemon.stop(signal.SIGTERM, timeout=15) == 0
    assert time.monotonic() - started < 10
    _, err = scanning.communicate(timeout=30)
    assert scanning.returncode == 1 and "still starting" not in err and "start it" not in err, err
    assert "cut short" in err or "may have done it" in err, err


def test_a_failed_file_whose_name_holds_an_escape_sequence_is_shown_escaped(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "ok.md").write_text("# Fine\n\nA tapir.\n")
    (notes / "x\x1b]0;owned\x07\nfailed: y.md").write_bytes(random.Random(2).randbytes(5_000))
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    assert daemon.wait_idle("notes")["failed"] == 1
    shown = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "status"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout  # fmt: skip
    assert "\x1b" not in shown and "\x07" not in shown
    [line] = [line for line in shown.splitlines() if "failed:" in line]
    assert line.startswith("  failed: x\\x1b]0;owned\\x07\\nfailed: y.md: binary content")


def test_a_parser_error_quoting_megabytes_of_the_file_is_one_short_line_in_status(library, tmp_path):
    """A parser's error may quote what it choked on, and a DOCX may name a part a megabyte
    long: stored whole, each `ken status` printed that megabyte per such file, and its
    JSON carried it."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "ok.md").write_text("# Fine\n\nA tapir.\n")
    docx_missing_part(notes / "named.docx", 1_000_000)
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    [failure] = daemon.wait_idle("notes")["failures"]
    assert failure["reason"].startswith("cannot read DOCX: KeyError: ")
    assert len(failure["reason"]) < 500
    shown = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "status"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout  # fmt: skip
    assert len(shown) < 5_000


def test_a_credential_a_parser_error_quotes_is_redacted_in_the_reason(library, tmp_path):
    """pdfminer refuses a dictionary with a key and no value by quoting it whole: a link's
    URL with its token went into the file's reason verbatim, which the database keeps, the
    log prints and `status` shows to the user and to every agent."""
    notes = tmp_path / "notes"
    notes.mkdir()
    token = "ghp_" + "Pq8V" * 9
    pdf_odd_link(notes / "report.pdf", b"https://ci.example.com/run?token=" + token.encode())
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    [failure] = daemon.wait_idle("notes")["failures"]
    assert failure["reason"].startswith("cannot read PDF: ") and "Invalid dictionary construct" in failure["reason"]
    assert "token=[REDACTED]" in failure["reason"] and token not in failure["reason"]
    shown = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "status"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout  # fmt: skip
    assert "report.pdf: cannot read PDF" in shown and token not in shown
    assert "report.pdf" in daemon.log() and token not in daemon.log()
    daemon.stop()
    database = library.data_dir / "kenning.db"
    wal = database.with_name("kenning.db-wal")
    assert token.encode() not in database.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def test_a_file_refused_for_want_of_permission_is_not_logged_as_stored_under_another_reading(library, tmp_path):
    """Such a file is tried at every sweep (a chmod changes no mtime), and each sweep
    logged it as read again for being "stored by an older kenning, other chunk sizes or
    other limits": none of which was so, once a sweep, for as long as it stayed shut."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "ok.md").write_text("# Fine\n\nA tapir.\n")
    (notes / "shut.md").write_text("# Shut\n\nA locked tapir.\n")
    (notes / "shut.md").chmod(0)
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon(plain_permissions=True)
    [failure] = daemon.wait_idle("notes")["failures"]
    assert failure == {"path": "shut.md", "reason": "permission denied"}
    for _ in range(2):
        daemon.call("sources.scan", {"name": "notes", "wait": True})
    assert "files again" not in daemon.log()


def test_a_pdf_parsers_warnings_stay_out_of_the_daemons_log(library, tmp_path):
    """The daemon quiets pdfminer, which warns about every odd object of a PDF (a font it
    has no metrics for: at each use), but PDFs are parsed in worker processes, which
    printed each warning bare on the log, naming neither the file nor the time."""
    notes = tmp_path / "notes"
    notes.mkdir()
    pdf = write_pdf(notes / "okapis.pdf", b"BT /F1 12 Tf 72 720 Td (okapis graze) Tj ET")
    pdf.write_bytes(pdf.read_bytes().replace(b"/Times-Roman", b"/Tymes-Roman"))
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    assert daemon.wait_idle("notes")["done"] == 1
    assert [hit["title"] for hit in daemon.search("okapis")] == ["okapis"]
    assert "FontBBox" not in daemon.log()
