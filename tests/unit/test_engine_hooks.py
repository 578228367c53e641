"""engine_hooks.py: the core's engine environment comes from registered hooks, so the core
never imports the sim; the CLI registers the sim's hook (docs/contract.md: Commands and options, issue #14)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hybridops_tf.runtime import hooks
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.sim.cliconfig import CLI_CONFIG_ENV


class Marker:
    """A hook for modules holding a file named `marked`."""

    def applies(self, module_dir: Path) -> bool:
        return (module_dir / "marked").exists()

    def guarded_path(self, runtime_root: Path) -> Path:
        return runtime_root / "marker" / "launcher"

    def engine_env(self, runtime_root: Path) -> dict[str, str]:
        return {"MARKED_ROOT": str(runtime_root)}


@pytest.fixture
def no_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hooks, "_HOOKS", [])


def test_the_cli_registers_the_sim_hook_and_loads_the_sim_only_when_the_hook_is_asked() -> None:
    """In a fresh interpreter: here tests/conftest.py has registered the hook already, so only
    a process that imports nothing but the CLI entry shows that the CLI itself does it; the sim
    (sim/install.py) loads when the core first asks the hook about a module, not before."""
    probe = ("import sys; from pathlib import Path; from hybridops_tf.runtime import hooks; "
             "before = len(hooks._HOOKS); import hybridops_tf.cli.main; "
             "print(before, len(hooks._HOOKS), 'hybridops_tf.sim.install' in sys.modules); "
             "asked = hooks._HOOKS[0].guarded_path(Path('/rt')); loaded = 'hybridops_tf.sim.install' in sys.modules; "
             "from hybridops_tf.sim.install import SIM_ENVIRONMENT; "
             "print(loaded, asked == SIM_ENVIRONMENT.guarded_path(Path('/rt')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)

    assert done.stdout.split() == ["0", "1", "False", "True", "True"]


@pytest.mark.usefixtures("no_hooks")
def test_a_hook_adds_its_environment_only_to_the_modules_it_applies_to(tmp_path: Path) -> None:
    hooks.register(Marker())
    marked, plain = tmp_path / "marked-mod", tmp_path / "plain-mod"
    for module in (marked, plain):
        module.mkdir()
    (marked / "marked").touch()
    runtime = Runtime(tmp_path / "rt")

    assert runtime.engine_env(marked, None)["MARKED_ROOT"] == str(tmp_path / "rt")
    assert "MARKED_ROOT" not in runtime.engine_env(plain, None)


@pytest.mark.usefixtures("no_hooks")
def test_registering_a_hook_twice_applies_it_once(tmp_path: Path) -> None:
    hook = Marker()
    hooks.register(hook)
    hooks.register(hook)
    (tmp_path / "marked").touch()

    assert hooks.applying(tmp_path) == (hook,)


@pytest.mark.usefixtures("no_hooks")
def test_without_the_sim_hook_the_core_gives_a_sim_module_no_mirror(tmp_path: Path) -> None:
    module = tmp_path / "mod"
    module.mkdir()
    (module / "main.tf").write_text('resource "sim_network" "n" {\n  name = "n"\n}\n')

    assert CLI_CONFIG_ENV not in Runtime(tmp_path / "rt").engine_env(module, None)


class Uninstalled(Marker):
    """A hook whose engine processes need a package that is not installed."""

    def engine_env(self, runtime_root: Path) -> dict[str, str]:
        raise ModuleNotFoundError("the marker needs `markerpkg`: pip install markerpkg", name="markerpkg")


@pytest.mark.usefixtures("no_hooks")
def test_a_hook_missing_its_package_is_a_usage_error_with_its_one_line(tmp_path: Path) -> None:
    from hybridops_tf.base.errors import ExitCode, UsageError

    hooks.register(Uninstalled())
    (tmp_path / "marked").touch()

    with pytest.raises(UsageError) as caught:
        Runtime(tmp_path / "rt").engine_env(tmp_path, None)

    assert caught.value.exit_code == ExitCode.USAGE
    assert str(caught.value) == "the marker needs `markerpkg`: pip install markerpkg"


@pytest.mark.usefixtures("no_hooks")
def test_the_sim_hook_without_pyvider_names_the_extra_and_writes_no_mirror(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hybridops_tf.base.errors import UsageError
    from hybridops_tf.sim.install import SIM_ENVIRONMENT, cli_config_path

    monkeypatch.setitem(sys.modules, "pyvider", None)  # as Python sees a package not installed
    hooks.register(SIM_ENVIRONMENT)
    module = tmp_path / "mod"
    module.mkdir()
    (module / "main.tf").write_text('resource "sim_network" "n" {\n  name = "n"\n}\n')

    with pytest.raises(UsageError) as caught:
        Runtime(tmp_path / "rt").engine_env(module, None)

    assert "pip install 'hybridops-tf[sim]'" in str(caught.value) and "\n" not in str(caught.value)
    assert sys.executable in str(caught.value)
    assert not cli_config_path(tmp_path / "rt").exists()


def test_the_sim_check_asks_only_this_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another interpreter is never started to ask it (a Python start per module)."""
    from hybridops_tf.sim.install import SimExtraMissing, check_sim_python

    check_sim_python(sys.executable)  # this venv has the [sim] extra
    monkeypatch.setitem(sys.modules, "pyvider", None)
    with pytest.raises(SimExtraMissing):
        check_sim_python(sys.executable)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("spawned a process"))
    check_sim_python("/opt/other/python3")
