"""What an `ok` record was applied from, against what a run would apply now. Pure.

`stack apply --resume` skips a member only when this finds no change, and `reconcile --stack`
reports a change as `config_changed` (docs/stacks.md: Resume): a member is skipped only when
nothing it would apply changed, because a skipped member's new configuration would otherwise
never reach the cloud while the stack reports success. A no-op apply is cheap and honest, so
anything unknown counts as a change: a record without a configuration digest (written
before hyops recorded one, or by a run that applied no configuration: refresh, import, a
saved plan) is never vouched for.
"""

from __future__ import annotations

from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord

# The one reason that says nothing changed, only that the record cannot tell: reconcile then
# asks the plan (reconcile/evidence.py), while --resume applies the member again.
UNKNOWN_CONFIG = "its record does not say which configuration it applied"
LOCK_FILE = ".terraform.lock.hcl"  # the dependency lock file init writes (operation/config_digest.py digests it)


@dataclass(frozen=True, slots=True)
class AppliedFrom:
    """What a run applies: the configuration and inputs (their digests, under the runtime
    root's key: operation/config_digest.py and ResolvedInputs.digest), the engine (binary
    and version) and the workspace."""

    config_digest: str
    inputs_digest: str
    engine_binary: str | None
    engine_version: str | None
    workspace: str | None = None
    lock_file_missing: bool = False  # the module has no .terraform.lock.hcl here (not committed?)


def changes(rec: OperationRecord, now: AppliedFrom) -> tuple[str, ...]:
    """Why `rec` does not vouch for applying `now`, in words; () when it is `ok` and was
    applied from exactly this."""
    if rec.status is not Status.OK:
        return (f"its record is {rec.status.value}, not ok",)
    why: list[str] = []
    if not rec.config_digest:
        why.append(UNKNOWN_CONFIG)
    elif rec.config_digest != now.config_digest and now.lock_file_missing:
        why.append(f"its configuration changed, or only its {LOCK_FILE} is missing here (the one init wrote "
                   "is part of the configuration: commit it, docs/ci.md)")
    elif rec.config_digest != now.config_digest:
        why.append("its configuration changed")
    if not rec.inputs_digest or rec.inputs_digest != now.inputs_digest:
        why.append("its inputs changed")
    engine = rec.engine
    then = (engine.binary, engine.version) if engine is not None else (None, None)
    if then != (now.engine_binary, now.engine_version):
        why.append(f"the engine changed ({_engine(*then)} -> {_engine(now.engine_binary, now.engine_version)})")
    if _workspace(rec.workspace) != _workspace(now.workspace):
        why.append(f"its workspace changed ({_workspace(rec.workspace)} -> {_workspace(now.workspace)})")
    return tuple(why)


def _engine(binary: str | None, version: str | None) -> str:
    if binary is None and version is None:
        return "unknown"
    return f"{binary or '?'} {version or '?'}"


def _workspace(name: str | None) -> str:
    return name or "default"
