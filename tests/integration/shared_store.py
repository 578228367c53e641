"""A shared record store for a test: a fresh database on the private cluster, migrated by
the real `hyops store init`, read back with psql (no driver in the test's own process)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from typing import Any

from tests.integration.hyops_cli import HYOPS
from tests.pgcluster import PgCluster, fresh_database


@dataclass
class SharedStore:
    cluster: PgCluster
    url: str
    dbname: str

    @classmethod
    def create(cls, cluster: PgCluster, hint: str) -> SharedStore:
        url, _env = fresh_database(cluster, hint)
        # the private cluster has no TLS; the engine's pg backend would insist on it otherwise
        store = cls(cluster, f"{url}?sslmode=disable", url.rsplit("/", 1)[1])
        out = subprocess.run([HYOPS, "store", "init"], env={**os.environ, **store.env()},
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return store

    def env(self) -> dict[str, str]:
        """What a runner needs: the URL (no password) and the password through PGPASSWORD."""
        return {"HYOPS_STORE": self.url, **self.cluster.env()}

    def sql(self, query: str) -> str:
        return self.cluster.psql(query, self.dbname)

    def stored_record_text(self, key: str) -> str:
        """The record exactly as stored (its JSONB as text)."""
        return self.sql(f"SELECT doc::text FROM hyops.records WHERE key = '{key}'")

    def record(self, key: str) -> dict[str, Any] | None:
        text = self.sql(f"SELECT doc::text FROM hyops.records WHERE key = '{key}'")
        return json.loads(text) if text.strip() else None

    def journal(self, key: str, run_id: str) -> list[tuple[str, str]]:
        """(kind, body) rows of one run's journal, in order."""
        text = self.sql("SELECT kind || chr(31) || body FROM hyops.journal "
                        f"WHERE key = '{key}' AND run_id = '{run_id}' ORDER BY id")
        return [tuple(line.split("\x1f", 1)) for line in text.splitlines() if "\x1f" in line]  # type: ignore[misc]

    def journal_events(self, key: str, run_id: str) -> list[dict[str, Any]]:
        return [json.loads(body) for kind, body in self.journal(key, run_id) if kind == "event"]

    def write_record(self, key: str, doc: dict[str, Any]) -> None:
        """Put a record as a forged test fixture would (dollar-quoted: the JSON holds quotes)."""
        self.sql(f"INSERT INTO hyops.records (key, doc) VALUES ('{key}', $j${json.dumps(doc)}$j$::jsonb) "
                 "ON CONFLICT (key) DO UPDATE SET doc = EXCLUDED.doc")

    def terminate_hyops(self) -> int:
        """End every session hyops holds on the server (its store's, its queue's and
        procrastinate's, `application_name` hyops*), as a restart, an administrator or a
        proxy's idle timeout would; how many were ended."""
        return int(self.sql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                            "WHERE application_name IN ('hyops', 'hyops-queue', 'hyops-worker') "
                            "AND pid <> pg_backend_pid()"))

    def dump(self) -> str:
        """Everything the store holds, as text (for leak checks)."""
        return "\n".join(self.sql(f"SELECT t::text FROM hyops.{table} t")
                         for table in ("records", "lock_holders", "journal", "documents"))
