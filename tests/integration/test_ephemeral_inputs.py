"""Ephemeral variables (`ephemeral = true`, Terraform >= 1.10) are never written anywhere (issue 38, item 4).

On the modern engine (`ephemeral_hyops`, skipped with a message where there is none >= 1.10). The
module's provisioner reads the ephemeral token, so a run that succeeds proves the engine got it; every
file under the test's folder (runtime root, module, plan file) is then searched for the value.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from tests.integration.hyops_cli import Hyops
from tests.integration.shared_store import SharedStore

EPHEMERAL_TF = """
variable "token" {
  type      = string
  ephemeral = true
}
variable "name" {
  type    = string
  default = "first"
}
variable "fail" {
  type    = bool
  default = false
}
resource "terraform_data" "this" {
  input = var.name
  provisioner "local-exec" {
    command     = var.fail ? "exit 3" : "test -n \\"$TOKEN\\""
    environment = { TOKEN = var.token }
  }
}
output "name" {
  value = terraform_data.this.output
}
"""

TOKENS = ("tok-from-var-1b7c", "tok-from-file-9e2d", "tok-from-env-4a0f")


def _module(hyops: Hyops) -> Path:
    module = hyops.workdir / "modules" / "eph"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(EPHEMERAL_TF)
    return module


def _files_holding(folder: Path, needles: tuple[str, ...], skip: tuple[Path, ...] = ()) -> list[str]:
    """Every file under `folder` (the engine's plugins aside) whose bytes hold one of `needles`."""
    found = []
    for path in folder.rglob("*"):
        if not path.is_file() or path.is_symlink() or path in skip or ".terraform" in path.parts:
            continue
        data = path.read_bytes()
        found += [f"{path.relative_to(folder)}: {n}" for n in needles if n.encode() in data]
    return found


def _runs(hyops: Hyops, ref: str) -> list[Path]:
    return sorted((hyops.runtime_root / "runs" / ref.replace("/", "__")).iterdir())


def test_an_ephemeral_value_given_by_var_var_file_or_tf_var_is_written_nowhere(ephemeral_hyops: Hyops) -> None:
    hyops = ephemeral_hyops
    _module(hyops)
    var_file = hyops.workdir / "secret.tfvars"
    var_file.write_text(f'token = "{TOKENS[1]}"\n')

    by_var = hyops("apply", "modules/eph", "--var", f"token={TOKENS[0]}", "--var", "name=a")
    by_file = hyops("apply", "modules/eph", "--var-file", str(var_file), "--var", "name=b")
    by_env = hyops("apply", "modules/eph", "--var", "name=c", env={"TF_VAR_token": TOKENS[2]})
    planned = hyops("plan", "modules/eph", "--", f"-var=token={TOKENS[0]}")

    for result in (by_var, by_file, by_env):
        assert result.returncode == 0, result.stderr
    assert planned.returncode == 0, planned.stderr
    assert hyops.record("eph")["outputs"] == {"name": "c"}
    assert _files_holding(hyops.workdir, TOKENS, skip=(var_file,)) == []
    rerun = hyops.runtime_root / "config" / "modules" / "eph" / "rerun.inputs.yml"
    assert yaml.safe_load(rerun.read_text()) == {"token": "<ephemeral>", "name": "c"}
    # run ids order runs only to the second: two runs in one second sort by their random part,
    # so each run is found by what it holds, not by its place
    argvs = [json.loads((run / "meta.json").read_text())["argv"] for run in _runs(hyops, "eph")]
    assert len(argvs) == 4
    assert any("token=<ephemeral>" in argv for argv in argvs)  # the apply's --var
    assert any("-var=token=<ephemeral>" in argv for argv in argvs)  # the plan's engine -var
    resolved = [yaml.safe_load((run / "resolved.inputs.yml").read_text()) for run in _runs(hyops, "eph")]
    tokens = [(r["token"]["value"], r["token"]["source"]) for r in resolved]
    assert sorted(tokens) == sorted([("<ephemeral>", "--var"), ("<ephemeral>", f"--var-file {var_file}"),
                                     ("<ephemeral>", "env"), ("<ephemeral>", "--var")])


def test_a_rerun_asks_for_an_ephemeral_value_as_for_a_sensitive_one(ephemeral_hyops: Hyops) -> None:
    hyops = ephemeral_hyops
    _module(hyops)
    failed = hyops("apply", "modules/eph", "--var", f"token={TOKENS[0]}", "--var", "fail=true")
    assert failed.returncode == 1, failed.stderr

    checked = hyops("reconcile", "modules/eph", "--json", "--var", f"token={TOKENS[1]}")  # its plans need it

    assert checked.returncode == 3, checked.stderr
    findings = json.loads(checked.stdout)["modules"][0]["findings"]
    commands = [a["command"] for f in findings for a in f["alternatives"]] + [
        c for f in findings for c in f["next_actions"]]
    applies = [c for c in commands if c.startswith("hyops apply")]
    assert applies and all("--var 'token=<ephemeral>'" in c for c in applies), commands
    assert _files_holding(hyops.workdir, TOKENS) == []


def test_a_saved_plan_made_with_an_ephemeral_value_applies_with_the_value_given_again(
        ephemeral_hyops: Hyops) -> None:
    """The engine keeps no ephemeral value in a plan file: `apply PLAN_FILE` takes it again
    (--var, --var-file or TF_VAR_), and only it; without it nothing runs."""
    hyops = ephemeral_hyops
    _module(hyops)
    plan_file = hyops.workdir / "eph.tfplan"
    made = hyops("plan", "modules/eph", "--var", f"token={TOKENS[0]}", "--var", "name=planned",
                 "--out", str(plan_file))
    assert made.returncode == 0, made.stderr

    missing = hyops("apply", str(plan_file))
    other = hyops("apply", str(plan_file), "--var", f"token={TOKENS[0]}", "--var", "name=other")

    assert missing.returncode == 2, missing.stderr
    assert "--var token=" in missing.stderr, missing.stderr
    assert other.returncode == 2, other.stderr
    assert "'name'" in other.stderr, other.stderr
    assert hyops.record("eph") is None

    applied = hyops("apply", str(plan_file), "--var", f"token={TOKENS[1]}")

    assert applied.returncode == 0, applied.stderr
    assert hyops.record("eph")["outputs"] == {"name": "planned"}
    assert _files_holding(hyops.workdir, TOKENS) == []


@pytest.mark.postgres
def test_an_ephemeral_value_is_kept_out_of_the_shared_store(ephemeral_hyops: Hyops, pg_store: SharedStore) -> None:
    """The shared store keeps each run's meta (argv) and the module's rerun.inputs.yml."""
    hyops = dataclasses.replace(ephemeral_hyops, extra_env={**ephemeral_hyops.extra_env, **pg_store.env()},
                                store=pg_store)
    _module(hyops)

    applied = hyops("apply", "modules/eph", "--var", f"token={TOKENS[0]}")

    assert applied.returncode == 0, applied.stderr
    stored = pg_store.dump()
    assert TOKENS[0] not in stored and "token: <ephemeral>" in stored and "token=<ephemeral>" in stored
