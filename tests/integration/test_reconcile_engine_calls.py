"""How many engine calls `hyops reconcile` makes per finding, so the count cannot creep back
up: the engine is a wrapper that logs each call's arguments, then runs the real engine.

Per module: one refresh-only plan, the state read from the module's local state file (a
`show -json` only where the engine keeps its state elsewhere or an errored.tfstate must be
compared); a normal plan only for an `error` or `running` record (or one with suspect
orphans), refreshing every object (never `-refresh=false`: issue 54); `--write` reads
all of it once, under the lock, and reports from it. `--stack` also plans each `ok` member
(refreshing too), to judge what `stack apply` would change, unless its configuration or
inputs already say so (config_changed) or drift does.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.hyops_cli import Hyops
from tests.integration.stacks import StackEnv
from tests.stackfiles import NETWORK_VM

SEP = "\x1f"


@pytest.fixture
def calls_log(tmp_path: Path) -> Path:
    return tmp_path / "engine-calls.log"


@pytest.fixture
def counted(hyops: Hyops, engine_path: str, tmp_path: Path, calls_log: Path) -> Hyops:
    """`hyops` whose engine logs every call (one line, arguments joined by \\x1f) to calls_log."""
    wrapper = tmp_path / "bin" / "terraform"
    wrapper.parent.mkdir()
    wrapper.write_text("#!/bin/sh\n"
                       f"(IFS='{SEP}'; printf '%s\\n' \"$*\") >> {shlex.quote(str(calls_log))}\n"
                       f"exec {shlex.quote(engine_path)} \"$@\"\n")
    wrapper.chmod(0o755)
    hyops.engine = str(wrapper)
    return hyops


def engine_calls(log: Path) -> list[str]:
    """Each logged call as `SUBCOMMAND [-refresh-only] [-refresh=false] [-out]`, version probes left out."""
    out = []
    for line in log.read_text().splitlines() if log.is_file() else []:
        args = line.split(SEP)
        words = [a for a in args if not a.startswith("-")]
        if not words or words[0] == "version":
            continue
        flags = [a for a in args if a in ("-refresh-only", "-refresh=false")]
        flags += ["-out"] if any(a.startswith("-out=") for a in args) else []
        out.append(" ".join([words[0], *flags]))
    return out


def reconcile_calls(hyops: Hyops, log: Path, *args: str, code: int = 0,
                    env: dict[str, str] | None = None) -> tuple[list[str], dict]:
    log.unlink(missing_ok=True)
    done = hyops("reconcile", "modules/network", "--json", *args, env=env)
    assert done.returncode == code, done.stdout + done.stderr
    return engine_calls(log), json.loads(done.stdout)


def test_a_state_the_engine_keeps_elsewhere_is_read_with_show(
    counted: Hyops, module_copy: Callable[[str], Path], calls_log: Path
) -> None:
    module_copy("network")
    assert counted("apply", "modules/network").returncode == 0

    # a state file of the user's choosing (here the usual one): hyops cannot know it is local
    calls, doc = reconcile_calls(counted, calls_log, env={"TF_CLI_ARGS_plan": "-state=terraform.tfstate"})

    assert calls == ["show", "state", "plan -refresh-only"]  # `state pull`: who wrote the state last
    assert doc["consistent"] is True


def test_an_errored_state_file_is_compared_through_the_engine(
    counted: Hyops, module_copy: Callable[[str], Path], calls_log: Path
) -> None:
    module = module_copy("network")
    assert counted("apply", "modules/network").returncode == 0
    (module / "errored.tfstate").write_bytes((module / "terraform.tfstate").read_bytes())  # pushed back

    calls, doc = reconcile_calls(counted, calls_log)

    assert calls == ["show", "show", "plan -refresh-only"]
    assert doc["consistent"] is True


def set_error(hyops: Hyops) -> None:
    rec = hyops.record("network")
    assert rec is not None
    rec.update(status="error", failed_command="apply", last_error="killed by a test")
    hyops.write_record("network", rec)


def test_a_healthy_module_costs_one_refresh_only_plan(
    counted: Hyops, module_copy: Callable[[str], Path], calls_log: Path
) -> None:
    module_copy("network")
    assert counted("apply", "modules/network").returncode == 0

    calls, doc = reconcile_calls(counted, calls_log)

    assert calls == ["plan -refresh-only"]
    assert doc["consistent"] is True


def test_an_error_record_adds_one_plan_without_a_second_refresh(
    counted: Hyops, module_copy: Callable[[str], Path], calls_log: Path
) -> None:
    module_copy("network")
    assert counted("apply", "modules/network").returncode == 0
    set_error(counted)

    calls, doc = reconcile_calls(counted, calls_log, code=3)

    assert calls == ["plan -refresh-only", "plan"]
    [module] = doc["modules"]
    assert [f["code"] for f in module["findings"]] == ["partial_apply"]
    assert "--write` records ok" in module["findings"][0]["detail"]


def test_write_reads_the_evidence_once_and_reports_the_settled_record_from_it(
    counted: Hyops, module_copy: Callable[[str], Path], calls_log: Path
) -> None:
    module_copy("network")
    assert counted("apply", "modules/network").returncode == 0
    set_error(counted)

    calls, doc = reconcile_calls(counted, calls_log, "--write")

    assert calls == ["plan -refresh-only", "plan"]
    [module] = doc["modules"]
    assert module["status"] == "ok" and module["findings"] == [] and doc["consistent"] is True
    assert (counted.record("network") or {})["status"] == "ok"


def test_after_drift_the_plan_of_an_error_record_refreshes(
    counted: Hyops, module_copy: Callable[[str], Path], calls_log: Path
) -> None:
    module_copy("network")
    assert counted("apply", "modules/network").returncode == 0
    set_error(counted)
    [live] = counted.sim_objects()
    (counted.sim_root / "objects" / f"{live['id']}.json").unlink()

    calls, doc = reconcile_calls(counted, calls_log, code=3)

    assert calls == ["plan -refresh-only", "plan"]
    [module] = doc["modules"]
    assert any("create sim_network.this" in f["detail"] for f in module["findings"])


def stack_reconcile_calls(hyops: Hyops, log: Path) -> tuple[list[str], dict]:
    log.unlink(missing_ok=True)
    done = hyops("reconcile", "--stack", "stack/stack.yml", "--json")
    assert done.returncode in (0, 3), done.stdout + done.stderr
    return engine_calls(log), json.loads(done.stdout)


def test_a_healthy_stack_member_costs_a_refresh_only_plan_and_a_plan(
    counted: Hyops, stack_env: StackEnv, calls_log: Path
) -> None:
    stack_env.write(NETWORK_VM)
    assert counted("stack", "apply", "stack/stack.yml").returncode == 0

    calls, doc = stack_reconcile_calls(counted, calls_log)

    assert sorted(calls) == ["plan", "plan", "plan -refresh-only", "plan -refresh-only"]
    assert doc["consistent"] is True


def test_a_stack_member_whose_configuration_changed_is_not_planned(
    counted: Hyops, stack_env: StackEnv, calls_log: Path
) -> None:
    stack_env.write(NETWORK_VM)
    assert counted("stack", "apply", "stack/stack.yml").returncode == 0
    vm_tf = stack_env.directory / "vm" / "main.tf"
    vm_tf.write_text(vm_tf.read_text().replace('"demo-vm"', '"demo-vm-v2"'))

    calls, doc = stack_reconcile_calls(counted, calls_log)

    assert sorted(calls) == ["plan", "plan -refresh-only", "plan -refresh-only"]
    assert [[f["code"] for f in m["findings"]] for m in doc["modules"]] == [[], ["config_changed"]]
