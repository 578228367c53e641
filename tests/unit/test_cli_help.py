"""The CLI documents itself (STYLE habit 11): every command has help with an example, every
command is in the README, and `hyops --help` stays light (no hcl2, grpc or tf imported)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from hybridops_tf.cli.main import _COMMANDS, LazyGroup, cli
from tests.import_probe import loaded_by
from tests.unit.clitree import walk

README = Path(__file__).resolve().parents[2] / "README.md"
HEAVY = ("hcl2", "grpc", "msgpack", "hybridops_tf.sim._tfplugin6_pb2")


def top_level_commands() -> list[str]:
    assert isinstance(cli, LazyGroup)
    return cli.list_commands(click.Context(cli))


def all_command_paths() -> list[tuple[str, ...]]:
    """(name,) for each listed command, plus (group, sub) for each subcommand of a group."""
    paths: list[tuple[str, ...]] = []
    ctx = click.Context(cli)
    for name in top_level_commands():
        paths.append((name,))
        command = cli.get_command(ctx, name)
        if isinstance(command, click.Group):
            sub_ctx = click.Context(command, parent=ctx, info_name=name)
            paths.extend((name, sub) for sub in command.list_commands(sub_ctx))
    return paths


def test_the_design_commands_are_all_registered() -> None:
    assert set(_COMMANDS) >= {
        "apply",
        "destroy",
        "plan",
        "status",
        "outputs",
        "reconcile",
        "stack",
        "sim",
    }


def test_top_level_help_lists_every_available_command_and_an_example() -> None:
    result = CliRunner().invoke(cli, ["--help"])

    assert result.exit_code == 0, result.output
    assert "Example" in result.output
    for name in top_level_commands():
        assert re.search(rf"^\s+{re.escape(name)}\s", result.output, re.MULTILINE), name


@pytest.mark.parametrize("name", top_level_commands())
def test_every_listed_command_can_be_loaded(name: str) -> None:
    assert cli.get_command(click.Context(cli), name) is not None


@pytest.mark.parametrize("path", all_command_paths(), ids=" ".join)
def test_every_command_has_help_with_an_example(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"])

    assert result.exit_code == 0, result.output
    assert "Example" in result.output, f"`hyops {' '.join(path)} --help` shows no example"
    assert f"hyops {' '.join(path)}" in result.output, "the example should show the command itself"


def test_the_readme_exists() -> None:
    assert README.is_file(), f"{README} is missing"


@pytest.mark.parametrize("path", all_command_paths(), ids=" ".join)
def test_every_command_appears_in_the_readme(path: tuple[str, ...]) -> None:
    assert README.is_file(), f"{README} is missing"
    text = README.read_text(encoding="utf-8")

    assert f"hyops {' '.join(path)}" in text, f"README.md never shows `hyops {' '.join(path)}`"


HEAVY_PROBE = """
import json, sys
{preload}
sys.argv = ["hyops", "--help"]
from hybridops_tf.cli.main import main
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})
sys.stderr.write("PROBE " + json.dumps({{"code": code, "heavy": heavy}}) + "\\n")
"""


def probe_help_imports(preload: str = "") -> dict:
    result = subprocess.run(
        [sys.executable, "-c", HEAVY_PROBE.format(preload=preload, heavy=HEAVY)],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("PROBE ")]
    assert lines, result.stderr
    report = json.loads(lines[-1][len("PROBE ") :])
    report["stdout"] = result.stdout
    return report


def test_hyops_help_imports_no_hcl2_grpc_or_tf() -> None:
    report = probe_help_imports()

    assert report["code"] in (0, None)
    assert "Usage:" in report["stdout"]
    assert report["heavy"] == []


def test_the_import_probe_does_see_a_heavy_module() -> None:
    """Control for the test above: the probe is able to fail."""
    report = probe_help_imports(preload="import hcl2")

    assert "hcl2" in report["heavy"]


# Commands that run no engine load no engine code beyond its vocabulary, no event, state or
# process module, no lock library, no sim CLI config parser and no ctypes (issue 25 item 3).
VOCABULARY = {"hybridops_tf.engine", "hybridops_tf.engine.vocabulary"}
NOT_WITHOUT_AN_ENGINE = ("filelock", "ctypes", "hybridops_tf.sim.cliconfig", "hybridops_tf.operation")


def probe_engine_free(project: Path, argv: list[str], preload: str = "") -> dict[str, Any]:
    """What `hyops --runtime-root .hyops ARGV` loads, run in a fresh interpreter in `project`."""
    return loaded_by(project, ["--runtime-root", ".hyops", *argv], preload)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """modules/net with an `ok` record holding an output, under ./.hyops."""
    from hybridops_tf.record.model import OperationRecord, Status
    from hybridops_tf.store.local import RecordStore

    (tmp_path / "modules" / "net").mkdir(parents=True)
    (tmp_path / "modules" / "net" / "main.tf").write_text("")
    RecordStore(tmp_path / ".hyops").write(OperationRecord(module_ref="net", status=Status("ok"), run_id="apply-1",
                                                           outputs={"network_id": "net-1"}))
    return tmp_path


@pytest.mark.parametrize("argv", [
    ["--help"], ["status", "modules/net"], ["status", "--all"], ["status", "modules/net", "--json"],
    ["outputs", "modules/net"], ["outputs", "modules/net", "network_id", "--raw"],
], ids=" ".join)
def test_commands_that_run_no_engine_load_no_engine_code(project: Path, argv: list[str]) -> None:
    report = probe_engine_free(project, argv)

    assert report["code"] in (0, None)
    loaded = report["loaded"]
    assert [m for m in loaded if m.startswith("hybridops_tf.engine") and m not in VOCABULARY] == []
    assert [m for m in loaded if m.startswith(NOT_WITHOUT_AN_ENGINE)] == []


def test_the_engine_free_probe_does_see_engine_code(project: Path) -> None:
    """Control for the test above: the probe is able to fail."""
    report = probe_engine_free(project, ["status", "--all"], preload="import hybridops_tf.engine.events, filelock")

    assert {"hybridops_tf.engine.events", "filelock"} <= set(report["loaded"])


ENTRY = """
import sys, threading, time
from pathlib import Path
from typing import Any
if len(sys.argv) > 2:
    marker = Path(sys.argv[2])
    def worker():
        time.sleep(0.3)
        marker.write_text("joined")
    threading.Thread(target=worker).start()
