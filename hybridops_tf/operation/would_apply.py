"""What an apply of a module would apply now, as record/applied.py compares it: the one place
that builds it. The module apply records it (`config_digest`, `inputs_digest`, engine,
workspace), `stack apply --resume` compares it with a member's `ok` record to skip, and
`reconcile --stack` to report `config_changed`, so the three cannot disagree about what
changed (tests/unit/test_would_apply.py).

The two that compare give the member's inputs as the stack gives them (`MemberInputs`), not
inputs they resolved: `would_apply` resolves them itself, through the one resolution
(operation/run_inputs.resolve) with the member's record key, as the member's apply does
(tests/integration/test_would_apply_agreement.py runs all three on one stack)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.operation import config_digest, run_inputs
from hybridops_tf.record.address import ModuleTarget, record_key
from hybridops_tf.record.applied import AppliedFrom

if TYPE_CHECKING:
    from hybridops_tf.engine.binary import EngineInfo
    from hybridops_tf.inputs.values import ResolvedInputs
    from hybridops_tf.runtime.root import Runtime


@dataclass(frozen=True)
class MemberInputs:
    """A stack member's inputs before resolution, as its apply is given them: the stack
    file's values with the wired ones filled in (`stack_inputs`), which of them are secret,
    in the member's module and workspace. What the engine reads itself (the caller's
    TF_VAR_, the module's tfvars) and the last run's inputs for a gap are the resolution's."""

    target: ModuleTarget
    workspace: str | None
    stack_inputs: Mapping[str, Any]
    sensitive: frozenset[str] = frozenset()

    @property
    def key(self) -> str:
        """The member's record key: its last run's inputs fill a gap as its apply fills it."""
        return record_key(self.target.ref, self.workspace)

    def resolve(self, rt: Runtime, read_only: bool = False) -> ResolvedInputs:
        """The one resolution of these inputs (HyopsError when they do not cover the module);
        `read_only`: reconcile's reads, which cache nothing."""
        return run_inputs.resolve(rt, self.target, None, (), self.stack_inputs, self.sensitive, key=self.key,
                                  note=False, read_only=read_only)


def would_apply(rt: Runtime, member: MemberInputs, key: bytes, engine: EngineInfo,
                read_only: bool = False) -> AppliedFrom:
    """What the member's apply by `engine` would apply now, its inputs digested under the
    store's inputs digest `key` (HyopsError when its inputs do not resolve)."""
    resolved = member.resolve(rt, read_only=read_only)
    return applied_from(member.target.directory, member.workspace, resolved, key, engine)


def applied_from(directory: Path, workspace: str | None, resolved: ResolvedInputs, key: bytes,
                 engine: EngineInfo) -> AppliedFrom:
    """The module in `directory` applied now with `resolved` inputs by `engine` in `workspace`:
    what the apply records, from the inputs it resolved itself (operation/steps.py, step 1)."""
    return AppliedFrom(
        config_digest=config_digest.config_digest(directory, config_digest.env_values(resolved), key),
        inputs_digest=resolved.digest(key), engine_binary=str(engine.binary), engine_version=engine.version,
        workspace=workspace, lock_file_missing=config_digest.lock_file_missing(directory))
