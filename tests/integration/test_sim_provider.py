"""The sim provider under the real engine: offline install, lifecycle, and every fault mode.

These tests pin the engine-level outcome hyops builds on (docs/contract.md: Statuses, The simulated cloud): which faults
leave a tainted instance, which leave an orphan that state does not know, which leave
nothing, and that destroy really empties the cloud.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from click.testing import CliRunner

from hybridops_tf.cli.main import cli
from hybridops_tf.sim.cliconfig import SIM_SOURCE
from hybridops_tf.sim.install import (
    LAUNCHER_TEXT,
    SIM_VERSION,
    cli_config_path,
    launcher_path,
    module_uses_sim,
    sim_engine_env,
    write_cli_config,
)
from hybridops_tf.sim.store import SimStore
from tests.integration.helpers import SIM_MODULES, EngineResult
from tests.sim_calls import read_calls

pytestmark = pytest.mark.integration

Engine = Callable[..., EngineResult]


# ----- helpers -----
def state_instances(module_dir: Path) -> list[dict[str, Any]]:
    """Instances in the local terraform.tfstate: {type, name, status, attributes}."""
    path = module_dir / "terraform.tfstate"
    if not path.exists():
        return []
    doc = json.loads(path.read_text())
    return [
        {"type": r["type"], "name": r["name"], "status": i.get("status"), **i["attributes"]}
        for r in doc.get("resources", [])
        if r.get("mode") == "managed"
        for i in r.get("instances", [])
    ]


def sim_ls(runtime_root: Path, sim_root: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(
        cli,
        ["--runtime-root", str(runtime_root), "sim", "ls", "--json", "--sim-root", str(sim_root)],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["objects"]


def expected_h1() -> str:
    """Terraform's h1: (dirhash Hash1) of the one-file unpacked provider directory."""
    name = f"terraform-provider-sim_v{SIM_VERSION}"
    line = f"{hashlib.sha256(LAUNCHER_TEXT.encode()).hexdigest()}  {name}\n"
    return "h1:" + base64.b64encode(hashlib.sha256(line.encode()).digest()).decode()


def errored_addresses(result: EngineResult) -> list[str]:
    return [e["hook"]["resource"]["addr"] for e in result.of_type("apply_errored")]


def summaries(result: EngineResult) -> str:
    return "\n".join(d["summary"] + " :: " + d.get("detail", "") for d in result.diagnostics())


class AppliedNetwork(NamedTuple):
    module: Path
    id: str


@pytest.fixture
def applied_network(
    module_copy: Callable[[str], Path], init_and_apply: Engine, sim_root: Path
) -> AppliedNetwork:
    """The sim/network module, applied: most fault tests need a network to attach to."""
    module = module_copy("network")
    result = init_and_apply(module)
    assert result.returncode == 0, result.explain()
    # the last `outputs` message: newer engines (Terraform 1.11 here, not 1.0.3) also send the
    # planned outputs, without values, before applying
    return AppliedNetwork(module, result.of_type("outputs")[-1]["outputs"]["network_id"]["value"])


@pytest.fixture
def network(applied_network: AppliedNetwork) -> str:
    """The id of an applied sim_network."""
    return applied_network.id


# ----- install: mirror, CLI config, offline init -----
def test_write_cli_config_is_idempotent_and_private(runtime_root: Path) -> None:
    config = write_cli_config(runtime_root)
    launcher = launcher_path(runtime_root)
    assert config == cli_config_path(runtime_root)
    assert launcher.read_text() == LAUNCHER_TEXT
    assert stat.S_IMODE(launcher.stat().st_mode) == 0o700
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert stat.S_IMODE(launcher.parent.stat().st_mode) == 0o700
    text = config.read_text()
    assert f'include = ["{SIM_SOURCE}"]' in text and f'exclude = ["{SIM_SOURCE}"]' in text
    assert "dev_overrides" not in text
    before = (config.stat().st_mtime_ns, launcher.stat().st_mtime_ns)
    assert write_cli_config(runtime_root) == config
    assert (config.stat().st_mtime_ns, launcher.stat().st_mtime_ns) == before


