"""Inputs reach the engine where the engine's own rules put them (issue 11, items 1 and 6).

Explicit inputs (--var, --inputs/--var-file files, the engine's -var/-var-file after `--`)
travel in one var file the engine reads from its stdin (`-var-file=/dev/fd/0`), so they rank
above the module's terraform.tfvars and *.auto.tfvars, as `tofu -var` does; what the engine
reads on its own (TF_VAR_, the module's tfvars) counts for the missing-required check. The
value asserted is always the one the provider received: the sim object's attribute.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.gates import Gate
from tests.integration.helpers import SIM_HEADER
from tests.integration.hyops_cli import Hyops

REQUIRED_TF = SIM_HEADER + """variable "name" {
  type    = string
  default = "prec-net"
}
variable "cidr" {
  type = string
}
resource "sim_network" "this" {
  name = var.name
  cidr = var.cidr
}
output "cidr" {
  value = sim_network.this.cidr
}
"""


@pytest.fixture
def required(tmp_path: Path) -> Path:
    """modules/req: a network whose `cidr` is required (no default)."""
    module = tmp_path / "modules" / "req"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(REQUIRED_TF)
    return module


def network_cidr(hyops: Hyops) -> str:
    (net,) = [o for o in hyops.sim_objects() if o["type"] == "sim_network"]
    return str(net["attributes"]["cidr"])


def network_name(hyops: Hyops) -> str:
    (net,) = [o for o in hyops.sim_objects() if o["type"] == "sim_network"]
    return str(net["name"])


def resolved(hyops: Hyops, ref: str) -> dict[str, Any]:
    rec = hyops.record(ref)
    assert rec is not None
    doc = yaml.safe_load(Path(rec["resolved_inputs_file"]).read_text())
    assert isinstance(doc, dict)
    return doc


def rerun(hyops: Hyops, ref: str) -> tuple[dict[str, Any], dict[str, str]]:
    """rerun.inputs.yml's values, and the source each one's comment line names."""
    text = (hyops.runtime_root / "config" / "modules" / ref / "rerun.inputs.yml").read_text()
    sources = {}
    for line in text.splitlines():
        name, sep, source = line.removeprefix("# ").partition(": from ")
        if line.startswith("# ") and sep:
            sources[name] = source
    return yaml.safe_load(text) or {}, sources


def test_a_var_wins_over_terraform_tfvars_and_the_record_says_so(hyops: Hyops, required: Path) -> None:
    """`--var cidr=10.40.0.0/16` on a module whose terraform.tfvars sets cidr: before, the
    --var travelled as TF_VAR_ (ranked lowest) and the engine used the tfvars value, while
    resolved.inputs.yml and rerun.inputs.yml said 10.40.0.0/16."""
    (required / "terraform.tfvars").write_text('cidr = "10.1.0.0/16"\n')
    out = hyops("apply", "modules/req", "--var", "cidr=10.40.0.0/16")
    assert out.returncode == 0, out.stderr
    assert network_cidr(hyops) == "10.40.0.0/16"
    doc = resolved(hyops, "req")
    assert doc["cidr"] == {"value": "10.40.0.0/16", "source": "--var", "overrides": ["terraform.tfvars"]}
    assert doc["name"] == {"value": "prec-net", "source": "default"}
    values, sources = rerun(hyops, "req")
    assert values == {"cidr": "10.40.0.0/16"} and sources == {"cidr": "--var"}


def test_later_command_line_inputs_win_in_the_order_given(hyops: Hyops, required: Path, tmp_path: Path) -> None:
    """`--var` then `--inputs` on one variable: the later one wins, as the engine ranks
    -var and -var-file by position."""
    (tmp_path / "late.yml").write_text("cidr: 10.9.0.0/16\n")
    out = hyops("apply", "modules/req", "--var", "cidr=10.8.0.0/16", "--inputs", "late.yml")
    assert out.returncode == 0, out.stderr
    assert network_cidr(hyops) == "10.9.0.0/16"
    assert resolved(hyops, "req")["cidr"] == {"value": "10.9.0.0/16", "source": "--inputs late.yml",
                                              "overrides": ["--var"]}


@pytest.mark.parametrize("where", ["terraform.tfvars", "x.auto.tfvars", "terraform.tfvars.json", "env"])
def test_a_required_variable_set_only_where_the_engine_reads_it_applies(
        hyops: Hyops, required: Path, where: str) -> None:
    """A required variable set only in terraform.tfvars, x.auto.tfvars, terraform.tfvars.json
    or the caller's TF_VAR_cidr: before, hyops refused it as missing (exit 2), though raw
    tofu accepts it."""
    env = {}
    if where == "env":
        env = {"TF_VAR_cidr": "10.5.0.0/16"}
    elif where.endswith(".json"):
        (required / where).write_text(json.dumps({"cidr": "10.5.0.0/16"}))
    else:
        (required / where).write_text('cidr = "10.5.0.0/16"\n')
    out = hyops("apply", "modules/req", env=env)
    assert out.returncode == 0, out.stderr
    assert network_cidr(hyops) == "10.5.0.0/16"
    assert resolved(hyops, "req")["cidr"] == {"value": "10.5.0.0/16", "source": where}
    values, sources = rerun(hyops, "req")
    if where == "env":  # a rerun may run in another shell: the caller's TF_VAR_ is kept
        assert values == {"cidr": "10.5.0.0/16"} and sources == {"cidr": "env"}
    else:  # the engine reads the module's own tfvars again itself
        assert values == {}


def test_auto_tfvars_rank_above_terraform_tfvars_in_lexical_order(hyops: Hyops, required: Path) -> None:
    (required / "terraform.tfvars").write_text('cidr = "10.1.0.0/16"\n')
    (required / "a.auto.tfvars").write_text('cidr = "10.2.0.0/16"\n')
    (required / "b.auto.tfvars.json").write_text('{"cidr": "10.3.0.0/16"}')
    out = hyops("apply", "modules/req", env={"TF_VAR_cidr": "10.0.0.0/16"})
    assert out.returncode == 0, out.stderr
    assert network_cidr(hyops) == "10.3.0.0/16"
    assert resolved(hyops, "req")["cidr"] == {
        "value": "10.3.0.0/16", "source": "b.auto.tfvars.json",
        "overrides": ["env", "terraform.tfvars", "a.auto.tfvars"]}


def test_engine_var_flags_after_the_double_dash_are_recorded_like_hyops_options(
        hyops: Hyops, required: Path) -> None:
    """`-- -var x=1` and `-- -var-file=f.tfvars` (relative to the module, as for
    `tofu -chdir=DIR`): recorded with --var/--var-file, in their position, after hyops's
    own options."""
    (required / "f.tfvars").write_text('cidr = "10.6.0.0/16"\nname = "from-file"\n')
    out = hyops("apply", "modules/req", "--var", "name=from-option", "--",
                "-var-file=f.tfvars", "-var", "cidr=10.7.0.0/16")
    assert out.returncode == 0, out.stderr
    assert network_cidr(hyops) == "10.7.0.0/16" and network_name(hyops) == "from-file"
    doc = resolved(hyops, "req")
    var_file = f"--var-file {required / 'f.tfvars'}"
    assert doc["cidr"] == {"value": "10.7.0.0/16", "source": "--var", "overrides": [var_file]}
    assert doc["name"] == {"value": "from-file", "source": var_file, "overrides": ["--var"]}
    _, sources = rerun(hyops, "req")
    assert sources == {"cidr": "--var", "name": var_file}


@pytest.mark.parametrize(("name", "text"), [
    ("prod.tfvars", 'cidr = "10.11.0.0/16"\nname = "hcl-net"\n'),
    ("prod.tfvars.json", '{"cidr": "10.11.0.0/16", "name": "hcl-net"}'),
])
def test_tfvars_and_tfvars_json_files_are_accepted_by_inputs(hyops: Hyops, required: Path, tmp_path: Path,
                                                             name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    for option in ("--inputs", "--var-file"):
        out = hyops("apply", "modules/req", option, name)
        assert out.returncode == 0, out.stderr
        assert network_cidr(hyops) == "10.11.0.0/16" and network_name(hyops) == "hcl-net"
        assert resolved(hyops, "req")["cidr"] == {"value": "10.11.0.0/16", "source": f"{option} {name}"}


def test_a_constant_expression_in_a_var_file_reaches_the_engine_as_its_value(
        hyops: Hyops, required: Path, tmp_path: Path) -> None:
    """`octet = 1 + 2` in a var file, which the engine evaluates: hyops refused it (exit 2)."""
    (required / "main.tf").write_text(REQUIRED_TF.replace("  cidr = var.cidr\n", '  cidr = "10.${var.octet}.0.0/16"\n')
                                      + 'variable "octet" {\n  type = number\n}\n')
    values = tmp_path / "consts.tfvars"
    values.write_text('octet = (1 + 2) * 4 - 1\ncidr = "unused"\n')

    out = hyops("apply", "modules/req", "--var-file", str(values))

    assert out.returncode == 0, out.stderr
    assert network_cidr(hyops) == "10.11.0.0/16"
    assert resolved(hyops, "req")["octet"] == {"value": 11, "source": f"--var-file {values}"}
    refused = values.with_name("call.tfvars")
    refused.write_text("octet = max(1, 2)\ncidr = \"x\"\n")
    call = hyops("apply", "modules/req", "--var-file", str(refused))
    assert call.returncode == 2 and "'octet'" in call.stderr, call.stderr


def test_an_undeclared_name_in_a_file_is_a_warning_but_in_a_var_an_error(
        hyops: Hyops, required: Path, tmp_path: Path) -> None:
    """As the engine: an undeclared value in a var file is a warning, in -var an error."""
    (tmp_path / "extra.yml").write_text("cidr: 10.12.0.0/16\nbogus: 1\n")
    out = hyops("apply", "modules/req", "--inputs", "extra.yml")
    assert out.returncode == 0, out.stderr
    assert "'bogus'" in out.stderr and "does not declare" in out.stderr
    refused = hyops("apply", "modules/req", "--var", "cidr=10.12.0.0/16", "--var", "bogus=1")
    assert refused.returncode == 2 and "unknown input 'bogus'" in refused.stderr


def test_text_that_looks_like_a_template_reaches_the_provider_as_written(hyops: Hyops, required: Path) -> None:
    """The var file is HCL: `${`, `%{`, quotes and backslashes must arrive unchanged."""
    tricky = 'n ${x} %{y} "q" \\ \u00e9'
    out = hyops("apply", "modules/req", "--var", "cidr=10.13.0.0/16", "--var", f"name={tricky}")
    assert out.returncode == 0, out.stderr
    assert network_name(hyops) == tricky


def test_destroy_without_inputs_reuses_the_recorded_rerun_inputs(hyops: Hyops, required: Path) -> None:
    """`hyops destroy MODULE` of a module with a required variable, no inputs given: before,
    exit 2 ("missing required input") although rerun.inputs.yml holds it (stack destroy used
    it). Given inputs still win; the last run's fills only what nothing gives."""
    out = hyops("apply", "modules/req", "--var", "cidr=10.20.0.0/16", "--var", "name=kept")
    assert out.returncode == 0, out.stderr
    plan = hyops("plan", "modules/req", "--var", "cidr=10.20.0.0/16", "--var", "name=kept")
    assert plan.returncode == 0, plan.stderr  # plan reads the same var file
    out = hyops("destroy", "modules/req", "--var", "name=given")
    assert out.returncode == 0, out.stderr
    rec = hyops.record("req")
    assert rec is not None and rec["status"] == "destroyed"
    assert hyops.sim_objects() == []
    doc = resolved(hyops, "req")
    assert doc["cidr"]["value"] == "10.20.0.0/16" and doc["cidr"]["source"].startswith("recorded")
    assert doc["name"]["value"] == "given" and doc["name"]["source"] == "--var"
    assert "overrides" not in doc["name"]  # name has a default: the last run's value is no candidate


