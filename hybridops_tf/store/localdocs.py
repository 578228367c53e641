"""The local store's documents: each one is its file under the runtime root (store/documents.py
says which), written durably and atomically; a document's appended lines (a stack run's member
updates) are a file beside it, one line each.

The lines of a run are not tagged by the store: the file holds the lines appended since it
was last dropped (a run drops it when it starts, after writing the report that names it), and
each line names its run itself (runtime/live_journal.line_of), which the reader checks.
"""

from __future__ import annotations

from pathlib import Path

from hybridops_tf.base.files import PreparedWrite, open_append
from hybridops_tf.store.documents import lines_path, local_path


class LocalDocuments:
    """Documents (store/__init__.py) as files under `root`."""

    root: Path

    def put_document(self, kind: str, name: str, text: str) -> None:
        """The document's file holds `text` (durably; left alone when it already does: every
        write of a document is durable, so what it holds is on disk). OSError when it cannot."""
        PreparedWrite(local_path(self.root, kind, name), text.encode("utf-8"), keep_same=True).commit()

    def fetch_document(self, kind: str, name: str) -> Path:
        """The document's file (it may not exist: no such document)."""
        return local_path(self.root, kind, name)

    def append_document_line(self, kind: str, name: str, run_id: str, line: str) -> None:
        """One line, written through (one write call) before this returns; not flushed to disk
        (a runner that dies leaves it in the page cache: runtime/live_journal.py)."""
        with open_append(lines_path(self.root, kind, name)) as out:
            out.write(line.encode("utf-8") + b"\n")

    def document_lines(self, kind: str, name: str, run_id: str) -> list[str]:
        """The lines appended since the last drop (an unreadable file: none; the document as
        last written whole still says what it said)."""
        try:
            return lines_path(self.root, kind, name).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return []

    def drop_document_lines(self, kind: str, name: str) -> None:
        lines_path(self.root, kind, name).unlink(missing_ok=True)  # a new run's lines start from none