def test_sim_engine_env_respects_the_callers_settings(runtime_root: Path, tmp_path: Path) -> None:
    own = tmp_path / "my.tfrc"  # one that installs the sim itself is used as it is
    own.write_text(f'provider_installation {{\n  filesystem_mirror {{\n    path = "/m"\n'
                   f'    include = ["{SIM_SOURCE}"]\n  }}\n}}\n')
    env = sim_engine_env(runtime_root, {"TF_CLI_CONFIG_FILE": str(own), "HYOPS_SIM_ROOT": "/x"})
    assert "TF_CLI_CONFIG_FILE" not in env and "HYOPS_SIM_ROOT" not in env
    env = sim_engine_env(runtime_root, {"TF_CLI_CONFIG_FILE": str(tmp_path / "missing.tfrc")})
    assert env["TF_CLI_CONFIG_FILE"] == str(cli_config_path(runtime_root))
    assert env["HYOPS_SIM_ROOT"] == str(runtime_root / "sim" / "cloud")
    assert Path(env["HYOPS_SIM_PYTHON"]).exists()


def test_module_uses_sim(tmp_path: Path) -> None:
    for name in ("network", "vm", "config", "health"):
        assert module_uses_sim(SIM_MODULES / name)
    (tmp_path / "main.tf").write_text('resource "null_resource" "x" {}\n# sim_vm in a comment\n')
    assert not module_uses_sim(tmp_path)
    (tmp_path / "more.tf").write_text('resource "sim_vm" "x" {\n}\n')
    assert module_uses_sim(tmp_path)


def test_init_is_offline_through_the_mirror_with_a_portable_lock_hash(
    module_copy: Callable[[str], Path], run_engine: Engine, tmp_path: Path
) -> None:
    module = module_copy("network")
    result = run_engine(["init", "-input=false", "-no-color"], module)
    assert result.returncode == 0, result.explain()
    lock = (module / ".terraform.lock.hcl").read_text()
    assert f'provider "{SIM_SOURCE}"' in lock and f'version = "{SIM_VERSION}"' in lock
    assert expected_h1() in lock  # same bytes everywhere: a committed lock file stays valid
    # A second runtime root (another mirror path) installs against the same lock file.
    shutil.rmtree(module / ".terraform")
    other_root = tmp_path / "other-runtime"
    env = sim_engine_env(other_root, {})
    again = run_engine(["init", "-input=false", "-no-color"], module, env)
    assert again.returncode == 0, again.explain()
    assert (module / ".terraform.lock.hcl").read_text() == lock


# ----- lifecycle -----
def test_apply_creates_objects_listed_by_hyops_sim_ls(
    module_copy: Callable[[str], Path],
    init_and_apply: Engine,
    runtime_root: Path,
    sim_root: Path,
    tmp_path: Path,
) -> None:
    watch = tmp_path / "record.json"
    watch.write_text('{"status": "running"}')
    env = {"HYOPS_SIM_WATCH_FILE": str(watch)}
    net = init_and_apply(module_copy("network"), env, name="net-a")
    assert net.returncode == 0, net.explain()
    network_id = net.of_type("outputs")[-1]["outputs"]["network_id"]["value"]
    vm = init_and_apply(module_copy("vm"), env, network_id=network_id, size="large")
    assert vm.returncode == 0, vm.explain()

    objects = sim_ls(runtime_root, sim_root)
    assert [(o["type"], o["name"]) for o in objects] == [
        ("sim_network", "net-a"),
        ("sim_vm", "demo-vm"),
    ]
    vm_obj = objects[1]
    assert vm_obj["id"].startswith("vm-") and len(vm_obj["id"]) == len("vm-") + 8
    assert vm_obj["attributes"]["network_id"] == network_id
    assert vm_obj["attributes"]["size"] == "large"
    assert vm_obj["attributes"]["ip"].startswith("10.0.")
    assert vm.of_type("outputs")[-1]["outputs"]["ip"]["value"] == vm_obj["attributes"]["ip"]

    creates = [c for c in read_calls(SimStore(sim_root)) if c["op"] == "create"]
    assert [c["type"] for c in creates] == ["sim_network", "sim_vm"]
    assert all(c["watched"] == '{"status": "running"}' for c in creates)


