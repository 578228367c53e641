"""Another writer at the stack level, the pure parts (issue 44 items 5 and 6): the one decision
of whether a state moved (runtime/state_look.py), what reconcile saw of the live objects
(runtime/drift_seen.py), what a --resume skip compared (stack/skip.py), and the status
document's member (stack/view.py) and its JUnit case. The real-engine stories are in
tests/integration/test_another_writer_stack.py."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path

from hybridops_tf.record import layout
from hybridops_tf.record.model import OperationRecord
from hybridops_tf.record.stamp import StateStamp, written
from hybridops_tf.runtime import drift_seen
from hybridops_tf.runtime.state_look import NO_STAMP, NOT_LOCAL, look
from hybridops_tf.stack import junit, skip
from hybridops_tf.stack.model import Member
from hybridops_tf.stack.view import RecordNow, is_uncertain, judge, not_read_lines
from hybridops_tf.store.local import RecordStore
from tests.unit.reconcile_builders import record

STATE = {"version": 4, "serial": 3, "lineage": "L", "resources": []}


def _stamped(module: Path, serial: int = 3) -> OperationRecord:
    rec = record(run_id="apply-1")
    rec.module_dir = str(module)
    rec.state_seen = StateStamp("L", serial, {}, run_id="apply-1")
    return rec


def _module(tmp_path: Path, serial: int = 3) -> Path:
    module = tmp_path / "net"
    module.mkdir(exist_ok=True)
    (module / "terraform.tfstate").write_text(json.dumps({**STATE, "serial": serial}))
    return module


def test_the_state_is_compared_where_the_member_is_not_where_the_record_was_written(tmp_path: Path) -> None:
    here = _module(tmp_path, serial=5)
    rec = _stamped(tmp_path / "elsewhere")  # another runner's checkout

    assert look(rec).not_looked is not None and look(rec).written is None
    seen = look(rec, here)
    assert seen.written is not None and seen.written.headline().endswith("(serial 3 -> 5)")


def test_a_state_behind_a_backend_is_not_compared_and_says_why(tmp_path: Path) -> None:
    module = _module(tmp_path)
    (module / ".terraform").mkdir()
    (module / ".terraform" / "terraform.tfstate").write_text("{}")
    seen = look(_stamped(module))
    assert (seen.now, seen.not_looked, seen.shown_not_looked) == (None, NOT_LOCAL, NOT_LOCAL)


def test_a_record_without_a_stamp_has_nothing_to_say_in_a_status(tmp_path: Path) -> None:
    rec = record()
    seen = look(rec, _module(tmp_path))
    assert (seen.not_looked, seen.shown_not_looked) == (NO_STAMP, None)


def _member(module: Path) -> Member:
    return Member(name="network", module_ref="demo/network", directory=module)


def test_drift_reconcile_saw_of_this_record_stops_a_skip_and_of_an_older_one_does_not(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / ".hyops")
    module = _module(tmp_path)
    rec = _stamped(module)
    store.write(rec)
    member = _member(module)

    quiet = skip.outside(member, rec, store)
    assert quiet.changed is None and quiet.not_compared == (skip.LIVE_NOT_COMPARED,)
    assert "state serial 3 as run apply-1 left it" in quiet.skip_note()

    assert drift_seen.keep(store, member.key, rec, []) is None  # nothing seen, nothing kept
    assert not drift_seen.read(store, member.key)
    kept = drift_seen.keep(store, member.key, rec, [("sim_network.this", "delete")])
    assert kept is not None and drift_seen.read(store, member.key) == kept
    changed = skip.outside(member, rec, store).changed
    assert changed is not None and "sim_network.this vanished" in changed

    after = dataclasses.replace(rec, run_id="apply-2")
    assert skip.outside(member, after, store).changed is None  # it spoke of the record before that apply

    drift_seen.keep(store, member.key, rec, [])  # a later look saw none
    note = skip.outside(member, rec, store)
    assert note.changed is None and not note.not_compared and "(no drift)" in note.skip_note()


def test_a_look_that_cannot_be_read_is_never_taken_for_no_drift_and_the_next_look_replaces_it(
        tmp_path: Path) -> None:
    assert drift_seen.DriftSeen.from_json({"schema_version": 2}) is None
    store = RecordStore(tmp_path / ".hyops")
    module = _module(tmp_path)
    rec = _stamped(module)
    store.write(rec)
    member = _member(module)
    layout.drift_seen(store.root, member.key).write_text('{"schema_version": 2}')

    changed = skip.outside(member, rec, store).changed
    assert changed is not None and "cannot be read" in changed
    drift_seen.keep(store, member.key, rec, [])  # a reconcile that saw no drift
    kept = drift_seen.read(store, member.key)
    assert kept is not None and (kept.record_run_id, kept.drift) == (rec.run_id, ())
    assert skip.outside(member, rec, store).changed is None


def test_another_lineage_in_place_of_the_members_state_stops_a_skip(tmp_path: Path) -> None:
    module = _module(tmp_path)
    (module / "terraform.tfstate").write_text(json.dumps({**STATE, "lineage": "other-env"}))
    changed = skip.outside(_member(module), _stamped(module), RecordStore(tmp_path / ".hyops")).changed
    assert changed is not None and "now another lineage, other-env" in changed


def test_a_member_whose_state_moved_is_uncertain_with_the_status_document_of_hyops_status() -> None:
    moved = written(StateStamp("L", 3, {}, run_id="apply-1"), StateStamp("L", 5, {}))
    assert moved is not None
    now = RecordNow("ok", "apply-1", written=moved.to_json(), written_line=moved.headline())
    doc = {"stack": "demo", "stack_file": "s.yml", "run_id": "r", "command": "apply", "started_at": "t",
           "finished_at": "t2", "members": [{"name": "network", "module_ref": "demo/network", "status": "ok"},
                                            {"name": "vm", "module_ref": "demo/vm", "status": "ok"}]}
    out = judge(doc, {"network": now, "vm": RecordNow("ok", "apply-1", not_read="behind a backend")}, False)

    network, vm = out["members"]
    assert network["state_written_outside"] == moved.to_json() and is_uncertain(out)
    assert any(why.startswith("state_written_outside: its state was written outside hyops since run apply-1")
               for why in network["uncertain"])
    assert "uncertain" not in vm and not_read_lines(out) == ["vm: behind a backend"]
    [case] = [c for c in ET.fromstring(junit.status_xml(out)).iter("testcase") if c.get("name") == "network"]
    assert case.find("failure") is not None


def test_a_skipped_members_junit_case_says_what_the_skip_compared() -> None:
    doc = {"stack": "demo", "stack_file": "s.yml", "run_id": "r", "command": "apply", "started_at": "t",
           "finished_at": "t2", "state": "finished",
           "members": [{"name": "vm", "module_ref": "demo/vm", "status": "skipped", "run_id": "apply-1",
                        "compared": "compared its configuration; not compared: its live objects"}]}
    [case] = list(ET.fromstring(junit.status_xml(doc)).iter("testcase"))
    out = case.find("system-out")
    assert out is not None and "not compared: its live objects" in (out.text or "")
