"""The shared store's schema, as numbered migrations (`hyops store init` applies them).

Each migration runs once, in one transaction with the version bump. A store whose version
is newer than the last migration here was made by a newer hyops: it is refused (exit 2)
rather than written with rules this version does not know.
"""

from __future__ import annotations

from collections.abc import Callable

from hybridops_tf.base.errors import UsageError

SCHEMA = "hyops"
# The job queue of queued stack runs (hybridops_tf/stack/queue): procrastinate's own tables
# and functions, in a schema of their own beside hyops's; its connections put it first on
# their search_path (procrastinate names its objects without a schema).
QUEUE_SCHEMA = "hyops_queue"
QUEUE_SEARCH_PATH = f"-c search_path={QUEUE_SCHEMA}"
PROCRASTINATE_VERSION = "3.10.0"  # the schema installed is this version's (pyproject pins it)


def queue_schema() -> str:
    """Migration 3: procrastinate's schema (its `schema.sql`, as its own
    `procrastinate schema --apply` installs it) in QUEUE_SCHEMA."""
    try:
        import procrastinate
        from procrastinate.schema import SchemaManager
    except ImportError:
        raise UsageError("the shared store's job queue needs procrastinate: pip install "
                         "'hybridops-tf[postgres]'") from None
    if procrastinate.__version__ != PROCRASTINATE_VERSION:
        raise UsageError(f"the store's job queue is procrastinate {PROCRASTINATE_VERSION}'s schema, but "
                         f"procrastinate {procrastinate.__version__} is installed: pip install "
                         f"'procrastinate=={PROCRASTINATE_VERSION}'")
    return (f"CREATE SCHEMA {QUEUE_SCHEMA};\nSET LOCAL search_path TO {QUEUE_SCHEMA};\n"
            + SchemaManager.get_schema())


Migration = str | Callable[[], str]  # a callable is asked for its SQL when the migration runs

MIGRATIONS: tuple[tuple[int, Migration], ...] = (
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
    # Queued stack runs (hybridops_tf/stack/queue): a run and each member's place in it;
    # the jobs themselves are procrastinate's (queue_schema).
    (2, f"""
        CREATE TABLE {SCHEMA}.queue_runs (
            run_id text PRIMARY KEY,
            stack text NOT NULL,
            stack_file text NOT NULL,
            stack_digest text NOT NULL,
            command text NOT NULL,
            options jsonb NOT NULL,
            graph jsonb NOT NULL,
            queued_by text NOT NULL,
            started_at text NOT NULL,
            finished_at text,
            ends integer NOT NULL DEFAULT 0
        );
        CREATE TABLE {SCHEMA}.queue_members (
            run_id text NOT NULL REFERENCES {SCHEMA}.queue_runs ON DELETE CASCADE,
            name text NOT NULL,
            module_ref text NOT NULL,
            key text NOT NULL,
            position integer NOT NULL,
            status text NOT NULL,
            blocked_by text,
            error text,
            member_run_id text,
            worker text,
            job_id bigint,
            attempts integer NOT NULL DEFAULT 0,
            end_seq integer,
            started_at text,
            finished_at text,
            PRIMARY KEY (run_id, name)
        );
        CREATE INDEX queue_members_job ON {SCHEMA}.queue_members (job_id);
    """),
    (3, queue_schema),
)

LATEST = MIGRATIONS[-1][0]
