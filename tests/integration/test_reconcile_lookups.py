"""Reconcile asks the provider (docs/recovery.md: Lookups), on the real engine and the sim cloud.

Each test loses or fails a create with a sim fault, so a suspect orphan is listed, then
reconciles with a lookups file beside the runtime root (the project's default place) naming
a lookup command the test writes (LOOKUP_PY: it reads the sim cloud's objects, or answers
what the test tells it to, fails, or hangs on a gate file), or the sim's own `hyops sim
lookup`. What is checked: exactly one free candidate is adopted by `--write` and the next
apply converges with one object; a complete lookup that finds none lets `--write` drop the
orphan; two candidates are never adopted and both are named; a lookup that fails, hangs or
lies changes nothing; a stack whose vm create was lost recovers with `reconcile --stack
--write` and `stack apply --resume`, no person involved.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.helpers import (
    LOST_ORPHAN,
    a_twin_of_the_lost,
    copy_module,
    findings,
    lose_the_network,
    reconcile,
    write_adopts_and_apply_converges,
)
from tests.integration.hyops_cli import Hyops
from tests.stackfiles import write_stack

pytestmark = pytest.mark.integration

# A lookup command as a user would write one: the request on stdin, the candidates on stdout.
# Modes (argv[1]): `list` every sim object of the type; `answer FILE` prints FILE; `fail`
# exits 1 saying why on stderr; `hang GATE PIDFILE` notes its pid and waits for GATE (which
# the test never creates: the timeout must end it); `garbage` prints what is not JSON.
LOOKUP_PY = r'''
import json, os, pathlib, sys, time
mode = sys.argv[1]
request = json.load(sys.stdin)
pathlib.Path("asked.jsonl").open("a").write(json.dumps(request) + "\n")
if mode == "fail":
    print("boom: the provider's API said 503", file=sys.stderr)
    sys.exit(1)
if mode == "garbage":
    print("<html>Service Unavailable</html>")
    sys.exit(0)
if mode == "hang":
    pathlib.Path(sys.argv[3]).write_text(str(os.getpid()))
    for _ in range(6000):  # a safety net only: the test never opens the gate
        if pathlib.Path(sys.argv[2]).exists():
            break
        time.sleep(0.1)
    print(json.dumps({"candidates": []}))
    sys.exit(0)
if mode == "answer":
    print(pathlib.Path(sys.argv[2]).read_text())
    sys.exit(0)
objects = pathlib.Path(os.environ["HYOPS_SIM_ROOT"]) / "objects"
found = []
for path in sorted(objects.glob("*.json")):
    obj = json.loads(path.read_text())
    if obj["type"] == request["type"]:
        found.append({"id": obj["id"], "attributes": {"name": obj["name"], **obj["attributes"]}})
print(json.dumps({"candidates": found}))
'''

ORPHAN = LOST_ORPHAN



def lookups(hyops: Hyops, types: dict[str, dict[str, Any]]) -> Path:
    """hyops.lookups.yml beside the runtime root (its default place), and the test's lookup.py."""
    (hyops.workdir / "lookup.py").write_text(LOOKUP_PY)
    path = hyops.runtime_root.parent / "hyops.lookups.yml"
    path.write_text(yaml.safe_dump({"lookups": types}))
    return path


def python_lookup(mode: str, *extra: str, match: tuple[str, ...] = ("name",), complete: bool = True,
                timeout: float | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"command": [sys.executable, "lookup.py", mode, *extra], "match": list(match),
                            "complete": complete}
    if timeout is not None:
        spec["timeout"] = timeout
    return spec




def orphans_of(hyops: Hyops, ref: str) -> list[str]:
    return [o["address"] for o in (hyops.record(ref) or {}).get("suspect_orphans", [])]