def test_plan_and_apply_without_inputs_fill_a_required_input_from_the_last_run_and_say_so(
        hyops: Hyops, required: Path) -> None:
    """`hyops plan MODULE` after an apply given `--var cidr=...`: the required cidr, which no
    source gives and which has no default, comes from rerun.inputs.yml, for plan and apply
    alike, and both say so naming the file (before, apply refused what plan took)."""
    assert hyops("apply", "modules/req", "--var", "cidr=10.22.0.0/16").returncode == 0
    recorded = "runtime/config/modules/req/rerun.inputs.yml"

    plan = hyops("plan", "modules/req", "--detailed-exitcode")
    changed = hyops("plan", "modules/req", "--var", "name=other", "--detailed-exitcode")
    apply = hyops("apply", "modules/req")

    assert plan.returncode == 0, plan.stdout + plan.stderr  # no change: the recorded cidr was used
    assert recorded in plan.stderr and "cidr" in plan.stderr, plan.stderr  # and it says so
    assert changed.returncode == 2, changed.stdout + changed.stderr  # given inputs still win
    assert apply.returncode == 0 and recorded in apply.stderr, apply.stderr
    assert resolved(hyops, "req")["cidr"]["source"].startswith("recorded")


def test_the_callers_tf_var_outranks_the_last_runs_input_in_plan_and_apply_alike(
        hyops: Hyops, required: Path, tmp_path: Path) -> None:
    """After `hyops apply M --var name=a`, `TF_VAR_name=b hyops plan M` said "No changes" (the
    last run's name, passed as an explicit input, outranked the caller's environment) while
    `TF_VAR_name=b hyops apply M` renamed the network. Now the recorded value fills only the
    required cidr that nothing gives: the plan shows the rename, its saved file applies it,
    and a plain apply with the same environment resolves the same inputs digest."""
    assert hyops("apply", "modules/req", "--var", "cidr=10.31.0.0/16", "--var", "name=a").returncode == 0
    env = {"TF_VAR_name": "b"}

    plan = hyops("plan", "modules/req", "--detailed-exitcode", "--out", "b.tfplan", env=env)
    assert plan.returncode == 2, plan.stdout + plan.stderr  # the rename is shown
    sidecar = json.loads((tmp_path / "b.tfplan.hyops.json").read_text())
    assert sidecar["inputs"] == {"cidr": sidecar["inputs"]["cidr"]}  # name is the engine's TF_VAR_, not ours
    assert sidecar["inputs"]["cidr"].startswith("recorded")
    applied = hyops("apply", "b.tfplan", env=env)
    assert applied.returncode == 0, applied.stderr
    assert network_name(hyops) == "b"  # the plan shown is the one applied

    env = {"TF_VAR_name": "c"}
    plan = hyops("plan", "modules/req", "--out", "c.tfplan", env=env)
    assert plan.returncode == 0, plan.stderr
    digest = json.loads((tmp_path / "c.tfplan.hyops.json").read_text())["inputs_digest"]
    out = hyops("apply", "modules/req", env=env)
    assert out.returncode == 0, out.stderr
    assert network_name(hyops) == "c"
    rec = hyops.record("req")
    assert rec is not None and rec["inputs_digest"] == digest  # plan and apply resolved the same inputs


