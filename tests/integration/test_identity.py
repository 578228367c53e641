"""Resource identity on the real engine and the sim provider (issue 47, item 3).

The sim declares an identity schema for each of its types (`id`, required for import), so
Terraform >= 1.12 keeps an identity per object in state. What each test proves:
- on the modern engine (HYOPS_MODERN_ENGINE: 1.15.5 in `make test`; 1.12.2 through
  `make test-engines`' legs), every record entry keeps that identity beside its id, as
  `hyops status --json` shows;
- on the bundled Terraform 1.0.3 (no identity in its protocol or its JSON) nothing changes:
  entries hold ids alone (on a `make test-engines` leg of >= 1.12, the same test sees identity);
- a lost state: reconcile's `state_missing` advises `--import ADDRESS=ID` and, on >= 1.12, the
  `import` block with the recorded identity; followed to the letter (the block added, then
  `hyops apply`), the engine adopts the object by identity and no second object is made.
- a state the engine cannot show (an identity stored under a schema version the provider does
  not have: "resource identity schema version 7 ... does not match version 0") is the
  `state_unreadable` finding, and the record keeps its objects.
The parsing rules are unit-tested in tests/unit/test_identity.py.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.integration.helpers import SIM_HEADER, run_ok, write_module
from tests.integration.hyops_cli import Hyops
from tests.integration.modern import engine_release

IDENTITY_FROM = (1, 12)  # Terraform and OpenTofu keep identity in state from 1.12

NETWORK_AND_VM = SIM_HEADER + """
resource "sim_network" "net" {
  name = "identity-net"
}
resource "sim_vm" "app" {
  name       = "identity-vm"
  network_id = sim_network.net.id
}
"""



@pytest.fixture
def identity_hyops(modern_hyops: Hyops) -> Hyops:
    """`modern_hyops` on an engine that keeps identity (>= 1.12); else skipped, saying which."""
    release = engine_release(modern_hyops.engine) or ()
    if release < IDENTITY_FROM:
        pytest.skip(f"resource identity needs Terraform >= 1.12; the modern engine is "
                    f"{'.'.join(map(str, release)) or '?'} ({modern_hyops.engine})")
    return modern_hyops


def _status(h: Hyops, module: Path) -> dict[str, Any]:
    doc = json.loads(run_ok(h, "status", str(module), "--json").stdout)
    assert isinstance(doc, dict)
    return doc


def test_every_entry_keeps_the_providers_identity_beside_its_id_on_a_modern_engine(identity_hyops: Hyops) -> None:
    module = write_module(identity_hyops, NETWORK_AND_VM)
    run_ok(identity_hyops, "apply", str(module))

    resources = _status(identity_hyops, module)["resources"]

    assert set(resources) == {"sim_network.net", "sim_vm.app"}
    for entry in resources.values():
        assert entry["identity"] == {"id": entry["id"]}, entry
        assert entry["identity_schema_version"] == 0


def test_the_engine_under_test_records_identity_exactly_when_it_gives_one(hyops: Hyops) -> None:
    """On the bundled 1.0.3 (`make test`) entries hold ids alone; on a `make test-engines` leg
    of 1.12 or later, the identity too."""
    module = write_module(hyops, NETWORK_AND_VM)
    run_ok(hyops, "apply", str(module))

    resources = _status(hyops, module)["resources"]

    assert set(resources) == {"sim_network.net", "sim_vm.app"}
    release = engine_release(hyops.engine)
    assert release is not None
    if release >= (1, 12):
        assert all(e["identity"] == {"id": e["id"]} for e in resources.values()), resources
    else:
        assert all("identity" not in e and "identity_schema_version" not in e for e in resources.values()), resources


def test_a_lost_state_is_adopted_back_by_identity_as_advised_with_no_second_object(identity_hyops: Hyops) -> None:
    h = identity_hyops
    module = write_module(h, NETWORK_AND_VM)
    run_ok(h, "apply", str(module))
    vm = _status(h, module)["resources"]["sim_vm.app"]["id"]
    state = module / "terraform.tfstate"
    doc = json.loads(state.read_text())
    doc["resources"] = [r for r in doc["resources"] if r["type"] != "sim_vm"]  # the vm is lost from state
    doc["serial"] += 1
    state.write_text(json.dumps(doc))

    out = h("reconcile", str(module), "--json")
    assert out.returncode == 3, out.stdout + out.stderr
    (finding,) = [f for m in json.loads(out.stdout)["modules"] for f in m["findings"] if f["code"] == "state_missing"]
    assert any(f"sim_vm.app={vm}" in step for step in finding["next_actions"])
    (by_identity,) = [a for a in finding["alternatives"] if "identity" in a["when"]]
    block = "\n".join(line for line in by_identity["when"].splitlines() if line.startswith(("import", " ", "}")))
    assert f'identity = {{ id = "{vm}" }}' in block

    (module / "imports.tf").write_text(block + "\n")  # as advised: the block, then the apply as printed
    pasted = h(*shlex.split(by_identity["command"])[1:])
    assert pasted.returncode == 0, pasted.stdout + pasted.stderr

    vms = [o for o in h.sim_objects() if o["type"] == "sim_vm"]
    assert [o["id"] for o in vms] == [vm]  # adopted, not made again
    entry = _status(h, module)["resources"]["sim_vm.app"]
    assert (entry["id"], entry["identity"]) == (vm, {"id": vm})


def test_an_identity_import_block_left_after_its_object_was_destroyed_is_named_for_deletion(
    identity_hyops: Hyops,
) -> None:
    """The block an identity alternative advised, still there once a targeted destroy deleted its
    object: every plan fails ("cannot import"), and reconcile names the block to delete, never
    only "could not check"; deleted as advised, the apply creates the vm anew."""
    h = identity_hyops
    module = write_module(h, NETWORK_AND_VM)
    run_ok(h, "apply", str(module))
    vm = _status(h, module)["resources"]["sim_vm.app"]["id"]
    h("destroy", str(module), "--", "-target=sim_vm.app")  # the network stays: the record says `error`
    assert not [o for o in h.sim_objects() if o["type"] == "sim_vm"]
    (module / "imports.tf").write_text(f'import {{\n  to = sim_vm.app\n  identity = {{ id = "{vm}" }}\n}}\n')

    out = h("reconcile", str(module), "--json")

    assert out.returncode in (1, 3), out.stdout + out.stderr
    [stale] = [f for m in json.loads(out.stdout)["modules"] for f in m["findings"] if f["code"] == "stale_import"]
    assert f"imports.tf imports identity {{id={vm}}} into sim_vm.app" in stale["detail"]
    (module / "imports.tf").unlink()  # as advised: the block goes, then the apply as printed
    [apply] = [a["command"] for a in stale["alternatives"] if shlex.split(a["command"])[1] == "apply"]
    pasted = h(*shlex.split(apply)[1:])
    assert pasted.returncode == 0, pasted.stdout + pasted.stderr
    assert [o["id"] for o in h.sim_objects() if o["type"] == "sim_vm"] != [vm]
    assert h("reconcile", str(module)).returncode == 0


BACKEND = """
terraform {
  backend "local" {
    path = "kept.tfstate"
  }
}
"""


def test_a_state_the_engine_cannot_show_is_state_unreadable_never_empty(identity_hyops: Hyops) -> None:
    """A backend (here `local` with a path: the state is not the module's own file, so
    reconcile asks `show -json`) whose state stores an identity under a schema version the
    provider does not have, as after a provider upgrade or downgrade: the engine refuses to
    show it. Reconcile says so; it never takes the state for empty."""
    h = identity_hyops
    module = write_module(h, NETWORK_AND_VM + BACKEND)
    run_ok(h, "apply", str(module))
    state = module / "kept.tfstate"
    doc = json.loads(state.read_text())
    for resource in doc["resources"]:
        for instance in resource["instances"]:
            instance["identity_schema_version"] = 7
    doc["serial"] += 1
    state.write_text(json.dumps(doc))

    out = h("reconcile", str(module), "--json")

    assert out.returncode != 0, out.stdout + out.stderr
    module_report = json.loads(out.stdout)["modules"][0]
    codes = [f["code"] for f in module_report["findings"]]
    assert "state_unreadable" in codes, module_report
    assert "state_missing" not in codes and "state_after_destroy" not in codes
    rec = h.record("m")
    assert rec is not None and rec["status"] == "ok" and set(rec["resources"]) == {"sim_network.net", "sim_vm.app"}
