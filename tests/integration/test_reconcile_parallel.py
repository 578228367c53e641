"""`hyops reconcile --stack` checks members `--parallelism N` at a time, and the report is
the same document, in the same order, whatever N is; `--write` settles each member under
its own lock. Real engine, sim cloud, a 5-member stack (a root and four children: at
--parallelism 4 one child still waits for a slot)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from tests.integration.helpers import SIM_HEADER
from tests.integration.hyops_cli import Hyops

CHILDREN = 4

ROOT_TF = SIM_HEADER + """resource "sim_network" "this" {
  name = "root-net"
}
output "network_id" {
  value = sim_network.this.id
}
"""


def child_tf(index: int) -> str:
    return SIM_HEADER + f"""variable "network_id" {{
  type = string
}}
resource "sim_vm" "this" {{
  name       = "vm-{index}"
  network_id = var.network_id
}}
output "vm_id" {{
  value = sim_vm.this.id
}}
"""


def write_wide_stack(directory: Path, children: int = CHILDREN) -> Path:
    """A root network and `children` vms on it, each its own module; returns stack.yml."""
    directory.mkdir(parents=True, exist_ok=True)
    modules = {"root": ROOT_TF, **{f"child{i}": child_tf(i) for i in range(1, children + 1)}}
    for name, text in modules.items():
        (directory / name).mkdir()
        (directory / name / "main.tf").write_text(text)
    lines = ["stack: wide", "modules:", "  - name: root", "    path: root"]
    for i in range(1, children + 1):
        lines += [f"  - name: child{i}", f"    path: child{i}", "    depends_on: [root]",
                  "    inputs_from: {network_id: root.network_id}"]
    path = directory / "stack.yml"
    path.write_text(textwrap.dedent("\n".join(lines) + "\n"))
    return path


STACK_ORDER = ["root", *[f"child{i}" for i in range(1, CHILDREN + 1)]]


def applied_wide_stack(hyops: Hyops, tmp_path: Path) -> tuple[Path, list[str]]:
    """The applied stack file and its members' module refs in stack order (from the run report)."""
    stack = write_wide_stack(tmp_path / "wide")
    done = hyops("stack", "apply", str(stack), "--parallelism", "4", "--json")
    assert done.returncode == 0, done.stderr
    ref_of = {m["name"]: m["module_ref"] for m in json.loads(done.stdout)["members"]}
    return stack, [ref_of[name] for name in STACK_ORDER]


def test_parallel_reconcile_prints_the_same_report_in_stack_order_as_one_at_a_time(
    hyops: Hyops, tmp_path: Path
) -> None:
    stack, _ = applied_wide_stack(hyops, tmp_path)
    outputs = {}
    for n in ("1", "4"):  # markdown renders the same report (tests/integration/test_ci_summaries.py)
        for fmt in ("text", "json"):
            done = hyops("reconcile", "--stack", str(stack), "--parallelism", n, "--format", fmt)
            assert done.returncode == 0, done.stdout + done.stderr
            outputs[n, fmt] = done.stdout

    for fmt in ("text", "json"):
        assert outputs["1", fmt] == outputs["4", fmt], fmt
    doc = json.loads(outputs["4", "json"])
    names = [m["module_ref"].rsplit("/", 1)[-1] for m in doc["modules"]]
    assert names == STACK_ORDER
    assert doc["consistent"] is True


@pytest.mark.both_stores  # one PgStore shared by the workers, a lock each
def test_parallel_write_settles_each_error_member_under_its_own_lock_and_reports_it_ok(
    hyops: Hyops, tmp_path: Path
) -> None:
    stack, refs = applied_wide_stack(hyops, tmp_path)
    broken = [refs[2], refs[4]]
    for ref in broken:
        rec = hyops.record(ref)
        assert rec is not None
        rec.update(status="error", failed_command="apply", last_error="killed by a test")
        hyops.write_record(ref, rec)

    done = hyops("reconcile", "--stack", str(stack), "--parallelism", "4", "--write", "--json")

    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    assert [m["module_ref"] for m in doc["modules"]] == refs
    by_ref = {m["module_ref"]: m for m in doc["modules"]}
    for ref in refs:
        assert by_ref[ref]["status"] == "ok"
        assert (hyops.record(ref) or {})["status"] == "ok"
    for ref in broken:
        [settle] = [a for a in by_ref[ref]["actions"] if a["kind"] == "settle"]
        assert settle["ok"] and settle["detail"].startswith("error -> ok")
        folder = hyops.runtime_root / "runs" / ref.replace("/", "__") / settle["run_id"]
        assert json.loads((folder / "result.json").read_text())["outcome"] == "ok"


def test_init_notes_of_members_checked_side_by_side_are_whole_lines(
    hyops: Hyops, tmp_path: Path
) -> None:
    stack, _ = applied_wide_stack(hyops, tmp_path)
    for terraform_dir in (tmp_path / "wide").glob("*/.terraform"):
        shutil.rmtree(terraform_dir)  # a fresh checkout: each member needs its init

    done = hyops("reconcile", "--stack", str(stack), "--parallelism", "4")

    notes = [line for line in done.stderr.splitlines() if "running `init`" in line]
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(notes) == CHILDREN + 1
    assert all(line.startswith("hyops: running `init` in ") for line in notes)
