"""Global options (`--runtime-root`, `--engine`, `--modules-root`, `--store`) work after the
command too, and `--store URL` (env HYOPS_STORE) selects the shared store without ever printing
its password."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from hybridops_tf.cli.habits import rewrite_argv
from hybridops_tf.cli.main import cli
from hybridops_tf.store import url as store_url

URL = "postgresql://hyops:s3cret-pw@db.example:5432/records"


@pytest.fixture(autouse=True)
def no_store_left_configured() -> Iterator[None]:
    yield
    store_url.configure(None)  # the CLI sets it per run; later tests must not inherit ours


@click.command("probe")
@click.pass_context
def probe_cmd(ctx: click.Context) -> None:
    """Prints the Settings a command gets (registered for these tests only)."""
    click.echo(json.dumps({"store": ctx.obj.store, "runtime_root": str(ctx.obj.runtime_root)}))


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch) -> None:
    from hybridops_tf.cli import main

    monkeypatch.setitem(main._COMMANDS, "probe", (f"{__name__}:probe_cmd", "Print the Settings."))


def rewrite(*args: str) -> list[str]:
    return rewrite_argv(cli, click.Context(cli, help_option_names=["-h", "--help"]), list(args))


@pytest.mark.parametrize(("typed", "parsed"), [
    (["status", "--all", "--runtime-root", "X"], ["--runtime-root", "X", "status", "--all"]),
    (["status", "--runtime-root=X", "--all"], ["--runtime-root=X", "status", "--all"]),
    (["apply", "mod", "--engine", "/bin/tofu", "--var", "x=1"],
     ["--engine", "/bin/tofu", "apply", "mod", "--var", "x=1"]),
    (["plan", "mod", "--modules-root", "m", "--store", URL], ["--modules-root", "m", "--store", URL, "plan", "mod"]),
    (["--engine", "a", "status", "--engine", "b"], ["--engine", "a", "--engine", "b", "status"]),
    (["stack", "apply", "s.yml", "--runtime-root", "X"], ["--runtime-root", "X", "stack", "apply", "s.yml"]),
    (["stack", "--runtime-root", "X", "apply"], ["--runtime-root", "X", "stack", "apply"]),
])
def test_a_global_option_after_the_command_moves_in_front_of_it(typed: list[str], parsed: list[str]) -> None:
    assert rewrite(*typed) == parsed


@pytest.mark.parametrize("typed", [
    ["apply", "mod", "--", "--runtime-root", "X"],  # after `--`: the engine's
    ["apply", "mod", "--var", "--engine"],  # a value of --var
    ["status", "--runtime-root"],  # no value: Click says so; `status` is never taken for it
    ["--help"],
    ["nosuchcommand", "--runtime-root", "X"],
    [],
])
def test_what_is_not_a_global_option_after_the_command_stays_where_it_is(typed: list[str]) -> None:
    assert rewrite(*typed) == typed


def test_habits_and_global_options_together() -> None:
    assert rewrite("apply", "mod", "-var", "a=1", "--runtime-root", "X", "-target=r.x") == [
        "--runtime-root", "X", "apply", "mod", "--var", "a=1", "--", "-target=r.x"]


def test_runtime_root_and_engine_after_the_command_reach_it(tmp_path: Path) -> None:
    root = tmp_path / "rt"
    result = CliRunner().invoke(cli, ["version", "--json", "--runtime-root", str(root),
                                      "--engine", str(tmp_path / "no-such-tofu")])
    doc = json.loads(result.stdout)
    assert doc["runtime_root"]["path"] == str(root)
    assert str(tmp_path / "no-such-tofu") in doc["engine_error"]
    assert result.exit_code == 2


def test_store_after_the_command_selects_the_shared_store_and_its_password_is_not_printed(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["version", "--runtime-root", str(tmp_path), "--store", URL,
                                      "--engine", str(tmp_path / "no-such-tofu")])
    assert store_url.selected_url() == URL
    assert "s3cret-pw" not in result.output


@pytest.mark.usefixtures("probe")
def test_hyops_store_env_is_the_store_option(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--runtime-root", str(tmp_path), "probe"], env={"HYOPS_STORE": URL})
    assert store_url.selected_url() == URL
    assert json.loads(result.stdout)["store"] == URL


@pytest.mark.usefixtures("probe")
def test_without_store_the_local_runtime_root_is_used(tmp_path: Path) -> None:
    store_url.configure(URL)  # as a previous command in the same process left it
    CliRunner().invoke(cli, ["--runtime-root", str(tmp_path), "probe"], env={"HYOPS_STORE": None})
    assert store_url.selected_url() is None


@pytest.mark.usefixtures("probe")
def test_settings_carry_the_store_url_given_after_the_command(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["probe", "--store", URL, "--runtime-root", str(tmp_path)],
                                env={"HYOPS_STORE": None})
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"store": URL, "runtime_root": str(tmp_path)}


@pytest.mark.usefixtures("probe")
def test_settings_have_no_store_by_default(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--runtime-root", str(tmp_path), "probe"], env={"HYOPS_STORE": None})
    assert json.loads(result.stdout)["store"] is None


def test_the_store_option_s_help_says_its_env_and_that_passwords_stay_unprinted() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert "--store URL" in result.output
    assert "HYOPS_STORE" in result.output
    assert "PGPASSWORD" in result.output
