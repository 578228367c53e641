"""What `reconcile --stack` knows of a member beyond its module (docs/recovery.md: Stacks).

Two readings, both without the engine:
- `applied_changes`: an `ok` member's record against the stack as it is now (its
  configuration, the stack file's inputs wired from the upstreams' records, the engine and
  workspace; record/applied.py), so a member `stack apply --resume` would apply again is a
  finding, not "consistent";
- `stack_args`: the member's inputs as the stack file gives them now, as `--var` arguments
  for a module command, so advice never comes from a rerun.inputs.yml that still holds an
  input the user has since removed from the stack file.

An input wired from a sensitive output, or from an output the upstream's record lacks, is
not known here (reconcile never reads another module's state for it): such a member's inputs
are not compared (its configuration and engine still are), and a module command names the
input as a placeholder to fill in.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridops_tf.base import numbers
from hybridops_tf.base.errors import HyopsError
from hybridops_tf.inputs.values import module_layers, read_variables
from hybridops_tf.operation import run_inputs
from hybridops_tf.operation.would_apply import MemberInputs, would_apply
from hybridops_tf.record import applied
from hybridops_tf.record.address import ModuleTarget
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.runtime.root import Runtime

if TYPE_CHECKING:
    from collections.abc import Mapping

    from hybridops_tf.engine.binary import EngineInfo


@dataclass(frozen=True)
class Member:
    """A stack member as reconcile finds it: its directory and workspace, the inputs the stack
    file gives it now (wired ones from the upstreams' records) and those it cannot know."""

    directory: Path | None
    workspace: str | None
    inputs: Mapping[str, Any]
    unwired: tuple[str, ...] = ()


def applied_changes(member: Member, record: OperationRecord | None, runtime: Runtime,
                    engine: EngineInfo | None) -> tuple[str, ...] | None:
    """Why the member's `ok` record does not vouch for applying the stack now; None when it
    is not judged: not an `ok` member, no engine, no digest key yet, inputs that do not
    resolve (the plans then say why), a directory that is gone."""
    directory = member.directory
    if record is None or record.status is not Status.OK or engine is None or directory is None \
            or not directory.is_dir():
        return None
    given = MemberInputs(ModuleTarget(directory, record.module_ref), member.workspace, member.inputs)
    try:
        key = run_inputs.digest_key(runtime, create=False)
        if key is None:
            return None
        now = would_apply(runtime, given, key, engine, read_only=True)
    except HyopsError:
        return None
    if member.unwired:  # an input reconcile cannot know is not compared: keep the record's digest for it
        now = dataclasses.replace(now, inputs_digest=record.inputs_digest or "")
    return applied.changes(record, now)


def stack_args(member: Member, record: OperationRecord | None, runtime: Runtime) -> tuple[str, ...] | None:
    """`--var NAME=VALUE` for each input the stack file gives the member now (wired ones from
    the upstreams' records), `NAME=<secret>` for a sensitive one, `NAME=<value>` for one
    reconcile cannot know or a required one nobody gives; None for a member with no record
    (the stack command wires it)."""
    if record is None:
        return None
    directory = member.directory if member.directory is not None and member.directory.is_dir() else None
    specs: dict[str, Any] = {}
    if directory is not None:
        try:
            specs = dict(read_variables(directory, runtime.hcl_cache(),
                                                   tofu=runtime.reads_tofu()))
        except (HyopsError, OSError, ValueError):
            specs = {}
    given = dict(member.inputs)
    own = _own_values(directory, specs)
    out: list[str] = []
    for name in sorted(set(given) | set(member.unwired) | {n for n, s in specs.items() if s.required}):
        spec = specs.get(name)
        from_stack = name in given and name not in member.unwired
        if not from_stack and name not in member.unwired and name in own:
            continue  # the module's own tfvars (or the caller's TF_VAR_) give it: a secret too, never a placeholder
        if spec is not None and spec.sensitive:
            text = f"{name}=<secret>"
        elif from_stack:
            value = given[name]
            text = f"{name}={value if isinstance(value, str) else numbers.dumps(value)}"
        else:
            text = f"{name}=<value>"
        out += ["--var", text]
    return tuple(out)


def _own_values(directory: Path | None, specs: dict[str, Any]) -> set[str]:
    """Names the engine gets on its own there: the module's tfvars and the caller's TF_VAR_."""
    if directory is None:
        return set()
    layers = module_layers(directory, specs)
    if any(layer.opaque for layer in layers):
        return set(specs)  # a var file hyops cannot read may give anything: ask for nothing
    return {n for layer in layers for n in layer.values}
