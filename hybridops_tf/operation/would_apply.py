"""What an apply of a module would apply now, as record/applied.py compares it: the one place
that builds it. The module apply records it (`config_digest`, `inputs_digest`, engine,
workspace), `stack apply --resume` compares it with a member's `ok` record to skip, and
`reconcile --stack` to report `config_changed`, so the three cannot disagree about what
changed (tests/unit/test_would_apply.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hybridops_tf.operation import config_digest
from hybridops_tf.record.applied import AppliedFrom

if TYPE_CHECKING:
    from hybridops_tf.engine.binary import EngineInfo
    from hybridops_tf.inputs.values import ResolvedInputs


def would_apply(directory: Path, workspace: str | None, resolved: ResolvedInputs, key: bytes,
                engine: EngineInfo) -> AppliedFrom:
    """The module in `directory` applied now with `resolved` inputs by `engine` in `workspace`,
    digested under the store's inputs digest `key`."""
    return AppliedFrom(
        config_digest=config_digest.config_digest(directory, config_digest.env_values(resolved), key),
        inputs_digest=resolved.digest(key), engine_binary=str(engine.binary), engine_version=engine.version,
        workspace=workspace, lock_file_missing=config_digest.lock_file_missing(directory))
