"""What an engine version can do, asked in one place ("does this engine have X?").

Each question gates on the feature, never on a JSON `format_version` (none was bumped for
these), and each names the version that added it, so a refusal or an advice can say it.
Pure: the version is the one the record or `version -json` gave.
"""

from __future__ import annotations

import re

IMPORT_IDENTITY_SINCE = (1, 12, 0)  # Terraform and OpenTofu 1.12: `import { identity = {...} }`
IMPORT_IDENTITY_ADDED = "an `import` block's `identity` was added in 1.12.0"


def version_tuple(version: str | None) -> tuple[int, int, int] | None:
    """`1.12.2`, `v1.15.0-beta1` -> (1, 12, 2), (1, 15, 0); None when there is no version."""
    match = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", version or "")
    if match is None:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def takes_import_identity(version: str | None) -> bool:
    """The engine imports an object by the provider's identity (an `import` block with
    `identity` instead of `id`); an unknown version is taken not to."""
    parsed = version_tuple(version)
    return parsed is not None and parsed >= IMPORT_IDENTITY_SINCE
