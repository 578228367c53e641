"""The shared store's schema, as numbered migrations (`hyops store init` applies them).

Each migration runs once, in one transaction with the version bump. A store whose version
is newer than the last migration here was made by a newer hyops: it is refused (exit 2)
rather than written with rules this version does not know.
"""

from __future__ import annotations

SCHEMA = "hyops"

MIGRATIONS: tuple[tuple[int, str], ...] = (
    (1, f"""
        CREATE TABLE {SCHEMA}.records (
            key text PRIMARY KEY,
            doc jsonb NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE {SCHEMA}.lock_holders (
            key text PRIMARY KEY,
            backend_pid integer NOT NULL,
            host text NOT NULL,
            pid integer NOT NULL,
            os_user text NOT NULL,
            run_id text NOT NULL,
            since text NOT NULL
        );
        CREATE TABLE {SCHEMA}.journal (
            id bigserial PRIMARY KEY,
            key text NOT NULL,
            run_id text NOT NULL,
            kind text NOT NULL,
            body text NOT NULL,
            at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX journal_run ON {SCHEMA}.journal (key, run_id, id);
        CREATE TABLE {SCHEMA}.documents (
            kind text NOT NULL,
            name text NOT NULL,
            body text NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (kind, name)
        );
    """),
)

LATEST = MIGRATIONS[-1][0]
