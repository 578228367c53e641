"""A SQLite record store for a test (`--store sqlite:///PATH`, hybridops_tf/store/sqlite.py):
a file of its own in the test's folder, read back with the standard library's sqlite3, as
tests/integration/shared_store.py reads the PostgreSQL one."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class SqliteFile:
    path: Path

    @property
    def url(self) -> str:
        return f"sqlite:///{self.path}"

    def env(self) -> dict[str, str]:
        return {"HYOPS_STORE": self.url}

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with closing(sqlite3.connect(self.path, timeout=60)) as conn:
            return list(conn.execute(sql, params).fetchall())

    def stored_record_text(self, key: str) -> str:
        """The record exactly as stored."""
        rows = self._rows("SELECT doc FROM records WHERE key = ?", (key,))
        return rows[0][0] if rows else ""

    def record(self, key: str) -> dict[str, Any] | None:
        text = self.stored_record_text(key)
        return json.loads(text) if text else None

    def journal(self, key: str, run_id: str) -> list[tuple[str, str]]:
        """(kind, body) rows of one run's journal, in order."""
        return [(k, b) for k, b in self._rows("SELECT kind, body FROM journal WHERE key = ? AND run_id = ? "
                                              "ORDER BY id", (key, run_id))]

    def journal_events(self, key: str, run_id: str) -> list[dict[str, Any]]:
        return [json.loads(body) for kind, body in self.journal(key, run_id) if kind == "event"]

    def write_record(self, key: str, doc: dict[str, Any]) -> None:
        """Put a record as a forged test fixture would."""
        with closing(sqlite3.connect(self.path, timeout=60)) as conn, conn:
            conn.execute("INSERT INTO records (key, doc, updated_at) VALUES (?, ?, '') ON CONFLICT (key) "
                         "DO UPDATE SET doc = excluded.doc", (key, json.dumps(doc)))

    def document(self, kind: str, name: str) -> str | None:
        """A document's text as the store keeps it (None: it holds none)."""
        rows = self._rows("SELECT body FROM documents WHERE kind = ? AND name = ?", (kind, name))
        return rows[0][0] if rows else None

    def dump(self) -> str:
        """Everything the store holds, as text (for leak checks): every table, and the file's bytes."""
        rows = [repr(row) for table in ("records", "journal", "documents")
                for row in self._rows(f"SELECT * FROM {table}")]
        raw = b"".join(p.read_bytes() for p in self.path.parent.glob(f"{self.path.name}*") if p.is_file())
        return "\n".join(rows) + "\n" + raw.decode("utf-8", errors="replace")
