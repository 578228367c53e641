"""Asking the lookups about one module's suspect orphans (reconcile/lookup/consult.py), with a
real lookup command (a tiny Python script) and forged evidence: no engine. The unnamed orphan
`*` is asked about through every planned create of the read-only plan; what was asked and
answered is kept in the reconcile's run folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from hybridops_tf.reconcile import orphans
from hybridops_tf.reconcile.evidence import Target
from hybridops_tf.reconcile.lookup import spec
from hybridops_tf.reconcile.lookup.adopt import adopt
from hybridops_tf.reconcile.lookup.consult import consult
from hybridops_tf.reconcile.model import ActionKind
from hybridops_tf.reconcile.verdict import Outcome
from hybridops_tf.record.lifecycle import Status
from hybridops_tf.record.model import ReleasedObject
from hybridops_tf.runtime.root import Runtime
from tests.unit.reconcile_builders import REF, evidence, quiet, record, state

# Answers from answers.json: {type: [candidates]}; notes each request in asked.jsonl.
ANSWER_PY = """
import json, pathlib, sys
request = json.load(sys.stdin)
with open("asked.jsonl", "a") as fh:
    fh.write(json.dumps(request) + "\\n")
print(json.dumps({"candidates": json.loads(pathlib.Path("answers.json").read_text()).get(request["type"], [])}))
"""

PLANNED = {"sim_network.n": {"name": "n", "cidr": "10.0.0.0/16"}, "sim_vm.v": {"name": "v", "secret": "<redacted>"}}


def setup(tmp_path: Path, answers: dict[str, list[dict[str, object]]],
          types: tuple[str, ...] = ("sim_network", "sim_vm")) -> tuple[Runtime, Target, spec.Lookups]:
    (tmp_path / "lookup.py").write_text(ANSWER_PY)
    (tmp_path / "answers.json").write_text(json.dumps(answers))
    path = tmp_path / spec.DEFAULT_NAME
    path.write_text(yaml.safe_dump({"lookups": {t: {"command": [sys.executable, "lookup.py"], "match": ["name"],
                                                    "complete": True} for t in types}}))
    module = tmp_path / "module"
    module.mkdir()
    (module / "main.tf").write_text("")
    return Runtime(tmp_path / ".hyops"), Target(REF, module), spec.load(path)


def test_the_unnamed_orphan_is_asked_about_every_planned_create_without_a_sensitive_value(tmp_path: Path) -> None:
    runtime, target, lookups = setup(tmp_path, {"sim_network": [{"id": "net-1", "attributes": {"name": "n"}}]})
    ev = evidence(record=record(Status.ERROR, orphans=["*"]), state=state(), refresh=quiet(), plan=quiet(),
                  planned_attributes=PLANNED)

    found = consult(ev, target, lookups, runtime)

    assert found is not None
    star = found["*"]
    assert [(a.address, a.outcome) for a in star.asks] == [("sim_network.n", Outcome.FOUND),
                                                            ("sim_vm.v", Outcome.NONE)]
    assert star.settled and [a.address for a in star.adoptable] == ["sim_network.n"]
    asked = [json.loads(line) for line in (tmp_path / "asked.jsonl").read_text().splitlines()]
    assert [(a["address"], a["planned"]) for a in asked] == [
        ("sim_network.n", {"name": "n", "cidr": "10.0.0.0/16"}), ("sim_vm.v", {"name": "v"})]
    assert all(a["ref"] == REF and a["run"]["id"] == "apply-0" for a in asked)  # the orphan's run
    kept = runtime.root / "runs" / "demo__network" / str(star.run_id)
    assert sorted(p.name for p in kept.iterdir()) == [
        "lookup.1.request.json", "lookup.1.stderr.log", "lookup.1.stdout", "lookup.2.request.json",
        "lookup.2.stderr.log", "lookup.2.stdout", "meta.json", "result.json"]
    assert json.loads((kept / "meta.json").read_text())["action"] == "lookup"
    assert "<redacted>" not in (kept / "lookup.2.request.json").read_text()


def test_the_unnamed_orphan_with_a_create_no_lookup_covers_is_never_settled(tmp_path: Path) -> None:
    runtime, target, lookups = setup(tmp_path, {}, types=("sim_network",))
    ev = evidence(record=record(Status.ERROR, orphans=["*"]), state=state(), refresh=quiet(), plan=quiet(),
                  planned_attributes=PLANNED)

    found = consult(ev, target, lookups, runtime)

    assert found is not None and not found["*"].settled
    assert "no lookup is declared for sim_vm.v (type sim_vm)" in found["*"].not_asked


def test_the_unnamed_orphan_without_a_plan_is_not_asked_about(tmp_path: Path) -> None:
    runtime, target, lookups = setup(tmp_path, {})
    ev = evidence(record=record(Status.ERROR, orphans=["*"]), state=state(), refresh=quiet(),
                  planned_attributes=None)

    found = consult(ev, target, lookups, runtime)

    assert found is not None and found["*"].asks == () and "no plan could be read" in found["*"].not_asked
    assert not (tmp_path / "asked.jsonl").exists()


def test_nothing_is_asked_when_the_state_could_not_be_read(tmp_path: Path) -> None:
    runtime, target, lookups = setup(tmp_path, {})
    ev = evidence(record=record(Status.ERROR, orphans=["sim_vm.v"]), state=None,
                  unchecked=("state (show -json) could not be read",))

    assert consult(ev, target, lookups, runtime) is None
    assert not (runtime.root / "runs").exists()


def test_an_id_another_modules_record_holds_is_dropped(tmp_path: Path) -> None:
    runtime, target, lookups = setup(tmp_path, {"sim_vm": [{"id": "vm-7", "attributes": {"name": "v"}}]})
    other = record(Status.OK, resources={"sim_vm.elsewhere": ("complete", "create", "vm-7")})
    other.module_ref = "demo/other"
    runtime.ensure_root()
    runtime.store.write(other)
    ev = evidence(record=record(Status.ERROR, orphans=["sim_vm.v"]), state=state(), refresh=quiet(),
                  planned_attributes=PLANNED)

    found = consult(ev, target, lookups, runtime)

    assert found is not None
    [ask] = found["sim_vm.v"].asks
    assert ask.outcome is Outcome.CONTRADICTED and ask.held == ("vm-7",)


# --- each rule where it alone decides (issue 46): the lie's id in one place and nowhere else ----

VM_7 = {"sim_vm": [{"id": "vm-7", "attributes": {"name": "v"}}]}


def test_a_candidate_only_the_modules_own_state_holds_is_never_adopted(tmp_path: Path) -> None:
    runtime, target, lookups = setup(tmp_path, VM_7)
    # no record anywhere names vm-7: the module's state alone says it is another address's object
    ev = evidence(record=record(Status.ERROR, orphans=["sim_vm.v"]), refresh=quiet(),
                  state=state("sim_vm.other", ids={"sim_vm.other": "vm-7"}), planned_attributes=PLANNED)

    found = consult(ev, target, lookups, runtime)

    assert found is not None
    [ask] = found["sim_vm.v"].asks
    assert ask.outcome is Outcome.CONTRADICTED and ask.held == ("vm-7",) and not ask.adoptable


def test_a_candidate_only_a_records_released_list_holds_is_never_adopted(tmp_path: Path) -> None:
    runtime, target, lookups = setup(tmp_path, VM_7)
    mine = record(Status.ERROR, orphans=["sim_vm.v"])
    # released on purpose by an earlier run: in no state and in no record's resources
    mine.released = [ReleasedObject("sim_vm.old", "vm-7", "apply-0", "2026-01-01T00:00:00Z")]
    ev = evidence(record=mine, state=state(), refresh=quiet(), planned_attributes=PLANNED)

    found = consult(ev, target, lookups, runtime)

    assert found is not None
    [ask] = found["sim_vm.v"].asks
    assert ask.outcome is Outcome.CONTRADICTED and ask.held == ("vm-7",) and not ask.adoptable


def test_a_lookup_that_exits_non_zero_after_printing_a_valid_answer_has_failed(tmp_path: Path) -> None:
    runtime, target, lookups = setup(tmp_path, VM_7)
    (tmp_path / "lookup.py").write_text(ANSWER_PY + "sys.exit(1)\n")  # a valid, free candidate, then exit 1
    ev = evidence(record=record(Status.ERROR, orphans=["sim_vm.v"]), state=state(), refresh=quiet(),
                  planned_attributes=PLANNED)

    found = consult(ev, target, lookups, runtime)

    assert found is not None
    [ask] = found["sim_vm.v"].asks
    assert ask.outcome is Outcome.FAILED and ask.why.startswith("it exited 1") and not found["sim_vm.v"].settled


def test_nothing_is_asked_while_the_dead_runs_engine_still_runs(tmp_path: Path) -> None:
    runtime, target, lookups = setup(tmp_path, VM_7)
    # a stale running record (no live hyops holds its lock) whose engine still runs: it may
    # still create the very object a lookup would find
    ev = evidence(record=record(Status.RUNNING, orphans=["sim_vm.v"]), state=state(), refresh=quiet(),
                  planned_attributes=PLANNED, lock_free=True, live_engine=object())
    assert ev.engine_alive and not ev.busy

    assert consult(ev, target, lookups, runtime) is None
    assert not (tmp_path / "asked.jsonl").exists()


def test_write_does_not_adopt_an_id_a_record_took_since_the_lookup_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime, target, lookups = setup(tmp_path, VM_7)
    mine = record(Status.ERROR, orphans=["sim_vm.v"])
    runtime.ensure_root()
    runtime.store.write(mine)
    ev = evidence(record=mine, state=state(), refresh=quiet(), planned_attributes=PLANNED)
    found = consult(ev, target, lookups, runtime)
    assert found is not None and [a.address for a in found["sim_vm.v"].adoptable] == ["sim_vm.v"]
    # between the answer and the write, another member's import took vm-7
    other = record(Status.OK, resources={"sim_vm.elsewhere": ("complete", "import", "vm-7")})
    other.module_ref = "demo/other"
    runtime.store.write(other)
    imported: list[tuple[str, str]] = []
    monkeypatch.setattr(orphans, "import_", lambda _t, address, ident, _c: imported.append((address, ident)))
    monkeypatch.setattr(orphans, "forget", lambda *_a, **_k: pytest.fail("an orphan not accounted for was dropped"))

    actions, _ok = adopt(target, found, ev, SimpleNamespace(gather=SimpleNamespace(runtime=runtime)))  # type: ignore[arg-type]

    assert imported == []
    assert [a.kind for a in actions] == [ActionKind.SETTLE] and "vm-7" in actions[0].detail


def test_write_acts_only_on_orphans_the_record_lists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime, target, lookups = setup(tmp_path, VM_7)
    ev = evidence(record=record(Status.ERROR, orphans=["sim_vm.v"]), state=state(), refresh=quiet(),
                  planned_attributes=PLANNED)
    found = consult(ev, target, lookups, runtime)
    assert found is not None and found["sim_vm.v"].adoptable  # vm-7 is free: only the listing decides
    runtime.store.write(record(Status.ERROR))  # the record as it stands lists no orphan (settled meanwhile)
    monkeypatch.setattr(orphans, "import_", lambda *_a: pytest.fail("an orphan the record does not list was adopted"))
    monkeypatch.setattr(orphans, "forget", lambda *_a, **_k: pytest.fail("an orphan the record does not list went"))

    actions, ok = adopt(target, found, ev, SimpleNamespace(gather=SimpleNamespace(runtime=runtime)))  # type: ignore[arg-type]

    assert actions == [] and ok
