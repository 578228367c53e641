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
    """The PostgreSQL URL in use, or None for the local runtime root."""
    return _configured if _configured is not None else (os.environ.get("HYOPS_STORE") or None)


_PASSWORD_IN_URL = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^:/@?#]*:)(?P<password>[^@/?#]*)@", re.I)
_PASSWORD_PARAM = re.compile(r"(?P<head>[?&]password=)(?P<password>[^&#]*)", re.I)


def redact_url(url: str) -> str:
    """The URL as it may be printed: any password replaced by `***`."""
    url = _PASSWORD_IN_URL.sub(lambda m: f"{m['head']}***@", url)
    return _PASSWORD_PARAM.sub(lambda m: f"{m['head']}***", url)