def test_one_free_candidate_is_adopted_by_write_and_the_next_apply_converges_with_one_object(
    any_hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    hyops = any_hyops
    lose_the_network(hyops, module_copy, faults_file)
    lookups(hyops, {"sim_network": python_lookup("list")})
    [live] = hyops.sim_objects()

    code, doc = reconcile(hyops, "modules/network")

    assert code == 3
    found = findings(doc, "network")["orphan_found"]
    assert live["id"] in found["detail"] and found["addresses"] == [ORPHAN]
    assert found["next_actions"] == ["hyops reconcile modules/network --ref network --write"]
    # the module's other finding says what the same --write does, never "records absent"
    partial = findings(doc, "network")["partial_apply"]
    assert "`--write` adopts" in partial["detail"] and "records absent" not in partial["detail"]
    [ask] = found["lookup"]["asks"]
    assert ask["outcome"] == "found" and ask["candidates"] == [
        {"id": live["id"], "attributes": {"name": "demo-net", "cidr": "10.0.0.0/16"}}]
    asked = [json.loads(line) for line in (hyops.workdir / "asked.jsonl").read_text().splitlines()]
    assert asked[0]["type"] == "sim_network" and asked[0]["address"] == ORPHAN
    assert asked[0]["planned"]["name"] == "demo-net" and asked[0]["ref"] == "network"
    kept = hyops.runtime_root / "runs" / "network" / found["lookup"]["run_id"]
    assert json.loads((kept / "lookup.1.request.json").read_text())["planned"]["name"] == "demo-net"
    assert (kept / "lookup.1.stderr.log").exists() and json.loads((kept / "lookup.1.stdout").read_text())
    assert json.loads((kept / "result.json").read_text())["lookups"][0]["asks"][0]["outcome"] == "found"

    write_adopts_and_apply_converges(hyops, faults_file, live["id"])


def test_a_complete_lookup_that_finds_none_lets_write_drop_the_orphan_saying_why(
    any_hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    hyops = any_hyops
    module_copy("network")
    faults_file([{"type": "sim_network", "op": "create", "mode": "fail_before_create", "times": 1}])
    assert hyops("apply", "modules/network").returncode == 1
    assert orphans_of(hyops, "network") == [ORPHAN]  # the engine cannot tell made from not made
    lookups(hyops, {"sim_network": python_lookup("list")})

    code, doc = reconcile(hyops, "modules/network")

    assert code == 3
    orphan = findings(doc, "network")["suspect_orphan"]
    assert orphan["lookup"]["asks"][0]["outcome"] == "none" and orphan["lookup"]["settled"] is True
    assert orphan["next_actions"] == ["hyops reconcile modules/network --ref network --write"]
    assert orphan["alternatives"] == []

    written = hyops("reconcile", "modules/network", "--write")

    assert written.returncode == 0, written.stdout + written.stderr
    assert orphans_of(hyops, "network") == [] and hyops.record("network")["status"] == "absent"  # made nothing
    forget_runs = [p for p in (hyops.runtime_root / "runs" / "network").glob("reconcile-*")
                   if json.loads((p / "meta.json").read_text())["action"] == "forget-orphan"]
    [forgot] = forget_runs
    assert "lists every object of type sim_network" in json.loads((forgot / "result.json").read_text())["why"]
    assert hyops.sim_objects() == []
    faults_file([])
    assert hyops("apply", "modules/network").returncode == 0  # no guard: nothing is uncertain now
    assert len(hyops.sim_objects()) == 1


def test_two_candidates_are_never_adopted_and_both_are_named_with_their_import(
    any_hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]
) -> None:
    hyops = any_hyops
    lose_the_network(hyops, module_copy, faults_file)
    lost, twin = a_twin_of_the_lost(hyops)
    lookups(hyops, {"sim_network": python_lookup("list")})
    before = hyops.record("network")

    code, doc = reconcile(hyops, "modules/network")

    assert code == 3
    orphan = findings(doc, "network")["suspect_orphan"]
    assert orphan["lookup"]["asks"][0]["outcome"] == "several"
    commands = [a["command"] for a in orphan["alternatives"]]
    assert sorted(c for c in commands if "--import" in c) == sorted(
        f"hyops reconcile modules/network --ref network --import {ORPHAN}={i}" for i in (lost, twin))
    assert f"hyops reconcile modules/network --ref network --forget-orphan {ORPHAN}" in commands
    assert lost in orphan["detail"] and twin in orphan["detail"]

    written = hyops("reconcile", "modules/network", "--write")

    assert written.returncode == 3
    after = hyops.record("network")
    assert orphans_of(hyops, "network") == [ORPHAN]
    assert "id" not in after.get("resources", {}).get(ORPHAN, {})  # nothing adopted
    assert after["status"] in ("error", "absent") and before["suspect_orphans"] == after["suspect_orphans"]
    assert not [c for c in hyops.sim_calls() if c["op"] == "import"]


@pytest.mark.parametrize("mode,said", [
    ("fail", "failed: it exited 1: boom: the provider's API said 503"),
    ("garbage", "failed: its answer is not valid: its stdout is not one JSON document"),
])
def test_a_lookup_that_fails_or_prints_garbage_changes_nothing_and_is_named(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path], mode: str, said: str
) -> None:
    lose_the_network(hyops, module_copy, faults_file)
    lookups(hyops, {"sim_network": python_lookup(mode)})

    code, doc = reconcile(hyops, "modules/network")

    assert code == 3
    orphan = findings(doc, "network")["suspect_orphan"]
    assert said in orphan["detail"]
    assert orphan["next_actions"] == ["hyops sim ls"]  # today's advice, as without a lookup
    assert [a["command"] for a in orphan["alternatives"]] == [
        f"hyops reconcile modules/network --ref network --import '{ORPHAN}=<id>'",
        f"hyops reconcile modules/network --ref network --forget-orphan {ORPHAN}"]
    if mode == "fail":
        kept = hyops.runtime_root / "runs" / "network" / orphan["lookup"]["run_id"]
        assert "503" in (kept / "lookup.1.stderr.log").read_text()

    written = hyops("reconcile", "modules/network", "--write")

    assert written.returncode == 3
    assert orphans_of(hyops, "network") == [ORPHAN]
    assert not [c for c in hyops.sim_calls() if c["op"] == "import"]


