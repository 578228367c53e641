"""How many engine calls a destroy makes per member, so the count cannot creep back up: the
engine is a wrapper that logs each call's arguments, then runs the real engine.

A verified destroy is one `destroy` per module: the empty state the engine wrote to the local
state file is the evidence, so no `show -json` follows it. An owned member is one refresh-only
apply after its owner's destroy. Where the engine may keep the state elsewhere (here: a
`-state` passthrough), the state is still read back with `show -json`.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from hybridops_tf.runtime.root import Runtime
from tests.integration.hyops_cli import Hyops
from tests.integration.stacks import StackEnv, statuses

pytestmark = pytest.mark.integration
SEP = "\x1f"


def counting_engine(hyops: Hyops, engine_path: str, log: Path) -> None:
    """Point `hyops` at a wrapper that logs every call (arguments joined by \\x1f) to log."""
    wrapper = log.parent / "bin" / "terraform"
    wrapper.parent.mkdir(exist_ok=True)
    wrapper.write_text("#!/bin/sh\n"
                       f"(IFS='{SEP}'; printf '%s\\n' \"$*\") >> {shlex.quote(str(log))}\n"
                       f"exec {shlex.quote(engine_path)} \"$@\"\n")
    wrapper.chmod(0o755)
    hyops.engine = str(wrapper)


def calls_by_module(log: Path) -> dict[str, list[str]]:
    """Module directory name -> its calls as `SUBCOMMAND [-refresh-only]`; version probes left out."""
    out: dict[str, list[str]] = {}
    for line in log.read_text().splitlines() if log.is_file() else []:
        args = line.split(SEP)
        words = [a for a in args if not a.startswith("-")]
        if not words or words[0] == "version":
            continue
        where = next((a.removeprefix("-chdir=") for a in args if a.startswith("-chdir=")), ".")
        flags = [a for a in args if a == "-refresh-only"]
        out.setdefault(Path(where).name, []).append(" ".join([words[0], *flags]))
    return out


@pytest.fixture
def calls_log(tmp_path: Path) -> Path:
    return tmp_path / "engine-calls.log"


def test_a_stack_destroy_costs_one_engine_call_per_member(
    stack_env: StackEnv, engine_path: str, calls_log: Path
) -> None:
    assert stack_env.stack("apply", "stack/stack.yml").returncode == 0
    counting_engine(stack_env.hyops, engine_path, calls_log)

    result = stack_env.stack("destroy", "stack/stack.yml")

    assert result.returncode == 0, result.stderr
    assert statuses(stack_env.report()) == dict.fromkeys(("network", "vm", "config", "health"), "destroyed")
    assert calls_by_module(calls_log) == {
        "health": ["destroy"], "vm": ["destroy"], "config": ["apply -refresh-only"], "network": ["destroy"],
    }
    assert stack_env.hyops.sim_objects() == []


@pytest.mark.parametrize("workspace", [None, "blue"])
def test_a_verified_destroy_is_one_engine_call_in_any_workspace(
    hyops: Hyops, module_copy: Callable[[str], Path], engine_path: str, calls_log: Path,
    workspace: str | None,
) -> None:
    module_copy("network")
    chosen = ("--workspace", workspace) if workspace else ()
    assert hyops("apply", "modules/network", *chosen).returncode == 0
    counting_engine(hyops, engine_path, calls_log)

    result = hyops("destroy", "modules/network", *chosen)

    assert result.returncode == 0, result.stderr
    assert calls_by_module(calls_log) == {"network": ["destroy"]}
    assert hyops.record("network" + (f"@{workspace}" if workspace else ""))["status"] == "destroyed"
    assert hyops.sim_objects() == []


def test_a_state_kept_elsewhere_is_still_read_back_with_show(
    hyops: Hyops, module_copy: Callable[[str], Path], engine_path: str, calls_log: Path
) -> None:
    module_copy("network")
    assert hyops("apply", "modules/network").returncode == 0
    counting_engine(hyops, engine_path, calls_log)

    result = hyops("destroy", "modules/network", "--", "-state=terraform.tfstate")

    assert result.returncode == 0, result.stderr
    # `state pull`: the record keeps who wrote the state last (docs/recovery.md: Another writer)
    assert calls_by_module(calls_log) == {"network": ["destroy", "show", "state"]}
    assert hyops.record("network")["status"] == "destroyed"


# --- the evidence rule itself: when the written state file stands in for `show -json` ----------
EMPTY_STATE = {"version": 4, "terraform_version": "1.0.3", "serial": 3, "lineage": "l", "outputs": {},
               "resources": []}


def _written(module: Path, *, command: str = "destroy", env: dict[str, str] | None = None,
             passthrough: tuple[str, ...] = (), started: float | None = None) -> object:
    """What operation.settle.written_empty_state makes of `module` after a run started at `started`."""
    import time
    from types import SimpleNamespace

    from hybridops_tf.operation import settle
    from hybridops_tf.operation.request import ModuleRequest
    from hybridops_tf.record.address import ModuleTarget
    from hybridops_tf.record.lifecycle import Status
    from hybridops_tf.record.model import OperationRecord

    at = time.gmtime(time.time() - 5 if started is None else started)
    running = OperationRecord("m", Status.RUNNING, "r1", started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", at))
    req = ModuleRequest(command=command, target=ModuleTarget(module, "m"), runtime=Runtime(module),
                                  passthrough=passthrough)
    from hybridops_tf.engine.binary import EngineInfo

    engine = SimpleNamespace(module_dir=module, env={"TF_WORKSPACE": "default", **(env or {})},
                             info=EngineInfo(Path("terraform"), "1.0.3", "terraform"))
    return settle.written_empty_state(req, engine, running)  # type: ignore[arg-type]


def _state_file(module: Path, doc: dict[str, object], name: str = "terraform.tfstate") -> Path:
    import json

    path = module / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def test_an_empty_state_file_written_during_the_run_is_the_evidence(tmp_path: Path) -> None:
    _state_file(tmp_path, EMPTY_STATE)
    _state_file(tmp_path, EMPTY_STATE, "terraform.tfstate.d/blue/terraform.tfstate")
    data_only = {**EMPTY_STATE, "resources": [{"mode": "data", "type": "sim_x", "name": "d", "instances": []}]}

    assert _written(tmp_path).is_empty  # type: ignore[attr-defined]
    assert _written(tmp_path, command="refresh").is_empty  # type: ignore[attr-defined]
    assert _written(tmp_path, env={"TF_WORKSPACE": "blue"}).is_empty  # type: ignore[attr-defined]
    _state_file(tmp_path, data_only)
    assert _written(tmp_path).is_empty  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", ["managed object left", "older format", "not json", "no file",
                                  "written before the run", "other workspace", "apply"])
def test_anything_but_an_empty_state_written_by_this_run_asks_show(tmp_path: Path, case: str) -> None:
    import os
    import time

    left = {**EMPTY_STATE, "resources": [{"mode": "managed", "type": "sim_network", "name": "n",
                                          "instances": [{"attributes": {"id": "net-1"}}]}]}
    doc = {"managed object left": left, "older format": {**EMPTY_STATE, "version": 3}}.get(case, EMPTY_STATE)
    path = _state_file(tmp_path, doc)
    if case == "not json":
        path.write_text("{")
    if case == "no file":
        path.unlink()
    if case == "written before the run":
        os.utime(path, (time.time() - 60, time.time() - 60))

    found = _written(tmp_path, env={"TF_WORKSPACE": "blue"} if case == "other workspace" else None,
                     command="apply" if case == "apply" else "destroy")

    assert found is None


CLI_ARGS = {"-state in TF_CLI_ARGS": "-state=other.tfstate",
            "--state among TF_CLI_ARGS words": "-lock=false --state other.tfstate",
            "TF_CLI_ARGS that are not shell words": "-var='unclosed"}


@pytest.mark.parametrize("where", ["backend from init", "TF_DATA_DIR", "-state passthrough", *CLI_ARGS])
def test_a_state_the_engine_may_keep_elsewhere_asks_show(tmp_path: Path, where: str) -> None:
    _state_file(tmp_path, EMPTY_STATE)
    if where == "backend from init":
        _state_file(tmp_path, {"version": 3, "backend": {"type": "pg"}}, ".terraform/terraform.tfstate")
    env = {"TF_DATA_DIR": "elsewhere"} if where == "TF_DATA_DIR" else {}
    env |= {"TF_CLI_ARGS_destroy": CLI_ARGS[where]} if where in CLI_ARGS else {}
    passthrough = ("-state-out=other.tfstate",) if where == "-state passthrough" else ()

    assert _written(tmp_path, env=env, passthrough=passthrough) is None


def test_flags_that_name_no_state_file_keep_the_written_state_as_evidence(tmp_path: Path) -> None:
    _state_file(tmp_path, EMPTY_STATE)
    env = {"TF_CLI_ARGS": "-lock-timeout=5s", "TF_CLI_ARGS_destroy": "-parallelism=2 -var 'note=-state'"}

    found = _written(tmp_path, env=env, passthrough=("-var=path=-state-out", "-lock=false"))

    assert found is not None and found.is_empty  # type: ignore[attr-defined]