def test_destroy_without_inputs_after_an_apply_with_none_still_works(hyops: Hyops, required: Path) -> None:
    """A module whose required input came from its terraform.tfvars records none; destroy
    reads the tfvars again through the engine."""
    (required / "terraform.tfvars").write_text('cidr = "10.23.0.0/16"\n')
    assert hyops("apply", "modules/req").returncode == 0
    out = hyops("destroy", "modules/req")
    assert out.returncode == 0, out.stderr
    assert hyops.sim_objects() == []


def test_reconcile_plans_read_the_recorded_inputs_through_the_var_file(hyops: Hyops, required: Path) -> None:
    """reconcile's refresh-only plan evaluates the required variable from rerun.inputs.yml."""
    out = hyops("apply", "modules/req", "--var", "cidr=10.21.0.0/16")
    assert out.returncode == 0, out.stderr
    check = hyops("reconcile", "modules/req", "--json")
    assert check.returncode == 0, check.stdout + check.stderr
    assert json.loads(check.stdout)["consistent"] is True


def test_the_convergence_plan_after_a_targeted_apply_reads_the_same_inputs(hyops: Hyops, required: Path) -> None:
    """`-- -target=...` is followed by a whole-configuration plan: without the var file it
    could not evaluate the required cidr and the record could never say `ok`."""
    out = hyops("apply", "modules/req", "--var", "cidr=10.22.0.0/16", "--", "-target=sim_network.this")
    assert out.returncode == 0, out.stderr
    rec = hyops.record("req")
    assert rec is not None and rec["status"] == "ok", rec


