"""The engine's `pg` backend in the shared store's database: state beside the record.

A module that declares `terraform { backend "pg" {} }` gets, at init, the PostgreSQL store's URL as
`conn_str` (never with a password: the engine's driver reads PGPASSWORD / PGPASSFILE /
a service file from the environment, as hyops's does) and a schema of its own derived from
its ref; workspaces are the backend's own (one row per workspace in that schema).

The engine's pg backend keys its state lock by the state's row id, which starts at 1 in
every schema (and takes a database-wide lock while it creates a workspace), so modules
whose state is in one database contend for the same advisory lock (OpenTofu issue 2218).
Such modules' engine commands get `-lock-timeout` (STATE_LOCK_WAIT) through TF_CLI_ARGS_*:
they wait for each other instead of failing; a `-lock-timeout` the user passes wins.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from hybridops_tf.base.errors import UsageError
from hybridops_tf.store.url import is_postgres_url, redact_url, selected_url


def schema_name(module_ref: str) -> str:
    """`platform/network` -> `hyops_platform_network`; long refs keep a hash suffix (63 max)."""
    name = "hyops_" + re.sub(r"[^a-z0-9_]", "_", module_ref.lower())
    if len(name) > 63:
        name = f"{name[:54]}_{hashlib.sha256(module_ref.encode()).hexdigest()[:8]}"
    return name


def conn_str(url: str) -> str:
    """The URL the engine is given: refused if it carries a password (it would be saved in
    the module's .terraform/ and shown in process lists)."""
    parts = urlsplit(url)
    if parts.password is not None or re.search(r"(^|&)password=", parts.query, re.I):
        raise UsageError(f"--store {redact_url(url)} carries a password, which hyops will not pass to the "
                         "engine's pg backend: remove it from the URL and set PGPASSWORD or PGPASSFILE")
    return urlunsplit(parts)


def init_args(module_dir: Path, module_ref: str, other_refs: Callable[[], Iterable[str]] = tuple) -> list[str]:
    """`-backend-config` arguments for init: only with a shared store and a pg backend.

    `other_refs()`: the refs the store holds records of. Refs that differ only in case or
    punctuation (`net/A-b`, `net/a_b`) get one schema name: two such modules would keep one
    state, each apply destroying what only the other declares. So a module whose schema is
    another recorded module's is refused (UsageError) before its first init.
    """
    url = selected_url()
    if url is None or not is_postgres_url(url):  # the engine's pg backend is PostgreSQL's alone
        return []
    from hybridops_tf.engine import initcheck

    if initcheck.backend_type(module_dir) != "pg":
        return []
    schema = schema_name(module_ref)
    clash = sorted({ref for ref in other_refs() if ref != module_ref and schema_name(ref) == schema})
    if clash:
        raise UsageError(f"module {module_ref} would keep its pg backend state in schema {schema}, which is "
                         f"the schema of module {clash[0]} in the same store: the two would share one state; "
                         "give one of them a ref that differs in more than case or punctuation (--ref, or the "
                         "stack member's ref); nothing was run")
    return [f"-backend-config=conn_str={conn_str(url)}", f"-backend-config=schema_name={schema}"]


STATE_LOCK_WAIT = "600s"
_LOCKING_COMMANDS = ("plan", "apply", "destroy", "refresh", "import")
_PG_BACKEND = re.compile(r'\bbackend\s+"pg"|"backend"\s*:\s*\{\s*"pg"')  # HCL, or .tf.json


def state_lock_wait_env(module_dir: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """TF_CLI_ARGS_<command> with `-lock-timeout` for a pg-backend module under a shared
    store (a cheap text check: a false positive only makes the engine wait for its lock)."""
    url = selected_url()
    if url is None or not is_postgres_url(url) or not _declares_pg_backend(module_dir):
        return {}
    env = {}
    for command in _LOCKING_COMMANDS:
        name = f"TF_CLI_ARGS_{command}"
        env[name] = f"-lock-timeout={STATE_LOCK_WAIT} {environ.get(name, '')}".strip()
    return env


def _declares_pg_backend(module_dir: Path) -> bool:
    try:
        files = [p for p in module_dir.iterdir() if p.name.endswith((".tf", ".tf.json"))]
        return any(_PG_BACKEND.search(p.read_text(encoding="utf-8", errors="replace")) for p in files)
    except OSError:
        return False
