"""The record forgets an object only on proof (issue 54, docs/recovery.md: One gate): the
engine's completed delete of its id, a refresh that shows the provider no longer has it, or a
person's `--forget-missing ID`. Every other writer's way out (a rollback by `state push -force`
of an older state, a raw `-replace`) keeps the id as `state_missing`, and `apply`/`destroy`
refuse (exit 4) until it is settled.

Each test runs hyops on the real engine and the sim, then the engine itself as a teammate
would, then follows the printed commands to the letter."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.integration.helpers import SIM_HEADER, run_ok, write_module
from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration

WEB = SIM_HEADER + """
variable "net" {
  type    = string
  default = "a"
}
resource "sim_network" "net" {
  for_each = toset(["a", "b"])
  name     = "net-${each.key}"
}
resource "sim_vm" "vm" {
  for_each   = toset(["web"])
  name       = "prod-${each.key}"
  size       = "small"
  network_id = sim_network.net[var.net].id
}
"""


def _engine(h: Hyops, module: Path, *args: str, stdin: str | None = None) -> None:
    """The engine itself in the module, as a teammate runs it (hyops's CLI config for the sim)."""
    env = h.env(TF_CLI_CONFIG_FILE=str(h.runtime_root / "sim" / "terraform.rc"), HYOPS_SIM_PYTHON=sys.executable)
    out = subprocess.run([h.engine, *args], cwd=module, env=env, capture_output=True, text=True, timeout=300,
                         input=stdin)
    assert out.returncode == 0, out.stdout + out.stderr


def _record(h: Hyops) -> dict[str, Any]:
    rec = h.record("m")
    assert rec is not None
    return rec


def _ids(rec: dict[str, Any]) -> set[str]:
    return {e["id"] for e in rec.get("resources", {}).values() if e.get("id")}


def _live_vms(h: Hyops) -> list[dict[str, Any]]:
    return [o for o in h.sim_objects() if o["type"] == "sim_vm"]


def _report(h: Hyops, module: Path) -> tuple[int, dict[str, Any]]:
    out = h("reconcile", str(module), "--json")
    assert out.returncode in (0, 3), out.stdout + out.stderr
    return out.returncode, json.loads(out.stdout)


def _next_actions(report: dict[str, Any]) -> list[str]:
    return [a for m in report["modules"] for f in m["findings"] for a in f.get("next_actions", [])]


def test_a_rollback_by_state_push_keeps_the_live_replacement_in_the_record_and_apply_refuses(hyops: Hyops) -> None:
    """hyops applied vm["web"], a later apply replaced it, a teammate pushed the older state
    back (`state push -force`): the record names the live replacement until a person settles
    it, a plain apply refuses (exit 4), and no printed command makes a second prod-web."""
    module = write_module(hyops, WEB)
    run_ok(hyops, "apply", str(module))
    old_state = (module / "terraform.tfstate").read_text()
    run_ok(hyops, "apply", str(module), "--var", "net=b")  # a replace: the old vm is deleted
    [live] = _live_vms(hyops)
    assert live["id"] in _ids(_record(hyops))

    (module / "old.tfstate").write_text(old_state)
    _engine(hyops, module, "state", "push", "-force", "old.tfstate")

    refused = hyops("apply", str(module))
    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert live["id"] in refused.stderr and "hyops reconcile" in refused.stderr
    assert len(_live_vms(hyops)) == 1
    assert live["id"] in _ids(_record(hyops))

    code, report = _report(hyops, module)
    assert code == 3
    actions = _next_actions(report) + [a["command"] for m in report["modules"] for f in m["findings"]
                                       for a in f["alternatives"]]
    # a refresh-only apply creates and deletes nothing: it lets the state go of the gone vm, with proof
    assert not any(_words(a)[1] in ("apply", "destroy") and "-refresh-only" not in _words(a) for a in actions), actions
    _follow_until_consistent(hyops, module)
    [still] = _live_vms(hyops)
    assert still["id"] == live["id"]
    assert live["id"] in _ids(_record(hyops))
    assert hyops("apply", str(module), "--var", "net=b").returncode == 0
    assert [o["id"] for o in _live_vms(hyops)] == [live["id"]]


def _words(command: str) -> list[str]:
    return shlex.split(command)


def _follow_until_consistent(h: Hyops, module: Path, rounds: int = 4) -> None:
    """Follow the printed advice as docs/recovery.md says until reconcile says consistent: every
    step, in order (hyops, or the engine as a teammate would); an alternative (a choice, some
    "instead of" the steps beside it) only in a round whose steps settled nothing (the report
    after them is the report before), and then the first of the first finding that has one.
    Each command must succeed, and no step may make a second live object of a name."""
    for _ in range(rounds):
        code, report = _report(h, module)
        if code == 0:
            return
        for command in _next_actions(report):
            _run_printed(h, command)
        if _next_actions(report):
            code, after = _report(h, module)
            if code == 0:
                return
            if _advice(after) != _advice(report):
                continue  # the steps moved something: read the advice again before choosing
        choices = [f["alternatives"][0]["command"] for m in report["modules"] for f in m["findings"]
                   if f["alternatives"]]
        if choices:
            _run_printed(h, choices[0])
    raise AssertionError(f"not consistent after {rounds} rounds: {_report(h, module)[1]}")


def _advice(report: dict[str, Any]) -> list[tuple[str, str, str, list[str], list[str]]]:
    """What a report says and advises, without what each reconcile run adds (its lookups' run id)."""
    return [(m["module_ref"], f["code"], f["detail"], f["next_actions"], [a["command"] for a in f["alternatives"]])
            for m in report["modules"] for f in m["findings"]]


def _run_printed(h: Hyops, command: str) -> None:
    words = _words(command)
    if words[0] == "hyops":
        done = h(*words[1:])
        ok = (0, 3) if words[1] == "reconcile" else (0,)  # reconcile: 3 while findings are left
        assert done.returncode in ok, (command, done.stdout + done.stderr)
    else:
        _engine(h, h.workdir, *words[1:])
    names = [o.get("name") for o in h.sim_objects()]
    assert len(names) == len(set(names)), (command, names)


def test_a_raw_replace_settles_by_one_forget_of_the_replaced_id_and_no_command_fails(hyops: Hyops) -> None:
    """A teammate's `terraform apply -replace`: the old id is deleted, a new one lives at the
    address. The record keeps the old id (nothing hyops saw deleted it), says it is likely
    replaced, and following the printed commands settles with no duplicate and no failure."""
    module = write_module(hyops, WEB)
    run_ok(hyops, "apply", str(module))
    [old] = _live_vms(hyops)
    _engine(hyops, module, "apply", "-auto-approve", "-input=false", '-replace=sim_vm.vm["web"]')
    [new] = _live_vms(hyops)
    assert new["id"] != old["id"] and old["id"] in _ids(_record(hyops))

    assert hyops("apply", str(module)).returncode == 4  # state_missing: the old id, unproven gone
    code, report = _report(hyops, module)
    missing = [f for m in report["modules"] for f in m["findings"] if f["code"] == "state_missing"]
    assert missing and "likely replaced" in json.dumps(missing)
    forget = [a["command"] for a in missing[0]["alternatives"] if "--forget-missing" in a["command"]]
    assert forget and old["id"] in forget[0]
    done = hyops(*_words(forget[0])[1:])
    assert done.returncode in (0, 3), done.stdout + done.stderr  # 3: findings left to settle
    _follow_until_consistent(hyops, module)
    assert [o["id"] for o in _live_vms(hyops)] == [new["id"]]
    assert new["id"] in _ids(_record(hyops)) and _record(hyops)["status"] == "ok"


def test_a_taint_made_outside_hyops_offers_untaint_beside_the_replace(hyops: Hyops) -> None:
    """A teammate's `terraform taint`: not "its create reported an error", and the untaint
    (which keeps the vm) is offered beside the apply that would replace it."""
    module = write_module(hyops, WEB)
    run_ok(hyops, "apply", str(module))
    [vm] = _live_vms(hyops)
    _engine(hyops, module, "taint", 'sim_vm.vm["web"]')

    code, report = _report(hyops, module)
    [tainted] = [f for m in report["modules"] for f in m["findings"] if f["code"] == "tainted"]
    assert "tainted outside hyops" in tainted["detail"] and "create reported an error" not in tainted["detail"]
    [untaint] = [a["command"] for a in tainted["alternatives"] if " untaint " in a["command"]]
    assert _words(untaint)[1:] == [f"-chdir={_words(untaint)[1].split('=', 1)[1]}", "untaint", 'sim_vm.vm["web"]']
    _engine(hyops, hyops.workdir, *_words(untaint)[1:])
    _follow_until_consistent(hyops, module)
    assert [o["id"] for o in _live_vms(hyops)] == [vm["id"]]


def test_a_null_resource_the_state_lost_is_advised_a_forget_once_its_import_is_refused(
        hyops: Hyops, null_env: dict[str, str], null_module: Callable[[str, str], Path]) -> None:
    """`state rm` of a null_resource: `--import` is advised first (the type may import); the
    engine refuses ("doesn't support import"), the message says so in one line, the record
    keeps that the type cannot be imported, and the advice is then `--forget-missing ID` alone:
    no `--import` again, no `hyops sim` command for a type that is not the sim's."""
    h = replace(hyops, extra_env={**hyops.extra_env, **null_env})
    module = null_module("n", 'resource "null_resource" "x" {}\n')
    run_ok(h, "apply", "modules/n")
    rec = h.record("n")
    assert rec is not None
    ident = rec["resources"]["null_resource.x"]["id"]
    env = h.env()
    out = subprocess.run([h.engine, "state", "rm", "null_resource.x"], cwd=module, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr

    for _ in range(3):
        report = json.loads(h("reconcile", "modules/n", "--json").stdout)
        every = _next_actions(report) + [a["command"] for m in report["modules"] for f in m["findings"]
                                         for a in f["alternatives"]]
        assert not any(c.startswith("hyops sim") or " sim rm " in c for c in every), every
        imports = [c for c in _next_actions(report) if "--import" in c]
        if not imports:
            break
        failed = h(*_words(imports[0])[1:])
        assert failed.returncode == 1 and "support import" in failed.stdout + failed.stderr
    else:
        raise AssertionError(f"--import advised again after the engine refused it: {failed.stdout}{failed.stderr}"
                             f"{h.record('n')}")
    [forget] = [c for c in every if "--forget-missing" in c]
    assert ident in forget
    done = h(*_words(forget)[1:])
    assert done.returncode in (0, 3), done.stdout + done.stderr
    assert h("apply", "modules/n").returncode == 0


def test_after_a_raw_destroy_of_everything_the_printed_imports_settle_each_gone_object_and_none_fails(
    hyops: Hyops,
) -> None:
    """A teammate's raw `terraform destroy`: the engine deleted every object, but not in a run
    hyops saw, so the record keeps each id (state_missing). The advised `--import ADDRESS=ID`
    asks the provider through the engine; its "Cannot import non-existent remote object" is
    proof the object is gone: the record forgets that id and the command succeeds. Followed to
    the letter, the commands settle with no failure, and a later apply creates one of each."""
    module = write_module(hyops, WEB)
    run_ok(hyops, "apply", str(module))
    known = _ids(_record(hyops))
    _engine(hyops, module, "destroy", "-auto-approve", "-input=false")
    assert hyops.sim_objects() == []
    assert hyops("apply", str(module)).returncode == 4  # the record's ids: unproven gone

    _follow_until_consistent(hyops, module)

    assert not (_ids(_record(hyops)) & known) and hyops.sim_objects() == []
    run_ok(hyops, "apply", str(module))
    names = sorted(o["name"] for o in hyops.sim_objects())
    assert names == ["net-a", "net-b", "prod-web"], names


def test_a_destroy_killed_after_its_engine_deleted_everything_is_finished_by_the_next_destroy(
    hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path], tmp_path: Path,
) -> None:
    """The engine completed the delete, then hyops died before its settle: the record says
    `running` with the object, no state holds it, and the killed run's own events (the relay
    wrote them) prove the delete. The next destroy counts that proof (record/gate.py), where
    it refused as state_missing and sent the user to reconcile for an object known gone."""
    import os
    import signal

    from hybridops_tf.runtime.run_folder import EVENTS_COMPLETE
    from tests.integration.gates import Gate
    from tests.integration.hyops_cli import wait_for

    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_network", op="delete")])
    proc = hyops.start("destroy", "modules/network")
    try:
        gate.wait_started(proc)
        os.kill(proc.pid, signal.SIGSTOP)  # hyops reads nothing more; its relay keeps the engine's events
        gate.release()
        run = hyops.runtime_root / "runs" / "network" / hyops.record("network")["run_id"]
        wait_for((run / EVENTS_COMPLETE).exists, 120, "the engine's whole stream on disk")
        proc.kill()
        proc.wait(timeout=30)
    finally:
        gate.release()
    faults_file([])
    assert hyops.record("network")["status"] == "running" and hyops.sim_objects() == []

    finished = hyops("destroy", "modules/network")

    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert hyops.record("network")["status"] == "destroyed"
