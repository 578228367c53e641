"""Issue 10 case 8 on the real engine: secrets in stack runs.

- `inputs_digest` was an unsalted sha256 of the inputs, secrets included, so a record plus
  a short guess list gave the secret back. It is now an HMAC under a random key kept in
  the runtime root (`config/digest.key`, 0600), and `--resume` still skips an unchanged
  member and reruns a changed one (a changed secret included).
- A sensitive upstream output wired (`inputs_from`) into a downstream variable not declared
  sensitive put the secret into the downstream record and events.jsonl. Such a stack is now
  refused at validation (exit 2) before anything runs.
"""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path

import pytest

from tests.integration.helpers import SIM_HEADER
from tests.integration.stacks import StackEnv, members, statuses
from tests.stackfiles import NETWORK_VM_CONFIG

pytestmark = pytest.mark.integration

TOKEN = "hunter2-resume-token"
CHANGED_TOKEN = "hunter3-resume-token"

# The demo's network, vm and config, the config given a secret stack input (TOKEN, replaced).
STACK_WITH_TOKEN = NETWORK_VM_CONFIG.replace("    owned_by: vm\n", "    owned_by: vm\n    inputs: {api_token: TOKEN}\n")
assert "api_token" in STACK_WITH_TOKEN


def _files_under(root: Path) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()]


