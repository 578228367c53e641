"""What the engine suites (integration, reliability) share besides fixtures: the example
modules' folder, the small sim modules the tests write, the parsed result of a direct engine
run, and readers that several test files use. Plain code: the fixtures are in the conftests.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.integration.hyops_cli import Hyops

REPO_ROOT = Path(__file__).resolve().parents[2]
SIM_MODULES = REPO_ROOT / "modules" / "sim"

# What a copy of an example module leaves out: the engine's leftovers of a run in the repository.
MODULE_COPY_IGNORE = shutil.ignore_patterns(
    ".terraform", ".terraform.lock.hcl", "terraform.tfstate*", "terraform.tfstate.d", "errored.tfstate"
)

# What every sim test module starts with: the provider requirement and an empty provider block.
SIM_HEADER = """
terraform {
  required_providers {
    sim = { source = "hybridops.dev/hybridops/sim" }
  }
}
provider "sim" {}
"""

# The `pair` module: a network, and a vm on it only when with_vm=true.
PAIR_TF = SIM_HEADER + """variable "with_vm" {
  type    = bool
  default = false
}
resource "sim_network" "net" {
  name = "pair-net"
}
resource "sim_vm" "vm" {
  count      = var.with_vm ? 1 : 0
  name       = "pair-vm"
  network_id = sim_network.net.id
}
output "network_id" {
  value = sim_network.net.id
}
output "vm_ids" {
  value = sim_vm.vm[*].id
}
"""

# A network and, always, a vm on it: a sim_vm fault then fails a run after the network was
# made, and a kill can land between a finished create and a hanging one.
VM_PAIR_TF = SIM_HEADER + """resource "sim_network" "net" {
  name = "pair-net"
}
resource "sim_vm" "vm" {
  name       = "pair-vm"
  network_id = sim_network.net.id
}
output "network_id" {
  value = sim_network.net.id
}
output "vm_id" {
  value = sim_vm.vm.id
}
"""


def write_module(h: Hyops, text: str, name: str = "m") -> Path:
    """modules/NAME/main.tf under the runner's workdir, holding `text`; the module folder."""
    module = h.workdir / "modules" / name
    module.mkdir(parents=True, exist_ok=True)
    (module / "main.tf").write_text(text)
    return module


def run_ok(h: Hyops, *args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    """`hyops ARGS`, which must exit `expect` (its output in the failure)."""
    out = h(*args)
    assert out.returncode == expect, f"hyops {' '.join(args)} exited {out.returncode}:\n{out.stdout}\n{out.stderr}"
    return out


def paste(h: Hyops, command: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    """A printed `hyops ...` command run exactly as printed (split as a shell splits it), from
    the runner's workdir, which must exit `expect`."""
    words = shlex.split(command)
    assert words[0] == "hyops", command
    return run_ok(h, *words[1:], expect=expect)


def copy_module(name: str, target: Path) -> Path:
    """modules/sim/<name> copied to `target` without engine leftovers; returns `target`."""
    source = SIM_MODULES / name
    assert source.is_dir(), f"no example module {source}"
    shutil.copytree(source, target, ignore=MODULE_COPY_IGNORE)
    return target


@dataclass(frozen=True)
class EngineResult:
    """One engine run: exit code, raw output and the parsed `-json` UI messages."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def events(self) -> list[dict[str, Any]]:
        """stdout lines that are JSON objects (the -json UI stream)."""
        found = []
        for line in self.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    found.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return found

    def of_type(self, message_type: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == message_type]

    def diagnostics(self) -> list[dict[str, Any]]:
        return [e["diagnostic"] for e in self.of_type("diagnostic")]

    def explain(self) -> str:
        """For assertion messages: what the engine said."""
        return (
            f"engine {self.args} rc={self.returncode}\n{self.stdout[-4000:]}\n{self.stderr[-4000:]}"
        )


def without_identity(entry: dict[str, Any]) -> dict[str, Any]:
    """A record entry less its `identity` and `identity_schema_version` (engines >= 1.12 give
    them for sim objects, 1.0.3 never): what a test that runs on every engine compares."""
    return {k: v for k, v in entry.items() if k not in ("identity", "identity_schema_version")}


def reconcile(hyops: Hyops, *args: str, expect: tuple[int, ...] | None = None) -> tuple[int, dict[str, Any]]:
    """`hyops reconcile ... --json`: exit code and the document (printed even on findings);
    `expect`: the exit codes the test allows (consistent 0, findings 3, ...)."""
    result = hyops("reconcile", *args, "--json")
    assert "Traceback" not in result.stderr, result.stderr
    assert expect is None or result.returncode in expect, result.stdout + result.stderr
    return result.returncode, json.loads(result.stdout)


def findings(doc: dict[str, Any], ref: str | None = None) -> dict[str, dict[str, Any]]:
    """The findings reconcile's document gives module `ref` (None: its one module), by code."""
    [module] = [m for m in doc["modules"] if ref is None or m["module_ref"] == ref]
    return {f["code"]: f for f in module["findings"]}


@contextmanager
def unwritable(directory: Path) -> Iterator[None]:
    """Make a directory refuse new entries, even for root (immutable flag, else a ro bind)."""
    if subprocess.run(["chattr", "+i", str(directory)], capture_output=True).returncode == 0:
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(directory)], check=True)
        return
    subprocess.run(["mount", "--bind", str(directory), str(directory)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(directory)], check=True)
        yield
    finally:
        subprocess.run(["umount", str(directory)], check=True)


# A create of the network example whose answer is lost (the lookups' tests: one suspect orphan)
LOST_ORPHAN = "sim_network.this"
LOST_NETWORK = [{"type": "sim_network", "op": "create", "mode": "lose_response", "times": 1}]


def lose_the_network(hyops: Hyops, module_copy: Callable[[str], Path], faults_file: Callable[..., Path]) -> Path:
    """modules/network copied and applied with its create's answer lost: LOST_ORPHAN is listed."""
    module = module_copy("network")
    faults_file(LOST_NETWORK)
    assert hyops("apply", "modules/network").returncode == 1
    assert [o["address"] for o in (hyops.record("network") or {})["suspect_orphans"]] == [LOST_ORPHAN]
    return module


def a_twin_of_the_lost(hyops: Hyops) -> tuple[str, str]:
    """The lost create's network and a second one of the same name made by hand (two
    candidates a lookup cannot tell apart): their ids."""
    from hybridops_tf.sim.store import SimStore

    [lost] = hyops.sim_objects()
    twin = SimStore(hyops.sim_root).create("sim_network", "demo-net", {"cidr": "10.0.0.0/16"})
    return lost["id"], twin.id


def write_adopts_and_apply_converges(hyops: Hyops, faults_file: Callable[..., Path], object_id: str) -> None:
    """`reconcile --write` adopts `object_id` at LOST_ORPHAN; the next apply, faults off,
    converges with that one object and nothing left to reconcile."""
    written = hyops("reconcile", "modules/network", "--write")
    assert written.returncode == 0, written.stdout + written.stderr
    rec = hyops.record("network") or {}
    assert rec["status"] == "ok" and "suspect_orphans" not in rec
    assert without_identity(rec["resources"][LOST_ORPHAN]) == {"status": "complete", "action": "import",
                                                               "id": object_id}
    faults_file([])
    applied = hyops("apply", "modules/network")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert [o["id"] for o in hyops.sim_objects()] == [object_id]  # adopted, never duplicated
    assert reconcile(hyops, "modules/network")[0] == 0