SECRET_TF = SIM_HEADER + """variable "password" {
  type      = string
  sensitive = true
  validation {
    condition     = sha256(var.password) == "%s"
    error_message = "The password is not the one the test gave."
  }
}
resource "sim_network" "this" {
  name = "secret-net"
}
"""


# Slack for file timestamps, which the kernel takes from a clock that may lag time.time_ns().
TIMESTAMP_SLACK_NS = 2_000_000_000


def _files_holding(needle: bytes, roots: list[Path], since_ns: int) -> list[str]:
    """Regular files under roots that hold `needle`, of those changed since `since_ns`: a file
    written with a value made after that time has a later ctime (which no process can set
    back), so the older ones, most of a shared /tmp, need not be read."""
    found = []
    for root in roots:
        for dirpath, _dirs, files in os.walk(root, onerror=lambda _err: None):
            for name in files:
                path = os.path.join(dirpath, name)
                try:
                    info = os.lstat(path)
                    if not stat.S_ISREG(info.st_mode):
                        continue  # never open a FIFO or a device
                    if info.st_ctime_ns < since_ns - TIMESTAMP_SLACK_NS:
                        continue  # unchanged since before the secret existed
                    with open(path, "rb") as handle:
                        if needle in handle.read():
                            found.append(path)
                except OSError:
                    continue
    return found


