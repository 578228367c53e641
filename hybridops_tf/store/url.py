"""Which store a command uses: the URL given once by the CLI (`--store`), else HYOPS_STORE, else none
(the local runtime root); and the URL as it may be printed."""

from __future__ import annotations

import os
import re

_configured: str | None = None


def configure(url: str | None) -> None:
    """The store the CLI was told to use (`--store`, or HYOPS_STORE through Click)."""
    global _configured
    _configured = url or None


def selected_url() -> str | None:
    """The store URL in use (PostgreSQL or SQLite), or None for the local runtime root."""
    return _configured if _configured is not None else (os.environ.get("HYOPS_STORE") or None)


def is_sqlite_url(url: str) -> bool:
    """A SQLite store's URL (`sqlite:///PATH`, store/sqlite.py)."""
    return url[:7].lower() == "sqlite:"


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


# Compiled on first use (re keeps them), not at import: every command imports this module, few
# print a URL, and these two cost more to compile than the rest of the module to load.
_PASSWORD_IN_URL = r"(?P<head>[a-z][a-z0-9+.-]*://[^:/@?#]*:)(?P<password>[^@/?#]*)@"
_PASSWORD_PARAM = r"(?P<head>[?&]password=)(?P<password>[^&#]*)"


def redact_url(url: str) -> str:
    """The URL as it may be printed: any password replaced by `***`."""
    url = re.sub(_PASSWORD_IN_URL, lambda m: f"{m['head']}***@", url, flags=re.I)
    return re.sub(_PASSWORD_PARAM, lambda m: f"{m['head']}***", url, flags=re.I)
