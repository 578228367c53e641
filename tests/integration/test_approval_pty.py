"""On a terminal, `hyops apply`/`destroy` show the plan and ask; only `yes` goes on (issue 13, item 2).

Driven through a real pseudo-terminal (stdin, stdout and stderr of hyops are its slave end),
reading until the question appears: no sleeps, one generous overall deadline.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hybridops_tf.cli.approval import QUESTION
from tests.integration.hyops_cli import HYOPS, Hyops
from tests.integration.stacks import StackEnv, statuses

DEADLINE_SECONDS = 240


@dataclass
class Session:
    """One hyops process on a pseudo-terminal: what it printed and its exit code."""

    output: str
    returncode: int


def _on_terminal(hyops: Hyops, args: list[str], answer: str | None, **env: str) -> Session:
    """Run `hyops ARGS` on a pty; when QUESTION appears, type `answer` (None: never expected)."""
    master, slave = os.openpty()
    proc = subprocess.Popen([HYOPS, *args], cwd=hyops.workdir, env=hyops.env(**env),
                            stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    seen, answered = b"", False
    deadline = time.monotonic() + DEADLINE_SECONDS
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: every slave end is closed, hyops has exited
                break
            if not chunk:
                break
            seen += chunk
            if not answered and QUESTION.encode() in seen:
                assert answer is not None, f"hyops asked although it should not:\n{seen.decode(errors='replace')}"
                os.write(master, answer.encode() + b"\n")
                answered = True
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return Session(seen.decode(errors="replace").replace("\r\n", "\n"), code)


def test_no_changes_nothing_and_yes_then_applies_what_was_shown(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")

    declined = _on_terminal(hyops, ["apply", "modules/network", "--var", "name=asked-net"], "no")

    assert declined.returncode == 4, declined.output
    assert "+ sim_network.this will be created" in declined.output
    assert "Apply cancelled." in declined.output
    assert hyops.sim_objects() == []
    assert hyops.record("network") is None

    accepted = _on_terminal(hyops, ["apply", "modules/network", "--var", "name=asked-net"], "yes")

    assert accepted.returncode == 0, accepted.output
    assert "+ sim_network.this will be created" in accepted.output
    assert len(hyops.sim_objects()) == 1
    record = hyops.record("network")
    assert record is not None and record["status"] == "ok"


def test_destroy_on_a_terminal_asks_and_no_keeps_everything(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0  # no terminal: never asks
    before = hyops.record("network")

    declined = _on_terminal(hyops, ["destroy", "modules/network"], "no")

    assert declined.returncode == 4, declined.output
    assert "- sim_network.this will be destroyed" in declined.output
    assert "Destroy cancelled." in declined.output
    assert len(hyops.sim_objects()) == 1
    assert hyops.record("network") == before

    accepted = _on_terminal(hyops, ["destroy", "modules/network"], "yes")

    assert accepted.returncode == 0, accepted.output
    assert hyops.sim_objects() == []
    assert hyops.record("network")["status"] == "destroyed"


def test_auto_approve_on_a_terminal_does_not_ask(hyops: Hyops, module_copy: Callable[[str], Path]) -> None:
    module_copy("network")

    by_option = _on_terminal(hyops, ["apply", "modules/network", "--auto-approve"], None)
    by_env = _on_terminal(hyops, ["destroy", "modules/network"], None, HYOPS_AUTO_APPROVE="1")

    assert by_option.returncode == 0, by_option.output
    assert by_env.returncode == 0, by_env.output
    assert hyops.record("network")["status"] == "destroyed"


def test_a_saved_plan_on_a_terminal_is_applied_without_asking(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    assert hyops("plan", "modules/network", "--out", "net.tfplan").returncode == 0

    applied = _on_terminal(hyops, ["apply", "net.tfplan"], None)

    assert applied.returncode == 0, applied.output
    assert len(hyops.sim_objects()) == 1


def test_stack_apply_on_a_terminal_shows_the_stack_plan_once_and_asks_once(stack_env: StackEnv) -> None:
    hyops = stack_env.hyops

    declined = _on_terminal(hyops, ["stack", "apply", "stack/stack.yml"], "no")

    assert declined.returncode == 4, declined.output
    assert declined.output.count(QUESTION) == 1
    summary = declined.output.split("Plan of stack demo (apply):", 1)[1].split(QUESTION, 1)[0]
    lines = {line.split()[0]: line for line in summary.strip().splitlines()}
    assert "1 to add" in lines["network"]
    assert "needs the outputs of network" in lines["vm"]  # unknown until network is applied
    assert hyops.sim_objects() == []
    assert hyops.record("demo/network") is None

    accepted = _on_terminal(hyops, ["stack", "apply", "stack/stack.yml"], "yes")

    assert accepted.returncode == 0, accepted.output
    assert accepted.output.count(QUESTION) == 1
    assert statuses(stack_env.report()) == {"network": "ok", "vm": "ok", "config": "ok", "health": "ok"}


def test_an_uncertain_record_is_refused_on_a_terminal_before_any_question(
    hyops: Hyops, module_copy: Callable[[str], Path]
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    rec = hyops.record("network")
    rec.update(status="running", owner={"pid": 999999, "host": "gone", "user": "ci", "run_id": rec["run_id"]})
    hyops.write_record("network", rec)  # a stale running record: the outcome is uncertain

    refused = _on_terminal(hyops, ["apply", "modules/network"], None)

    assert refused.returncode == 4, refused.output
    assert "hyops reconcile" in refused.output and QUESTION not in refused.output


EPHEMERAL_TF = """
variable "token" {
  type      = string
  ephemeral = true
}
resource "terraform_data" "this" {
  input = "asked"
  provisioner "local-exec" {
    command     = "test -n \\"$TOKEN\\""
    environment = { TOKEN = var.token }
  }
}
"""


def test_an_approved_apply_takes_an_ephemeral_value_from_the_plan_to_the_apply(ephemeral_hyops: Hyops) -> None:
    """The reviewed plan keeps no ephemeral value (the engine saves none in a plan file): the
    apply after `yes` gets it again, from the command line it was given on, and keeps it nowhere."""
    module = ephemeral_hyops.workdir / "modules" / "eph"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(EPHEMERAL_TF)
    token = "tok-asked-5c1e"

    accepted = _on_terminal(ephemeral_hyops, ["apply", "modules/eph", "--var", f"token={token}"], "yes")

    assert accepted.returncode == 0, accepted.output
    assert ephemeral_hyops.record("eph")["status"] == "ok"
    held = [p for p in ephemeral_hyops.workdir.rglob("*") if p.is_file() and ".terraform" not in p.parts
            and token.encode() in p.read_bytes()]
    assert held == []
