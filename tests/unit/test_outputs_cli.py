"""`hyops outputs [MODULE_DIR] [NAME] [--raw | --json]` against a record RecordStore wrote."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from hybridops_tf.cli.main import cli
from hybridops_tf.record.address import record_key
from hybridops_tf.record.model import OperationRecord, Status
from hybridops_tf.store.local import RecordStore

OUTPUTS = {"network_id": "net-1", "count": 3, "enabled": True, "cidrs": ["10.0.0.0/24"],
           "tags": {"env": "dev"}, "nothing": None, "token": {"sensitive": True}}


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    """modules/net (one .tf file) and a record of it under .hyops, cwd the project."""
    module = tmp_path / "modules" / "net"
    module.mkdir(parents=True)
    (module / "main.tf").write_text("")
    store = RecordStore(tmp_path / ".hyops")
    store.write(OperationRecord(module_ref="net", status=Status("ok"), run_id="apply-1", outputs=OUTPUTS))
    store.write(OperationRecord(module_ref="net", status=Status("ok"), run_id="apply-2", workspace="stg",
                                outputs={"network_id": "net-stg"}))
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)


def hyops(*args: str):
    return CliRunner().invoke(cli, ["--runtime-root", ".hyops", "outputs", *args])


def test_the_workspace_record_is_the_one_read(project: Path) -> None:
    assert record_key("net", "stg") == "net@stg"
    result = hyops("modules/net", "network_id", "--raw", "--workspace", "stg")

    assert (result.exit_code, result.output) == (0, "net-stg\n")


@pytest.mark.parametrize(("name", "shown"), [
    ("network_id", "net-1"), ("count", "3"), ("enabled", "true"),
])
def test_raw_prints_a_string_number_or_bool_bare(project: Path, name: str, shown: str) -> None:
    result = hyops("modules/net", name, "--raw")

    assert (result.exit_code, result.output) == (0, shown + "\n")


@pytest.mark.parametrize("name", ["network_id", "count", "cidrs", "tags", "nothing"])
@pytest.mark.parametrize("flag", [[], ["--json"]])
def test_a_named_output_prints_as_json(project: Path, name: str, flag: list[str]) -> None:
    result = hyops("modules/net", name, *flag)

    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == OUTPUTS[name]


@pytest.mark.parametrize("name", ["cidrs", "tags", "nothing"])
def test_raw_of_a_list_map_or_null_is_a_usage_error_pointing_at_json(project: Path, name: str) -> None:
    result = hyops("modules/net", name, "--raw")

    assert result.exit_code == 2
    assert "--json" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_sensitive_output_is_exit_2_and_says_it_is_read_from_state(project: Path) -> None:
    result = hyops("modules/net", "token", "--raw")

    assert result.exit_code == 2
    assert "sensitive" in result.output and "tofu output" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_an_unknown_name_is_exit_2_naming_the_recorded_outputs(project: Path) -> None:
    result = hyops("modules/net", "nope")

    assert result.exit_code == 2
    assert result.output.startswith("hyops: error:")
    assert "nope" in result.output
    for name in OUTPUTS:
        assert name in result.output


def test_a_lone_output_name_in_the_module_dir_is_the_name(project: Path) -> None:
    os.chdir(project / "modules" / "net")
    result = CliRunner().invoke(cli, ["--runtime-root", str(project / ".hyops"),
                                      "--modules-root", str(project / "modules"), "outputs", "network_id"])

    assert (result.exit_code, result.output) == (0, '"net-1"\n')


def test_a_lone_argument_that_is_a_directory_is_module_dir(project: Path) -> None:
    result = hyops("modules/net")

    assert result.exit_code == 0, result.output
    assert "network_id = \"net-1\"" in result.output.splitlines()
    assert "token = (sensitive)" in result.output.splitlines()


def test_a_missing_directory_with_a_slash_stays_module_dir(project: Path) -> None:
    result = hyops("modules/nett")

    assert result.exit_code == 2
    assert "modules/nett" in result.output


@pytest.mark.parametrize("args", [["network_id", "--raw", "--json"], ["--raw"]])
def test_raw_needs_a_name_and_excludes_json(project: Path, args: list[str]) -> None:
    result = hyops("modules/net", *args)

    assert result.exit_code == 2
    assert result.output.startswith("hyops: error:") and "--raw" in result.output


def test_json_without_name_is_the_recorded_mapping(project: Path) -> None:
    result = hyops("modules/net", "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == OUTPUTS


def test_no_record_is_exit_3(project: Path) -> None:
    result = hyops("modules/net", "network_id", "--workspace", "prod")

    assert result.exit_code == 3


def test_raw_under_lc_all_c_is_the_value_s_utf8_bytes(tmp_path: Path) -> None:
    """The real console script: ASCII fallback is for human text, never a value a script reads."""
    import subprocess
    import sys

    module = tmp_path / "modules" / "net"
    module.mkdir(parents=True)
    (module / "main.tf").write_text("")
    RecordStore(tmp_path / ".hyops").write(OperationRecord(module_ref="net", status=Status("ok"),
                                                           run_id="apply-1", outputs={"label": "réseau ✓"}))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LANG", "LC_CTYPE")}
    result = subprocess.run([str(Path(sys.executable).with_name("hyops")), "--runtime-root", ".hyops",
                             "outputs", "modules/net", "label", "--raw"],
                            capture_output=True, env={**env, "LC_ALL": "C"}, cwd=tmp_path, check=False)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "réseau ✓\n".encode()
