"""The run folder of a reconcile that changed a record: who, when, which, why.

Why: `--write` and `--forget-orphan` change what hyops promises about a module without any
engine run to show for it, so each leaves a run folder (meta.json first, result.json last,
docs/contract.md: Files under the runtime root) naming the person, the host, the evidence
and the records before and after.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from hybridops_tf.base.errors import ExitCode, OperationFailed, RefusedError, UsageError
from hybridops_tf.record import gate
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.runtime.run_folder import RunFolder, RunLife, RunNotOpened, new_run_id
from hybridops_tf.runtime.run_result import ReconcileMeta


@contextmanager
def locked_record(runtime: Runtime, key: str, module_ref: str, lock_timeout: float,
                  missing: str) -> Iterator[tuple[OperationRecord, str]]:
    """The record of `key` under its module lock, with the run id of the change about to be
    made to it; UsageError (`<module_ref> has no record: <missing>`) when there is none."""
    run_id = new_run_id("reconcile")
    runtime.ensure_root()
    with runtime.store.lock(key, run_id, lock_timeout):
        record = runtime.store.read(key)
        if record is None:
            raise UsageError(f"{module_ref} has no record: {missing}")
        yield record, run_id


def open_run(runtime: Runtime, module_ref: str, module_dir: str | None, run_id: str, action: str,
             argv: Sequence[str], **details: Any) -> tuple[RunFolder, ReconcileMeta]:
    """Open the run (runtime/run_folder.RunLife: meta.json first, then the store's journal of
    it, the audit entry); RefusedError if it cannot be written, before any record changed (the
    callers hold the lock and write the record after this)."""
    meta = ReconcileMeta.start(action, argv, module_ref, module_dir, run_id, details)
    try:
        life = RunLife.open(runtime.root, module_ref, run_id, meta, runtime.store)
    except RunNotOpened as err:
        raise RefusedError(f"could not write the reconcile run folder under {runtime.root}/runs: "
                           f"{err.error.strerror or err.error}; nothing was changed") from None
    return life.folder, meta


def close_run(runtime: Runtime, folder: RunFolder, meta: ReconcileMeta, exit_code: int,
              result: dict[str, Any]) -> None:
    """Close the run open_run opened: meta gets its end time, then result.json (last: its
    presence means finished), then the store's journal gets the result (a warning if it cannot)."""
    RunLife(folder, meta, meta.module_ref, runtime.store).close(exit_code, result)


def write_record(runtime: Runtime, key: str, folder: RunFolder, meta: ReconcileMeta, updated: OperationRecord,
                 address: str, result: dict[str, Any], *, before: OperationRecord,
                 forgotten: frozenset[str] = frozenset()) -> None:
    """Write `updated` inside its audit run and close the run with `result`; a write that fails
    closes the run failed and raises OperationFailed (the record is as it was: `address` still listed).
    Objects leave `before` only through the gate, here on a person's word naming their ids."""
    updated, _ = gate.gated(before, updated, gate.Proof(forgotten=forgotten))
    try:
        runtime.store.write(updated)
    except OSError as err:
        message = f"could not write {runtime.store.where(key)}: {err.strerror or err}; {address} is still listed"
        close_run(runtime, folder, meta, ExitCode.FAILED, {"outcome": "failed", "error": message})
        raise OperationFailed(message) from None
    close_run(runtime, folder, meta, ExitCode.OK, result)