def _processes_holding(needle: bytes, but: int) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == but:
            continue
        for part in ("cmdline", "environ"):
            try:
                if needle in (entry / part).read_bytes():
                    found.append(f"{entry.name}/{part}")
            except OSError:
                continue
    return found


def test_a_sensitive_var_is_in_no_file_and_no_process_argv(
        hyops: Hyops, tmp_path: Path, faults_file: Callable[..., Path]) -> None:
    """A sensitive `--var` reaches the engine (its validation checks the value's sha256) yet
    is in no process's argv or environment while the create hangs, and afterwards in no file
    under the runtime root, the module dir, /tmp or /dev/shm."""
    made_ns = time.time_ns()
    secret = "pw-" + secrets.token_hex(16)
    module = tmp_path / "modules" / "secret"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(SECRET_TF % hashlib.sha256(secret.encode()).hexdigest())
    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_network", op="create")])
    proc = hyops.start("apply", "modules/secret", "--var", f"password={secret}")
    try:
        gate.wait_started(proc)
        # hyops itself was given it in its argv by the user; nothing it starts may hold it
        assert _processes_holding(secret.encode(), but=proc.pid) == []
    finally:
        gate.release()
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, out + err
    assert secret not in out + err
    roots = [hyops.runtime_root, module, Path("/tmp"), Path("/dev/shm")]
    assert _files_holding(secret.encode(), roots, since_ns=made_ns) == []
    assert resolved(hyops, "secret")["password"] == {"value": "<redacted>", "source": "--var"}
    wrong = hyops("apply", "modules/secret", "--var", "password=not-it")
    assert wrong.returncode != 0  # the validation really sees what was passed


def test_the_engine_reads_the_var_file_from_stdin_not_argv(hyops: Hyops, required: Path,
                                                           faults_file: Callable[..., Path],
                                                           tmp_path: Path) -> None:
    """While the engine runs, its argv holds `-var-file=/dev/fd/0` and no input value."""
    gate = Gate.at(tmp_path)
    faults_file([gate.rule(type="sim_network", op="create")])
    proc = hyops.start("apply", "modules/req", "--var", "cidr=10.30.0.0/16")
    try:
        gate.wait_started(proc)
        marker = f"-chdir={required}".encode()
        argvs = [p.read_bytes().split(b"\0") for p in Path("/proc").glob("[0-9]*/cmdline")
                 if _readable(p) and marker in p.read_bytes().split(b"\0")]
        assert argvs and all(b"-var-file=/dev/fd/0" in argv for argv in argvs)
        assert not any(b"10.30.0.0/16" in b"".join(argv) for argv in argvs)
    finally:
        gate.release()
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, out + err
    assert network_cidr(hyops) == "10.30.0.0/16"


def _readable(path: Path) -> bool:
    try:
        path.read_bytes()
        return True
    except OSError:
        return False


def test_a_large_var_file_does_not_block(hyops: Hyops, required: Path, tmp_path: Path) -> None:
    """An input far larger than a pipe buffer (64 KiB) still reaches the engine."""
    (tmp_path / "big.yml").write_text(yaml.safe_dump({"blob": "x" * 300_000}))
    module_tf = (REQUIRED_TF + 'variable "blob" {\n  type = string\n  default = ""\n}\n'
                 'output "blob_len" {\n  value = length(var.blob)\n}\n')
    (required / "main.tf").write_text(module_tf)
    out = hyops("apply", "modules/req", "--var", "cidr=10.31.0.0/16", "--inputs", "big.yml")
    assert out.returncode == 0, out.stderr
    rec = hyops.record("req")
    assert rec is not None and rec["outputs"]["blob_len"] == 300_000


def test_passthrough_var_without_value_is_a_usage_error(hyops: Hyops, required: Path) -> None:
    out = hyops("apply", "modules/req", "--", "-var")
    assert out.returncode == 2 and "needs a value" in out.stderr
    assert hyops.record("req") is None
