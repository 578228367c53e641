"""Which modules one reconcile looks at: a MODULE_DIR, every record, or a stack's members.

Why `--all` reads records rather than scanning directories: after a red pipeline the
records are what hyops promised about; each names its `module_dir`, so the modules are
found even when the run happened elsewhere in the tree. A corrupt record keeps its ref
from its folder name so it is still reported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hybridops_tf.base.errors import UsageError
from hybridops_tf.reconcile.evidence import Target
from hybridops_tf.record.address import resolve_module, split_key
from hybridops_tf.record.model import CorruptRecordError
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.store import Records


def single(module_dir: Path, ref: str | None, modules_root: Path | None, workspace: str | None = None,
           project_top: Path | None = None) -> Target:
    target = resolve_module(module_dir, ref, modules_root, project_top)
    return Target(target.ref, target.directory, workspace)


def all_records(store: Records) -> list[Target]:
    """Every record in the store (module dir from the record's `module_dir`)."""
    targets = []
    for key in store.keys():
        ref, workspace = split_key(key)
        try:
            record = store.read(key)
        except CorruptRecordError:
            record = None
        directory = Path(record.module_dir) if record is not None and record.module_dir else None
        targets.append(Target(ref, directory, workspace))
    return sorted(targets, key=lambda t: t.key)


_NONE = object()


def stack_members(stack_file: Path, runtime: Runtime, read_only: bool = False) -> list[Target]:
    """Every member of the stack, in file order, with its stack inputs as fallback inputs.

    A member's plans take its rerun.inputs.yml when it ran before; otherwise the stack file's
    inputs, with `inputs_from` filled from upstream records' (non-sensitive) outputs, which
    are also what its advice and `config_changed` compare against (reconcile/members.py).
    """
    try:
        from hybridops_tf.stack.loader import load_stack
    except ImportError:  # pragma: no cover - the stack package ships with hyops
        raise UsageError("--stack needs hybridops_tf.stack, which is not installed") from None

    stack = load_stack(stack_file, runtime.hcl_cache(), read_only=read_only,
                       tofu=runtime.reads_tofu())
    store = runtime.store
    refs = {m.name: m.key for m in stack.members}
    targets = []
    for member in stack.members:
        fallback: dict[str, Any] = dict(member.inputs)
        unwired: list[str] = []
        for name, wire in member.inputs_from.items():
            unwired.append(name)
            if wire.sensitive:
                continue
            try:
                upstream = store.read(refs[wire.upstream])
            except CorruptRecordError:
                upstream = None
            value = (upstream.outputs or {}).get(wire.output, _NONE) if upstream is not None else _NONE
            if value is not _NONE and value != {"sensitive": True}:  # a record never holds a secret
                fallback[name] = value
                unwired.pop()
        targets.append(Target(member.module_ref, member.directory, member.workspace, fallback, stack_file,
                              tuple(unwired)))
    return targets
