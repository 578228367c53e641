"""The shared store's connection to its server: connecting (keepalives, a clear error
naming where the password goes), the advisory lock of a record key, the schema check and
the migrations (`hyops store init`). store/postgres.py builds the store on it.

psycopg 3 is imported only here, and only when a PostgreSQL store is selected.
"""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import urlsplit

from hybridops_tf.base.errors import RefusedError, UsageError
from hybridops_tf.record.advice import ADVISE
from hybridops_tf.store.schema import LATEST, MIGRATIONS, SCHEMA
from hybridops_tf.store.url import redact_url

# TCP keepalives on both ends of every connection: the client notices a dead server, and
# the server ends the session of a runner it cannot reach after about idle + interval *
# count seconds (10 + 5 * 3 = 25 s), which releases that runner's advisory locks.
KEEPALIVE = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}
SERVER_KEEPALIVE = ("SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; "
                    "SET tcp_keepalives_count = 3")
CONNECT_TIMEOUT = 5


class StoreUnavailable(OSError):
    """The server could not be reached or written: callers treat it as a failed write."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.strerror = message


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise UsageError("--store postgresql://... needs psycopg 3: pip install "
                         "'hybridops-tf[postgres]'") from None
    return psycopg


def lock_id(key: str) -> int:
    """The advisory lock of a record key: 64 bits of its SHA-256, as PostgreSQL's bigint."""
    return int.from_bytes(hashlib.sha256(b"hyops-record:" + key.encode("utf-8")).digest()[:8],
                          "big", signed=True)


def _lock_parts(key: str) -> tuple[int, int]:
    """(classid, objid) under which pg_locks shows the bigint advisory lock of `key`."""
    unsigned = lock_id(key) & 0xFFFFFFFFFFFFFFFF
    return unsigned >> 32, unsigned & 0xFFFFFFFF


_HELD_BY = ("FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
            "AND classid = %s::oid AND objid = %s::oid "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")


def lock_held(conn: Any, key: str) -> bool:
    """Whether a live session holds the advisory lock of `key` (on the caller's connection)."""
    return int(conn.execute(f"SELECT count(*) {_HELD_BY}", _lock_parts(key)).fetchone()[0]) > 0


def connect(url: str, *, server_keepalive: bool = False) -> Any:
    """An autocommit connection; StoreUnavailable when the server cannot be reached.
    server_keepalive: also set the server's keepalives (one round trip; check_schema sets
    them in its own)."""
    psycopg = _psycopg()
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT,
                               application_name="hyops", **KEEPALIVE)
        if server_keepalive:
            conn.execute(SERVER_KEEPALIVE)
    except psycopg.Error as err:
        line = _first_line(err)
        raise StoreUnavailable(f"cannot reach the store {redact_url(url)}: {line}{_login_hint(line)}") from None
    return conn


def _login_hint(line: str) -> str:
    """Where the password goes, when the server asked for one and got none (or a wrong one)."""
    if "no password supplied" in line:
        return ("; the server asks for a password: give it in PGPASSWORD (a CI secret) or in "
                "a PGPASSFILE, never in the store URL")
    if "password authentication failed" in line:
        return "; check the password given in PGPASSWORD or PGPASSFILE"
    return ""


def _first_line(err: BaseException) -> str:
    """The driver's message, first line, with any URL password in it masked (libpq may quote
    the connection string it could not parse)."""
    text = str(err).strip().splitlines()
    line = text[0] if text else type(err).__name__
    from hybridops_tf.store.url import selected_url

    url = selected_url()
    password = urlsplit(url).password if url else None
    if password:
        line = line.replace(password, "***")
    return redact_url(line)


def check_schema(conn: Any, url: str, *, keepalive: bool = False) -> int:
    """The store's schema version; UsageError (exit 2) when it is missing, older or newer.
    One round trip; keepalive: the server's keepalives are set in it too."""
    psycopg = _psycopg()
    try:
        cur = conn.execute(f"{SERVER_KEEPALIVE + '; ' if keepalive else ''}"
                           f"SELECT max(version) FROM {SCHEMA}.schema_version")
        while cur.nextset():  # the SETs' results come first
            pass
        version = cur.fetchone()[0]
    except (psycopg.errors.UndefinedTable, psycopg.errors.InvalidSchemaName):
        version = None  # no table, no schema: never initialised
    except psycopg.Error as err:
        raise StoreUnavailable(f"cannot read the store {redact_url(url)}: {_first_line(err)}") from None
    if version is None:
        raise UsageError(f"the store {redact_url(url)} has no hyops schema: run `{ADVISE.store('init')}` "
                         "(with the same --store) once")
    if version > LATEST:
        raise UsageError(f"the store {redact_url(url)} has schema version {version}, newer than this hyops "
                         f"knows ({LATEST}): upgrade hyops; nothing was changed")
    if version < LATEST:
        raise UsageError(f"the store {redact_url(url)} has schema version {version}: run "
                         f"`{ADVISE.store('init')}` to migrate it to {LATEST}")
    return version


def migrate(url: str) -> tuple[int, int]:
    """Apply the migrations the store lacks; (version before, version after)."""
    psycopg = _psycopg()
    conn = connect(url)
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_id("hyops-schema"),))
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            conn.execute(f"CREATE TABLE IF NOT EXISTS {SCHEMA}.schema_version "
                         "(version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
            before = conn.execute(f"SELECT coalesce(max(version), 0) FROM {SCHEMA}.schema_version").fetchone()[0]
            if before > LATEST:
                raise UsageError(f"the store {redact_url(url)} has schema version {before}, newer than this "
                                 f"hyops knows ({LATEST}): upgrade hyops; nothing was changed")
            for version, sql in MIGRATIONS:
                if version > before:
                    conn.execute(sql if isinstance(sql, str) else sql())
                    conn.execute(f"INSERT INTO {SCHEMA}.schema_version (version) VALUES (%s)", (version,))
    except psycopg.Error as err:
        raise RefusedError(f"cannot migrate the store {redact_url(url)}: {_first_line(err)}") from None
    finally:
        conn.close()
    return before, LATEST
