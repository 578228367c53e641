"""Asking the lookups about one module's suspect orphans (reconcile/lookup/consult.py), with a
real lookup command (a tiny Python script) and forged evidence: no engine. The unnamed orphan
`*` is asked about through every planned create of the read-only plan; what was asked and
answered is kept in the reconcile's run folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from hybridops_tf.reconcile.evidence import Target
from hybridops_tf.reconcile.lookup import spec
from hybridops_tf.reconcile.lookup.consult import consult
from hybridops_tf.reconcile.lookup.judge import Outcome
from hybridops_tf.record.lifecycle import Status
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
    assert ask.outcome is Outcome.NONE and ask.held == ("vm-7",)