sys.argv = ["hyops", *sys.argv[1].split()]
from hybridops_tf.cli.main import entry
entry()
"""


@pytest.mark.parametrize(("args", "code", "stream", "text"), [
    ("--version", 0, "stdout", "hyops"),
    ("apply", 2, "stderr", "hyops: error: module directory"),
])
def test_the_console_entry_flushes_output_and_keeps_the_exit_code(
    tmp_path: Path, args: str, code: int, stream: str, text: str
) -> None:
    result = subprocess.run([sys.executable, "-c", ENTRY, args], capture_output=True, text=True, cwd=tmp_path)

    assert result.returncode == code, result.stderr
    assert text in getattr(result, stream)


def test_the_console_entry_never_cuts_short_a_live_worker_thread(tmp_path: Path) -> None:
    marker = tmp_path / "worker.txt"

    result = subprocess.run([sys.executable, "-c", ENTRY, "--version", str(marker)],
                            capture_output=True, text=True)

    assert result.returncode == 0, result.stderr
    assert marker.read_text() == "joined"


def leaf_commands() -> dict[tuple[str, ...], click.Command]:
    return {path: command for path, command in walk(cli) if path and not isinstance(command, click.Group)}


# Every command's help lists its exit codes (issue 13 item 7); read from the CLI tree, so a
# new command is checked as soon as it exists.
EXIT_CODES_IN_HELP = sorted(leaf_commands())


@pytest.mark.parametrize("path", EXIT_CODES_IN_HELP, ids=" ".join)
def test_the_command_help_lists_its_exit_codes(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"])

    assert result.exit_code == 0, result.output
    assert "Exit codes:" in result.output, f"`hyops {' '.join(path)} --help` lists no exit codes"


def test_init_shows_the_engine_args_in_its_usage_line() -> None:
    command = leaf_commands()[("init",)]

    pieces = command.collect_usage_pieces(click.Context(command, info_name="init"))

    assert pieces.count("[-- ENGINE_ARGS]") == 1
    assert pieces[-1] == "[-- ENGINE_ARGS]"