def test_a_runner_without_a_writable_cache_keeps_one_certificate_in_the_sim_root(
    module_copy: Callable[[str], Path], init_and_apply: Engine, run_engine: Engine, sim_root: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    env = {"XDG_CACHE_HOME": str(blocker)}  # hybridops-tf/ cannot be made under a file
    module = module_copy("network")
    applied = init_and_apply(module, env, name="net-a")
    assert applied.returncode == 0, applied.explain()
    cached = sim_root / "sim-tls.json"
    assert stat.S_IMODE(cached.stat().st_mode) == 0o600
    made = cached.read_bytes()
    shown = run_engine(["show", "-json"], module, env)  # another provider start
    assert shown.returncode == 0, shown.explain()
    assert cached.read_bytes() == made  # reused, not one certificate per start


def test_vm_create_fails_clearly_without_its_network(
    module_copy: Callable[[str], Path], init_and_apply: Engine, sim_root: Path
) -> None:
    result = init_and_apply(module_copy("vm"), network_id="net-00000000")
    assert result.returncode == 1
    assert "does not name an existing sim_network" in summaries(result)
    assert SimStore(sim_root).list_objects() == []


def test_parallel_creates_in_one_provider_process(
    tmp_path: Path, init_and_apply: Engine, sim_root: Path
) -> None:
    module = tmp_path / "many"
    module.mkdir()
    main_tf = (SIM_MODULES / "network" / "main.tf").read_text()
    main_tf += (
        '\nresource "sim_vm" "many" {\n  count      = 10\n'
        '  name       = "vm-${count.index}"\n  network_id = sim_network.this.id\n}\n'
    )
    (module / "main.tf").write_text(main_tf)
    result = init_and_apply(module)
    assert result.returncode == 0, result.explain()
    vms = SimStore(sim_root).list_objects("sim_vm")
    assert len(vms) == 10 and len({v.id for v in vms}) == 10
    assert len(state_instances(module)) == 11


# ----- fault modes, as the engine sees them -----
def test_fail_after_create_taints_then_times_1_lets_the_next_apply_replace_it(
    module_copy: Callable[[str], Path],
    init_and_apply: Engine,
    faults_file: Callable[..., Path],
    network: str,
    sim_root: Path,
) -> None:
    faults_file([{"type": "sim_vm", "op": "create", "mode": "fail_after_create", "times": 1}])
    module = module_copy("vm")
    first = init_and_apply(module, network_id=network)
    assert first.returncode == 1
    assert errored_addresses(first) == ["sim_vm.this"]
    assert "injected fault fail_after_create" in summaries(first)
    (vm,) = [i for i in state_instances(module) if i["type"] == "sim_vm"]
    assert vm["status"] == "tainted"
    assert SimStore(sim_root).get(vm["id"]) is not None

    second = init_and_apply(module, network_id=network)  # the rule has fired its one time
    assert second.returncode == 0, second.explain()
    planned = second.of_type("planned_change")[0]["change"]
    assert planned["action"] == "replace"
    (new_vm,) = state_instances(module)
    assert new_vm["status"] is None and new_vm["id"] != vm["id"]
    assert [o.id for o in SimStore(sim_root).list_objects("sim_vm")] == [new_vm["id"]]


def test_lose_response_leaves_an_orphan_that_import_can_adopt(
    module_copy: Callable[[str], Path],
    init_and_apply: Engine,
    run_engine: Engine,
    faults_file: Callable[..., Path],
    network: str,
    sim_root: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    faults_file([{"type": "sim_vm", "mode": "lose_response"}])
    module = module_copy("vm")
    result = init_and_apply(module, network_id=network)
    assert result.returncode == 1
    assert errored_addresses(result) == ["sim_vm.this"]
    assert "injected fault lose_response" in summaries(result)
    assert state_instances(module) == []
    (orphan,) = SimStore(sim_root).list_objects("sim_vm")

    monkeypatch.delenv("HYOPS_SIM_FAULTS")
    imported = run_engine(
        [
            "import",
            "-input=false",
            "-no-color",
            f"-var=network_id={network}",
            "sim_vm.this",
            orphan.id,
        ],
        module,
    )
    assert imported.returncode == 0, imported.explain()
    assert [i["id"] for i in state_instances(module)] == [orphan.id]


def test_fail_before_create_creates_nothing(
    module_copy: Callable[[str], Path],
    init_and_apply: Engine,
    faults_file: Callable[..., Path],
    network: str,
    sim_root: Path,
) -> None:
    faults_file([{"type": "*", "name": "demo-*", "op": "create", "mode": "fail_before_create"}])
    module = module_copy("vm")
    result = init_and_apply(module, network_id=network)
    assert result.returncode == 1
    assert errored_addresses(result) == ["sim_vm.this"]
    assert state_instances(module) == []
    assert SimStore(sim_root).list_objects("sim_vm") == []


def test_hang_delays_then_succeeds(
    module_copy: Callable[[str], Path],
    init_and_apply: Engine,
    faults_file: Callable[..., Path],
    sim_root: Path,
) -> None:
    faults_file([{"type": "sim_network", "op": "create", "mode": "hang", "seconds": 2}])
    started = time.monotonic()
    result = init_and_apply(module_copy("network"))
    assert result.returncode == 0, result.explain()
    assert time.monotonic() - started >= 2
    assert len(SimStore(sim_root).list_objects("sim_network")) == 1


def test_fail_delete_keeps_the_object_then_destroy_removes_everything(
    module_copy: Callable[[str], Path],
    run_engine: Engine,
    faults_file: Callable[..., Path],
    applied_network: AppliedNetwork,
    sim_root: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module, network = applied_network
    faults_file([{"type": "sim_network", "mode": "fail_delete"}])
    failed = run_engine(["destroy", "-auto-approve", "-input=false", "-json"], module)
    assert failed.returncode != 0
    assert "injected fault fail_delete" in summaries(failed)
    assert SimStore(sim_root).get(network) is not None
    assert [i["id"] for i in state_instances(module)] == [network]

    monkeypatch.delenv("HYOPS_SIM_FAULTS")
    done = run_engine(["destroy", "-auto-approve", "-input=false", "-json"], module)
    assert done.returncode == 0, done.explain()
    assert state_instances(module) == []
    assert SimStore(sim_root).list_objects() == []


def test_deleting_a_vm_deletes_its_config_and_the_secret_never_reaches_the_cloud(
    module_copy: Callable[[str], Path],
    init_and_apply: Engine,
    run_engine: Engine,
    network: str,
    sim_root: Path,
) -> None:
    vm_module = module_copy("vm")
    vm = init_and_apply(vm_module, network_id=network)
    assert vm.returncode == 0, vm.explain()
    vm_id = vm.of_type("outputs")[-1]["outputs"]["vm_id"]["value"]
    config_module = module_copy("config")
    secret = "s3cr3t-token-for-the-test"
    config = init_and_apply(config_module, {"TF_VAR_api_token": secret}, vm_id=vm_id)
    assert config.returncode == 0, config.explain()
    assert config.of_type("outputs")[-1]["outputs"]["api_token_echo"]["sensitive"] is True
    assert len(SimStore(sim_root).list_objects("sim_config")) == 1
    for path in sim_root.rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(), path

    destroyed = run_engine(
        ["destroy", "-auto-approve", "-input=false", "-json", f"-var=network_id={network}"],
        vm_module,
    )
    assert destroyed.returncode == 0, destroyed.explain()
    assert SimStore(sim_root).list_objects("sim_config") == []
    drift = run_engine(
        ["plan", "-input=false", "-json", f"-var=vm_id={vm_id}"],
        config_module,
        {"TF_VAR_api_token": secret},
    )
    assert drift.returncode == 0, drift.explain()
    assert [c["change"]["action"] for c in drift.of_type("planned_change")] == ["create"]


# ----- configuration errors reach the engine as one diagnostic, never a traceback -----
def test_invalid_faults_file_is_a_provider_diagnostic(
    module_copy: Callable[[str], Path],
    init_and_apply: Engine,
    faults_file: Callable[..., Path],
    sim_root: Path,
) -> None:
    path = faults_file(text="- {type: sim_vm, op: create, mode: explode}\n")
    result = init_and_apply(module_copy("network"))
    assert result.returncode == 1
    (diag,) = result.diagnostics()
    assert str(path) in diag["summary"] and "unknown mode 'explode'" in diag["summary"]
    assert "Traceback" not in result.stdout + result.stderr
    assert SimStore(sim_root).list_objects() == []


def test_missing_sim_root_is_a_provider_diagnostic(
    module_copy: Callable[[str], Path], run_engine: Engine
) -> None:
    module = module_copy("network")
    assert run_engine(["init", "-input=false"], module).returncode == 0
    result = run_engine(["plan", "-input=false", "-json"], module, {"HYOPS_SIM_ROOT": ""})
    assert result.returncode == 1
    (diag,) = result.diagnostics()
    assert "HYOPS_SIM_ROOT is not set" in diag["summary"]


# ----- the `hyops sim` commands -----
def hyops(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real console entry, for exit codes and stderr as a user sees them."""
    return subprocess.run(
        [sys.executable, "-m", "hybridops_tf.cli.main", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=False,
    )


def test_check_faults_lists_rules_or_exits_2_with_one_line(tmp_path: Path) -> None:
    good = tmp_path / "good.yml"
    good.write_text("- {type: sim_vm, mode: fail_after_create, times: 1}\n")
    ok = hyops("sim", "check-faults", str(good))
    assert ok.returncode == 0, ok.stderr
    assert "1 rule(s) OK" in ok.stdout and "fail_after_create" in ok.stdout
    bad = tmp_path / "bad.yml"
    bad.write_text("- {type: sim_vm, mode: explode}\n")
    for args, env in (
        (("sim", "check-faults", str(bad)), {}),
        (("sim", "check-faults"), {"HYOPS_SIM_FAULTS": str(bad)}),
        (("sim", "ls"), {"HYOPS_SIM_FAULTS": str(bad), "HYOPS_SIM_ROOT": str(tmp_path)}),
    ):
        result = hyops(*args, env=env)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.count("\n") == 1 and "unknown mode 'explode'" in result.stderr
        assert str(bad) in result.stderr


def test_sim_ls_defaults_to_the_runtime_root_cloud(runtime_root: Path) -> None:
    store = SimStore(runtime_root / "sim" / "cloud")
    store.create("sim_network", "n1", {"cidr": "10.9.0.0/16"})
    result = CliRunner().invoke(cli, ["--runtime-root", str(runtime_root), "sim", "ls"])
    assert result.exit_code == 0, result.output
    assert "sim_network" in result.output and "cidr=10.9.0.0/16" in result.output


def test_sim_install_prints_what_a_raw_engine_run_needs(runtime_root: Path) -> None:
    result = CliRunner().invoke(cli, ["--runtime-root", str(runtime_root), "sim", "install"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"export TF_CLI_CONFIG_FILE={cli_config_path(runtime_root)}"
    assert any(line.startswith("export HYOPS_SIM_PYTHON=") for line in lines)
    assert launcher_path(runtime_root).read_text() == LAUNCHER_TEXT