def test_a_lookup_that_hangs_is_killed_at_its_timeout_and_changes_nothing(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    lose_the_network(hyops, module_copy, faults_file)
    gate, pidfile = tmp_path / "never-opened", tmp_path / "lookup.pid"
    lookups(hyops, {"sim_network": python_lookup("hang", str(gate), str(pidfile), timeout=1)})

    written = hyops("reconcile", "modules/network", "--write", "--json")

    assert written.returncode == 3, written.stdout + written.stderr
    orphan = findings(json.loads(written.stdout), "network")["suspect_orphan"]
    assert "did not answer within its timeout of 1s and was killed" in orphan["detail"]
    assert orphans_of(hyops, "network") == [ORPHAN]
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed with its process group, not left running
    assert not gate.exists()


def test_a_lookup_that_lies_with_an_id_a_state_holds_is_never_adopted(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    assert hyops("apply", "modules/pair").returncode == 0
    network_id = hyops.record("pair")["outputs"]["network_id"]
    faults_file([{"type": "sim_vm", "op": "create", "mode": "lose_response", "times": 1}])
    assert hyops("apply", "modules/pair", "--var", "with_vm=true").returncode == 1
    orphan_address = 'sim_vm.vm[0]'
    assert orphans_of(hyops, "pair") == [orphan_address]
    lie = tmp_path / "lie.json"  # the network the state holds, passed off as the lost vm
    lie.write_text(json.dumps({"candidates": [{"id": network_id, "attributes": {"name": "pair-vm"}}]}))
    lookups(hyops, {"sim_vm": python_lookup("answer", str(lie), complete=False)})
    before = hyops.record("pair")

    written = hyops("reconcile", "modules/pair", "--write", "--json")

    assert written.returncode == 3, written.stdout + written.stderr
    orphan = findings(json.loads(written.stdout), "pair")["suspect_orphan"]
    [ask] = orphan["lookup"]["asks"]
    assert ask["outcome"] == "contradicted" and ask["dropped_held"] == [network_id]
    after = hyops.record("pair")
    assert orphans_of(hyops, "pair") == [orphan_address]
    assert after["resources"] == before["resources"]
    assert not [c for c in hyops.sim_calls() if c["op"] == "import"]


def test_a_complete_lookup_whose_only_match_another_state_holds_never_proves_the_create_made_nothing(
    hyops: Hyops, pair: Path, faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    """Issue 45, item 2: a complete lookup answered one candidate shaped as the create planned it
    (name = pair-vm) whose id another module's state holds; reconcile dropped it as held, concluded
    "the create made nothing", and --write dropped the orphan while the lost vm lived."""
    other = tmp_path / "modules" / "other"
    other.mkdir(parents=True)
    (other / "main.tf").write_text((pair / "main.tf").read_text().replace('"pair-net"', '"other-net"'))
    assert hyops("apply", "modules/other").returncode == 0
    held_elsewhere = hyops.record("other")["outputs"]["network_id"]
    assert hyops("apply", "modules/pair").returncode == 0
    faults_file([{"type": "sim_vm", "op": "create", "mode": "lose_response", "times": 1}])
    assert hyops("apply", "modules/pair", "--var", "with_vm=true").returncode == 1
    lost = [o["id"] for o in hyops.sim_objects() if o["type"] == "sim_vm"]
    assert len(lost) == 1  # the lost create made one vm
    lie = tmp_path / "lie.json"  # the lookup answers another state's object as the one match
    lie.write_text(json.dumps({"candidates": [{"id": held_elsewhere, "attributes": {"name": "pair-vm"}}]}))
    lookups(hyops, {"sim_vm": python_lookup("answer", str(lie), complete=True)})

    written = hyops("reconcile", "modules/pair", "--write", "--json")

    assert written.returncode == 3, written.stdout + written.stderr
    orphan = findings(json.loads(written.stdout), "pair")["suspect_orphan"]
    [ask] = orphan["lookup"]["asks"]
    assert ask["outcome"] == "contradicted"
    assert ask["contradicted"][0]["id"] == held_elsewhere and "other" in ask["contradicted"][0]["held_by"]
    assert orphans_of(hyops, "pair") == ['sim_vm.vm[0]']  # kept: the vm still lives
    assert not orphan["lookup"]["settled"]


def test_a_stack_whose_vm_create_was_lost_recovers_with_reconcile_write_and_resume_and_no_person(
    any_hyops: Hyops, faults_file: Callable[..., Path], tmp_path: Path
) -> None:
    hyops = any_hyops
    stack = tmp_path / "stack"
    for name in ("network", "vm", "config", "health"):
        copy_module(name, stack / name)
    write_stack(stack)
    sim_lookup = {"command": ["hyops", "sim", "lookup"], "match": ["name"], "complete": True}
    lookups(hyops, {t: sim_lookup for t in ("sim_network", "sim_vm", "sim_config", "sim_health_check")})
    faults_file([{"type": "sim_vm", "op": "create", "mode": "lose_response", "times": 1}])
    assert hyops("stack", "apply", "stack/stack.yml").returncode == 1
    assert orphans_of(hyops, "demo/vm") == ["sim_vm.this"]
    [vm] = [o for o in hyops.sim_objects() if o["type"] == "sim_vm"]

    code, doc = reconcile(hyops, "--stack", "stack/stack.yml")

    assert code == 3, json.dumps(doc, indent=1)
    assert vm["id"] in findings(doc, "demo/vm")["orphan_found"]["detail"]
    written = hyops("reconcile", "--stack", "stack/stack.yml", "--write")
    assert written.returncode == 0, written.stdout + written.stderr
    assert hyops.record("demo/vm")["status"] == "ok"
    assert hyops.record("demo/vm")["resources"]["sim_vm.this"]["id"] == vm["id"]
    faults_file([])
    resumed = hyops("stack", "apply", "stack/stack.yml", "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    report = {m["name"]: m["status"] for m in json.loads(
        (hyops.runtime_root / "stacks" / "demo" / "latest.json").read_text())["members"]}
    # the adopted vm's record came from an import, which vouches for no configuration: it
    # runs again (a no-op apply), and the object it applies is the one adopted
    assert report == {"network": "skipped", "vm": "ok", "config": "ok", "health": "ok"}
    assert [o["id"] for o in hyops.sim_objects() if o["type"] == "sim_vm"] == [vm["id"]]
    assert hyops.record("demo/vm")["resources"]["sim_vm.this"]["id"] == vm["id"]
    reconcile(hyops, "--stack", "stack/stack.yml", expect=(0,))