def _plain_digest(inputs: dict[str, object]) -> str:
    """The old, unkeyed `inputs_digest` of these explicit inputs."""
    canonical = json.dumps(inputs, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def test_resume_compares_a_keyed_digest_that_no_guess_list_can_invert(stack_env: StackEnv) -> None:
    """Sequence: stack apply with a secret stack input; the record's inputs_digest was the
    plain sha256 of {api_token, vm_id}, found again by hashing a guess. Now it is an HMAC
    under <root>/config/digest.key; `--resume` skips the unchanged members, then reruns
    only the member whose secret changed; a record holding an old plain digest reruns."""
    hyops = stack_env.hyops
    stack_env.write(STACK_WITH_TOKEN.replace("TOKEN", TOKEN))
    first = stack_env.stack("apply", "stack/stack.yml")
    assert first.returncode == 0, first.stderr

    rec = hyops.record("demo/config")
    vm_id = hyops.record("demo/vm")["outputs"]["vm_id"]
    plain = _plain_digest({"api_token": TOKEN, "vm_id": vm_id})
    assert rec["inputs_digest"].startswith("hmac-sha256:v1:"), rec["inputs_digest"]
    assert plain not in rec["inputs_digest"]
    key = hyops.runtime_root / "config" / "digest.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == 32
    for path, data in _files_under(hyops.runtime_root):
        for needle in (TOKEN, plain, hashlib.sha256(TOKEN.encode()).hexdigest()):
            assert needle.encode() not in data, f"{needle!r} found in {path}"

    unchanged = stack_env.stack("apply", "stack/stack.yml", "--resume")
    assert unchanged.returncode == 0, unchanged.stderr
    assert statuses(stack_env.report()) == {"network": "skipped", "vm": "skipped", "config": "skipped"}
    assert hyops.record("demo/config")["run_id"] == rec["run_id"]

    stack_env.write(STACK_WITH_TOKEN.replace("TOKEN", CHANGED_TOKEN))
    changed = stack_env.stack("apply", "stack/stack.yml", "--resume")
    assert changed.returncode == 0, changed.stderr
    assert statuses(stack_env.report()) == {"network": "skipped", "vm": "skipped", "config": "ok"}
    after = hyops.record("demo/config")
    assert after["run_id"] != rec["run_id"] and after["inputs_digest"] != rec["inputs_digest"]

    # A record written by an older hyops (a plain sha256 digest) is never taken as unchanged.
    old_style = dict(after, inputs_digest=_plain_digest({"api_token": CHANGED_TOKEN, "vm_id": vm_id}))
    hyops.record_path("demo/config").write_text(json.dumps(old_style))
    rerun = stack_env.stack("apply", "stack/stack.yml", "--resume")
    assert rerun.returncode == 0, rerun.stderr
    assert statuses(stack_env.report())["config"] == "ok"
    assert hyops.record("demo/config")["inputs_digest"].startswith("hmac-sha256:v1:")


# An upstream with a sensitive output, and a downstream that takes it in `token`.
SECRET_SOURCE_TF = SIM_HEADER + """
variable "password" {
  type      = string
  sensitive = true
}
resource "sim_network" "net" {
  name = "secret-source"
}
output "password" {
  value     = var.password
  sensitive = true
}
output "network_id" {
  value = sim_network.net.id
}
"""

SECRET_SINK_TF = SIM_HEADER + """
variable "token" {
  type = string
  SENSITIVE
}
variable "network_id" {
  type = string
}
resource "sim_network" "net" {
  name = "sink-${var.network_id}"
}
output "token_used" {
  value = var.token
  SENSITIVE
}
"""

SECRET_STACK = """\
stack: demo
modules:
  - name: source
    path: source
    inputs: {password: PASSWORD}
  - name: sink
    path: sink
    depends_on: [source]
    inputs_from: {token: source.password, network_id: source.network_id}
"""

PASSWORD = "correct-horse-battery-staple"


def _secret_stack(env: StackEnv, sink_sensitive: bool) -> None:
    mark = "sensitive = true" if sink_sensitive else ""
    env.module("source", text=SECRET_SOURCE_TF)
    env.module("sink", text=SECRET_SINK_TF.replace("SENSITIVE", mark))
    env.write(SECRET_STACK.replace("PASSWORD", PASSWORD))


def test_a_sensitive_output_wired_into_a_non_sensitive_variable_is_refused_before_anything_runs(
    stack_env: StackEnv,
) -> None:
    """Sequence: upstream output `password` (sensitive = true) wired by inputs_from into the
    downstream variable `token` (not sensitive), then `stack apply`: both members ran and
    the password reached the downstream record (its output) and events.jsonl. Now exit 2 at
    validation, naming member, input and output, with nothing run and nothing recorded."""
    _secret_stack(stack_env, sink_sensitive=False)
    hyops = stack_env.hyops

    result = stack_env.stack("apply", "stack/stack.yml")

    assert result.returncode == 2, result.stderr
    problem = [line for line in result.stderr.splitlines() if "inputs_from.token" in line]
    assert len(problem) == 1, result.stderr
    assert "'sink'" in problem[0] and "source.password" in problem[0]
    assert "sensitive = true" in problem[0]
    assert "network_id" not in result.stderr  # the non-sensitive wire is fine
    for ref in ("demo/source", "demo/sink"):
        assert hyops.record(ref) is None
        assert stack_env.run_dirs(ref) == []
    assert hyops.sim_calls() == []
    assert not (hyops.runtime_root / "stacks").exists()
    for path, data in _files_under(hyops.runtime_root):
        assert PASSWORD.encode() not in data, path


def test_a_sensitive_output_wired_into_a_sensitive_variable_runs_and_stays_off_disk(
    stack_env: StackEnv,
) -> None:
    """The allowed case: the downstream variable is `sensitive = true`. The stack applies,
    the value reaches the downstream engine (its sensitive output holds it in state), and
    no file under the runtime root holds the password or its sha256."""
    _secret_stack(stack_env, sink_sensitive=True)
    hyops = stack_env.hyops

    result = stack_env.stack("apply", "stack/stack.yml")

    assert result.returncode == 0, result.stderr
    assert statuses(stack_env.report()) == {"source": "ok", "sink": "ok"}
    sink = hyops.record("demo/sink")
    assert sink["outputs"]["token_used"] == {"sensitive": True}
    state = json.loads((stack_env.directory / "sink" / "terraform.tfstate").read_text())
    assert state["outputs"]["token_used"]["value"] == PASSWORD  # it did flow, in memory only
    assert members(stack_env.report())["sink"]["run_id"] == sink["run_id"]
    for path, data in _files_under(hyops.runtime_root):
        for needle in (PASSWORD, hashlib.sha256(PASSWORD.encode()).hexdigest()):
            assert needle.encode() not in data, f"{needle!r} found in {path}"
    assert PASSWORD not in result.stdout + result.stderr
