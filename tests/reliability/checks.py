"""Invariants every reliability test checks after it broke something.

The promise under test: the record never claims less than what may have happened, and
nothing is lost. After any kill, race or fault: the record is valid JSON (or absent when
nothing was ever written), never `ok`/`destroyed`/`absent` while objects it does not
account for may exist, the lock is free, a leftover `running` is reported stale, and a
verified destroy afterwards leaves no live object that the record does not name.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from hybridops_tf.record.model import OperationRecord
from hybridops_tf.store.local import RecordStore
from tests.integration.hyops_cli import Hyops
from tests.reliability import procs
from tests.reliability.figures import RECORD, note

CLAIMS_EMPTY = ("destroyed", "absent")


def load_record(path: Path) -> dict[str, Any] | None:
    """The record as stored: None when absent; AssertionError when torn or invalid."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    try:
        doc = json.loads(text)
    except ValueError as err:
        raise AssertionError(f"record {path} is not valid JSON ({err}): {text[:200]!r}") from None
    try:
        OperationRecord.from_dict(doc)
    except ValueError as err:
        raise AssertionError(f"record {path} is not a valid v1 record: {err}") from None
    return doc


def addresses_of_live(h: Hyops, by_type: dict[str, str]) -> dict[str, str]:
    """{object id: module address} of every live sim object."""
    return {o["id"]: by_type.get(o["type"], o["type"]) for o in h.sim_objects()}


def orphan_addresses(doc: dict[str, Any] | None) -> set[str]:
    return {o.get("address") for o in (doc or {}).get("suspect_orphans") or []}


def assert_lock_free(h: Hyops, ref: str) -> None:
    lock = h.record_path(ref).parent / ".lock"
    holders = procs.lock_holders(lock)
    assert not holders, f"lock {lock} still held by {holders} after the holder died"
    assert RecordStore(h.runtime_root).lock_is_free(ref)


def assert_no_unaccounted_objects(h: Hyops, doc: dict[str, Any] | None, by_type: dict[str, str],
                                  context: str) -> None:
    """A record claiming empty (destroyed/absent) names every live object as a suspect."""
    if doc is None or doc.get("status") not in CLAIMS_EMPTY:
        return
    live = addresses_of_live(h, by_type)
    unnamed = {i: a for i, a in live.items() if a not in orphan_addresses(doc)}
    assert not unnamed, (
        f"{context}: record says {doc['status']!r} but live objects exist that it does not name "
        f"as suspect_orphans: {unnamed} (record: {json.dumps(doc)[:600]})"
    )


def status_of(h: Hyops, module_arg: str) -> subprocess.CompletedProcess[str]:
    return h("status", module_arg)


def expected_status_exit(doc: dict[str, Any] | None, stale: bool) -> int:
    if doc is None or stale or doc.get("suspect_orphans"):
        return 3
    return 0


def reconcile_available(h: Hyops) -> bool:
    """True when this build has a working `hyops reconcile` (another helper builds it)."""
    out = h("reconcile", "--help")
    return out.returncode == 0


def check_record(h: Hyops, ref: str, context: str) -> dict[str, Any] | None:
    doc = load_record(h.record_path(ref))
    note(RECORD, context=context, status=(doc or {}).get("status", "none"), valid=True)
    return doc
