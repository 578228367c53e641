"""`stack apply --queue` where a required input comes only from the workers' environment
(issue 55, item 5): examples/ci/github-actions-queue.yml gives the deployment secret to the
work jobs alone, and its queue job exited 2 ("required input(s) 'token' set by neither inputs
nor inputs_from"), so the pipeline died at its first job. Queueing runs nothing: it notes the
input, as the read-only commands do, and the worker given the secret applies the member;
`stack apply` without --queue, which runs the engine, still refuses."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.integration.helpers import SIM_HEADER
from tests.integration.hyops_cli import HYOPS, Hyops
from tests.integration.shared_store import SharedStore

pytestmark = [pytest.mark.integration, pytest.mark.postgres]

TOKEN_TF = SIM_HEADER + """variable "token" {
  type      = string
  sensitive = true
}
resource "sim_network" "net" {
  name = "queued-token-net"
}
"""


def test_a_queued_apply_notes_the_secret_only_the_workers_give_and_the_worker_applies(
        tmp_path: Path, engine_path: str, sim_root: Path, pg_store: SharedStore) -> None:
    base = tmp_path / "runner"
    (base / "net").mkdir(parents=True)
    (base / "net" / "main.tf").write_text(TOKEN_TF)
    (base / "stack.yml").write_text("stack: secrets\nmodules:\n  - name: net\n    path: net\n")
    runtime = base / ".hyops"
    runtime.mkdir(mode=0o700)
    hy = Hyops(base, runtime, engine_path, sim_root, pg_store.env(), store=pg_store)

    queued = hy("stack", "apply", "stack.yml", "--queue")

    assert queued.returncode == 0, queued.stdout + queued.stderr
    assert "'token'" in queued.stderr, queued.stderr  # noted, not refused
    work = subprocess.run([HYOPS, "stack", "work", "--until-idle", "--run", queued.stdout.strip(), "--name", "w1"],
                          cwd=base, env=hy.env(TF_VAR_token="s3cret"), capture_output=True, text=True, timeout=600)
    assert work.returncode == 0, work.stdout + work.stderr
    rec = hy.record("secrets/net")
    assert rec is not None and rec["status"] == "ok", rec
    assert "s3cret" not in queued.stderr + work.stdout + work.stderr
